"""Multi-head attention on arrays (row convention), with GQA/MQA, biases, masks and causal masking.

    head_h = softmax((query W_h^Q + b_h^Q)(key W_g^K + b_g^K)ᵀ/sqrt(d_k) + M) (value W_g^V + b_g^V)
    MultiHead = [head_1 ... head_H] W^O + b^O,   g = floor(h / (H/G)) (query head h reads group g)

Kernels (each lowered from a proved theorem, see ``kernels.py``): one GEMM for Q, K, V when
query, key and value are the same array (``fused_qkv_projection``, the scale folded into
W^Q by ``scale_folds_into_query_projection``), the attention core per head with the heads
and groups as batch axes (a group's keys and values broadcast to its H/G query heads, never
copied), and one GEMM with W^O after the heads are placed side by side
(``heads_concatenate_before_output_projection``).

The products run on one BLAS thread each, in work items: self-attention over many batch elements
as one item per group of elements (``_per_element``), otherwise the projections and W^O with
enough rows as items over slices of their rows (``_by_rows``: a slice of X W + 1 b is the same
kernel on fewer rows; the fused weights are put side by side once by ``qkv_weights``). A large
product that NumPy's BLAS shared between its own threads would leave them spinning (OpenBLAS's
threads wait for more work for a while, about 0.1 s unless OPENBLAS_THREAD_TIMEOUT says
otherwise), taking a core from the work items that follow: measured here at (1, 2048, 512, 8)
float32, 91 ms per call instead of 67. A product with few rows stays with NumPy's BLAS in one
call: its threads share the packing of W, which every slice of rows would repeat.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ShapeError
from ..lowering.targets import numpy as runtime
from . import blocked, checks, parallel, workspace
from .blocked import blocked_core
from .kernels import (
    OUTPUT,
    OUTPUT_BIAS,
    PROJECTIONS,
    QKV_APPLY,
    QKV_APPLY_BIAS,
    QKV_BIAS_ROW,
    QKV_FUSED,
    QKV_FUSED_BIAS,
    QKV_WEIGHTS,
)
from .saved import Saved


def _positions_after_heads(x):
    """(..., n, G, r, d) -> (..., G, r, n, d), a view (np.moveaxis(x, -4, -2) without its
    argument normalization, which cost more than the rest of a small call's bookkeeping)."""
    k = x.ndim
    return x.transpose(tuple(range(k - 4)) + (k - 3, k - 2, k - 4, k - 1))


def _split(x, n, G, r, d):
    """(..., n, G·r·d) -> (..., G, r, n, d): head h = g·r + i reads group g."""
    return _positions_after_heads(x.reshape(x.shape[:-1] + (G, r, d)))


def _check_mask_batches(mask, lead, H, **arrays):
    """A mask broadcasts to (..., H, n, m), with no batch axis the inputs lack."""
    if mask is None or mask.ndim == 2:
        return
    want = lead + (H,)
    try:
        fits = np.broadcast_shapes(mask.shape[:-2], want) == want
    except ValueError:
        fits = False
    if not fits:
        shapes = ", ".join(f"{nm} {a.shape}" for nm, a in arrays.items())
        raise ShapeError(f"multihead_attention: mask {mask.shape} does not broadcast to (batch axes, num_heads, n, m)"
                         f" = {want + mask.shape[-2:]}: {shapes}")


def _head_mask(mask, H, G, r):
    if mask is None or mask.ndim == 2:
        return mask
    heads = mask.shape[-3]
    if heads == H:
        return mask.reshape(mask.shape[:-3] + (G, r) + mask.shape[-2:])
    if heads == 1:
        return mask[..., None, :, :]
    raise ShapeError(f"mask: its axis -3 ({heads}) must be 1 or num_heads = {H} (shape {mask.shape})")


class _Operands:
    """The checked operands of a multi-head call (``_checked``): the arrays, weights (``W``) and
    bias rows (``b``), the sizes H, G, d_k, d_v, n, m, the batch axes ``lead``, the mask with
    its head axis split as (G, r) and the dtype."""

    __slots__ = ("x_q", "x_k", "x_v", "W", "b", "sizes", "n", "m", "lead", "mask", "dtype")

    def __init__(self, **fields):
        for name, value in fields.items():
            setattr(self, name, value)


def _checked(what, query, key, value, w_q, w_k, w_v, w_o, num_heads, num_kv_heads, b_q, b_k, b_v, b_o, mask):
    """The operands of ``what`` (multihead_attention or its backward), checked: errors name the
    operand and both shapes."""
    H, G = checks.head_counts(num_heads, num_kv_heads)
    r = H // G
    x_q, x_k, x_v = (checks.array(nm, a) for nm, a in (("query", query), ("key", key), ("value", value)))
    W = {nm: checks.array(nm, a, 2) for nm, a in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o))}
    for nm, w in W.items():
        if w.ndim != 2:
            raise ShapeError(f"{nm}: expected a matrix, got shape {w.shape}")
    d_model = x_q.shape[-1]
    for nm, x in (("key", x_k), ("value", x_v)):
        checks.same(what, "query's d_model", d_model, f"{nm}'s d_model", x.shape[-1])
    checks.same(what, "key's number of positions m", x_k.shape[-2], "value's number of positions m", x_v.shape[-2])
    for nm in ("w_q", "w_k", "w_v"):
        checks.same(what, "d_model of query", d_model, f"the rows of {nm}", W[nm].shape[0])
    d_k = checks.divide(what, "the columns of w_q (H·d_k)", W["w_q"].shape[1], "num_heads", H)
    checks.same(what, "the columns of w_k", W["w_k"].shape[1], f"num_kv_heads·d_k = {G}·{d_k}", G * d_k)
    d_v = checks.divide(what, "the columns of w_v (G·d_v)", W["w_v"].shape[1], "num_kv_heads", G)
    if W["w_o"].shape != (H * d_v, d_model):
        raise ShapeError(f"{what}: w_o should be (num_heads·d_v, d_model) = "
                         f"({H * d_v}, {d_model}), got {W['w_o'].shape}")
    dtype = np.result_type(x_q, x_k, x_v, *W.values())
    b = {nm: checks.bias_row(nm, bb, wd, dtype) for nm, bb, wd in (
        ("b_q", b_q, H * d_k), ("b_k", b_k, G * d_k), ("b_v", b_v, G * d_v), ("b_o", b_o, d_model))}
    n, m = x_q.shape[-2], x_k.shape[-2]
    lead = checks.batches(what, query=x_q, key=x_k, value=x_v)
    mask = checks.additive_mask(mask, n, m, dtype)
    _check_mask_batches(mask, lead, H, query=x_q, key=x_k, value=x_v)
    mask = _head_mask(mask, H, G, r)
    return _Operands(x_q=x_q, x_k=x_k, x_v=x_v, W=W, b=b, sizes={"H": H, "G": G, "d_k": d_k, "d_v": d_v},
                     n=n, m=m, lead=lead, mask=mask, dtype=dtype)


