"""Benchmarks: symattn's kernels against hand-written NumPy of the same algorithm and PyTorch.

    python benchmarks/bench.py                       # S1 S2 S3 P1 and L1, float32 and float64
    python benchmarks/bench.py --shapes S1,P1 --dtypes float32 --rounds 7
    python benchmarks/bench.py --shapes S1,S2,S3 --mode separate --process-rounds 5
    python benchmarks/bench.py --shapes L1 --l1-causal
    python benchmarks/bench.py --kernels --no-torch  # only the kernel-level section (S1 S2 S3)
    python benchmarks/bench.py --shapes S1,S2,S3 --mkl  # also the core and the hand with MKL's products
    python benchmarks/bench.py --shapes S1,S2,S3 --mode interleaved --no-kernels --mkl --floor

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
code (``numpy_same_algorithm``), as fast as we could make it: the scaled weights side by side
once, the query's scale times log2(e) so that the exponential is 2^x (np.exp2: 0.55-0.6 of
np.exp's time here in float32, about 0.75-0.8 in float64); many batch elements: c elements per
work item (projection, every head, W^O); few: the projection in row slices as work items, K and
V of each head copied contiguous, (element, head, query tile) work items, then W^O in row slices
as work items; every work item on a thread per core with BLAS held to one thread for the whole
call (so no OpenBLAS thread is left spinning after a multi-threaded GEMM); scores in steps of
about 1 MiB in reused per-thread scratch buffers, whose key blocks simply add up with the shift
0, the numerator by a GEMM with V and the row sums by a GEMV with a vector of ones, a check of
the result that falls back to the row max as the shift. Each of these choices was kept only
where it measured faster than the one before it (in one process, alternating calls). So
"symattn / numpy" is the cost of generating the kernels from theorems rather than writing them
by hand. ``--plain-numpy`` adds the plain whole-batch version (one batched product per step,
softmax on the full score array).

``--floor`` adds, at S1-S3, a measured floor (``benchmarks/floor.py``): each primitive operation
the algorithm cannot avoid (the projection GEMMs at the row slice of a work item; per step, the
scores GEMM, the exponential, the GEMM with V, the row sums; per tile, the normalization) timed
alone on one thread at the size the core runs it, times its count, summed, divided by the cores:
perfect scaling and no Python overhead, a lower bound of what any NumPy implementation of this
algorithm at these sizes could reach here. It is printed beside torch SDPA + projections timed
in the same process, with NumPy's BLAS and with MKL's GEMM.

torch is imported before anything loads MKL, in this process and in every child (the header
prints which was loaded first, read from the process's memory map). The order matters: with
``libmkl_rt`` loaded and used (one GEMM through ``symattn.numeric.mkl``, sequential layer)
before torch is imported, torch's own GEMMs in that process ran on one thread. Measured here
(separate processes, alternating, load average about 2.5): torch's 2048 × 2048 float32 matmul
took 100-102 ms wall for as much CPU with MKL used first, 50-51 ms wall for 101 ms CPU with
torch imported first, 49-50 ms with MKL only loaded (no GEMM) first; torch SDPA + projections
at S2 float32, median of 25 calls, 80 ms with MKL used first against 53-55 ms either other way
(up to 1.45x has been seen). Checked in this script at S2 float32, interleaved, alternating runs
with and without ``--mkl`` on a loaded machine (one core free): torch SDPA + projections
115 and 118 ms with ``--mkl``, 112 and 112 ms without.

OPENBLAS_THREAD_TIMEOUT=4 is set for this process only (before NumPy loads): otherwise
OpenBLAS threads spin for ~0.1 s after each call and take a core from torch. Likewise
OMP_WAIT_POLICY=PASSIVE (unless --omp-active): torch's OpenMP threads otherwise spin after
each call and made NumPy code run right after torch up to 2x slower at S1 (measured here; torch
itself was not slower with PASSIVE).
"""

from __future__ import annotations

import argparse
import contextlib
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
from symattn.lowering.targets import numpy as runtime  # noqa: E402
from symattn.numeric.kernels import get  # noqa: E402

SHAPES = {  # (batch, n, d_model, H)
    "S1": (8, 128, 256, 4),
    "S2": (8, 512, 512, 8),
    "S3": (1, 2048, 512, 8),
    "P1": (64, 256, 256, 4),
    "L1": (1, 32768, 256, 4),
}


_LOAD_ORDER: list = []  # "torch" and "MKL", in the order this process loaded them


def _mkl_mapped() -> bool:
    """Whether a libmkl_rt is mapped into this process (read from /proc/self/maps; False where unreadable)."""
    try:
        with open("/proc/self/maps") as fh:
            return "libmkl_rt" in fh.read()
    except OSError:
        return False


def _note_mkl():
    if "MKL" not in _LOAD_ORDER and _mkl_mapped():
        _LOAD_ORDER.append("MKL")


