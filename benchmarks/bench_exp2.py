"""The unshifted tile step of the numeric core in base e against base 2, timed and checked for accuracy.

One step of a work item (a tile of t queries of one head against key blocks of m_b keys, d = 64,
values [V 1] with d + 1 columns) runs, in base e (claims 6 and 7 of ``blockwise_logsumexp_merge``):

    S_1 = scores(Q, K_1)     U = exp_product(S_1, [V_1 1])     S_2 = scores(Q, K_2)     U = accumulate(S_2, U, [V_2 1])

and in base 2 (claims 9 and 11): the same with ``scores_base2`` (T = (Q/ln 2) Kᵀ), ``exp2_product`` and
``accumulate_base2``; and a third way, ``query_base2`` once per tile (Q/ln 2) and then the plain ``scores``.
Every kernel runs on one thread (BLAS held to one thread, as inside the core's work items; a 512 × 512 tile
is too small for the runtime to split), the ways alternate in one process (A, B, C, A, B, C, ...), and the
medians of the rounds are printed with their ratios. Timing is noisy on a shared machine: read ratios, not
absolute times.

Accuracy: U = exp(Q Kᵀ) [V 1] and the normalized tile diag(l)⁻¹ U at scores spread over [-R, R]
(R = 80 in float32, exp(80) = 5.5e34 is still finite; 700 in float64), against a reference computed from
the same inputs in a wider type (float64 for float32 inputs, long double for float64 inputs); the
maximum and the median relative error over the entries are printed for both bases.

    python benchmarks/bench_exp2.py [--t 512] [--m 512] [--d 64] [--rounds 21]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from symattn.numeric import kernels  # noqa: E402


def _inputs(rng, t, m, d, dtype, spread=None):
    q = rng.standard_normal((t, d)) / np.sqrt(d)
    k1, k2 = rng.standard_normal((m, d)), rng.standard_normal((m, d))
    if spread is not None:  # scale Q so that the scores fill [-spread, spread]
        q *= spread / max(np.abs(q @ k1.T).max(), np.abs(q @ k2.T).max())
    v = [np.concatenate([rng.uniform(0.1, 1.0, (m, d)), np.ones((m, 1))], -1) for _ in range(2)]
    return [a.astype(dtype) for a in (q, k1, k2, *v)]


def base_e(q, k1, k2, v1, v2, s_buf, u_buf):
    s = kernels.SCORES(q, k1, out=s_buf)
    U = kernels.EXP_PRODUCT(S=s, V=v1, out=u_buf)
    s = kernels.SCORES(q, k2, out=s_buf)
    return kernels.ACCUMULATE(S_2=s, U_1=U, V_2=v2)


def base_2(q, k1, k2, v1, v2, s_buf, u_buf):
    t = kernels.SCORES_BASE2(q, k1, out=s_buf)
    U = kernels.EXP2_PRODUCT(T=t, V=v1, out=u_buf)
    t = kernels.SCORES_BASE2(q, k2, out=s_buf)
    return kernels.ACCUMULATE_BASE2(T_2=t, U_1=U, V_2=v2)


def base_2_query_once(q, k1, k2, v1, v2, s_buf, u_buf):
    q2 = kernels.QUERY_BASE2(q)
    t = kernels.SCORES(q2, k1, out=s_buf)
    U = kernels.EXP2_PRODUCT(T=t, V=v1, out=u_buf)
    t = kernels.SCORES(q2, k2, out=s_buf)
    return kernels.ACCUMULATE_BASE2(T_2=t, U_1=U, V_2=v2)


WAYS = {"base e": base_e, "base 2": base_2, "base 2, Q/ln 2 once": base_2_query_once}


def time_ways(dtype, t, m, d, rounds, reps=5):
    rng = np.random.default_rng(0)
    q, k1, k2, v1, v2 = _inputs(rng, t, m, d, dtype)
    s_buf, u_buf = np.empty((t, m), dtype), np.empty((t, d + 1), dtype)
    for f in WAYS.values():  # lower (and prove) every kernel before timing
        f(q, k1, k2, v1, v2, s_buf, u_buf)
    times = {name: [] for name in WAYS}
    for _ in range(rounds):
        for name, f in WAYS.items():
            start = time.perf_counter()
            for _ in range(reps):
                f(q, k1, k2, v1, v2, s_buf, u_buf)
            times[name].append((time.perf_counter() - start) / reps)
    return {name: (statistics.median(ts), min(ts)) for name, ts in times.items()}


def time_kernels(dtype, t, m, d, rounds, reps=5):
    """Each kernel alone: scores, the exponential and product of the first block, the accumulate."""
    rng = np.random.default_rng(1)
    q, k1, _, v1, _ = _inputs(rng, t, m, d, dtype)
    s0 = q @ k1.T
    t0 = s0 / np.log(2)
    U0 = np.exp(s0) @ v1
    s_buf, u_buf = np.empty((t, m), dtype), np.empty((t, d + 1), dtype)
    calls = {
        "scores": (lambda: kernels.SCORES(q, k1, out=s_buf), lambda: kernels.SCORES_BASE2(q, k1, out=s_buf)),
        "exp product": (lambda: kernels.EXP_PRODUCT(S=s_buf, V=v1, out=u_buf),
                        lambda: kernels.EXP2_PRODUCT(T=s_buf, V=v1, out=u_buf)),
        "accumulate": (lambda: kernels.ACCUMULATE(S_2=s_buf, U_1=U0, V_2=v1),
                       lambda: kernels.ACCUMULATE_BASE2(T_2=s_buf, U_1=U0, V_2=v1)),
    }
    fresh = {"scores": (None, None), "exp product": (s0, t0), "accumulate": (s0, t0)}
    out = {}
    for name, (a, b) in calls.items():
        ts = ([], [])
        for _ in range(rounds):
            for which, f in enumerate((a, b)):
                total = 0.0
                for _ in range(reps):
                    src = fresh[name][which]
                    if src is not None:  # the kernel overwrites its scores: give it fresh ones, untimed
                        s_buf[...] = src
                    start = time.perf_counter()
                    f()
                    total += time.perf_counter() - start
                ts[which].append(total / reps)
        out[name] = [(statistics.median(t), min(t)) for t in ts]
    return out


def accuracy(dtype, t, m, d, spread, seed=2):
    """(max, median) relative error of U = exp(Q Kᵀ)[V 1] over two key blocks and of the normalized
    tile, for base e and base 2, against the same computation in a wider type."""
    rng = np.random.default_rng(seed)
    q, k1, k2, v1, v2 = _inputs(rng, t, m, d, dtype, spread)
    wide = np.float64 if dtype == np.float32 else np.longdouble
    W = [a.astype(wide) for a in (q, k1, k2, v1, v2)]
    U_ref = np.exp(W[0] @ W[1].T) @ W[3] + np.exp(W[0] @ W[2].T) @ W[4]
    out_ref = U_ref[:, :d] / U_ref[:, d:]
    res = {}
    with np.errstate(over="ignore", under="ignore"):
        for name, f in (("base e", base_e), ("base 2", base_2)):
            U = f(q, k1, k2, v1, v2, np.empty((t, m), dtype), np.empty((t, d + 1), dtype))
            errs = {}
            for what, got, ref in (("U", U, U_ref), ("out", U[:, :d] / U[:, d:], out_ref)):
                rel = np.abs(got.astype(wide) - ref) / np.abs(ref)
                errs[what] = (float(np.max(rel)), float(np.median(rel)))
            res[name] = errs
    return res


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--t", type=int, default=512, help="queries per tile")
    p.add_argument("--m", type=int, default=512, help="keys per block")
    p.add_argument("--d", type=int, default=64, help="head size")
    p.add_argument("--rounds", type=int, default=21)
    a = p.parse_args(argv)
    print(f"tile {a.t} queries x {a.m} keys per block, d = {a.d}, values [V 1]; one thread; "
          f"medians of {a.rounds} alternating rounds")
    for dtype in (np.float32, np.float64):
        name = np.dtype(dtype).name
        ways = time_ways(dtype, a.t, a.m, a.d, a.rounds)
        (base, base_min) = ways["base e"]
        print(f"\n{name}: two key blocks (scores, exp product, scores, accumulate): median, min of the rounds")
        for way, (sec, low) in ways.items():
            print(f"  {way:22s} {sec * 1e3:7.3f} ms ({low * 1e3:6.3f})   / base e {sec / base:5.3f} "
                  f"({low / base_min:5.3f})")
        print(f"{name}: each kernel alone (base e -> base 2): median (min) of the rounds")
        for k, ((e, e_min), (b, b_min)) in time_kernels(dtype, a.t, a.m, a.d, a.rounds).items():
            print(f"  {k:22s} {e * 1e3:6.3f} ({e_min * 1e3:6.3f}) -> {b * 1e3:6.3f} ({b_min * 1e3:6.3f}) ms   "
                  f"ratio {b / e:5.3f} ({b_min / e_min:5.3f})")
        for spread in ((10.0, 80.0) if dtype == np.float32 else (10.0, 700.0)):
            print(f"{name}: relative error, scores in [-{spread:g}, {spread:g}] (max over 4 draws: max, median "
                  "over the entries)")
            runs = [accuracy(dtype, a.t, a.m, a.d, spread, seed) for seed in range(2, 6)]
            for way in runs[0]:
                text = "   ".join(f"{w}: {max(r[way][w][0] for r in runs):.2e}, "
                                  f"{max(r[way][w][1] for r in runs):.2e}" for w in runs[0][way])
                print(f"  {way:8s} {text}")


if __name__ == "__main__":
    main()