def fused_biases(b, sizes) -> dict:
    """The biases b^Q, b^K, b^V for the projection kernels (absent ones as zero rows) when any is
    given, else empty."""
    if all(b[nm] is None for nm in ("b_q", "b_k", "b_v")):
        return {}
    H, G, d_k, d_v = sizes["H"], sizes["G"], sizes["d_k"], sizes["d_v"]
    dtype = next(b[nm].dtype for nm in ("b_q", "b_k", "b_v") if b[nm] is not None)
    widths = {"b_q": H * d_k, "b_k": G * d_k, "b_v": G * d_v}
    full = {nm: b[nm] if b[nm] is not None else np.zeros((1, w), dtype) for nm, w in widths.items()}
    return {"b^Q": full["b_q"], "b^K": full["b_k"], "b^V": full["b_v"]}


def multihead_attention(query, key, value, w_q, w_k, w_v, w_o, *, num_heads, num_kv_heads=None,
                        b_q=None, b_k=None, b_v=None, b_o=None, mask=None, causal=False, block_size=None,
                        return_saved=False):
    """Multi-head attention, (..., n, d_model) -> (..., n, d_model).

    query: (..., n, d_model); key, value: (..., m, d_model); w_q: (d_model, H·d_k) used as
    ``query @ w_q``; w_k, w_v: (d_model, G·d_k), (d_model, G·d_v) with G = num_kv_heads (default
    H; 1 is MQA); w_o: (H·d_v, d_model); biases: (width,) or (1, width). ``mask``: boolean
    (True = attend) or float added to the scores, broadcasting to (..., H, n, m); ``causal``:
    query i sees keys j <= i + m - n. A fully masked row gives NaN. ``block_size``: use the
    key-blocked online-softmax kernel with this block (automatic for very long sequences).
    ``return_saved``: return (result, :class:`~symattn.numeric.saved.Saved`), what
    ``multihead_attention_backward`` needs: each row's log-sum-exp, the projections and the heads
    (all linear in n; the call then takes the step-by-step path, the projections and heads in
    fresh arrays).
    """
    ops = _checked("multihead_attention", query, key, value, w_q, w_k, w_v, w_o, num_heads, num_kv_heads,
                   b_q, b_k, b_v, b_o, mask)
    x_q, x_k, x_v, W, b, sizes, mask = ops.x_q, ops.x_k, ops.x_v, ops.W, ops.b, ops.sizes, ops.mask
    fused = fused_biases(b, sizes)
    if (not return_saved and x_q is x_k and x_k is x_v
            and _per_element_fits(x_q, mask, block_size, sizes["H"], ops.n, ops.dtype)):
        return _per_element(x_q, W, fused, b["b_o"], sizes, mask, causal)
    # the projections and the heads live in this thread's scratch buffers (``workspace``),
    # reused call after call; only the result is a fresh array (and, with return_saved, what is saved)
    return _stepwise(x_q, x_k, x_v, W, b, fused, sizes, ops.n, ops.m, mask, causal, block_size, return_saved)


