"""Attention over long sequences: key blocks merged by online softmax, queries in tiles.

For each query tile and key block b, with scores S_b = Q K_bᵀ (scale folded into Q):

    c   = max(c_1, rowmax(S_b))                        the shift (any c is exact; the max avoids overflow)
    U   = e^(c_1 - c) U_1 + exp(S_b - c 1ᵀ) [V_b 1]     numerator and denominator in one GEMM
    out = diag(l)⁻¹ U  (l the last column of U)

Both steps are kernels lowered from ``blockwise_logsumexp_merge`` (claims 2 and 0; the ones
column carries claim 4, the denominator, in the same product), query tiles are independent
by claim 5. When one block holds every key, the kernel is claim 0 itself:
diag(exp(S - c 1ᵀ) 1)⁻¹ exp(S - c 1ᵀ) V, normalizing the n × d_v output instead of the n × m
probabilities, with the scores overwritten in place. When the scores are provably small
(``unshifted_is_safe``), the shift is c = 0 (claims 6 and 7): no row max, no subtraction.
Peak memory is O(tile × block) per batch element and head, plus the inputs and output:
linear in the sequence length.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, ShapeError
from ..lower.runtime import rowmax
from . import checks
from .kernels import run


def _positive(name, value):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InputError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def unshifted_is_safe(q, k, v, mask) -> bool:
    """True when exp(S) cannot overflow nor vanish, so the shift c = 0 may be used (claim 6).

    |s_ij| = |q_i · k_j| <= |q_i| |k_j| (Cauchy-Schwarz), so with B = max_i |q_i| · max_j |k_j|
    every finite score lies in [-B, B]; B <= 0.45 ln(largest float) (about 40 in float32, 319 in
    float64) keeps exp(s) normal and far from overflow, and m e^B max|v| must stay far below the
    largest float. NaN or inf anywhere makes this False (the shifted kernel then propagates
    them). A mask must not raise a score and its finite entries must not sink one below
    -0.45 ln(largest float) (else a row of, say, -1e9 entries would vanish instead of being
    uniform); -inf entries are exact either way.
    """
    dtype = np.result_type(q, k, v)
    big = float(np.log(np.finfo(dtype).max))
    bound = float(np.sqrt(np.max(np.einsum("...i,...i->...", q, q)))
                  * np.sqrt(np.max(np.einsum("...i,...i->...", k, k))))
    if not bound <= 0.45 * big:
        return False
    vmax = float(max(np.max(v), -np.min(v)))
    if not np.log(k.shape[-2]) + bound + np.log1p(vmax) < big - 10.0:
        return False
    if mask is None:
        return True
    finite = mask[np.isfinite(mask)]
    return bool(np.all(mask <= 0) and (finite.size == 0 or np.min(finite) >= -0.45 * big))


def _one_block(q, k, v, mask, causal, tile, offset, shape, dtype):
    """All keys in one block: out = diag(l)⁻¹ exp(S - c 1ᵀ) V with l = exp(S - c 1ᵀ) 1 (claim 0),
    the scores of each query tile overwritten in place; when the scores are provably small, the
    shift c = 0 (claim 6) saves the row max and the subtraction."""
    n = q.shape[-2]
    out = None
    unshifted = unshifted_is_safe(q, k, v, mask)
    for i0 in range(0, n, tile):
        i1 = min(n, i0 + tile)
        s = run("scores", q[..., i0:i1, :], k)
        if mask is not None:
            s += mask[..., i0:i1, :]
        if causal:
            _mask_block_(s, i0, 0, offset)
        if unshifted:
            tile_out = run("deferred_unshifted", S=s, V=v)
        else:
            tile_out = run("deferred", S=s, c=rowmax(s), V=v)
        if i1 - i0 == n:
            return tile_out  # one tile: no copy
        if out is None:
            out = np.empty(shape, dtype=dtype)
        out[..., i0:i1, :] = tile_out
    return out


def _mask_block_(s, i0, j0, offset):
    """Causal mask for the block of queries i0.. and keys j0..: key j is hidden when j - i > offset."""
    t, b = s.shape[-2], s.shape[-1]
    hide = (j0 + np.arange(b))[None, :] - (i0 + np.arange(t))[:, None] > offset
    if hide.any():
        s[..., hide] = -np.inf


#: query tiles hold about this many bytes of scores: 64 MiB bounds the memory while keeping
#: BLAS calls few and large (measured here with the elementwise work on both cores: 2^26 to 2^28
#: bytes were fastest at S1-S3, smaller tiles up to 1.8x slower at S2)
TILE_BYTES = 2**26


def blocked_core(q, k, v, *, causal: bool = False, mask=None, block_size: int | None = None,
                 tile: int | None = None):
    """softmax(Q Kᵀ + M) V for scaled queries, one query tile and key block at a time.

    ``mask``: additive (0 / -inf) scores broadcasting to (..., n, m); ``causal``: add the causal
    mask (query i sees keys j <= i + m - n). ``block_size``: keys per block (default: all keys
    up to 4096, else 1024); ``tile``: queries per tile (default: about TILE_BYTES of scores).
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
            np.broadcast_shapes(mask.shape[:-2], batch)
    except ValueError as exc:
        shapes = f"q {q.shape}, k {k.shape}, v {v.shape}" + ("" if mask is None else f", mask {mask.shape}")
        raise ShapeError(f"blocked_core: the batch axes do not broadcast: {shapes}") from exc
    block_size = _positive("block_size", block_size)
    tile = _positive("tile", tile)
    if block_size is None:
        block_size = m if m <= 4096 else 1024
    if tile is None:
        per_row = max(1, int(np.prod(batch)) * min(block_size, m) * np.dtype(dtype).itemsize)
        tile = max(1, min(n, TILE_BYTES // per_row))
    offset = m - n
    if block_size >= m:
        return _one_block(q, k, v, mask, causal, tile, offset, batch + (n, d_v), dtype)
    out = np.empty(batch + (n, d_v), dtype=dtype)
    ones = np.ones(v.shape[:-1] + (1,), dtype=dtype)
    v_aug = np.concatenate([v, ones], axis=-1)  # [V 1]: numerator and denominator together
    unshifted = unshifted_is_safe(q, k, v, mask)
    for i0 in range(0, n, tile):
        i1 = min(n, i0 + tile)
        qt = q[..., i0:i1, :]
        U = c_prev = None
        last_key = m if not causal else min(m, i1 - 1 + offset + 1)
        for j0 in range(0, last_key, block_size):
            j1 = min(last_key, j0 + block_size)
            s = run("scores", qt, k[..., j0:j1, :])
            if mask is not None:
                s += mask[..., i0:i1, j0:j1]
            if causal:
                _mask_block_(s, i0, j0, offset)
            if unshifted:  # c = 0 throughout (claim 7): U = U_1 + exp(S_b) [V_b 1]
                if U is None:
                    U = np.zeros(s.shape[:-1] + (d_v + 1,), dtype)
                U = run("accumulate", S_2=s, U_1=U, V_2=v_aug[..., j0:j1, :])
                continue
            # the running row max stays -inf while a row has seen no key; the shift c must be
            # finite, and any finite shift is exact for such a row (its U_1 is 0, so c_1 = c)
            c_max = rowmax(s)
            if c_prev is not None:
                np.maximum(c_max, c_prev, out=c_max)
            c = np.where(c_max == -np.inf, 0, c_max).astype(dtype, copy=False)
            if U is None:
                U = run("merge_step", S_2=s, U_1=np.zeros(s.shape[:-1] + (d_v + 1,), dtype),
                        V_2=v_aug[..., j0:j1, :], c=c, c_1=c)
            else:
                c_1 = np.where(c_prev == -np.inf, c, c_prev).astype(dtype, copy=False)
                U = run("merge_step", S_2=s, U_1=U, V_2=v_aug[..., j0:j1, :], c=c, c_1=c_1)
            c_prev = c_max
        if U is None:  # no key at all for this tile: every row fully masked
            out[..., i0:i1, :] = np.nan
            continue
        out[..., i0:i1, :] = run("normalize", U=U[..., :d_v], l=U[..., d_v:])
    return out