def import_torch(threads):
    """torch with ``threads`` threads, imported now (None when it is not installed); notes whether
    MKL was already loaded (it must not be: the module docstring says why)."""
    _note_mkl()
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    _LOAD_ORDER.append("torch")
    return torch


def load_order() -> str:
    """Which of torch and MKL (libmkl_rt) this process loaded first, as read from its memory map."""
    _note_mkl()
    if _LOAD_ORDER == ["torch", "MKL"]:
        return "torch imported first, MKL (libmkl_rt) loaded after it"
    if _LOAD_ORDER == ["MKL", "torch"]:
        return "MKL (libmkl_rt) loaded BEFORE torch was imported: torch's SDPA may be slower here"
    return {"torch": "torch imported, MKL not loaded", "MKL": "MKL (libmkl_rt) loaded, no torch"}.get(
        "".join(_LOAD_ORDER), "neither torch nor MKL loaded")


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
HAND_STEP = 2**20  # bytes of scores per step inside an item (one GEMM, exp2, one GEMM, one GEMV)
HAND_ROWS = 256  # rows of x (or of the heads) per projection work item, when the projections are split
LOG2E = math.log2(math.e)
_HAND: dict = {"blas": None, "gemm": None}
_SCRATCH = threading.local()


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


def _scratch(name, shape, dtype):
    """This thread's scratch array ``name`` of ``shape``: a view of a buffer kept from call to call
    (replaced by a larger one when too small)."""
    size = math.prod(shape)
    key = (name, np.dtype(dtype))
    buf = _SCRATCH.__dict__.get(key)
    if buf is None or buf.size < size:
        buf = _SCRATCH.__dict__[key] = np.empty(max(1, size), dtype)
    return buf[:size].reshape(shape)


def _ones(m, dtype):
    """This thread's vector of m ones (the row sums are a GEMV with it)."""
    key = ("ones", np.dtype(dtype))
    buf = _SCRATCH.__dict__.get(key)
    if buf is None or buf.size < m:
        buf = _SCRATCH.__dict__[key] = np.ones(max(1, m), dtype)
    return buf[:m]


def _hand_share(fn, items):
    """fn(item) for every item, on every core (the caller holds BLAS to one thread), each thread
    taking the next item when done with one."""
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

    helpers = [h["pool"].submit(drain) for _ in range(h["cores"] - 1)]
    drain()
    for f in helpers:
        f.result()


_HAND_LIMITS: dict = {}


def _hand_accurate(u, l, m):
    """Whether U = 2^S V and l = 2^S 1, computed with the shift 0, are clearly accurate: finite,
    every denominator at least m e^(-0.45 ln(largest float)), every |entry| at least m tiny / eps."""
    dt = u.dtype
    if dt not in _HAND_LIMITS:
        info = np.finfo(dt)
        _HAND_LIMITS[dt] = (info.max, float(np.exp(-0.45 * np.log(float(info.max)))), info.tiny / info.eps)
    largest, small, tiny = _HAND_LIMITS[dt]
    a = np.abs(u, out=_scratch("abs", u.shape, dt))
    return bool(a.max() <= largest and l.max() <= largest and l.min() >= m * small and a.min() >= m * tiny)


def _hand_step(q, k, v, out):
    """softmax(q kᵀ) v into ``out``, q scaled by log2(e)/sqrt(d) so that 2^(q kᵀ) is e^(the scores):
    key blocks of about HAND_STEP bytes of scores add up with the shift 0 (U = Σ_b 2^S_b V_b, and
    the row sums l = Σ_b 2^S_b 1 by a GEMV), in this thread's scratch buffers; if the result is not
    clearly accurate (not finite, a denominator or an entry near the subnormal range), again with
    the row max as the shift."""
    m, dt = k.shape[-2], q.dtype
    lead = q.shape[:-1]
    fit = HAND_STEP // (math.prod(lead) * dt.itemsize)
    block = m if fit >= m else -(-m // -(-m // max(256, fit)))
    u = _scratch("u", lead + (v.shape[-1],), dt)
    l = _scratch("l", lead, dt)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):  # the check below catches these
        for j0 in range(0, m, block):
            j1 = min(m, j0 + block)
            s = _scratch("s", lead + (j1 - j0,), dt)
            _hand_mm(q, np.swapaxes(k[..., j0:j1, :], -1, -2), out=s)
            np.exp2(s, out=s)
            if j0 == 0:
                _hand_mm(s, v[..., :j1, :], out=u)
                np.matmul(s, _ones(j1, dt), out=l)
            else:
                u += _hand_mm(s, v[..., j0:j1, :], out=_scratch("u_b", u.shape, dt))
                l += np.matmul(s, _ones(j1 - j0, dt), out=_scratch("l_b", lead, dt))
    if not _hand_accurate(u, l, m):
        s = _hand_mm(q, np.swapaxes(k, -1, -2))
        s -= s.max(-1, keepdims=True)
        np.exp2(s, out=s)
        u, l = _hand_mm(s, v), s.sum(-1)
    np.divide(u, l[..., None], out=out)