def _stepwise(x_q, x_k, x_v, W, b, fused, sizes, n, m, mask, causal, block_size, save=False):
    """The batch through each step in turn: the projections, the attention core of every head
    (``blocked_core``), the output projection. ``fused``: the biases b^Q, b^K, b^V (absent ones as
    zeros) when any is given, else empty. ``save``: return (result, Saved), the projections and
    heads in fresh arrays and each row's log-sum-exp computed by the core."""
    take = _fresh if save else workspace.take
    H, G, d_k, d_v = sizes["H"], sizes["G"], sizes["d_k"], sizes["d_v"]
    r = H // G
    biased = bool(fused)
    if x_q is x_k and x_k is x_v:
        width = H * d_k + G * (d_k + d_v)
        if not _splits(math.prod(x_q.shape[:-1]), x_q.shape[-1], width):
            kind = np.result_type(x_q, W["w_q"], W["w_k"], W["w_v"], *fused.values())
            fused_kernel = QKV_FUSED_BIAS if biased else QKV_FUSED
            proj = fused_kernel(X=x_q, **{"W^Q": W["w_q"], "W^K": W["w_k"], "W^V": W["w_v"]},
                                **fused, **sizes, out=take("qkv", x_q.shape[:-1] + (width,), kind))
        else:  # the same product in two steps: the scaled weights side by side once, X W_cat (+ 1 b_cat) by rows
            w_cat = QKV_WEIGHTS(**{"W^Q": W["w_q"], "W^K": W["w_k"], "W^V": W["w_v"]}, **sizes)
            extra = {"b_cat": QKV_BIAS_ROW(**fused, **sizes)} if biased else {}
            kind = np.result_type(x_q, w_cat, *extra.values())
            proj = _by_rows(QKV_APPLY_BIAS if biased else QKV_APPLY, "X", x_q, {"W_cat": w_cat, **extra, **sizes},
                            take("qkv", x_q.shape[:-1] + (width,), kind))
        q = proj[..., : H * d_k]
        k = proj[..., H * d_k: (H + G) * d_k]
        v = proj[..., (H + G) * d_k:]
    else:
        def project(part, x, w, bb, dims):
            extra = {f"b^{part.upper()}": bb} if biased else {}
            kind = np.result_type(x, w, *extra.values())  # the kernel's dtype
            scratch = take(part, x.shape[:-1] + (w.shape[1],), kind)
            return _by_rows(PROJECTIONS[part, biased], "X", x, {f"W^{part.upper()}": w, **extra, **dims}, scratch)
        q = project("q", x_q, W["w_q"], fused["b^Q"] if biased else None, {"H": H, "d_k": d_k})
        k = project("k", x_k, W["w_k"], fused["b^K"] if biased else None, {"G": G, "d_k": d_k})
        v = project("v", x_v, W["w_v"], fused["b^V"] if biased else None, {"G": G, "d_v": d_v})
    q5 = _split(q, n, G, r, d_k)            # (..., G, r, n, d_k)
    k5 = _split(k, m, G, 1, d_k)            # (..., G, 1, m, d_k)
    v5 = _split(v, m, G, 1, d_v)            # (..., G, 1, m, d_v)
    lead = np.broadcast_shapes(q5.shape[:-4], k5.shape[:-4], v5.shape[:-4])
    z = take("heads", lead + (n, G, r, d_v), np.result_type(q, k, v))  # the heads side by side
    heads = _positions_after_heads(z)        # (..., G, r, n, d_v): a view, the core writes into z
    lse = np.empty(lead + (G, r, n), heads.dtype) if save else None  # (..., H, n) once reshaped
    rows = lse
    if r == 1:  # one query head per group: the heads are the last batch axis (work items group them)
        q5, k5, v5, heads = (a[..., 0, :, :] for a in (q5, k5, v5, heads))
        mask = mask if mask is None or mask.ndim == 2 else mask[..., 0, :, :]
        rows = None if lse is None else lse[..., 0, :]
    blocked_core(q5, k5, v5, causal=causal, mask=mask, block_size=block_size, out=heads, lse=rows)
    z = z.reshape(lead + (n, H * d_v))      # (..., n, H·d_v): [head_1 ... head_H]
    name, extra = (OUTPUT_BIAS, {"b^O": b["b_o"]}) if b["b_o"] is not None else (OUTPUT, {})
    result = np.empty(lead + (n, W["w_o"].shape[1]), np.result_type(z, W["w_o"], *extra.values()))
    result = _by_rows(name, "Z", z, {"W^O": W["w_o"], **extra, "H": H, "d_v": d_v}, result)
    if not save:
        return result
    return result, Saved(lse.reshape(lead + (H, n)), q, k, v, z)


