"""A measured floor of the numeric core's algorithm: its unavoidable primitive operations, timed.

For one shape and dtype, each primitive operation the algorithm cannot avoid is timed alone, on
one thread (NumPy's BLAS held to one thread, as in the core's work items), by the CPU time of
that thread (so that waiting for a core on a shared machine does not count), at the size the
core runs it, and multiplied by how many times one call runs it:

- the QKV projection GEMM and the output projection GEMM, at the row slice of a work item;
- per step (a head's tile of t queries against a block of m_b keys): Q K_bᵀ (t × d by d × m_b),
  the exponential (both np.exp and np.exp2 are timed; the floor takes the cheaper, since the
  query's scale can carry log2(e)), S V_b (t × m_b by m_b × d) and the row sums by a GEMV
  (S 1);
- per tile (t queries of a head): the normalization diag(l)⁻¹ U (t × d divisions).

The sum, divided by the number of cores (perfect scaling, no Python at all, no bias add, no
copy, no accuracy check, no thread start), is a lower bound of the time any NumPy
implementation of this algorithm at these tile sizes could take on this machine. It is
printed beside torch's SDPA with projections, timed in the same process in between the
primitives' rounds, for NumPy's BLAS and, when available, for MKL's GEMM (``cblas_?gemm`` with
the sequential layer, through ``symattn.numeric.mkl``) and for the faster of the two per
product.
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def plan(b, n, E, H, itemsize, item_bytes, step_bytes, rows, cores):
    """The sizes the core (and its hand-written copy) runs the primitives at:
    {"rows": projection rows per work item, "t": queries per tile, "m_b": keys per block,
    "g": heads per step}. Many batch elements: a work item is c whole elements (its rows c·n),
    and a step all heads at once when their scores fit in 2 steps; else row slices of ``rows``,
    query tiles of about ``item_bytes`` of scores, key blocks of about ``step_bytes``."""
    scores = H * n * n * itemsize
    if cores > 1 and b >= 2 * cores and scores <= 4 * item_bytes:
        c = max(1, min(b // (2 * cores), item_bytes // scores))
        if c * scores <= 2 * step_bytes:
            return {"rows": c * n, "t": n, "m_b": n, "g": c * H}
        t = min(n, max(32, step_bytes // (n * itemsize)))
    else:
        c = None
        t = min(n, max(32, item_bytes // (n * itemsize)))
        while b * H * -(-n // t) < 2 * cores and t > 32:
            t = max(32, t // 2)
    fit = step_bytes // (t * itemsize)
    m_b = n if fit >= n else -(-n // -(-n // max(256, fit)))
    return {"rows": c * n if c else min(rows, n), "t": t, "m_b": m_b, "g": 1}


def _mean_time(fn, reps):
    """The calling thread's CPU time per call of ``fn`` over ``reps`` calls: on one thread, what a call
    costs without the time spent waiting for a core (a shared machine inflates wall time, not this)."""
    t = time.thread_time()
    for _ in range(reps):
        fn()
    return (time.thread_time() - t) / reps


def primitives(b, n, E, H, dtype, sizes, mkl_gemm=None):
    """{name: (count per call, {blas: fn})}: each primitive at its size, with its count per call.
    ``mkl_gemm(a, b, out)``: a GEMM by MKL (every size), or None."""
    rng = np.random.default_rng(0)
    d, rows, t, m_b, g = E // H, sizes["rows"], sizes["t"], sizes["m_b"], sizes["g"]

    def rand(*shape, scale=1.0):
        return (rng.normal(size=shape) * scale).astype(dtype)

    x, w_cat, p = rand(rows, E), rand(E, 3 * E, scale=E**-0.5), np.empty((rows, 3 * E), dtype)
    z, w_o, o = rand(rows, E), rand(E, E, scale=E**-0.5), np.empty((rows, E), dtype)
    q, k, v = rand(g, t, d, scale=d**-0.5), rand(g, m_b, d), rand(g, m_b, d)
    s = np.empty((g, t, m_b), dtype)
    s0 = np.clip(rand(g, t, m_b, scale=2.0), -20, 20)
    u, ones, l_ = np.empty((g, t, d), dtype), np.ones(m_b, dtype), np.empty((g, t), dtype)
    num, den, heads = rand(g, t, d), np.abs(rand(g, t, 1)) + 1, np.empty((g, t, d), dtype)
    kt = np.swapaxes(k, -1, -2)
    proj = -(-(b * n) // rows)
    steps = b * H // g * -(-n // t) * -(-n // m_b)
    tiles = b * H // g * -(-n // t)

    def gemm(a, bb, out):
        fns = {"numpy": lambda: np.matmul(a, bb, out=out)}
        if mkl_gemm is not None:
            if g == 1 or a.ndim == 2:
                a2 = a[0] if a.ndim == 3 else a
                b2 = bb[0] if bb.ndim == 3 else bb
                o2 = out[0] if out.ndim == 3 else out
                fns["mkl"] = lambda: mkl_gemm(a2, b2, o2)
            else:  # a batch of g products, one MKL call each
                fns["mkl"] = lambda: [mkl_gemm(a[i], bb[i], out[i]) for i in range(a.shape[0])]
        return fns

    return {
        "QKV projection": (proj, gemm(x, w_cat, p)),
        "output projection": (proj, gemm(z, w_o, o)),
        "Q K_bᵀ": (steps, gemm(q, kt, s)),
        "exp": (steps, {"elementwise": lambda: np.exp(s0, out=s)}),
        "exp2": (steps, {"elementwise": lambda: np.exp2(s0, out=s)}),
        "S V_b": (steps, gemm(s0, v, u)),
        "row sums S 1": (steps, {"numpy": lambda: np.matmul(s0, ones, out=l_)}),
        "normalize": (tiles, {"elementwise": lambda: np.divide(num, den, out=heads)}),
    }


def measure(prims, rounds, between=None, min_sample=5e-3):
    """{(name, blas): median seconds of one call}, over ``rounds`` interleaved rounds (each a
    sample of a few calls of every primitive), calling ``between()`` once per round and
    returning its (wall s, CPU s of the process) too."""
    reps = {}
    for name, (_, fns) in prims.items():
        for blas, fn in fns.items():
            fn()
            once = min(_mean_time(fn, 1) for _ in range(3))
            reps[name, blas] = max(1, int(min_sample / max(once, 1e-7)))
    times = {key: [] for key in reps}
    other = []
    for _ in range(rounds):
        for (name, blas), r in reps.items():
            times[name, blas].append(_mean_time(prims[name][1][blas], r))
        if between is not None:
            c, t = time.process_time(), time.perf_counter()
            between()
            other.append((time.perf_counter() - t, time.process_time() - c))
    return {k: statistics.median(v) for k, v in times.items()}, other


def floors(prims, med, cores):
    """{label: floor seconds}: the per-call sum of the primitives over ``cores``, with NumPy's
    BLAS, with MKL's GEMM (when measured) and with the faster of the two for each product."""
    labels = {"NumPy's BLAS": ("numpy",)}
    if any(blas == "mkl" for _, blas in med):
        labels["MKL"] = ("mkl",)
        labels["faster of each"] = ("numpy", "mkl")
    out = {}
    for label, kinds in labels.items():
        total = 0.0
        for name, (count, _) in prims.items():
            if name == "exp2":  # exp or exp2, whichever is cheaper (log2(e) folds into the query's scale)
                continue
            names = ("exp", "exp2") if name == "exp" else (name,)
            ts = [med[nm, k] for nm in names for k in prims[nm][1] if k in kinds or k == "elementwise"]
            total += count * min(ts or [med[name, "numpy"]])  # (the GEMV has no MKL version here)
        out[label] = total / cores
    return out


