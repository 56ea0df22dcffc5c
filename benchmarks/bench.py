"""Benchmarks: symattn's kernels against hand-written NumPy of the same algorithm and PyTorch.

    python benchmarks/bench.py                       # S1 S2 S3 P1 and L1, float32 and float64
    python benchmarks/bench.py --shapes S1,P1 --dtypes float32 --rounds 7
    python benchmarks/bench.py --shapes S1,S2,S3 --mode separate --process-rounds 5
    python benchmarks/bench.py --shapes L1 --l1-causal
    python benchmarks/bench.py --kernels --no-torch  # only the kernel-level section (S1 S2 S3)
    python benchmarks/bench.py --shapes S1,S2,S3 --mkl  # also the core and the hand with MKL's products

Each shape and dtype is measured in two modes (``--mode both``, the default):

- interleaved: every implementation in this one process, one call of each per round in a
  random order, so a noisy neighbour, or the threads a library leaves spinning, hurts them
  alike;
- separate: each implementation alone in a child process of its own (the symattn and NumPy
  children never import torch), the children run one after another, in an order that
  alternates, ``--process-rounds`` times; so one library's idle threads cannot slow the other.

For each mode it prints the median wall time of a call and the median CPU time of the process
during a call (all threads; on a shared machine the wall time includes waiting for a core,
the CPU time does not), GFLOP/s against this machine's NumPy GEMM peak, and the ratios the
targets are stated in; the separate mode also the spread (smallest and largest median of one
child). A summary table at the end lists symattn / torch SDPA + projections for both modes.
L1 (n = 32768) runs the key-blocked online-softmax kernel in a child process and reports its
peak memory.

The NumPy baseline of S1-S3 is the numeric core's algorithm written by hand with no symattn
code (``numpy_same_algorithm``): the scaled weights side by side once, batch elements as work
items (or, for few batch elements, one projection GEMM, then heads and query tiles as work
items) on a thread per core with single-threaded BLAS, scores in steps of about 1 MiB whose
key blocks simply add up with the shift 0, numerator and denominator in one GEMM with [V 1], a
check of the result that falls back to the row max as the shift, and one GEMM with W^O. So
"symattn / numpy" is the cost of generating the kernels from theorems rather than writing
them by hand. ``--plain-numpy`` adds the plain whole-batch version (one batched product per
step, softmax on the full score array).

``--mkl`` (with the ``mkl`` wheel installed) adds, at S1-S3, the numeric core with Intel oneMKL's
GEMM for the large products inside its work items (``symattn.numeric.use_blas("mkl")``) and the
hand-written same algorithm with the same products on MKL (through the same ctypes binding,
``symattn.numeric.mkl.gemm``, and the same rule for which products go there); every call sets its
BLAS, so all of them can run interleaved. The ratios are printed for each BLAS: symattn / hand
with NumPy's BLAS, symattn (MKL) / hand (MKL), and each against torch.

The kernel-level section (``--kernels`` alone, or at the end of the default run) times each
generated kernel the numeric core runs at S1, S2, S3 against a hand-written NumPy expression
computing exactly the same thing on the same inputs into the same ``out`` buffer (results
checked equal first): the fused QKV projection and the output projection at the whole shape,
and the scores, exp_product, accumulate and normalize kernels at the shape of one step of a
work item of the core (a group of g heads, t queries, m keys), in a thread of the runtime's pool, where the core runs
them (no row chunking there, and BLAS held to one thread, as in the core's items). The projections
run in the calling thread, as in the core, so the generated bias add is split over the cores
when it is large (S2, S3), the hand-written ``+=`` is not. An input a kernel overwrites is a fresh
copy for each call, made outside the timed region. Median µs over interleaved rounds, and the
ratio generated / hand.

OPENBLAS_THREAD_TIMEOUT=4 is set for this process only (before NumPy loads): otherwise
OpenBLAS threads spin for ~0.1 s after each call and take a core from torch. Likewise
OMP_WAIT_POLICY=PASSIVE (unless --omp-active): torch's OpenMP threads otherwise spin after
each call and made NumPy code run right after torch up to 2x slower at S1 (measured here; torch
itself was not slower with PASSIVE).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import threading
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
if "--omp-active" not in sys.argv:  # torch's OpenMP threads sleep at once instead of spinning
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if "--blas-threads" in sys.argv:  # must be set before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--blas-threads") + 1]

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import symattn.numeric as sn  # noqa: E402
from symattn.lowering import runtime  # noqa: E402
from symattn.numeric.kernels import get  # noqa: E402

SHAPES = {  # (batch, n, d_model, H)
    "S1": (8, 128, 256, 4),
    "S2": (8, 512, 512, 8),
    "S3": (1, 2048, 512, 8),
    "P1": (64, 256, 256, 4),
    "L1": (1, 32768, 256, 4),
}


def mha_flops(b, n, E, H):
    return 2 * b * n * E * 3 * E + 2 * b * n * E * E + 2 * 2 * b * n * n * E


def pool_flops(b, n, E, H):  # what torch must do: project K and V for every token
    return 2 * b * n * E * 2 * E + 2 * 2 * b * n * E + 2 * E * E * 2


def gemm_peak(dtype, size=2048, rounds=3):
    a = np.random.default_rng(0).normal(size=(size, size)).astype(dtype)
    a @ a
    best = min(_time(lambda: a @ a) for _ in range(rounds))
    return 2 * size**3 / best / 1e9


def _time(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


# -- the numeric core's algorithm, written by hand (no symattn code) ------------------------------

HAND_ITEM = 2**22  # bytes of scores per work item
HAND_STEP = 2**20  # bytes of scores per step inside an item (one GEMM, exp, one GEMM)
_HAND: dict = {"blas": None, "gemm": None}


def _hand_mm(a, b, out=None):
    """a @ b inside the hand-written work items: by MKL when the hand runs with MKL and MKL takes
    the product (the same rule as the numeric core's, ``symattn.numeric.mkl.gemm``), else NumPy."""
    if _HAND["gemm"] is not None:
        r = _HAND["gemm"](a, b, out)
        if r is not None:
            return r
    return np.matmul(a, b, out=out)


def _hand_threads():
    """This process's cores, a pool of one thread fewer (the caller works too) and a controller
    of the BLAS NumPy loaded (OpenBLAS), never torch's."""
    if _HAND["blas"] is None:
        from concurrent.futures import ThreadPoolExecutor

        from threadpoolctl import ThreadpoolController

        cores = len(os.sched_getaffinity(0))
        blas = ThreadpoolController().select(internal_api="openblas")
        _HAND.update(cores=cores, blas=blas, pool=ThreadPoolExecutor(cores - 1) if cores > 1 else None)
    return _HAND


def _hand_share(fn, items):
    """fn(item) for every item, on every core with single-threaded BLAS, each thread taking
    the next item when done with one."""
    h = _hand_threads()
    items = list(items)
    if h["pool"] is None or len(items) < 2:
        for item in items:
            fn(item)
        return
    left, lock, done = iter(items), threading.Lock(), object()

    def drain():
        while True:
            with lock:
                item = next(left, done)
            if item is done:
                return
            fn(item)

    with h["blas"].limit(limits=1):
        helpers = [h["pool"].submit(drain) for _ in range(h["cores"] - 1)]
        drain()
        for f in helpers:
            f.result()


def _hand_step(q, k, va, out):
    """softmax(q kᵀ) v (q scaled, va = [v 1]) into ``out``: key blocks of about HAND_STEP bytes
    of scores add up with the shift 0; if the result is not clearly accurate (not finite, a
    denominator or an entry near the subnormal range), again with the row max as the shift."""
    d, m, dt = va.shape[-1] - 1, k.shape[-2], q.dtype
    rows = q.size // q.shape[-1]
    fit = HAND_STEP // (rows * dt.itemsize)
    block = m if fit >= m else -(-m // -(-m // max(256, fit)))
    u = None
    for j0 in range(0, m, block):
        s = _hand_mm(q, np.swapaxes(k[..., j0:j0 + block, :], -1, -2))
        np.exp(s, out=s)
        if u is None:
            u = _hand_mm(s, va[..., j0:j0 + block, :])
        else:
            u += _hand_mm(s, va[..., j0:j0 + block, :])
    info = np.finfo(dt)
    a = np.abs(u)
    if not (a.max() <= info.max and u[..., -1].min() >= m * np.exp(-0.45 * np.log(float(info.max)))
            and a.min() >= m * info.tiny / info.eps):
        s = _hand_mm(q, np.swapaxes(k, -1, -2))
        s -= s.max(-1, keepdims=True)
        np.exp(s, out=s)
        u = _hand_mm(s, va)
    np.divide(u[..., :d], u[..., d:], out=out)


def _hand_heads(p5, z):
    """Every head of the projected elements p5 (c, n, 3, H, d) into z (c, n, H, d)."""
    c, n, _, H, d = p5.shape
    q, k = p5[:, :, 0].transpose(0, 2, 1, 3), p5[:, :, 1].transpose(0, 2, 1, 3)
    va = np.empty((c, H, n, d + 1), p5.dtype)
    va[..., :d] = p5[:, :, 2].transpose(0, 2, 1, 3)
    va[..., d] = 1
    zt = z.transpose(0, 2, 1, 3)
    itemsize = p5.dtype.itemsize
    if c * H * n * n * itemsize <= 2 * HAND_STEP:
        _hand_step(q, k, va, zt)
        return
    tile = min(n, max(32, HAND_STEP // (n * itemsize)))
    for e in range(c):
        for h in range(H):
            for i0 in range(0, n, tile):
                _hand_step(q[e, h, i0:i0 + tile], k[e, h], va[e, h], zt[e, h, i0:i0 + tile])


def numpy_same_algorithm(x, w_in, b_in, w_o, b_o, H):
    """The numeric core's multi-head self-attention, by hand: the scaled weights side by side
    once; many batch elements: c elements per work item (projection, every head, W^O); few:
    one projection GEMM, then (element, head, query tile) work items, then one GEMM with W^O."""
    b, n, E = x.shape
    d, dt = E // H, x.dtype
    scale = dt.type(1 / math.sqrt(d))
    w_cat, b_cat = w_in.copy(), b_in.copy()
    w_cat[:, :E] *= scale
    b_cat[:E] *= scale
    out = np.empty_like(x)
    cores = _hand_threads()["cores"]
    scores = H * n * n * dt.itemsize  # bytes of scores of one element
    if cores > 1 and b >= 2 * cores and scores <= 4 * HAND_ITEM:
        per = max(1, min(b // (2 * cores), HAND_ITEM // scores))

        def element(e0):
            xs = x[e0:e0 + per]
            c = xs.shape[0]
            p = _hand_mm(xs.reshape(-1, E), w_cat)
            p += b_cat
            z = np.empty((c, n, H, d), dt)
            _hand_heads(p.reshape(c, n, 3, H, d), z)
            o = out[e0:e0 + per].reshape(-1, E)
            _hand_mm(z.reshape(-1, E), w_o, out=o)
            o += b_o

        _hand_share(element, range(0, b, per))
        return out
    p = x.reshape(-1, E) @ w_cat
    p += b_cat
    p5 = p.reshape(b, n, 3, H, d)
    z = np.empty((b, n, H, d), dt)
    tile = min(n, max(32, HAND_ITEM // (n * dt.itemsize)))
    while b * H * -(-n // tile) < 2 * cores and tile > 32:
        tile = max(32, tile // 2)

    def item(key):
        e, h, i0 = key
        va = np.empty((n, d + 1), dt)
        va[:, :d] = p5[e, :, 2, h]
        va[:, d] = 1
        _hand_step(p5[e, i0:i0 + tile, 0, h], p5[e, :, 1, h], va, z[e, i0:i0 + tile, h])

    _hand_share(item, [(e, h, i0) for e in range(b) for h in range(H) for i0 in range(0, n, tile)])
    o = z.reshape(-1, E) @ w_o
    o += b_o
    return o.reshape(b, n, E)


# -- plain hand-written NumPy: whole-batch steps ---------------------------------------------------

def numpy_mha(x, w_in, b_in, w_o, b_o, H):
    """Fused projection, scale folded into the query, in-place softmax, one GEMM for W^O."""
    b, n, E = x.shape
    d = E // H
    qkv = x @ w_in
    qkv += b_in
    qkv = qkv.reshape(b, n, 3, H, d).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    s = (q * x.dtype.type(1 / np.sqrt(d))) @ k.transpose(0, 1, 3, 2)
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    o = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, E)
    out = o @ w_o
    out += b_o
    return out


def numpy_pool(x, q, w_q, w_k, w_v, w_o, b_q, b_v, b_o, H):
    """The folded pooling query, written by hand."""
    b, n, E = x.shape
    d = E // H
    qp = (q @ w_q + b_q).reshape(H, d)
    u = np.einsum("hd,ehd->he", qp, w_k.reshape(E, H, d)) * x.dtype.type(1 / np.sqrt(d))  # (H, E)
    s = u @ x.transpose(0, 2, 1)  # (b, H, n)
    s -= s.max(-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(-1, keepdims=True)
    p = s @ x  # (b, H, E)
    heads = np.einsum("bhe,ehd->bhd", p, w_v.reshape(E, H, d)).reshape(b, 1, E) + b_v
    return heads @ w_o + b_o


# -- kernel level: each generated kernel against the same expression by hand ----------------------

# one step of a work item, (g heads, t queries, m keys): S1 two batch elements of 4 heads, S2 one
# head, S3 one head, a tile of 512 queries and a key block of 512
ITEMS = {"S1": (8, 128, 128), "S2": (1, 512, 512), "S3": (1, 512, 512)}
PER_ITEM = ("scores", "exp_product", "accumulate", "normalize")


def kernel_cases(shape, dtype):
    """{kernel: (generated, hand-written, fresh)}: two calls writing the same out buffer, and
    fresh() (or None) to run before each call, outside the timed region."""
    b, n, E, H = SHAPES[shape]
    d = E // H
    g, t, m = ITEMS[shape]
    rng = np.random.default_rng(0)

    def rand(*size, scale=1.0):
        return (rng.normal(size=size) * scale).astype(dtype)

    x, w_q, w_k, w_v, w_o = rand(b, n, E), *(rand(E, E, scale=E**-0.5) for _ in range(4))
    b_q, b_k, b_v, b_o = (rand(1, E) for _ in range(4))
    z = rand(b, n, H * d)
    q, k, v_aug, u_1 = rand(g, t, d, scale=d**-0.5), rand(g, m, d), rand(g, m, d + 1), rand(g, t, d + 1)
    s_2 = np.matmul(q, k.transpose(0, 2, 1))  # the item's scores, overwritten by accumulate
    s_0 = s_2.copy()
    u = np.abs(rand(g, t, d + 1)) + 1  # [U l]: numerator and a positive denominator
    qkv, proj, scores, acc, heads = (np.empty(a, dtype) for a in (
        (b, n, 3 * E), (b, n, E), (g, t, m), (g, t, d + 1), (g, t, d)))
    scale = 1 / math.sqrt(d)  # a Python float: float32 stays float32

    def hand_qkv():
        w = np.concatenate([w_q * scale, w_k, w_v], axis=1)
        np.matmul(x.reshape(-1, E), w, out=qkv.reshape(-1, 3 * E))
        qkv[...] += np.concatenate([b_q * scale, b_k, b_v], axis=1)
        return qkv

    def hand_accumulate():
        np.exp(s_2, out=s_2)
        np.matmul(s_2, v_aug, out=acc)
        acc[...] += u_1
        return acc

    def hand_exp_product():
        np.exp(s_2, out=s_2)
        return np.matmul(s_2, v_aug, out=acc)

    def hand_output():
        np.matmul(z.reshape(-1, H * d), w_o, out=proj.reshape(-1, E))
        proj[...] += b_o
        return proj

    return {
        "qkv_fused_bias": (lambda: get("qkv_fused_bias")(X=x, W_Q=w_q, W_K=w_k, W_V=w_v, b_Q=b_q, b_K=b_k,
                                                         b_V=b_v, H=H, G=H, d_k=d, d_v=d, out=qkv),
                           hand_qkv, None),
        "scores": (lambda: get("scores")(Q=q, K=k, out=scores),
                   lambda: np.matmul(q, k.transpose(0, 2, 1), out=scores), None),
        "exp_product": (lambda: get("exp_product")(S=s_2, V=v_aug, out=acc), hand_exp_product,
                        lambda: np.copyto(s_2, s_0)),
        "accumulate": (lambda: get("accumulate")(S_2=s_2, U_1=u_1, V_2=v_aug, out=acc), hand_accumulate,
                       lambda: np.copyto(s_2, s_0)),
        "normalize": (lambda: get("normalize")(U=u[..., :d], l=u[..., d:], out=heads),
                      lambda: np.divide(u[..., :d], u[..., d:], out=heads), None),
        "output_bias": (lambda: get("output_bias")(Z=z, W_O=w_o, b_O=b_o, H=H, d_v=d, out=proj), hand_output, None),
    }


def time_kernel(gen, hand, fresh, rtol, rounds, min_time):
    """Medians (s) of the generated and the hand-written call over interleaved rounds, once
    their results are checked equal; and the number of rounds."""
    fresh = fresh or (lambda: None)
    results = []
    for fn in (gen, hand):  # also the warm-up
        fresh()
        results.append(np.array(fn()))  # a copy: both write the same out buffer
    np.testing.assert_allclose(results[0], results[1], rtol=rtol)
    once = []
    for _ in range(3):  # the fastest of three: one slow call (a noisy neighbour) must not cut the rounds
        fresh()
        once.append(_time(gen))
    rounds = max(rounds, min(2000, int(min_time / max(min(once), 1e-6))))
    times = ([], [])
    order = np.random.default_rng(1)
    for _ in range(rounds):
        for i in order.permutation(2):
            fresh()
            times[i].append(_time((gen, hand)[i]))
    return statistics.median(times[0]), statistics.median(times[1]), rounds


def bench_kernels(shape, dtype, rounds, min_time=0.15):
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    print(f"\n{shape} {SHAPES[shape]} {np.dtype(dtype).name}, one step (g, t, m) = {ITEMS[shape]}:")
    print(f"  {'kernel':16s} {'generated µs':>12s} {'hand µs':>10s} {'generated/hand':>15s} {'rounds':>7s}")
    cases = kernel_cases(shape, dtype)
    for name in cases:
        get(name)  # lowered (proved first) before any timing, and the garbage of that collected
    gc.collect()
    for name, (gen, hand, fresh) in cases.items():
        if name in PER_ITEM:  # where the core runs them: a pool thread, which never splits its work,
            with _hand_threads()["blas"].limit(limits=1):  # with single-threaded BLAS
                g, h, r = runtime.pool().submit(time_kernel, gen, hand, fresh, rtol, rounds, min_time).result()
        else:
            g, h, r = time_kernel(gen, hand, fresh, rtol, rounds, min_time)
        print(f"  {name:16s} {g * 1e6:12.1f} {h * 1e6:10.1f} {g / h:15.2f} {r:7d}")


# -- the runs ---------------------------------------------------------------------------------------

SDPA, MHA = "torch SDPA + projections", "torch MultiheadAttention"
CORE_MKL, HAND_MKL = "symattn (MKL)", "numpy (same algorithm, MKL)"


def _with_blas(fn, name):
    """fn, called with the numeric core's and the hand-written work items' products on ``name``
    ('numpy': NumPy's own BLAS, or 'mkl')."""
    from symattn.numeric import mkl

    def call():
        sn.use_blas(name)
        _HAND["gemm"] = mkl.gemm if name == "mkl" else None
        return fn()
    return call


def setup(shape, dtype, torch, plain=False, mkl=False):
    """{name: call} of every implementation at this shape (torch's only when torch is given),
    and the flops the GFLOP/s column counts. ``mkl``: also the numeric core and the hand-written
    same algorithm with MKL's products inside their work items (S1-S3)."""
    b, n, E, H = SHAPES[shape]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(b, n, E)).astype(dtype)
    w_in = (rng.normal(size=(E, 3 * E)) / np.sqrt(E)).astype(dtype)
    b_in = rng.normal(size=3 * E).astype(dtype)
    w_o = (rng.normal(size=(E, E)) / np.sqrt(E)).astype(dtype)
    b_o = rng.normal(size=E).astype(dtype)
    w_q, w_k, w_v = w_in[:, :E], w_in[:, E:2 * E], w_in[:, 2 * E:]
    b_q, b_k, b_v = b_in[:E], b_in[E:2 * E], b_in[2 * E:]
    impl = {}
    tdtype = {np.float32: torch.float32, np.float64: torch.float64}[dtype] if torch else None
    if torch:
        mha = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=tdtype)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.from_numpy(np.ascontiguousarray(w_in.T)))
            mha.in_proj_bias.copy_(torch.from_numpy(b_in))
            mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(w_o.T)))
            mha.out_proj.bias.copy_(torch.from_numpy(b_o))
        mha.eval()
        tx = torch.from_numpy(x)
        W_in, B_in = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
        W_o, B_o = mha.out_proj.weight.detach(), mha.out_proj.bias.detach()
        F = torch.nn.functional
    if shape == "P1":
        q = rng.normal(size=(1, E)).astype(dtype)
        impl["symattn"] = lambda: sn.attention_pool(x, q, w_q, w_k, w_v, w_o, num_heads=H, b_q=b_q, b_k=b_k,
                                                    b_v=b_v, b_o=b_o)
        impl["numpy (hand-written fold)"] = lambda: numpy_pool(x, q, w_q, w_k, w_v, w_o, b_q, b_v, b_o, H)
        if torch:
            tq = torch.from_numpy(np.broadcast_to(q, (b, 1, E)).copy())

            def t_mha():
                with torch.inference_mode():
                    return mha(tq, tx, tx, need_weights=False)[0]

            def t_sdpa():
                with torch.inference_mode():
                    qq = F.linear(tq, W_in[:E], B_in[:E]).view(b, 1, H, E // H).transpose(1, 2)
                    kv = F.linear(tx, W_in[E:], B_in[E:]).view(b, n, 2, H, E // H).permute(2, 0, 3, 1, 4)
                    o = F.scaled_dot_product_attention(qq, kv[0], kv[1])
                    return F.linear(o.transpose(1, 2).reshape(b, 1, E), W_o, B_o)
            impl[MHA] = t_mha
            impl[SDPA] = t_sdpa
        return impl, pool_flops(b, n, E, H)
    impl["symattn"] = lambda: sn.multihead_attention(x, x, x, w_q, w_k, w_v, w_o, num_heads=H, b_q=b_q,
                                                     b_k=b_k, b_v=b_v, b_o=b_o)
    impl["numpy (same algorithm)"] = lambda: numpy_same_algorithm(x, w_in, b_in, w_o, b_o, H)
    if mkl:  # every call sets its BLAS: the implementations run interleaved
        core, hand = impl["symattn"], impl["numpy (same algorithm)"]
        impl["symattn"], impl["numpy (same algorithm)"] = _with_blas(core, "numpy"), _with_blas(hand, "numpy")
        impl[CORE_MKL], impl[HAND_MKL] = _with_blas(core, "mkl"), _with_blas(hand, "mkl")
    if plain:
        impl["numpy (plain)"] = lambda: numpy_mha(x, w_in, b_in, w_o, b_o, H)
    if torch:
        def t_mha():
            with torch.inference_mode():
                return mha(tx, tx, tx, need_weights=False)[0]

        def t_sdpa():
            with torch.inference_mode():
                qkv = F.linear(tx, W_in, B_in).view(b, n, 3, H, E // H).permute(2, 0, 3, 1, 4)
                o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
                return F.linear(o.transpose(1, 2).reshape(b, n, E), W_o, B_o)
        impl[MHA] = t_mha
        impl[SDPA] = t_sdpa
    return impl, mha_flops(b, n, E, H)


def check_agreement(impl):
    outs = {k: np.asarray(fn()) for k, fn in impl.items()}
    ref = outs["symattn"]
    return max(float(np.max(np.abs(np.asarray(o, dtype=np.float64) - ref))) for o in outs.values())


def _call_times(fn):
    """(wall s, CPU s of the whole process) of one call."""
    c, t = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def _rounds(fn, rounds, min_time):
    """At least ``rounds``; more for fast shapes (about ``min_time`` s of calls, at most 200)."""
    once = min(_call_times(fn)[0] for _ in range(2))
    return max(rounds, min(200, int(min_time / max(once, 1e-6))))


def interleaved(impl, rounds, min_time):
    """{name: ([wall], [cpu])} over interleaved rounds, a fresh random order each round."""
    rounds = _rounds(impl["symattn"], rounds, min_time)
    times = {k: ([], []) for k in impl}
    names = list(impl)
    order = np.random.default_rng(1)
    for _ in range(rounds):  # a fresh order each round: no library always follows the same one
        for k in order.permutation(names):
            w, c = _call_times(impl[k])
            times[k][0].append(w)
            times[k][1].append(c)
    return times, rounds


def child_argv(args, name, shape, dtype):
    argv = [sys.executable, os.path.abspath(__file__), "--child", name, "--shapes", shape, "--dtypes",
            np.dtype(dtype).name, "--rounds", str(args.rounds), "--min-time", str(args.min_time),
            "--threads", str(args.threads)]
    if args.omp_active:
        argv.append("--omp-active")
    if args.mkl:
        argv.append("--mkl")
    if args.blas_threads:
        argv += ["--blas-threads", args.blas_threads]
    return argv


def run_child(args):
    """In a child process: time one implementation alone and print its times as JSON."""
    name, shape, dtype = args.child, args.shapes, getattr(np, args.dtypes)
    torch = None
    if name.startswith("torch"):
        import torch

        torch.set_num_threads(args.threads)
    impl, _ = setup(shape, dtype, torch, plain=name == "numpy (plain)", mkl=args.mkl)
    fn = impl[name]
    fn()  # warm-up (and symattn's kernels lowered)
    rounds = _rounds(fn, args.rounds, args.min_time)
    times = [_call_times(fn) for _ in range(rounds)]
    print(json.dumps({"wall": [w for w, _ in times], "cpu": [c for _, c in times]}))


def separate(args, names, shape, dtype):
    """{name: ([wall], [cpu])} pooled over ``--process-rounds`` child processes per implementation
    (the order alternates), and {name: [median wall of each child]}."""
    times = {k: ([], []) for k in names}
    per_child = {k: [] for k in names}
    for r in range(args.process_rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            res = subprocess.run(child_argv(args, name, shape, dtype), capture_output=True, text=True)
            if res.returncode:
                raise RuntimeError(f"child {name} failed:\n{res.stderr[-2000:]}")
            got = json.loads(res.stdout.strip().splitlines()[-1])
            times[name][0].extend(got["wall"])
            times[name][1].extend(got["cpu"])
            per_child[name].append(statistics.median(got["wall"]))
    return times, per_child


def report(shape, times, flops, peak, spread=None):
    """Print medians, GFLOP/s and ratios; return {name: (median wall, median cpu)}."""
    med = {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in times.items()}
    if shape.startswith("P"):
        print("  (GFLOP/s counts the unfolded computation torch does, projecting K and V for every token;"
              " the folded kernels do far less work, so their rate is effective, not achieved)")
    print(f"  {'':28s} {'wall ms':>9s} {'CPU ms':>9s}  {'GFLOP/s':>7s}" + ("   spread of the children's medians"
                                                                        if spread else ""))
    for k, (t, c) in med.items():
        gf = flops / t / 1e9
        extra = f"   {min(spread[k]) * 1e3:.2f}-{max(spread[k]) * 1e3:.2f} ms" if spread else ""
        print(f"  {k:28s} {t * 1e3:9.2f} {c * 1e3:9.2f}  {gf:7.1f} ({100 * gf / peak:5.1f}% of GEMM peak){extra}")
    s = med["symattn"]
    hand = next(k for k in med if k.startswith("numpy"))
    print(f"  symattn / {hand}: wall {s[0] / med[hand][0]:.2f}, CPU {s[1] / med[hand][1]:.2f}")
    if CORE_MKL in med:
        m = med[CORE_MKL]
        print(f"  {CORE_MKL} / {HAND_MKL}: wall {m[0] / med[HAND_MKL][0]:.2f}, CPU {m[1] / med[HAND_MKL][1]:.2f};"
              f"   {CORE_MKL} / symattn: wall {m[0] / s[0]:.2f}, CPU {m[1] / s[1]:.2f}")
    if SDPA in med:
        t = med[SDPA]
        print(f"  symattn / {SDPA}: wall {s[0] / t[0]:.2f}, CPU {s[1] / t[1]:.2f}   "
              f"{MHA} / symattn: wall {med[MHA][0] / s[0]:.2f}x")
        if CORE_MKL in med:
            m = med[CORE_MKL]
            print(f"  {CORE_MKL} / {SDPA}: wall {m[0] / t[0]:.2f}, CPU {m[1] / t[1]:.2f}")
    return med


def bench(args, shape, dtype, torch, peak):
    """Both modes (or the one asked for) at one shape and dtype; {mode: medians}."""
    out = {}
    impl, flops = setup(shape, dtype, torch, plain=args.plain_numpy, mkl=args.mkl and shape in ITEMS)
    name = np.dtype(dtype).name
    if args.mode in ("interleaved", "both"):
        err = check_agreement(impl)  # also warms up every implementation
        times, rounds = interleaved(impl, args.rounds, args.min_time)
        print(f"\n{shape} {SHAPES[shape]} {name}, interleaved in one process: {rounds} rounds, "
              f"max |difference| to symattn {err:.1e}")
        out["interleaved"] = report(shape, times, flops, peak)
    if args.mode in ("separate", "both"):
        times, per_child = separate(args, list(impl), shape, dtype)
        print(f"\n{shape} {SHAPES[shape]} {name}, each implementation in its own processes: "
              f"{args.process_rounds} children each, in alternating order")
        out["separate"] = report(shape, times, flops, peak, per_child)
    return out


def summary(results):
    """One line per shape and dtype: symattn / torch SDPA + projections in each mode (and the
    numeric core with MKL's products, when measured)."""
    rows = [(k, m) for k, m in results.items() if any(SDPA in v for v in m.values())]
    if not rows:
        return
    cores = ["symattn"] + ([CORE_MKL] if any(CORE_MKL in v for _, m in rows for v in m.values()) else [])
    print(f"\nsymattn / {SDPA} (wall time, medians; CPU time in brackets)")
    heads = [f"{mode}{'' if core == 'symattn' else ', MKL'}" for core in cores for mode in ("interleaved", "separate")]
    print(f"  {'shape':6s} {'dtype':8s} " + " ".join(f"{h:>18s}" for h in heads))
    for (shape, dtype), modes in rows:
        cells = []
        for core in cores:
            for mode in ("interleaved", "separate"):
                m = modes.get(mode)
                ok = m is not None and core in m
                cells.append(f"{m[core][0] / m[SDPA][0]:.2f} ({m[core][1] / m[SDPA][1]:.2f})" if ok else "-")
        print(f"  {shape:6s} {dtype:8s} " + " ".join(f"{c:>18s}" for c in cells))


PEAK = """
def peak_gib():  # VmHWM: this process's peak resident memory (ru_maxrss would include the parent's)
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM")) / 2**20
"""

L1_CHILD = PEAK + """
import os, sys, time
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
if "--omp-active" not in sys.argv:  # torch's OpenMP threads sleep at once instead of spinning
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
if "--blas-threads" in sys.argv:  # must be set before NumPy loads OpenBLAS
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--blas-threads") + 1]
import numpy as np
sys.path.insert(0, {root!r})
import symattn.numeric as sn
b, n, E, H = {shape}
dtype = np.{dtype}
rng = np.random.default_rng(0)
x = rng.normal(size=(b, n, E)).astype(dtype)
w = [(rng.normal(size=s) / np.sqrt(E)).astype(dtype) for s in ((E, E), (E, E), (E, E), (E, E))]
sn.multihead_attention(x[:, :2048], x[:, :2048], x[:, :2048], *w, num_heads=H, block_size=1024)
base = peak_gib()
t = time.perf_counter()
out = sn.multihead_attention(x, x, x, *w, num_heads=H, causal={causal}, block_size={block})
t = time.perf_counter() - t
print(t, peak_gib(), base, bool(np.isfinite(out).all()))
"""

L1_TORCH = PEAK + """
import sys, time
import numpy as np, torch
torch.set_num_threads({threads})
b, n, E, H = {shape}
dtype = getattr(torch, {dtype!r})
torch.manual_seed(0)
x = torch.randn(b, n, E, dtype=dtype)
w_in, w_o = torch.randn(3 * E, E, dtype=dtype) / E**0.5, torch.randn(E, E, dtype=dtype) / E**0.5
F = torch.nn.functional
base = peak_gib()
with torch.inference_mode():
    t = time.perf_counter()
    qkv = F.linear(x, w_in).view(b, n, 3, H, E // H).permute(2, 0, 3, 1, 4)
    o = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal={causal})
    out = F.linear(o.transpose(1, 2).reshape(b, n, E), w_o)
    t = time.perf_counter() - t
print(t, peak_gib(), base, bool(torch.isfinite(out).all()))
"""


def _child(code):
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        return None, res.stderr[-1000:]
    t, peak, base, finite = res.stdout.split()
    return (f"{float(t):.1f} s, peak resident memory {float(peak):.2f} GiB (peak before the call, "
            f"inputs and libraries loaded: {float(base):.2f} GiB), all finite: {finite}"), None


def bench_l1(dtype, causal, block, torch_threads=None):
    """L1 in child processes (one per library), so that each peak RSS is its own."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    name = np.dtype(dtype).name
    print(f"\nL1 {SHAPES['L1']} {name}, causal={causal}:")
    line, err = _child(L1_CHILD.format(root=root, shape=SHAPES["L1"], dtype=name, causal=causal, block=block))
    print(f"  symattn (key-blocked online softmax, block {block}): {line or 'failed: ' + err}")
    if torch_threads:
        code = L1_TORCH.format(threads=torch_threads, shape=SHAPES["L1"], dtype=name, causal=causal)
        line, err = _child(code)
        print(f"  torch SDPA + projections: {line or 'failed: ' + err}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="S1,S2,S3,P1,L1", help="comma-separated from " + ",".join(SHAPES))
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--rounds", type=int, default=5, help="at least this many interleaved rounds")
    p.add_argument("--min-time", type=float, default=1.0,
                   help="more rounds for fast shapes: about this many seconds of symattn calls")
    p.add_argument("--threads", type=int, default=2, help="torch threads (NumPy's OpenBLAS uses its own)")
    p.add_argument("--l1-causal", action="store_true", help="L1 with the causal mask")
    p.add_argument("--block", type=int, default=1024, help="L1 key block size")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--kernels", action="store_true",
                   help="only the kernel-level section (generated kernels against hand-written NumPy), "
                        "for those of --shapes among " + ",".join(ITEMS))
    p.add_argument("--blas-threads", help="OPENBLAS_NUM_THREADS for NumPy (default: OpenBLAS's own)")
    p.add_argument("--omp-active", action="store_true",
                   help="leave OMP_WAIT_POLICY unset: torch's threads spin after each call and take a "
                        "core from whatever runs next (by default PASSIVE, which does not slow torch here)")
    p.add_argument("--mode", choices=("both", "interleaved", "separate"), default="both",
                   help="interleaved rounds in this process, each implementation in processes of its own, "
                        "or both (default)")
    p.add_argument("--process-rounds", type=int, default=3,
                   help="separate mode: child processes per implementation (their order alternates)")
    p.add_argument("--mkl", action="store_true",
                   help="also the numeric core and the hand-written same algorithm with Intel oneMKL's products "
                        "inside their work items (symattn.numeric.use_blas('mkl'); needs the mkl wheel)")
    p.add_argument("--plain-numpy", action="store_true",
                   help="also time plain whole-batch NumPy (one batched product per step)")
    p.add_argument("--no-kernels", action="store_true", help="skip the kernel-level section")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: time one implementation alone
    args = p.parse_args(argv)
    if args.mkl:
        from symattn.numeric import mkl

        if not mkl.available():
            p.error("--mkl: libmkl_rt was not found; pip install mkl (or the extra: pip install symattn[mkl])")
    if args.child:
        return run_child(args)
    try:
        if args.no_torch:
            raise ImportError
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    dtypes = [getattr(np, d) for d in args.dtypes.split(",")]
    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
                                       if torch else ", no torch") +
          f", OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}"
          f", OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}"
          f", OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}"
          f", {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    shapes = args.shapes.split(",")
    results = {}
    if not args.kernels:
        peaks = {d: gemm_peak(d) for d in dtypes}
        print("NumPy GEMM peak here: " + ", ".join(f"{np.dtype(d).name} {v:.0f} GFLOP/s"
                                                   for d, v in peaks.items()))
        for shape in shapes:
            for d in dtypes:
                if shape == "L1":
                    bench_l1(d, args.l1_causal, args.block, args.threads if torch else None)
                else:
                    results[shape, np.dtype(d).name] = bench(args, shape, d, torch, peaks[d])
        summary(results)
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.no_kernels:
        return
    print("\nKernel level: each generated kernel of the numeric core against the same expression "
          "written by hand, same inputs and out buffer")
    for shape in (s for s in shapes if s in ITEMS):
        for d in dtypes:
            bench_kernels(shape, d, args.rounds)


if __name__ == "__main__":
    main()