def _fresh(name, shape, dtype):
    """A new array (``workspace.take``'s signature): what the forward saves must outlive the call."""
    return np.empty(shape, dtype)


#: a product X W runs as work items over slices of X's rows (``_by_rows``) when it has at least
#: SPLIT_PRODUCT multiply-adds (rows × columns × inner size) and at least MIN_SLICE_ROWS rows per
#: core; else in one call by NumPy's BLAS. One core does 2**22 in about 65 µs in float32 and 135 µs
#: in float64 here, against about 40 µs to hand items to the pool and back. Rows count because every
#: slice packs all of W again, where BLAS's own threads share that work: measured here, X (rows ×
#: 512) W (512 × 1536) on two cores against one, split/one 1.03-1.08 up to 32 rows, 0.94 at 64 and
#: 0.63-0.71 from 128 rows in float32. Whole calls at (1, n, 512, 8) against BLAS's own threads:
#: n = 16 and 64 1.2-1.6x slower in slices of rows (or on one thread), also without
#: OPENBLAS_THREAD_TIMEOUT; n = 256 1.12x slower in float32 with OPENBLAS_THREAD_TIMEOUT=4; 512 rows
#: (2, 256, 512, 8) 1.01-1.04x with it, 0.78-0.85x without it (separate processes)
SPLIT_PRODUCT = 2**22
MIN_SLICE_ROWS = 256
#: rows of a slice are a multiple of this (whole register blocks of the GEMM)
ROW_ALIGN = 16
#: slices of rows per core: one each, the fewest hand-offs (measured here at (1, 2048, 512, 8), calls
#: interleaved: one slice per core 0.5-1% faster than two, and as fast as one product on BLAS's threads)
ROW_ITEMS_PER_CORE = 1


def _splits(rows: int, inner: int, width: int) -> bool:
    """Whether a product of (rows × inner) and (inner × width) runs as work items over slices of rows."""
    return (rows * inner * width >= SPLIT_PRODUCT and rows >= MIN_SLICE_ROWS * runtime.cores()
            and parallel.can_split())


