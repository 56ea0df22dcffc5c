"""The cost of one work item of the attention core, step by step (one process, alternating rounds).

    python benchmarks/item_cost.py                            # all sections, float32 and float64
    python benchmarks/item_cost.py --sections steps --dtypes float32 --rounds 25

Sections:

- steps: the S3 core (1, 2048, 512, 8) on the views multihead_attention passes (each head's rows
  strided by the fused projection's width), 32 items of 512 queries x 2048 keys in 4 blocks (float64:
  64 items of 256 queries), run on every core as the core runs them. A bare loop of the same NumPy
  steps (the scores GEMM, exp in place, the GEMM with [V 1] added to U, U / l) is turned into the
  core's item one step at a time:
  the scores by the generated kernel, then exp and the products by the generated kernels, then the
  accuracy check and the generated normalize, then the core's own item. Each line is the median
  thread CPU time of one item; the ratio is to the bare loop.
- gemv: one step of S1 (the 4 heads of the elements of one per-element item, 128 x 128 each), S2
  (one head, 512 x 512) and S3 (one item) as the core
  runs it (the numerator and denominator in one GEMM with [V 1]) against the row sums by a GEMV with
  a column of ones (kernels lowered here from the proved sides that state them: Exp(S) 1 of claim 6,
  the denominators' merge of claim 3, the numerators' merge of claim 7; the same check and normalize).
  Thread CPU time of a step in a pool thread with one BLAS thread.
- mkl: with use_blas("mkl"), how many of the item's products MKL computed (the rest NumPy's BLAS),
  and the item's thread CPU time with MKL against NumPy's BLAS.

Timing on a shared machine is noisy: every comparison alternates its variants round by round and
prints medians; thread CPU time leaves out the time spent waiting for a core.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
try:  # before MKL is loaded: a torch imported after it runs its MKL products on one thread
    import torch  # noqa: F401
except ImportError:
    pass

import numpy as np  # noqa: E402
import sympy as sp  # noqa: E402

import symattn.proofs.rewrites as R  # noqa: E402
from symattn.lowering import lower_theorem  # noqa: E402
from symattn.lowering.targets import numpy as runtime  # noqa: E402
from symattn.numeric import blas, blocked, kernels, mkl, parallel, workspace  # noqa: E402
from symattn.numeric.multihead import _positions_after_heads, _split  # noqa: E402

SHAPES = {"S1": (8, 128, 256, 4), "S2": (8, 512, 512, 8), "S3": (1, 2048, 512, 8)}


def views(shape, dtype):
    """(q, k, v, out, sel, i0, i1): the heads as multihead_attention passes them (views into one fused
    projection of one batch element) and the slice of one step or item of the core at this shape."""
    b, n, E, H = SHAPES[shape]
    d = E // H
    # S1 takes the per-element path: c elements per item (as multihead's rule picks them), every head
    # of them in one step, batch (c, H, 1)
    c = max(1, min(b // runtime.cores(), blocked.TILE_BYTES // (H * n * n * np.dtype(dtype).itemsize)))
    c = c if shape == "S1" else 1
    proj = (np.random.default_rng(0).standard_normal((c, n, 3 * E)) * 0.3).astype(dtype)
    q, k, v = (_split(proj[..., i * E:(i + 1) * E], n, H, 1, d) for i in range(3))
    if shape == "S1":
        return q, k, v, _positions_after_heads(np.empty((c, n, H, 1, d), dtype)), (), 0, n
    q, k, v = (a[..., 0, :, :] for a in (q, k, v))
    tile = 512 if (shape == "S2" or np.dtype(dtype).itemsize == 4) else 256
    return q, k, v, np.empty((1, H, n, d), dtype), (slice(0, 1), slice(3, 4)), 0, tile


def in_pool(fn, *args):
    """fn(*args) in a thread of the runtime's pool with NumPy's BLAS held to one thread."""
    parallel._enter()
    try:
        return runtime.pool().submit(fn, *args).result()
    finally:
        parallel._leave()


def alternate(variants: dict, rounds: int, reps: int) -> dict:
    """Median thread CPU time of one call of each variant, the variants alternating round by round."""
    for f in variants.values():
        f()
    times = {name: [] for name in variants}
    for r in range(rounds):
        for name, f in (variants.items() if r % 2 == 0 else list(variants.items())[::-1]):
            t = time.thread_time()
            for _ in range(reps):
                f()
            times[name].append((time.thread_time() - t) / reps)
    return {name: float(np.median(ts)) for name, ts in times.items()}


# -- steps ---------------------------------------------------------------------------------------

def steps(dtype, rounds):
    q, k, v, _, _, _, _ = views("S3", dtype)
    n, H, B = 2048, 8, 512
    T = 512 if dtype.itemsize == 4 else 256  # the core's tile (ITEM_BYTES of scores), its key blocks 512
    blocked.prepare()
    lock, spent = threading.Lock(), []

    def item(level, h, i0, out):
        t = time.thread_time()
        if level == 4:
            blocked._item(q, k, v, None, (slice(0, 1), slice(h, h + 1)), i0, i0 + T, False, 0, None, out)
        else:
            q4, k4, v4 = q[:, h:h + 1, i0:i0 + T], k[:, h:h + 1], v[:, h:h + 1]
            va = workspace.take("bench_v_aug", (1, 1, n, 65), dtype)
            va[..., :64], va[..., 64] = v4, 1
            s = workspace.take("bench_scores", (1, 1, T, B), dtype)
            U = None
            for j in range(0, n, B):
                if level >= 1:
                    kernels.SCORES(q4, k4[..., j:j + B, :], out=s)
                else:
                    np.matmul(q4, k4[..., j:j + B, :].swapaxes(-1, -2), out=s)
                if level >= 2:
                    if U is None:
                        U_out = workspace.take("bench_U", (1, 1, T, 65), dtype)
                        U = kernels.EXP_PRODUCT(S=s, V=va[..., j:j + B, :], out=U_out)
                    else:
                        U = kernels.ACCUMULATE(S_2=s, U_1=U, V_2=va[..., j:j + B, :])
                else:
                    np.exp(s, out=s)
                    if U is None:
                        U = np.matmul(s, va[..., j:j + B, :])
                    else:
                        U += s @ va[..., j:j + B, :]
            target = out[:, h:h + 1, i0:i0 + T]
            if level >= 3:
                blocked.unshifted_is_accurate(U, n)
                kernels.NORMALIZE(U=U[..., :64], l=U[..., 64:], out=target)
            else:
                np.divide(U[..., :64], U[..., 64:], out=target)
        with lock:
            spent.append(time.thread_time() - t)

    names = ["bare NumPy loop", "+ scores kernel", "+ exp_product / accumulate kernels",
             "+ check and normalize kernel", "the core's item (_item)"]
    outs = [np.empty((1, H, n, 64), dtype) for _ in names]
    items = [(h, i0) for h in range(H) for i0 in range(0, n, T)]
    med = {i: [] for i in range(len(names))}
    for r in range(rounds + 2):
        for level in (range(len(names)) if r % 2 == 0 else reversed(range(len(names)))):
            spent.clear()
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                parallel.run_items(lambda it, lv=level: item(lv, *it, outs[lv]), items)
            if r >= 2:
                med[level].append(np.median(spent))
    base = np.median(med[0])
    print(f"\nsteps: S3 {np.dtype(dtype).name}, one item ({T} queries x 2048 keys, blocks of 512) on every core, "
          f"median thread CPU per item over {rounds} rounds")
    for level, name in enumerate(names):
        m = np.median(med[level])
        diff = float(np.abs(outs[level] - outs[0]).max())
        print(f"  {name:36s} {m * 1e3:7.3f} ms  {m / base:6.3f}  (max |diff| {diff:.1e})")


# -- gemv ----------------------------------------------------------------------------------------

def gemv_kernels():
    """Kernels for the row sums by a GEMV, lowered from the proved sides that state them."""
    P, P2 = sp.MatrixSymbol("P", R.n, R.m), sp.MatrixSymbol("P_2", R.n, R.m_2)
    U1, l1 = sp.MatrixSymbol("U_1", R.n, R.d_v), sp.MatrixSymbol("l_1", R.n, 1)
    one, one2 = sp.MatrixSymbol("one", R.m, 1), sp.MatrixSymbol("one_2", R.m_2, 1)
    th = "blockwise_logsumexp_merge"
    exp_s = R.Exp(R.ShiftRows(R.S_2, R.c))
    return {
        "exp": lower_theorem(th, 6, "rhs", part=R.Exp(R.S), donate=(R.S,)),
        "product": lower_theorem(th, 6, "rhs", part=R.Exp(R.S) * R.V, inputs={R.Exp(R.S): P}),
        "row_sums": lower_theorem(th, 6, "rhs", part=R.Exp(R.S) * R.ones(R.m),
                                  inputs={R.Exp(R.S): P, R.ones(R.m): one}),
        "add_product": lower_theorem(th, 7, "rhs", inputs={R.Exp(R.S_1) * R.V_1: U1, R.Exp(R.S_2): P2}),
        "add_row_sums": lower_theorem(th, 3, "rhs", inputs={R.Exp(R.ShiftRows(R.S_1, R.c)) * R.ones(R.m_1): l1,
                                                             exp_s: P2, R.ones(R.m_2): one2}),
    }


def gemv(shape, dtype, rounds, K):
    q5, k5, v5, out, sel, i0, i1 = views(shape, dtype)
    m = k5.shape[-2]

    def attend(q, k, v, mask, i0, causal, offset, block_size, out):
        U = l = None
        batch, dtype = runtime.batch_of(q, k), np.result_type(q, k)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            for j0 in range(0, m, block_size):
                j1 = min(m, j0 + block_size)
                s = blocked._scores(q, k[..., j0:j1, :], None, i0, j0, False, 0, batch, dtype)
                p = K["exp"](S=s, out=s)
                ones = workspace.take("bench_ones", (j1 - j0, 1), s.dtype)
                ones[...] = 1
                if U is None:
                    rows = runtime.batch_of(s, v) + (s.shape[-2],)
                    U_out = workspace.take("bench_Ug", rows + (v.shape[-1],), s.dtype)
                    U = K["product"](P=p, V=v[..., j0:j1, :], out=U_out)
                    l = K["row_sums"](P=p, one=ones, out=workspace.take("bench_lg", rows + (1,), s.dtype))
                else:
                    U = K["add_product"](P_2=p, U_1=U, V_2=v[..., j0:j1, :])
                    l = K["add_row_sums"](P_2=p, l_1=l, one_2=ones)
        largest, tiny, small = blocked._limits(U.dtype)  # the same check, on U and l apart
        a = np.abs(U, out=workspace.take("check", U.shape, U.dtype))
        ok = a.max() <= largest and l.max() <= largest and l.min() >= m * small and (
            a.min() >= m * tiny or bool(((a >= m * tiny) | (a == 0)).all()))
        if not ok:
            raise RuntimeError("this benchmark's inputs need no shift")
        return kernels.NORMALIZE(U=U, l=l, out=out)

    core = blocked._attend
    o1, o2 = np.empty_like(out), np.empty_like(out)

    def with_gemv():
        blocked._attend = attend
        try:
            blocked._item(q5, k5, v5, None, sel, i0, i1, False, 0, None, o2)
        finally:
            blocked._attend = core

    reps = {"S1": 40, "S2": 8, "S3": 3}[shape]
    t = alternate({"ones": lambda: blocked._item(q5, k5, v5, None, sel, i0, i1, False, 0, None, o1),
                   "gemv": with_gemv}, rounds, reps)
    diff = float(np.abs(o1[sel][..., i0:i1, :] - o2[sel][..., i0:i1, :]).max())
    print(f"  {shape} {np.dtype(dtype).name:7s} [V 1] {t['ones'] * 1e3:7.3f} ms   GEMV {t['gemv'] * 1e3:7.3f} ms   "
          f"GEMV / [V 1] {t['gemv'] / t['ones']:.3f}   (max |diff| {diff:.1e})")


# -- mkl -----------------------------------------------------------------------------------------

def mkl_item(shape, dtype, rounds):
    q5, k5, v5, out, sel, i0, i1 = views(shape, dtype)

    def item():
        blocked._item(q5, k5, v5, None, sel, i0, i1, False, 0, None, out)

    log = []

    def counting(a, b, out=None):
        r = mkl.gemm(a, b, out)
        log.append(r is not None)
        return r

    blas.use_blas("mkl")
    runtime._GEMM = counting
    try:
        item()
    finally:
        blas.use_blas("numpy")

    def on(name):
        def f():
            blas.use_blas(name)
            try:
                item()
            finally:
                blas.use_blas("numpy")
        return f

    t = alternate({"numpy": on("numpy"), "mkl": on("mkl")}, rounds, {"S1": 40, "S2": 8, "S3": 3}[shape])
    print(f"  {shape} {np.dtype(dtype).name:7s} products: {sum(log)} of {len(log)} by MKL   "
          f"NumPy's BLAS {t['numpy'] * 1e3:7.3f} ms   MKL {t['mkl'] * 1e3:7.3f} ms   "
          f"MKL / NumPy {t['mkl'] / t['numpy']:.3f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", default="steps,gemv,mkl")
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--shapes", default="S1,S2,S3", help="for the gemv and mkl sections")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    sections, dtypes, shapes = (s.split(",") for s in (args.sections, args.dtypes, args.shapes))
    blocked.prepare()
    if "steps" in sections:
        for dt in dtypes:
            steps(np.dtype(dt), args.rounds)
    if "gemv" in sections:
        K = gemv_kernels()
        print(f"\ngemv: one step, thread CPU time in a pool thread, median of {args.rounds} alternating rounds")
        for shape in shapes:
            for dt in dtypes:
                in_pool(gemv, shape, np.dtype(dt), args.rounds, K)
    if "mkl" in sections:
        if not mkl.available():
            print("\nmkl: libmkl_rt is not installed (pip install mkl)")
        else:
            print(f"\nmkl: one step, thread CPU time in a pool thread, median of {args.rounds} alternating rounds")
            for shape in shapes:
                for dt in dtypes:
                    in_pool(mkl_item, shape, np.dtype(dt), args.rounds)


if __name__ == "__main__":
    sys.exit(main())
