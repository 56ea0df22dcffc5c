"""Attention over long sequences: key blocks merged by online softmax, queries in tiles.

For each query tile and key block b, with scores S_b = Q K_bᵀ (scale folded into Q):

    c   = max(c_1, rowmax(S_b))                        the shift (any c is exact; the max avoids overflow)
    U   = e^(c_1 - c) U_1 + exp(S_b - c 1ᵀ) [V_b 1]     numerator and denominator in one GEMM
    out = diag(l)⁻¹ U  (l the last column of U)

Both steps are kernels lowered from ``blockwise_logsumexp_merge`` (claims 2 and 0; the ones
column carries claim 4, the denominator, in the same product), query tiles are independent
by claim 5. Every tile is first computed with the shift c = 0 (claim 7: the blocks simply
add up, U = Σ_b exp(S_b) [V_b 1], no row max, no subtraction, no separate row sum); a check
of the small result (``unshifted_is_accurate``) decides whether that was as accurate as the
shifted form, and otherwise the tile is computed with the row max as the shift: with one
block, claim 0 itself, diag(exp(S - c 1ᵀ) 1)⁻¹ exp(S - c 1ᵀ) V, normalizing the n × d_v
output instead of the n × m probabilities, the scores overwritten in place.
The work items (a group of heads, a tile of queries) run one per core (``parallel``), so
peak memory is the inputs and output plus O(cores × ITEM_BYTES) of scores: linear in the
sequence length at a fixed block size.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError, ShapeError
from ..lowering.targets import numpy as runtime
from ..lowering.targets.numpy import rowmax
from . import checks, parallel, workspace
from .kernels import (
    ACCUMULATE,
    ACCUMULATE_BASE2,
    DEFERRED,
    EXP2_PRODUCT,
    EXP_PRODUCT,
    MERGE_STEP,
    NORMALIZE,
    QUERY_BASE2,
    SCORES,
)


def _positive(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def unshifted_is_accurate(U, m: int, v=None) -> bool:
    """Whether U = exp(S) [V 1], computed with the shift c = 0 (claims 6 and 7), is as good as
    with the row max as the shift.

    Any shift gives the same exact value. In floating point, c = 0 can go wrong in three ways:
    an exp or a sum overflows; the row's exponentials underflow; or the products exp(s) v fall
    into the subnormal range, where they lose their relative precision (a row of scores near
    -35 in float32 with |v| ~ 1e-28 loses two digits that way). So U must be finite; each row's
    denominator l (the last column) at least m e^(-0.45 ln(largest float)) (about e^-40 in
    float32, e^-319 in float64), so that its largest term exp(max_j s_ij) >= l / m is far above
    the subnormal range; and each numerator entry at least m · tiny / eps, so that the products
    that underflowed (at most tiny each, m · tiny in all) are below its rounding error, or, with
    the values ``v`` given ((..., m, d_v), the keys' values of the tile), its column of v all
    zeros (every product is then exactly 0). A numerator of 0 is not enough by itself: with
    scores near -60 and values near 1e-300 every product underflows to 0 in float64, while the
    answer is near 1e-300; nor is the column's largest |v|: a column holding 1 and 1e-300 can
    lose its 1e-300 terms that the shifted form keeps. This is a
    check of the small result (rows × (d_v + 1)) instead of a bound on the inputs: NaN or inf
    anywhere, a positive mask that pushes a score up, or a row masked by large finite values
    (say -1e9, whose softmax must stay uniform) all fail it, and the shifted kernels then run.
    A tile that fails is only slower, never less accurate.
    """
    largest, tiny, small = _limits(U.dtype)
    a = np.abs(U, out=workspace.take("check", U.shape, U.dtype))
    if not a.max() <= largest:  # also false for NaN
        return False
    if not U[..., -1].min() >= m * small:
        return False
    # the usual case, in one contiguous pass: no entry of U at all below the bound (the minimum
    # over U is at most the minimum over the numerators)
    if a.min() >= m * tiny:
        return True
    num = a[..., :-1]
    fine = num >= m * tiny
    if v is None or fine.all():
        return bool(fine.all())
    zero_columns = ~np.any(v, axis=-2)[..., None, :]  # (..., 1, d_v): the columns of v that are all 0
    return bool((fine | zero_columns).all())


_LIMITS: dict = {}


def _limits(dtype):
    """(largest float, tiny / eps, e^(-0.45 ln(largest float))) of a dtype, computed once."""
    if dtype not in _LIMITS:
        info = np.finfo(dtype)
        _LIMITS[dtype] = (info.max, info.tiny / info.eps, float(np.exp(-0.45 * np.log(float(info.max)))))
    return _LIMITS[dtype]


def _mask_block_(s, i0, j0, offset):
    """Causal mask for the block of queries i0.. and keys j0..: key j is hidden when j - i > offset."""
    t, b = s.shape[-2], s.shape[-1]
    hide = (j0 + np.arange(b))[None, :] - (i0 + np.arange(t))[:, None] > offset
    if hide.any():
        s[..., hide] = -np.inf


#: one work item holds about this many bytes of scores. Larger items mean fewer, larger GEMMs
#: and less Python per flop; measured here (core of S1-S3, items of 256 KiB to 8 MiB): 4 MiB
#: was fastest or within 4% of it everywhere, 256 KiB up to 2.1x slower at S3
ITEM_BYTES = 2**22
#: fewest queries in a tile: smaller tiles make GEMMs too thin to run at speed
MIN_TILE = 32
#: one step inside a work item (the GEMM that makes a block of scores, its exponential and the
#: GEMM with [V 1] that reads it) holds about this many bytes of scores, so that they stay in a
#: core's cache (2 MiB of L2 here) between the two GEMMs; measured here on the core of S2 and
#: S3, one thread: blocks of 0.5-2 MiB were 5-10% faster than one block of 4-8 MiB
TILE_BYTES = 2**20
#: fewest keys in a key block chosen automatically
MIN_BLOCK = 256
#: the unshifted float32 tiles of at least BASE2_MIN_ROWS queries without an additive mask in base 2
#: (``_attend``); False: all in base e, for comparing the two (the results agree up to rounding).
#: Measured here, whole calls, base 2 / base e, one process alternating, idle machine: float32
#: 0.97 at (1, 2048, 512, 8) and 0.99-1.01 at (8, 512, 512, 8), but 1.04 at (8, 128, 256, 4), whose
#: tiles of 128 queries pay the extra pass over Q more than exp2 saves; float64 1.00-1.06 (NumPy's
#: exp2 is 1.9x faster than its exp in float32, only 1.1-1.3x in float64)
BASE2 = True
BASE2_MIN_ROWS = 256


def _plan(batch, n, keys, itemsize, tile, workers, budget=None):
    """Work items (slices of the batch axes, first query, end query): the last batch axis (heads)
    in groups and the queries in tiles, each item about ``budget`` (default ITEM_BYTES) bytes of
    scores, and at least two items per core when the shape allows it."""
    budget = budget or ITEM_BYTES
    heads = batch[-1] if batch else 1
    outer = batch[:-1]
    row = max(1, keys * itemsize)
    if tile is None:
        tile = n if n * row <= budget else max(MIN_TILE, budget // row)
        tile_fixed = False
    else:
        tile_fixed = True
    tile = min(tile, n)
    group = max(1, min(heads, budget // (tile * row)))

    def count():
        return int(np.prod(outer, dtype=np.int64)) * -(-heads // group) * -(-n // tile)

    while count() < 2 * workers:
        if group > 1:
            group = (group + 1) // 2
        elif not tile_fixed and tile > MIN_TILE:
            tile = max(MIN_TILE, (tile + 1) // 2)
        else:
            break
    items = []
    for index in np.ndindex(*outer):
        lead = tuple(slice(i, i + 1) for i in index)
        for h0 in range(0, heads, group):
            sel = lead + (slice(h0, min(heads, h0 + group)),) if batch else ()
            items.extend((sel, i0, min(n, i0 + tile)) for i0 in range(0, n, tile))
    return items


def _part(a, sel):
    """The slice ``sel`` of the batch axes (aligned on the right; axes of size 1 broadcast)."""
    nb = a.ndim - 2
    if nb <= 0 or not sel:
        return a
    sel = sel[len(sel) - nb:]  # the batch is the broadcast of every operand: nb <= len(sel)
    return a[tuple(s if size != 1 else slice(None) for s, size in zip(sel, a.shape[:nb]))]


def _scores(q, k, mask, i0, j0, causal, offset, batch, dtype):
    """S = Q K_bᵀ (+ M) for the queries from i0 and the keys from j0, causal mask applied (in
    this thread's scratch buffer: valid until its next scores); ``batch``, ``dtype``: the batch
    axes and dtype of Q K_bᵀ (the same for every key block of a tile)."""
    s = SCORES(q, k, out=workspace.take("scores", batch + (q.shape[-2], k.shape[-2]), dtype))
    if mask is not None:
        full = np.broadcast_shapes(s.shape, mask.shape)
        if full == s.shape:
            s += mask
        else:  # the mask has batch axes that q and k lack (v has them): the masked scores are larger
            s = np.add(s, mask, out=workspace.take("masked_scores", full, s.dtype))
    if causal:
        _mask_block_(s, i0, j0, offset)
    return s


def _with_ones(v):
    """[V 1] (numerator and denominator in one GEMM), in this thread's scratch buffer."""
    v_aug = workspace.take("v_aug", v.shape[:-1] + (v.shape[-1] + 1,), v.dtype)
    v_aug[..., :-1] = v
    v_aug[..., -1] = 1
    return v_aug


def _attend(q, k, v, mask, i0, causal, offset, block_size, out, lse=None):
    """softmax(Q Kᵀ + M) V for one tile of queries starting at query i0 (keys already cut to
    the last one a causal tile can see), by the kernels of ``blockwise_logsumexp_merge``.

    First with the shift c = 0: U = Σ_b exp(S_b) [V_b 1] (claim 7, numerator and denominator in
    one GEMM, no row max) and out = diag(l)⁻¹ U. Without an additive mask, in float32 and for a
    tile of at least BASE2_MIN_ROWS queries, this sum is computed in base 2 (claims 9 and 11):
    T_b = (Q / ln 2) K_bᵀ, with the query tile divided by ln 2 once, and U = Σ_b 2^(T_b) [V_b 1],
    the same numbers as exp(S_b) up to rounding, for less work (NumPy's exp2 is cheaper than its
    exp; the causal mask's -inf stays -inf). An additive mask would have
    to be divided by ln 2 as well (claim 12), an extra pass over it per block: those tiles stay in
    base e. If ``unshifted_is_accurate`` says no, the tile is computed again with the row max as
    the shift (in base e, from the query tile as given). The choice is made per tile, from that
    tile's numbers alone, so the result does not depend on which thread ran what first. The
    result is written into ``out``; with ``lse`` (an array of the tile's rows, (..., t)), each row's
    log-sum-exp L = c + log l of its scores as well (c the shift, l the denominator U 1 carries):
    the statistic the backward recomputes P = exp(S - L 1ᵀ) from."""
    m, d_v = k.shape[-2], v.shape[-1]
    blocks = [(j0, min(m, j0 + block_size)) for j0 in range(0, m, block_size)]
    batch, dtype = runtime.batch_of(q, k), np.result_type(q, k)

    def scores(j0, j1, query=q):
        return _scores(query, k[..., j0:j1, :], None if mask is None else mask[..., j0:j1], i0, j0, causal, offset,
                       batch, dtype)

    v_aug = _with_ones(v)
    U = None
    base2 = BASE2 and mask is None and dtype == np.float32 and q.shape[-2] >= BASE2_MIN_ROWS
    # an exp that overflows or underflows here (and the inf·0 of the product after it) is no
    # error: the check below then sends the tile to the shifted kernels, whose own warnings,
    # if any, are the user's to see
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        # Q / ln 2 in the scores' dtype: a narrower query would round it to its own precision
        q_first = QUERY_BASE2(Q=q if q.dtype == dtype else q.astype(dtype),
                      out=workspace.take("q_base2", q.shape, dtype)) if base2 else q
        for j0, j1 in blocks:
            s = scores(j0, j1, q_first)
            if U is None:  # the first block: U = exp(S_1) [V_1 1], nothing to add yet
                shape = runtime.batch_of(s, v_aug) + (s.shape[-2], d_v + 1)
                U = workspace.take("U", shape, s.dtype)
                if base2:
                    U = EXP2_PRODUCT(T=s, V=v_aug[..., j0:j1, :], out=U)
                else:
                    U = EXP_PRODUCT(S=s, V=v_aug[..., j0:j1, :], out=U)
            elif base2:
                U = ACCUMULATE_BASE2(T_2=s, U_1=U, V_2=v_aug[..., j0:j1, :])
            else:
                U = ACCUMULATE(S_2=s, U_1=U, V_2=v_aug[..., j0:j1, :])
    if unshifted_is_accurate(U, m, v):
        if lse is not None:  # the shift was c = 0: L = log l
            with np.errstate(divide="ignore"):
                np.log(U[..., d_v], out=lse)
        return NORMALIZE(U=U[..., :d_v], l=U[..., d_v:], out=out)
    if len(blocks) == 1 and lse is None:  # one block: claim 0, the row max as the shift
        s = scores(0, m)
        return DEFERRED(S=s, c=rowmax(s), V=v, out=out)
    U = c_prev = None
    for j0, j1 in blocks:
        s = scores(j0, j1)
        # the running row max stays -inf while a row has seen no key; the shift c must be
        # finite, and any finite shift is exact for such a row (its U_1 is 0, so c_1 = c)
        c_max = rowmax(s)
        if c_prev is not None:
            np.maximum(c_max, c_prev, out=c_max)
        c = np.where(c_max == -np.inf, 0, c_max).astype(s.dtype, copy=False)
        if U is None:
            U = MERGE_STEP(S_2=s, U_1=np.zeros(s.shape[:-1] + (d_v + 1,), s.dtype),
                    V_2=v_aug[..., j0:j1, :], c=c, c_1=c)
        else:
            c_1 = np.where(c_prev == -np.inf, c, c_prev).astype(s.dtype, copy=False)
            U = MERGE_STEP(S_2=s, U_1=U, V_2=v_aug[..., j0:j1, :], c=c, c_1=c_1)
        c_prev = c_max
    if lse is not None:  # L = c + log l, c the last (finite) shift; -inf for a row that saw no key
        with np.errstate(divide="ignore"):
            np.add(c[..., 0], np.log(U[..., d_v]), out=lse)
    return NORMALIZE(U=U[..., :d_v], l=U[..., d_v:], out=out)


#: every kernel a tile may run
TILE_KERNELS = (SCORES, EXP_PRODUCT, ACCUMULATE, NORMALIZE, DEFERRED, MERGE_STEP, QUERY_BASE2, EXP2_PRODUCT,
                ACCUMULATE_BASE2)


def prepare() -> None:
    """Lower (and prove) here, in the calling thread, every kernel a tile may run, before any
    work item does."""
    for k in TILE_KERNELS:
        k.prepare()


def key_block(rows: int, m: int, itemsize: int) -> int:
    """Keys per block for a step of ``rows`` rows of scores: all m keys when they fit in
    TILE_BYTES, else equal blocks of about TILE_BYTES (at least MIN_BLOCK keys)."""
    fit = TILE_BYTES // max(1, rows * itemsize)
    if fit >= m:
        return m
    count = -(-m // max(MIN_BLOCK, fit))
    return -(-m // count)


def _item(q, k, v, mask, sel, i0, i1, causal, offset, block_size, out, lse=None):
    """The work item (batch slice ``sel``, queries i0..i1) of softmax(Q Kᵀ + M) V, into ``out``
    (and each row's log-sum-exp into ``lse``, when given); ``block_size`` None: keys in blocks
    of ``key_block``."""
    m = k.shape[-2]
    last_key = m if not causal else min(m, i1 + offset)  # query i sees keys j <= i + offset
    target = out[sel][..., i0:i1, :]  # sel may be () with batch axes: the queries are always axis -2
    lse_rows = None if lse is None else lse[sel][..., i0:i1]
    if last_key <= 0:  # no key at all for this tile: every row fully masked
        target[...] = np.nan
        if lse_rows is not None:
            lse_rows[...] = -np.inf
        return
    qs = _part(q, sel)[..., i0:i1, :]
    ks, vs = _part(k, sel)[..., :last_key, :], _part(v, sel)[..., :last_key, :]
    ms = None if mask is None else _part(mask, sel)[..., i0:i1, :last_key]
    if block_size is None:
        rows = math.prod(runtime.batch_of(qs, ks)) * (i1 - i0)
        block_size = key_block(rows, last_key, qs.dtype.itemsize)
    _attend(qs, ks, vs, ms, i0, causal, offset, block_size, target, lse_rows)


def attend_tile(q, k, v, mask, causal, out):
    """softmax(Q Kᵀ + M) V of all queries against all keys, written into ``out``, in steps of
    about TILE_BYTES of scores (heads in groups, queries in tiles, keys in blocks), one after
    another in this thread; for callers that have checked the shapes and called ``prepare``."""
    n, m = q.shape[-2], k.shape[-2]
    batch = runtime.batch_of(q, k, v)
    itemsize = np.result_type(q, k, v).itemsize
    if not batch or math.prod(batch) * n * m * itemsize <= 2 * TILE_BYTES:
        steps = [((), 0, n)]  # small enough: one step, the fewest Python calls
    else:
        steps = _plan(batch, n, m, itemsize, None, 0, budget=TILE_BYTES)
    for sel, i0, i1 in steps:
        _item(q, k, v, mask, sel, i0, i1, causal, m - n, None, out)


def blocked_core(q, k, v, *, causal: bool = False, mask=None, block_size: int | None = None,
                 tile: int | None = None, out=None, lse=None):
    """softmax(Q Kᵀ + M) V for scaled queries, one query tile and key block at a time.

    ``mask``: additive (0 / -inf) scores broadcasting to (..., n, m); ``causal``: add the causal
    mask (query i sees keys j <= i + m - n). ``block_size``: keys per block (default: all keys
    in blocks of about TILE_BYTES of scores); ``tile``: queries per tile (default: about ITEM_BYTES
    of scores per work item); ``out``: an array (or a view) of the result's shape and dtype to write it into.
    ``lse``: an array of shape (batch..., n) and the result's dtype that receives each query row's
    log-sum-exp L = log Σ_j exp(s_ij) (the saved statistic of the backward; -inf for a row that
    sees no key). The work items (a group of heads, a tile of queries) run on every core
    (``parallel``). A row that sees no key (fully masked) gives NaN.
    """
    q, k, v = (checks.array(nm, a) for nm, a in (("q", q), ("k", k), ("v", v)))
    n, m, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    checks.same("blocked_core", "the width of q", q.shape[-1], "the width of k", k.shape[-1])
    checks.same("blocked_core", "the keys of k", m, "the values of v", v.shape[-2])
    if n == 0 or m == 0:
        raise ShapeError(f"blocked_core: need at least one query and one key, got n = {n}, m = {m}")
    dtype = np.result_type(q, k, v)
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        if mask is not None:
            mask = checks.additive_mask(mask, n, m, dtype)
            if np.broadcast_shapes(mask.shape[:-2], batch) != batch:
                raise ValueError
    except ValueError as exc:
        shapes = f"q {q.shape}, k {k.shape}, v {v.shape}" + ("" if mask is None else f", mask {mask.shape}")
        raise ShapeError(f"blocked_core: the batch axes do not broadcast: {shapes}") from exc
    block_size = _positive("block_size", block_size)
    tile = _positive("tile", tile)
    planned = block_size or (m if m <= 4096 else 1024)  # keys per item, for sizing the items
    offset = m - n
    prepare()
    if out is None:
        out = np.empty(batch + (n, d_v), dtype=dtype)
    elif out.shape != batch + (n, d_v) or out.dtype != dtype:
        raise ShapeError(f"blocked_core: out should be {batch + (n, d_v)} {np.dtype(dtype)}, "
                         f"got {out.shape} {out.dtype}")
    else:
        for name, a in (("q", q), ("k", k), ("v", v), ("mask", mask)):
            if a is not None and np.may_share_memory(out, a):
                raise InputError(f"blocked_core: out overlaps {name}; the result would overwrite its own input")
    if lse is not None and (lse.shape != batch + (n,) or lse.dtype != dtype):
        raise ShapeError(f"blocked_core: lse should be {batch + (n,)} {np.dtype(dtype)}, got {lse.shape} {lse.dtype}")
    items = _plan(batch, n, min(planned, m), np.dtype(dtype).itemsize, tile, runtime.cores())

    def work(item):
        _item(q, k, v, mask, *item, causal, offset, block_size, out, lse)

    parallel.run_items(work, items)
    return out