def _hand_heads(p5, z):
    """Every head of the projected elements p5 (c, n, 3, H, d) into z (c, n, H, d): all in one
    step when their scores fit in two steps, else per head (its K and V copied contiguous into
    this thread's scratch) and query tile."""
    c, n, _, H, d = p5.shape
    itemsize = p5.dtype.itemsize
    if c * H * n * n * itemsize <= 2 * HAND_STEP:  # every head of every element in one step
        q, k, v = (p5[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        _hand_step(q, k, v, z.transpose(0, 2, 1, 3))
        return
    tile = min(n, max(32, HAND_STEP // (n * itemsize)))
    k, v = _scratch("k", (n, d), p5.dtype), _scratch("v", (n, d), p5.dtype)
    for e in range(c):
        for h in range(H):
            np.copyto(k, p5[e, :, 1, h])
            np.copyto(v, p5[e, :, 2, h])
            for i0 in range(0, n, tile):
                _hand_step(p5[e, i0:i0 + tile, 0, h], k, v, z[e, i0:i0 + tile, h])


def numpy_same_algorithm(x, w_in, b_in, w_o, b_o, H):
    """The numeric core's multi-head self-attention, by hand: the scaled weights side by side
    once (the query's scale times log2(e), so that the exponential is 2^x); many batch elements:
    c elements per work item (projection, every head, W^O); few: the projection in row slices
    as work items, K and V of each head copied contiguous, then (element, head, query tile) work
    items, then W^O in row slices as work items. Every work item on the same pool of a thread per
    core, BLAS held to one thread for the whole call."""
    b, n, E = x.shape
    d, dt = E // H, x.dtype
    scale = dt.type(LOG2E / math.sqrt(d))
    w_cat, b_cat = w_in.copy(), b_in.copy()
    w_cat[:, :E] *= scale
    b_cat[:E] *= scale
    out = np.empty_like(x)
    h = _hand_threads()
    cores = h["cores"]
    one = h["blas"].limit(limits=1) if h["pool"] is not None else contextlib.nullcontext()
    scores = H * n * n * dt.itemsize  # bytes of scores of one element
    if cores > 1 and b >= 2 * cores and scores <= 4 * HAND_ITEM:
        per = max(1, min(b // (2 * cores), HAND_ITEM // scores))

        def element(e0):
            xs = x[e0:e0 + per]
            c = xs.shape[0]
            p = _hand_mm(xs.reshape(-1, E), w_cat, out=_scratch("p", (c * n, 3 * E), dt))
            p += b_cat
            z = _scratch("z", (c, n, H, d), dt)
            _hand_heads(p.reshape(c, n, 3, H, d), z)
            o = out[e0:e0 + per].reshape(-1, E)
            _hand_mm(z.reshape(-1, E), w_o, out=o)
            o += b_o

        with one:
            _hand_share(element, range(0, b, per))
        return out
    x2, out2 = x.reshape(-1, E), out.reshape(-1, E)
    p = _scratch("p_all", (b * n, 3 * E), dt)
    p5 = p.reshape(b, n, 3, H, d)
    kh, vh = _scratch("k_all", (b, H, n, d), dt), _scratch("v_all", (b, H, n, d), dt)
    z = _scratch("z_all", (b, n, H, d), dt)
    z2 = z.reshape(-1, E)
    rows = max(1, min(HAND_ROWS, n))

    def project(key):
        e, r0 = key
        r1 = min(n, r0 + rows)
        part = p[e * n + r0:e * n + r1]
        _hand_mm(x2[e * n + r0:e * n + r1], w_cat, out=part)
        part += b_cat
        kh[e, :, r0:r1] = p5[e, r0:r1, 1].transpose(1, 0, 2)
        vh[e, :, r0:r1] = p5[e, r0:r1, 2].transpose(1, 0, 2)

    tile = min(n, max(32, HAND_ITEM // (n * dt.itemsize)))
    while b * H * -(-n // tile) < 2 * cores and tile > 32:
        tile = max(32, tile // 2)

    def item(key):
        e, hh, i0 = key
        _hand_step(p5[e, i0:i0 + tile, 0, hh], kh[e, hh], vh[e, hh], z[e, i0:i0 + tile, hh])

    def output(r0):
        o = out2[r0:r0 + rows]
        _hand_mm(z2[r0:r0 + rows], w_o, out=o)
        o += b_o

    with one:
        _hand_share(project, [(e, r0) for e in range(b) for r0 in range(0, n, rows)])
        _hand_share(item, [(e, hh, i0) for e in range(b) for hh in range(H) for i0 in range(0, n, tile)])
        _hand_share(output, range(0, b * n, rows))
    return out


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
HAND = "numpy (same algorithm)"
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


def run_child(args, torch):
    """In a child process: time one implementation alone and print its times as JSON (torch, already
    imported by ``main`` before MKL was loaded, only in torch's children)."""
    name, shape, dtype = args.child, args.shapes, getattr(np, args.dtypes)
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
    if args.floor and shape in ITEMS:
        out["floor"] = floor_of(args, shape, dtype, impl.get(SDPA))
    return out


def floor_of(args, shape, dtype, sdpa):
    """The measured floor of this shape and dtype (``floor.py``), torch SDPA + projections
    timed in the same process: ({label: floor s}, torch's wall s, torch's CPU s (None without torch))."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import floor

    from symattn.numeric import mkl

    b, n, E, H = SHAPES[shape]
    h = _hand_threads()
    sizes = floor.plan(b, n, E, H, np.dtype(dtype).itemsize, HAND_ITEM, HAND_STEP, HAND_ROWS, h["cores"])
    one = h["blas"].limit(limits=1)
    with one:  # the primitives on one thread; torch (between their rounds) keeps its own threads
        return floor.run(shape, SHAPES[shape], dtype, sizes, h["cores"], sdpa=sdpa, mkl=mkl if args.mkl else None,
                         rounds=max(args.rounds, 9))


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
    ratios(results)


def _floor_cell(floor_s, torch_wall, torch_cpu):
    """floor / torch wall time (and the floor's sum over the cores / torch's CPU time), or "-"."""
    if not floor_s or not torch_wall:
        return "-"
    return f"{floor_s / torch_wall:.2f} ({floor_s * _hand_threads()['cores'] / torch_cpu:.2f})"


def ratios(results):
    """One line per shape and dtype of S1-S3: symattn, the hand-written same algorithm and the measured
    floor, each over torch SDPA + projections, for each BLAS (interleaved wall medians; torch's
    from the floor section when there was no interleaved run)."""
    rows = [(k, m) for k, m in results.items()
            if k[0] in ITEMS and (SDPA in m.get("interleaved", {}) or m.get("floor"))]
    if not rows:
        return
    blases = [("NumPy's BLAS", "symattn", HAND, "NumPy's BLAS"), ("MKL", CORE_MKL, HAND_MKL, "MKL")]
    print(f"\nover {SDPA} (interleaved wall medians; the floor: over torch's interleaved wall median, and in "
          "brackets its sum over the cores over torch's CPU time, which waiting for a core does not inflate)")
    heads = [f"{what} ({blas})" for blas, *_ in blases for what in ("symattn", "hand", "floor")] + ["floor (best)"]
    print(f"  {'shape':6s} {'dtype':8s} " + " ".join(f"{h:>22s}" for h in heads))
    for (shape, dtype), modes in rows:
        m = modes.get("interleaved", {})
        fl, torch_t, torch_cpu = modes.get("floor") or ({}, None, None)
        if SDPA in m:  # torch timed in the same rounds as symattn and the hand
            torch_t, torch_cpu = m[SDPA]
        cells = []
        for _, core, hand, label in blases:
            for name in (core, hand):
                cells.append(f"{m[name][0] / m[SDPA][0]:.2f}" if name in m and SDPA in m else "-")
            cells.append(_floor_cell(fl.get(label), torch_t, torch_cpu))
        cells.append(_floor_cell(fl.get("faster of each", fl.get("NumPy's BLAS")), torch_t, torch_cpu))
        print(f"  {shape:6s} {dtype:8s} " + " ".join(f"{c:>22s}" for c in cells))


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
    p.add_argument("--floor", action="store_true",
                   help="at S1-S3, also the measured floor: the algorithm's unavoidable primitive operations "
                        "timed on one thread at the core's sizes, summed, over the cores (benchmarks/floor.py)")
    p.add_argument("--child", help=argparse.SUPPRESS)  # internal: time one implementation alone
    args = p.parse_args(argv)
    torch = None
    if not args.no_torch and (not args.child or args.child.startswith("torch")):
        torch = import_torch(args.threads)  # before anything loads MKL (the module docstring says why)
    if args.mkl:
        from symattn.numeric import mkl

        if not mkl.available():
            p.error("--mkl: libmkl_rt was not found; pip install mkl (or the extra: pip install symattn[mkl])")
    if args.child:
        return run_child(args, torch)
    dtypes = [getattr(np, d) for d in args.dtypes.split(",")]
    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)"
                                       if torch else ", no torch") +
          f", OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}"
          f", OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}"
          f", OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'default')}"
          f", {os.cpu_count()} cores, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"load order: {load_order()}")
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
