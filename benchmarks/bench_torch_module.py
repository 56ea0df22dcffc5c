"""symattn.torch.MultiheadAttention against torch.nn.MultiheadAttention and SDPA with its projections.

    python benchmarks/bench_torch_module.py                      # S1 S2 S3 and (4, 1024, 256, 8), both dtypes
    python benchmarks/bench_torch_module.py --shapes S1 --dtypes float32 --rounds 9 --backward

Interleaved in one process: each round times every implementation once, in turn, on the same
inputs and weights (symattn's module loads the state_dict of torch's), so a slow moment of the
machine hits all of them. Prints the median wall time of each and the ratios symattn / torch MHA
and symattn / SDPA (forward, and forward + backward with ``--backward``); need_weights=False, the
call a model makes when it does not read the weights. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from symattn.torch import MultiheadAttention

SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8), "P4": (4, 1024, 256, 8)}


def sdpa_with_projections(mha, x):
    """What a hand-written layer does: one packed linear, SDPA, the output linear."""
    b, n, e = x.shape
    h = mha.num_heads
    q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).split(e, dim=-1)
    q, k, v = (t.view(b, n, h, e // h).transpose(1, 2) for t in (q, k, v))
    z = F.scaled_dot_product_attention(q, k, v)
    return F.linear(z.transpose(1, 2).reshape(b, n, e), mha.out_proj.weight, mha.out_proj.bias)


def timed(fn, backward):
    start = time.perf_counter()
    out = fn()
    if backward:
        out.sum().backward()
    return time.perf_counter() - start


def bench(shape, dtype, rounds, backward):
    b, n, e, h = SHAPES[shape]
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(e, h, batch_first=True, dtype=dtype)
    ours = MultiheadAttention(e, h, batch_first=True, dtype=dtype)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(b, n, e, dtype=dtype, requires_grad=backward)
    grad = torch.enable_grad if backward else torch.no_grad
    fns = {
        "symattn": lambda: ours(x, x, x, need_weights=False)[0],
        "torch MHA": lambda: ref(x, x, x, need_weights=False)[0],
        "SDPA + projections": lambda: sdpa_with_projections(ref, x),
    }
    times = {k: [] for k in fns}
    with grad():
        for fn in fns.values():  # warm up
            timed(fn, backward)
        for _ in range(rounds):
            for k, fn in fns.items():
                times[k].append(timed(fn, backward))
    med = {k: statistics.median(v) for k, v in times.items()}
    what = "forward + backward" if backward else "forward"
    print(f"{shape} {SHAPES[shape]} {str(dtype).removeprefix('torch.')} {what}: "
          + ", ".join(f"{k} {1e3 * t:.2f} ms" for k, t in med.items())
          + f"; symattn / torch MHA {med['symattn'] / med['torch MHA']:.3f}, "
          f"symattn / SDPA {med['symattn'] / med['SDPA + projections']:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="S1,S2,S3,P4")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--backward", action="store_true", help="also time forward + backward")
    args = ap.parse_args()
    for shape in args.shapes.split(","):
        for name in args.dtypes.split(","):
            dtype = getattr(torch, name)
            bench(shape, dtype, args.rounds, False)
            if args.backward:
                bench(shape, dtype, args.rounds, True)


if __name__ == "__main__":
    main()
