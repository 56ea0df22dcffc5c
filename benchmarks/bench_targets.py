"""Benchmarks of the array-library targets and the Dask path, in one run, printing ratios.

    python benchmarks/bench_targets.py                  # torch S1-S3, Dask S2 with 2 workers, overhead per chunk
    python benchmarks/bench_targets.py --only torch --rounds 15
    python benchmarks/bench_targets.py --only dask --dtype float64

1. Multi-head attention with projections (self-attention, biases, shapes of ``bench.py``):
   symattn's generated torch code (``symattn.lowering.targets.multihead``: the fused QKV
   projection, the attention core and the output projection, each lowered from its theorem with
   ``target="torch"``) against torch written by hand with ``scaled_dot_product_attention``
   (``addmm`` projections, SDPA, ``addmm``) and against ``nn.MultiheadAttention``. Target:
   generated / SDPA <= 1.15.
2. The Dask path (``symattn.numeric.multihead_attention`` on a Dask array) at S2 against the
   NumPy core on the same array in this process, in the same interleaved rounds, each result
   checked against the NumPy core's: Dask's local threaded scheduler (2 threads), and a
   ``LocalCluster`` of 2 worker processes of one thread each with the input persisted on them,
   the result brought to the client by ``.compute()`` (Dask joins the chunks on a worker, then
   sends the whole), by ``symattn.numeric.dask_arrays.gather`` (each chunk fetched from its
   worker, joined on the client), or left on the workers ("kept", as when it is written from
   there); each with one chunk per worker and one chunk per batch element, and the cost of one
   more chunk between the two; then the same on a cluster of 2 in-process workers (threads of this
   process, no serialization; ``--no-in-process`` skips it). Wall time and CPU time (this process, which hosts the
   scheduler, plus the workers) are medians; after each call the benchmark waits until the
   scheduler has released its results, so that no call finds the last one's (equal graphs have
   equal keys). Target: wall Dask / NumPy <= 1.3.
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

    from symattn.lowering.targets.multihead import multihead_attention

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


def _cpu_seconds(pid: int) -> float:
    """CPU time of every thread of process ``pid`` (nanoseconds from /proc/<pid>/task/*/schedstat,
    else psutil's, which counts in clock ticks of 10 ms)."""
    try:
        total = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:  # the thread ended meanwhile
                pass
        return total / 1e9
    except OSError:
        import psutil

        t = psutil.Process(pid).cpu_times()
        return t.user + t.system


def interleaved_cpu(impls: dict, rounds: int, pids, after=None) -> dict:
    """(median wall seconds, median CPU seconds of the processes ``pids``) of each callable over
    ``rounds`` rounds, one call of each per round in a random order; ``after()`` runs after each
    call, untimed."""
    after = after or (lambda: None)
    wall = {k: [] for k in impls}
    cpu = {k: [] for k in impls}
    for fn in impls.values():
        fn()  # warm up: lowering, proving, allocation
        after()
    for _ in range(rounds):
        order = list(impls)
        random.shuffle(order)
        for k in order:
            c = sum(_cpu_seconds(p) for p in pids)
            t = time.perf_counter()
            impls[k]()
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(sum(_cpu_seconds(p) for p in pids) - c)
            after()
    return {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in impls}


def _settled(client, held: int):
    """Wait until the scheduler holds no more than ``held`` keys: the results of the last call are
    released, so the next call computes again instead of finding them (equal graphs have equal keys)."""
    def count(dask_scheduler):
        return len(dask_scheduler.tasks)

    for _ in range(2500):
        if client.run_on_scheduler(count) <= held:
            return
        time.sleep(0.002)
    raise RuntimeError("the scheduler still holds the results of the last call after 5 s")


def _hasher() -> str:
    from dask import hashing

    return hashing.hashers[0].__name__.replace("_hash_", "") if hashing.hashers else "?"


def _table(title: str, rows: list, t: dict) -> None:
    print(title)
    print(f"{'chunks':>6}  {'implementation':38} {'wall ms':>8} {'CPU ms':>8} {'wall/NumPy':>11} {'CPU/NumPy':>10}")
    base_wall, base_cpu = t["numpy"]
    for key, chunks, label in rows:
        wall, cpu = t[key]
        print(f"{chunks:>6}  {label:38} {wall * 1e3:8.1f} {cpu * 1e3:8.1f} {wall / base_wall:11.3f} "
              f"{cpu / base_cpu:10.3f}")


def _per_extra_chunk(t: dict, B: int, chunkings) -> None:
    few, many = chunkings  # batch elements per chunk: few chunks, then many
    extra = B // many - B // few
    cells = ", ".join(f"{label} {(t[f'{key}{many}'][0] - t[f'{key}{few}'][0]) / extra * 1e3:.1f}"
                      for key, label in (("compute", ".compute()"), ("gather", "gather()"), ("kept", "kept")))
    print(f"   per extra chunk at S2 ({B // few} -> {B // many} chunks, wall ms): {cells}")


def dask_section(rounds: int, dtype_name: str, in_process: bool) -> None:
    import dask
    import dask.array as da
    import distributed

    from symattn.numeric.dask_arrays import gather

    dtype = np.dtype(dtype_name)
    B, n, E, H = SHAPES["S2"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((B, n, E)).astype(dtype)
    w = _weights(rng, E, dtype)
    want = sn.multihead_attention(x, x, x, *w, num_heads=H)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    worst = []

    def checked(label, got):
        err = float(np.max(np.abs(got - want)))
        if not err <= tol:
            raise AssertionError(f"{label}: max |Dask - NumPy| = {err:.2e} > {tol:.0e}")
        worst.append(err)

    print(f"\n2. the Dask path at S2 {SHAPES['S2']}, {dtype_name}, against the NumPy core on the same array in "
          f"this process (median of {rounds} interleaved rounds; CPU = this process, which hosts the scheduler, "
          f"and the workers; target: wall Dask/NumPy <= 1.3; dask tokenizes with {_hasher()}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')} in this process)")
    chunkings = (4, 1)  # batch elements per chunk: one chunk per worker, one per element
    # the threaded scheduler: a graph built with it set holds the weights themselves
    threaded = {}
    for per in chunkings:
        xl = da.from_array(x, chunks=(per, n, E))
        with dask.config.set(scheduler="threads"):
            threaded[per] = sn.multihead_attention(xl, xl, xl, *w, num_heads=H)
    kinds = (("processes", True),) + ((("in-process", False),) if in_process else ())
    for kind, processes in kinds:
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                           dashboard_address=None)
        with cluster, distributed.Client(cluster) as client:
            pids = sorted({os.getpid(), *client.run(os.getpid).values()})
            impls = {"numpy": lambda: sn.multihead_attention(x, x, x, *w, num_heads=H)}
            rows = [("numpy", "-", "NumPy core")]
            if kind == "processes":
                for per in chunkings:
                    def on_threads(y=threaded[per]):
                        return y.compute(scheduler="threads", num_workers=2)

                    checked("threads", on_threads())
                    impls[f"threads{per}"] = on_threads
                    rows.append((f"threads{per}", B // per, "Dask threaded scheduler, 2 threads"))
            for per in chunkings:
                xd = client.persist(da.from_array(x, chunks=(per, n, E)))
                distributed.wait(xd)

                def computed(xd=xd):  # Dask's own way: the chunks are joined on a worker, then sent
                    return sn.multihead_attention(xd, xd, xd, *w, num_heads=H).compute()

                def gathered(xd=xd):  # each chunk fetched from its worker, joined on the client
                    return gather(sn.multihead_attention(xd, xd, xd, *w, num_heads=H))

                def kept(xd=xd):  # the result left on the workers, as when it is written from there
                    y = client.persist(sn.multihead_attention(xd, xd, xd, *w, num_heads=H))
                    distributed.wait(y)
                    del y

                checked(f"{kind} compute()", computed())
                checked(f"{kind} gather()", gathered())
                impls.update({f"compute{per}": computed, f"gather{per}": gathered, f"kept{per}": kept})
                workers = f"2 {'worker processes' if processes else 'in-process workers'}"
                rows += [(f"compute{per}", B // per, f"{workers}, .compute()"),
                         (f"gather{per}", B // per, f"{workers}, gather()"),
                         (f"kept{per}", B // per, f"{workers}, kept (persist)")]
            held = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
            t = interleaved_cpu(impls, rounds, pids, after=lambda client=client, held=held: _settled(client, held))
            _table(f"{kind}: 2 workers of 1 thread, the input persisted on them", rows, t)
            _per_extra_chunk(t, B, chunkings)
    print(f"   (every result checked against the NumPy core's: max |Dask - NumPy| = {max(worst):.1e})")


def overhead_section(rounds: int, dtype_name: str) -> None:
    import dask
    import dask.array as da
    import distributed

    dtype = np.dtype(dtype_name)
    rng = np.random.default_rng(1)
    print("\n3. overhead per chunk: 128 elements of 16 × 32, H = 4, split into k chunks (median ms)")
    small = rng.standard_normal((128, 16, 32)).astype(dtype)
    ws = _weights(rng, 32, dtype)
    counts = (2, 8, 32, 128)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as client:
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
    p.add_argument("--no-in-process", dest="in_process", action="store_false",
                   help="skip the Dask path on 2 in-process workers (threads of this process)")
    args = p.parse_args(argv)
    print(f"cores: {len(os.sched_getaffinity(0))}; load average: {os.getloadavg()[0]:.1f} (a shared machine is noisy)")
    if args.only in (None, "torch"):
        torch_section(args.rounds, args.dtype)
    if args.only in (None, "dask"):
        dask_section(args.rounds, args.dtype, args.in_process)
        overhead_section(args.rounds, args.dtype)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
