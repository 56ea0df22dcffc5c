"""Benchmarks of the array-library targets and the Dask path, in one run, printing ratios.

    python benchmarks/bench_targets.py                  # torch S1-S3, Dask S2 with 2 workers, overhead per chunk
    python benchmarks/bench_targets.py --only torch --rounds 15
    python benchmarks/bench_targets.py --only dask --dtype float64

1. Multi-head attention with projections (self-attention, biases, shapes of ``bench.py``):
   symattn's generated torch code (``symattn.lowering.targets_multihead``: the fused QKV
   projection, the attention core and the output projection, each lowered from its theorem with
   ``target="torch"``) against torch written by hand with ``scaled_dot_product_attention``
   (``addmm`` projections, SDPA, ``addmm``) and against ``nn.MultiheadAttention``. Target:
   generated / SDPA <= 1.15.
2. The Dask path (``symattn.numeric.multihead_attention`` on a Dask array) at S2 on a
   ``LocalCluster`` of 2 worker processes with one thread each, the input already on the workers
   (persisted), the result gathered to the client ("Dask") or left on the workers ("kept", as
   when it is written from there; "kept, W": the weights persisted on the workers too), against
   the NumPy core on the same array in this process.
   Target: Dask / NumPy <= 1.3.
3. Overhead per chunk: the same small batch (128 elements of 16 × 32) split into 2, 8, 32 and 128
   chunks, on the cluster and on Dask's local threaded scheduler; the slope of time against the
   number of chunks is the cost of one more chunk (scheduling, one task, one call of the NumPy
   function).

Each timing is the median over interleaved rounds (one call of each implementation per round, in
a random order). On a shared machine the numbers move with the neighbours' load: read the ratios,
and run again before believing a small difference.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # torch's OpenMP threads sleep instead of spinning

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import symattn.numeric as sn  # noqa: E402

SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8)}  # (batch, n, d_model, H)


def interleaved(impls: dict, rounds: int) -> dict:
    """Median seconds of each callable over ``rounds`` rounds, one call of each per round in a random order."""
    times = {k: [] for k in impls}
    for fn in impls.values():
        fn()  # warm up: lowering, proving, allocation
    for _ in range(rounds):
        order = list(impls)
        random.shuffle(order)
        for k in order:
            t = time.perf_counter()
            impls[k]()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


# -- 1. torch -----------------------------------------------------------------------------------

def torch_section(rounds: int, dtype_name: str) -> None:
    import torch
    import torch.nn.functional as F

    from symattn.lowering.targets_multihead import multihead_attention

    dtype = getattr(torch, dtype_name)
    print(f"\n1. multi-head attention with projections, torch {torch.__version__}, {dtype_name}, "
          f"{torch.get_num_threads()} threads (median ms; target generated/SDPA <= 1.15)")
    print(f"{'shape':6} {'generated':>10} {'SDPA':>10} {'nn.MHA':>10} {'gen/SDPA':>9} {'gen/nn.MHA':>11}")
    for name, shape in SHAPES.items():
        _torch_shape(name, shape, dtype, rounds, torch, F, multihead_attention)


def _torch_shape(name, shape, dtype, rounds, torch, F, multihead_attention):
    B, n, E, H = shape
    g = torch.Generator().manual_seed(0)
    x = torch.randn(B, n, E, generator=g, dtype=dtype)
    mha = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=dtype).eval()
    W, b = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
    w = [W[i * E:(i + 1) * E].T.contiguous() for i in range(3)] + [mha.out_proj.weight.detach().T.contiguous()]
    bias = [b[i * E:(i + 1) * E][None] for i in range(3)] + [mha.out_proj.bias.detach()[None]]

    def generated():
        return multihead_attention(x, x, x, *w, num_heads=H, b_q=bias[0], b_k=bias[1], b_v=bias[2],
                                   b_o=bias[3], target="torch")

    def sdpa():
        flat = x.reshape(B * n, E)
        q, k, v = (torch.addmm(bias[i], flat, w[i]).view(B, n, H, E // H).transpose(1, 2) for i in range(3))
        z = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B * n, E)
        return torch.addmm(bias[3], z, w[3]).view(B, n, E)

    def nn_mha():
        return mha(x, x, x, need_weights=False)[0]

    with torch.inference_mode():
        err = (generated() - sdpa()).abs().max().item()
        t = interleaved({"gen": generated, "sdpa": sdpa, "nn": nn_mha}, rounds)
    print(f"{name:6} {t['gen'] * 1e3:10.2f} {t['sdpa'] * 1e3:10.2f} {t['nn'] * 1e3:10.2f} "
          f"{t['gen'] / t['sdpa']:9.3f} {t['gen'] / t['nn']:11.3f}   (max |gen - SDPA| = {err:.1e})")


# -- 2 and 3. Dask --------------------------------------------------------------------------------

def _weights(rng, E, dtype):
    return [(rng.standard_normal((E, E)) / np.sqrt(E)).astype(dtype) for _ in range(4)]


def dask_section(rounds: int, dtype_name: str) -> None:
    import dask
    import dask.array as da
    import distributed

    dtype = np.dtype(dtype_name)
    B, n, E, H = SHAPES["S2"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, n, E)).astype(dtype)
    w = _weights(rng, E, dtype)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
        print(f"\n2. the Dask path at S2 {SHAPES['S2']}, {dtype_name}, 2 worker processes of 1 thread, input persisted "
              f"on the workers, result gathered (median ms; target Dask/NumPy <= 1.3)")
        print(f"{'chunks':>6} {'Dask':>10} {'kept':>10} {'kept, W':>10} {'NumPy core':>11} {'Dask/NumPy':>11} "
              f"{'kept/NumPy':>11} {'kept,W/NumPy':>11}")
        for per in (4, 2, 1):  # batch elements per chunk
            xd = client.persist(da.from_array(x, chunks=(per, n, E)))
            distributed.wait(xd)
            sn.multihead_attention(xd, xd, xd, *w, num_heads=H).compute()  # each worker lowers and proves once

            def on_dask(xd=xd):
                return client.compute(sn.multihead_attention(xd, xd, xd, *w, num_heads=H), sync=True)

            def kept(xd=xd):  # the result left on the workers, as when it is written from there
                y = client.persist(sn.multihead_attention(xd, xd, xd, *w, num_heads=H))
                distributed.wait(y)
                del y

            wd = [client.persist(da.from_array(a)) for a in w]  # the weights scattered once

            def kept_w(xd=xd, wd=wd):  # ... and the weights too
                y = client.persist(sn.multihead_attention(xd, xd, xd, *wd, num_heads=H))
                distributed.wait(y)
                del y

            def on_numpy():
                return sn.multihead_attention(x, x, x, *w, num_heads=H)

            err = float(np.max(np.abs(on_dask() - on_numpy())))
            t = interleaved({"dask": on_dask, "kept": kept, "kept_w": kept_w, "numpy": on_numpy}, rounds)
            print(f"{B // per:6d} {t['dask'] * 1e3:10.1f} {t['kept'] * 1e3:10.1f} {t['kept_w'] * 1e3:10.1f} "
                  f"{t['numpy'] * 1e3:11.1f} {t['dask'] / t['numpy']:11.3f} {t['kept'] / t['numpy']:11.3f} "
                  f"{t['kept_w'] / t['numpy']:11.3f}   (max |Dask - NumPy| = {err:.1e})")

        print("\n3. overhead per chunk: 128 elements of 16 × 32, H = 4, split into k chunks (median ms)")
        small = rng.standard_normal((128, 16, 32)).astype(dtype)
        ws = _weights(rng, 32, dtype)
        counts = (2, 8, 32, 128)
        for label, scheduler in (("cluster", None), ("threads", "threads")):
            times = []
            for k in counts:
                xs = da.from_array(small, chunks=(128 // k, 16, 32))
                if scheduler is None:
                    xs = client.persist(xs)
                    distributed.wait(xs)

                def run(xs=xs, scheduler=scheduler):
                    if scheduler is None:
                        return client.compute(sn.multihead_attention(xs, xs, xs, *ws, num_heads=4), sync=True)
                    # built with the threaded scheduler set: built under the client, the weights
                    # would be the client's Futures, which only the client can compute
                    with dask.config.set(scheduler=scheduler):
                        return sn.multihead_attention(xs, xs, xs, *ws, num_heads=4).compute()

                times.append(interleaved({"run": run}, rounds)["run"])
            slope = np.polyfit(counts, times, 1)[0]
            cells = "  ".join(f"{k:>3} chunks {t * 1e3:7.1f}" for k, t in zip(counts, times))
            print(f"{label:8} {cells}   per chunk: {slope * 1e3:.2f} ms")
        one = interleaved({"numpy": lambda: sn.multihead_attention(small[:1], small[:1], small[:1], *ws,
                                                                   num_heads=4)}, rounds)["numpy"]
        print(f"         (one call of the NumPy function on one element, for scale: {one * 1e3:.2f} ms)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--only", choices=("torch", "dask"), help="one section only")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds per measurement (default 7)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    args = p.parse_args(argv)
    print(f"cores: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.1f} (a shared machine is noisy)")
    if args.only in (None, "torch"):
        torch_section(args.rounds, args.dtype)
    if args.only in (None, "dask"):
        dask_section(args.rounds, args.dtype)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