def table(prims, med):
    """Lines: each primitive's time per call (µs) and its total per attention call (ms, one thread)."""
    lines = []
    for name, (count, fns) in prims.items():
        cells = ", ".join(f"{k if k != 'elementwise' else 'NumPy'} {med[name, k] * 1e6:8.1f} µs" for k in fns)
        best = min(med[name, k] for k in fns)
        lines.append(f"    {name:18s} ×{count:5d}  {cells:42s} total {count * best * 1e3:8.2f} ms")
    return lines


def run(shape, dims, dtype, sizes, cores, sdpa=None, mkl=None, rounds=9):
    """Print the floor of one shape and dtype (and torch SDPA + projections beside it, when
    ``sdpa`` is given, timed between the primitives' rounds); return {label: floor s},
    torch's median wall s and median CPU s (None, None without torch)."""
    b, n, E, H = dims
    mkl_gemm = None
    if mkl is not None:
        saved = mkl.MIN_PRODUCT
        mkl.MIN_PRODUCT = 0  # time MKL at every size here (the core's rule would send small ones to NumPy)

        def mkl_gemm(a, bb, out):
            if mkl.gemm(a, bb, out) is None:
                raise ValueError(f"MKL declined {a.shape} @ {bb.shape}")
    try:
        prims = primitives(b, n, E, H, dtype, sizes, mkl_gemm)
        if sdpa is not None:
            sdpa()
        med, torch_times = measure(prims, rounds, sdpa)
    finally:
        if mkl is not None:
            mkl.MIN_PRODUCT = saved
    fl = floors(prims, med, cores)
    torch_t = statistics.median(w for w, _ in torch_times) if torch_times else None
    torch_min = min(w for w, _ in torch_times) if torch_times else None
    torch_cpu = statistics.median(c for _, c in torch_times) if torch_times else None
    name = np.dtype(dtype).name
    print(f"\n{shape} {dims} {name}: floor of this algorithm (rows {sizes['rows']} per projection item; steps of "
          f"{sizes['g']} head(s) × {sizes['t']} queries × {sizes['m_b']} keys), one thread, CPU time of the thread, "
          f"medians of {rounds} rounds")
    print("\n".join(table(prims, med)))
    print("  a lower bound of what any NumPy implementation of this algorithm at these sizes could reach on this "
          "machine (perfect scaling, no Python)")
    for label, f in fl.items():
        ratio = (f"   floor / torch SDPA + projections: wall {f / torch_t:.2f}, CPU {f * cores / torch_cpu:.2f}"
                 if torch_t else "")
        print(f"  floor with {label:15s} {f * 1e3:8.2f} ms (sum {f * cores * 1e3:.2f} ms / {cores} cores){ratio}")
    if torch_t:
        print(f"  torch SDPA + projections  {torch_t * 1e3:8.2f} ms wall (fastest {torch_min * 1e3:.2f}), "
              f"{torch_cpu * 1e3:.2f} ms CPU, medians, same process, between the rounds above (the floor's CPU ratio "
              "is its sum over torch's CPU time; waiting for a core inflates torch's wall time, neither of these)")
    return fl, torch_t, torch_cpu