def _by_rows(kernel, key, x, operands, out):
    """Kernel ``kernel`` (a product x W (+ 1 b) of one row-wise kernel: a slice of x's rows gives
    the same slice of the result) on x (passed as ``key``) and ``operands``, written into ``out``:
    as work items over slices of the rows, each with single-threaded BLAS (``parallel``), so that
    BLAS's own threads do not run (and spin after it); in one call when the product is small or has
    few rows (``_splits``) or items cannot run in parallel. Returns ``out``."""
    rows, inner, width = math.prod(x.shape[:-1]), x.shape[-1], out.shape[-1]
    if not _splits(rows, inner, width):
        return kernel(**{key: x}, **operands, out=out)
    kernel.prepare()  # lowered (and proved) here, in the calling thread, before any item runs
    count = ROW_ITEMS_PER_CORE * runtime.cores()
    if x.flags.c_contiguous and out.flags.c_contiguous:  # every row of every batch element, in equal slices
        x2, out2 = x.reshape(rows, inner), out.reshape(rows, width)
        step = -(-rows // count)
        step = -(-step // ROW_ALIGN) * ROW_ALIGN
        items = [(slice(r0, r0 + step),) for r0 in range(0, rows, step)]
    else:  # batch element by batch element (their rows cannot be merged without a copy)
        x2, out2, n = x, out, x.shape[-2]
        per = max(1, math.prod(x.shape[:-2]))
        step = -(-n // max(1, count // per))
        step = min(n, -(-step // ROW_ALIGN) * ROW_ALIGN)
        items = [index + (slice(r0, r0 + step),) for index in np.ndindex(*x.shape[:-2]) for r0 in range(0, n, step)]

    def item(sel):
        kernel(**{key: x2[sel]}, **operands, out=out2[sel])

    parallel.run_items(item, items)
    return out


def _per_element_fits(x, mask, block_size, H, n, dtype) -> bool:
    """Self-attention over many batch elements whose scores are at most 4 ITEM_BYTES each: each
    element's whole computation (its projection, every head, W^O) is one work item. Measured
    here against the batch through each step in turn: 8% faster at S1 (8 elements of 128
    tokens), 2% at S2 float32, even at S2 float64."""
    elements = math.prod(x.shape[:-2])
    return (parallel.can_split() and elements >= 2 * runtime.cores() and x.flags.c_contiguous
            and (mask is None or mask.ndim == 2) and block_size is None
            and H * n * n * np.dtype(dtype).itemsize <= 4 * blocked.ITEM_BYTES)


def _per_element(x, W, extra, b_o, sizes, mask, causal):
    """Each batch element of self-attention as one work item, by the same proved kernels: the
    scaled weights side by side once (``qkv_weights``), then per element X W_cat + 1 b_cat,
    the attention of every head (``blocked``'s tile kernels) and [head_1 ... head_H] W^O + b^O."""
    H, G, d_k, d_v = sizes["H"], sizes["G"], sizes["d_k"], sizes["d_v"]
    r = H // G
    n = x.shape[-2]
    w_cat = QKV_WEIGHTS(**{"W^Q": W["w_q"], "W^K": W["w_k"], "W^V": W["w_v"]}, **sizes)
    apply = QKV_APPLY
    if extra:
        apply, extra = QKV_APPLY_BIAS, {"b_cat": QKV_BIAS_ROW(**extra, **sizes)}
    out_kernel, out_extra = (OUTPUT_BIAS, {"b^O": b_o}) if b_o is not None else (OUTPUT, {})
    kind = np.result_type(x, w_cat, *extra.values())  # the projection's dtype, and the heads'
    result = np.empty(x.shape[:-1] + (W["w_o"].shape[1],), np.result_type(kind, W["w_o"], *out_extra.values()))
    x2, result2 = x.reshape((-1,) + x.shape[-2:]), result.reshape((-1,) + result.shape[-2:])
    blocked.prepare()
    apply.prepare(), out_kernel.prepare()  # lowered (and proved) here, in the calling thread, before any item runs

    elements = x2.shape[0]
    scores = r * G * n * n * np.dtype(kind).itemsize  # bytes of scores per element
    # as many elements per item as keep its scores within one step of the tile kernels (TILE_BYTES,
    # in a core's cache), at least one item per core: the fewest items, the fewest Python steps
    per_item = max(1, min(elements // runtime.cores(), blocked.TILE_BYTES // scores))
    # everything an item needs that does not depend on the item, worked out once
    width, qk, kv = w_cat.shape[1], H * d_k, (H + G) * d_k
    apply_args = {"W_cat": w_cat, **extra, **sizes}
    out_args = {"W^O": W["w_o"], **out_extra, "H": H, "d_v": d_v}
    heads_first = (0, 2, 3, 1, 4)  # (c, n, G, r, d) -> (c, G, r, n, d), views

    def element(i):
        stop = min(elements, i + per_item)
        c = stop - i
        proj = apply(X=x2[i:stop], **apply_args, out=workspace.take("qkv_element", (c, n, width), kind))
        q5 = proj[..., :qk].reshape(c, n, G, r, d_k).transpose(heads_first)   # (c, G, r, n, d_k)
        k5 = proj[..., qk:kv].reshape(c, n, G, 1, d_k).transpose(heads_first)  # (c, G, 1, n, d_k)
        v5 = proj[..., kv:].reshape(c, n, G, 1, d_v).transpose(heads_first)    # (c, G, 1, n, d_v)
        z = workspace.take("heads_element", (c, n, G, r, d_v), kind)
        blocked.attend_tile(q5, k5, v5, mask, causal, out=z.transpose(heads_first))
        out_kernel(Z=z.reshape(c, n, H * d_v), **out_args, out=result2[i:stop])

    parallel.run_items(element, range(0, elements, per_item))
    return result
