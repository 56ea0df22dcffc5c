"""symattn's torch code on an accelerator: correctness in every dtype, then timing against SDPA.

    python benchmarks/gpu.py                 # on CUDA when present; says so and exits 0 without one
    python benchmarks/gpu.py --device cpu --quick   # the same checks on the CPU, small (the tests run this)

Correctness, on the device, in float32, bfloat16 and float16 (and float64 where the device has it):
``symattn.torch.MultiheadAttention`` against ``torch.nn.MultiheadAttention`` loaded with the same
state_dict (no mask, causal, key padding), both compared with a float64 reference computed from the
same weights, so a low-precision dtype is judged by torch's own error in that dtype; the gradients of
the input and the weights likewise; GQA against SDPA with ``enable_gqa``; a kernel from ``sa.lower(...,
target="torch")`` against ``F.scaled_dot_product_attention``; outputs keep the input's device and
dtype; ``torch.compile(fullgraph=True)`` of the module. Each check prints one line; the last line says
whether all passed (exit status 1 if not).

Timing (skipped with ``--no-timing``): forward and forward + backward, interleaved rounds, CUDA-synchronized,
median milliseconds of symattn's module, ``nn.MultiheadAttention`` and SDPA with its projections, and
the ratios. Which SDPA backends torch may use (flash, memory-efficient, math) is printed. Not a test:
nothing asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn.functional as F

SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8), "P4": (4, 1024, 256, 8),
          "L1": (4, 4096, 1024, 16)}
QUICK_SHAPES = {"T1": (2, 16, 32, 4)}

#: how much larger than torch's own error (against float64) ours may be, and an absolute floor
SLACK = {torch.float64: (2.0, 1e-12), torch.float32: (2.0, 1e-5), torch.bfloat16: (2.0, 2e-2),
         torch.float16: (2.0, 2e-3)}

FAILED: list[str] = []


def report(name: str, ok: bool, detail: str) -> None:
    print(f"  {'ok  ' if ok else 'FAIL'} {name}: {detail}")
    if not ok:
        FAILED.append(name)


def sdpa_with_projections(mha, q_in, kv_in=None, **kw):
    """One packed linear, SDPA, the output linear: what a hand-written layer does."""
    kv_in = q_in if kv_in is None else kv_in
    b, n, e = q_in.shape
    h = mha.num_heads
    w_q, w_k, w_v = mha.in_proj_weight.split(e)
    b_q, b_k, b_v = mha.in_proj_bias.split(e)
    q, k, v = F.linear(q_in, w_q, b_q), F.linear(kv_in, w_k, b_k), F.linear(kv_in, w_v, b_v)
    q, k, v = (t.view(b, -1, h, e // h).transpose(1, 2) for t in (q, k, v))
    z = F.scaled_dot_product_attention(q, k, v, **kw)
    return F.linear(z.transpose(1, 2).reshape(b, n, e), mha.out_proj.weight, mha.out_proj.bias)


def _pair(e, h, dtype, device, **kw):
    from symattn.torch import MultiheadAttention

    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(e, h, batch_first=True, dtype=dtype, device=device, **kw)
    mine = MultiheadAttention(e, h, batch_first=True, dtype=dtype, device=device, **kw)
    mine.load_state_dict(theirs.state_dict())
    ref = torch.nn.MultiheadAttention(e, h, batch_first=True, dtype=torch.float64, device="cpu", **kw)
    ref.load_state_dict({k: v.detach().double().cpu() for k, v in theirs.state_dict().items()})
    return mine, theirs, ref


def _err(a, r) -> float:
    return (a.detach().double().cpu() - r.detach().double().cpu()).abs().max().item()


def check_module(dtype, device, shape) -> None:
    b, n, e, h = shape
    mine, theirs, ref = _pair(e, h, dtype, device)
    torch.manual_seed(1)
    x64 = torch.randn(b, n, e, dtype=torch.float64)
    x = x64.to(device=device, dtype=dtype)
    pad = torch.zeros(b, n, dtype=torch.bool)
    pad[-1, n // 2:] = True
    causal = torch.nn.Transformer.generate_square_subsequent_mask(n, dtype=torch.float64).isinf()
    cases = {"no mask": {}, "key_padding_mask": {"key_padding_mask": pad},
             "causal attn_mask": {"attn_mask": causal}}
    slack, floor = SLACK[dtype]
    for label, kw in cases.items():
        dev_kw = {k: v.to(device) for k, v in kw.items()}
        out, w = mine(x, x, x, **dev_kw)
        t_out, _ = theirs(x, x, x, **dev_kw)
        r_out, _ = ref(x64, x64, x64, **kw)
        ours, torchs = _err(out, r_out), _err(t_out, r_out)
        kept = out.dtype == dtype and out.device.type == torch.device(device).type and w.dtype == dtype
        report(f"{dtype} module, {label}", kept and ours <= slack * torchs + floor,
               f"|ours - f64| = {ours:.2e}, |torch - f64| = {torchs:.2e}, dtype/device kept: {kept}")
    # gradients of the input and of the in-projection weight, no mask
    xg, x64g = x.clone().requires_grad_(True), x64.clone().requires_grad_(True)
    mine(xg, xg, xg)[0].float().square().sum().backward()
    xt = x.clone().requires_grad_(True)
    theirs(xt, xt, xt)[0].float().square().sum().backward()
    ref(x64g, x64g, x64g)[0].square().sum().backward()
    for label, ours_g, torch_g, ref_g in (("d input", xg.grad, xt.grad, x64g.grad),
                                          ("d in_proj_weight", mine.in_proj_weight.grad,
                                           theirs.in_proj_weight.grad, ref.in_proj_weight.grad)):
        ours, torchs = _err(ours_g, ref_g), _err(torch_g, ref_g)
        scale = ref_g.abs().max().item() or 1.0
        report(f"{dtype} module, {label}", ours <= slack * torchs + floor * scale,
               f"|ours - f64| = {ours:.2e}, |torch - f64| = {torchs:.2e} (max |grad| {scale:.2e})")


def check_gqa(dtype, device, shape) -> None:
    from symattn.torch import MultiheadAttention

    b, n, e, h = shape
    g = max(1, h // 2)
    torch.manual_seed(2)
    mine = MultiheadAttention(e, h, num_kv_heads=g, batch_first=True, dtype=dtype, device=device)
    x = torch.randn(b, n, e, dtype=dtype, device=device)
    out, _ = mine(x, x, x, need_weights=False)
    hd = e // h
    q = F.linear(x, mine.q_proj_weight, mine.in_proj_bias[:e]).view(b, n, h, hd).transpose(1, 2)
    k = F.linear(x, mine.k_proj_weight, mine.in_proj_bias[e:e + g * hd]).view(b, n, g, hd).transpose(1, 2)
    v = F.linear(x, mine.v_proj_weight, mine.in_proj_bias[e + g * hd:]).view(b, n, g, hd).transpose(1, 2)
    z = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    want = F.linear(z.transpose(1, 2).reshape(b, n, e), mine.out_proj.weight, mine.out_proj.bias)
    err = _err(out, want)
    tol = SLACK[dtype][1] * 10 * max(1.0, want.abs().max().item())
    report(f"{dtype} GQA ({h} query heads, {g} key/value heads) vs SDPA enable_gqa", err <= tol,
           f"max |diff| = {err:.2e} (tolerance {tol:.1e})")


def check_lowered_kernel(dtype, device, shape) -> None:
    import sympy as sp

    import symattn as sa

    b, n, e, h = shape
    N, M, D = sa.dims("N M D")
    Q, K, V = sp.MatrixSymbol("Q", N, D), sp.MatrixSymbol("K", M, D), sp.MatrixSymbol("V", M, D)
    kernel = sa.lower(sa.attention(Q, K, V, convention="row"), target="torch")
    torch.manual_seed(3)
    q, k, v = (torch.randn(b, h, n, e // h, dtype=dtype, device=device) for _ in range(3))
    out = kernel(Q=q, K=k, V=v)
    want = F.scaled_dot_product_attention(q, k, v)
    r = F.scaled_dot_product_attention(*(t.double().cpu() for t in (q, k, v)))
    ours, torchs = _err(out, r), _err(want, r)
    slack, floor = SLACK[dtype]
    kept = out.dtype == dtype and out.device.type == torch.device(device).type
    report(f"{dtype} sa.lower(attention, target='torch') vs SDPA", kept and ours <= slack * torchs + floor,
           f"|ours - f64| = {ours:.2e}, |SDPA - f64| = {torchs:.2e}, dtype/device kept: {kept}")


def check_compile(device, shape) -> None:
    from symattn.torch import MultiheadAttention

    b, n, e, h = shape
    torch.manual_seed(4)
    mine = MultiheadAttention(e, h, batch_first=True, device=device)
    x = torch.randn(b, n, e, device=device)
    try:
        compiled = torch.compile(mine, fullgraph=True, backend="aot_eager" if device == "cpu" else "inductor")
        out = compiled(x, x, x, need_weights=False)[0]
        err = _err(out, mine(x, x, x, need_weights=False)[0])
        report("torch.compile(fullgraph=True) of the module", err <= 1e-4, f"max |compiled - eager| = {err:.2e}")
    except Exception as exc:  # a graph break or a compile error is a failed check, with its message
        report("torch.compile(fullgraph=True) of the module", False, f"{type(exc).__name__}: {str(exc)[:200]}")


def _sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def bench(shape_name, shape, dtype, device, rounds):
    b, n, e, h = shape
    mine, theirs, _ = _pair(e, h, dtype, device)
    x = torch.randn(b, n, e, dtype=dtype, device=device, requires_grad=True)
    fns = {"symattn": lambda: mine(x, x, x, need_weights=False)[0],
           "torch MHA": lambda: theirs(x, x, x, need_weights=False)[0],
           "SDPA + projections": lambda: sdpa_with_projections(theirs, x)}
    for backward in (False, True):
        times = {k: [] for k in fns}
        ctx = torch.enable_grad if backward else torch.no_grad
        with ctx():
            for fn in fns.values():  # warm up
                out = fn()
                if backward:
                    out.float().sum().backward()
            for _ in range(rounds):
                for name, fn in fns.items():
                    _sync(device)
                    start = time.perf_counter()
                    out = fn()
                    if backward:
                        out.float().sum().backward()
                    _sync(device)
                    times[name].append(time.perf_counter() - start)
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        what = "fwd+bwd" if backward else "forward"
        print(f"  {shape_name} {shape} {str(dtype):15s} {what:8s} "
              + "  ".join(f"{k} {v:8.3f} ms" for k, v in med.items())
              + f"   symattn/MHA {med['symattn'] / med['torch MHA']:.3f}"
              + f"   symattn/SDPA {med['symattn'] / med['SDPA + projections']:.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", help="cuda (default when present) or cpu")
    ap.add_argument("--quick", action="store_true", help="small shapes and few rounds")
    ap.add_argument("--no-timing", action="store_true", help="only the correctness checks")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--shapes", nargs="*", help=f"of {', '.join(SHAPES)}")
    args = ap.parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else None)
    if device is None:
        print("no CUDA device: nothing run (give --device cpu to run the checks on the CPU)")
        return 0
    if device == "cuda" and not torch.cuda.is_available():
        print("--device cuda given but torch sees no CUDA device")
        return 1
    print(f"torch {torch.__version__}, device {device}"
          + (f" ({torch.cuda.get_device_name()})" if device == "cuda" else ""))
    if device == "cuda":
        print(f"SDPA backends enabled: flash {torch.backends.cuda.flash_sdp_enabled()}, memory-efficient "
              f"{torch.backends.cuda.mem_efficient_sdp_enabled()}, math {torch.backends.cuda.math_sdp_enabled()}")
    small = next(iter(QUICK_SHAPES.values())) if args.quick else SHAPES["S1"]
    dtypes = [torch.float32, torch.bfloat16, torch.float16] + ([torch.float64] if device == "cuda" else [])
    print("correctness:")
    for dtype in dtypes:
        check_module(dtype, device, small)
        check_gqa(dtype, device, small)
        check_lowered_kernel(dtype, device, small)
    check_compile(device, small)
    if not args.no_timing:
        print("timing (median ms; ratios below 1 mean symattn is faster):")
        shapes = QUICK_SHAPES if args.quick else {k: SHAPES[k] for k in (args.shapes or SHAPES)}
        rounds = 2 if args.quick else args.rounds
        for name, shape in shapes.items():
            for dtype in ([torch.float32] if args.quick else [torch.float32, torch.bfloat16]):
                bench(name, shape, dtype, device, rounds)
    print("all checks passed" if not FAILED else f"{len(FAILED)} checks FAILED: {', '.join(FAILED)}")
    return 0 if not FAILED else 1


if __name__ == "__main__":
    sys.exit(main())
