"""symattn.torch.MultiheadAttention against torch.nn.MultiheadAttention and SDPA with its projections.

    python benchmarks/bench_torch_module.py                      # S1 S2 S3 P4, float32 and float64, fwd and fwd+bwd
    python benchmarks/bench_torch_module.py --shapes S1 --dtypes float32 --rounds 9 --forward-only

Interleaved in one process: each round times every implementation in turn (the order rotates from
round to round), each on the same inputs and weights (symattn's module loads the state_dict of
torch's), ``--reps`` calls per timing, so a slow moment of the machine hits all of them. Prints, for
the forward and for forward + backward (``.sum().backward()`` of the output, gradients flowing to
the input and every parameter), the median time of each implementation and the medians over the
rounds of the per-round ratios symattn / torch MHA and symattn / SDPA; need_weights=False, the call
a model makes when it does not read the weights. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

from symattn.torch import MultiheadAttention

#: (batch N, length L, embed_dim E, num_heads H)
SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8), "P4": (4, 1024, 256, 8)}


def sdpa_with_projections(mha, x):
    """What a hand-written layer does: one packed linear, SDPA, the output linear."""
    b, n, e = x.shape
    h = mha.num_heads
    q, k, v = F.linear(x, mha.in_proj_weight, mha.in_proj_bias).split(e, dim=-1)
    q, k, v = (t.view(b, n, h, e // h).transpose(1, 2) for t in (q, k, v))
    z = F.scaled_dot_product_attention(q, k, v)
    return F.linear(z.transpose(1, 2).reshape(b, n, e), mha.out_proj.weight, mha.out_proj.bias)


def timed(fn, backward, reps):
    start = time.perf_counter()
    for _ in range(reps):
        out = fn()
        if backward:
            out.sum().backward()
    return (time.perf_counter() - start) / reps


def bench(shape, dtype, rounds, reps, backward, min_ms=0.0):
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
    names = list(fns)
    times = {k: [] for k in fns}
    with grad():
        for _ in range(2):  # warm up: two timings of each (the first cell of a run pays the process's start)
            for fn in fns.values():
                timed(fn, backward, reps)
        # more calls per timing where one call is short, the same number for every implementation
        one = min(timed(fn, backward, 1) for fn in fns.values())
        reps = max(reps, math.ceil(min_ms / 1e3 / one))
        for r in range(rounds):
            for k in names[r % 3:] + names[:r % 3]:
                times[k].append(timed(fns[k], backward, reps))
            for mod in (ours, ref):
                mod.zero_grad(set_to_none=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median(a / o for a, o in zip(times["symattn"], times[k])) for k in names[1:]}
    what = "fwd+bwd" if backward else "fwd    "
    print(f"{shape} {str(SHAPES[shape]):18} {str(dtype).removeprefix('torch.'):7} {what}: "
          + ", ".join(f"{k} {1e3 * t:8.2f} ms" for k, t in med.items())
          + f"; symattn / torch MHA {ratio['torch MHA']:.3f}, symattn / SDPA {ratio['SDPA + projections']:.3f}"
          + f" ({rounds} rounds of {reps} calls)",
          flush=True)
    return ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="S1,S2,S3,P4")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--rounds", type=int, default=9, help="timings of each implementation (medians over these)")
    ap.add_argument("--reps", type=int, default=3, help="calls per timing, at least")
    ap.add_argument("--min-ms", type=float, default=30.0, help="more calls per timing where fewer would take less "
                    "than this many milliseconds (the same number for every implementation of a cell)")
    ap.add_argument("--forward-only", action="store_true", help="time the forward alone")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default); one "
                    "thread keeps the timings steady on a loaded machine")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    for shape in args.shapes.split(","):
        for name in args.dtypes.split(","):
            dtype = getattr(torch, name)
            bench(shape, dtype, args.rounds, args.reps, False, args.min_ms)
            if not args.forward_only:
                bench(shape, dtype, args.rounds, args.reps, True, args.min_ms)


if __name__ == "__main__":
    main()
