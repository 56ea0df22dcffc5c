"""The backward of the attention core, key block by key block, P recomputed from the saved log-sum-exp.

For one head, with Q already scaled (S = Q Kᵀ + M), the saved L (each row's log-sum-exp), the
forward's O and the cotangent dO, each step (a tile of queries t, a block of keys b) runs the
lines of :data:`symattn.numeric.backward_proofs.LINES` ("P", "dV", "dP", "dS", "dQ", "dK"):

    P_tb  = exp(S_tb - L_t 1ᵀ)                       recomputed, never stored for all keys
    dV_b += P_tbᵀ dO_t
    dP_tb = dO_t V_bᵀ
    dS_tb = P_tb ∘ (dP_tb - D_t 1ᵀ),   D = rowsum(dO ∘ O) once per call ("D")
    dQ_t += dS_tb K_b
    dK_b += dS_tbᵀ Q_t

(dQ here is the gradient of the scaled Q; the caller multiplies by the scale.) A score that a mask
removes (-inf) gets P = 0 and so dS = 0 exactly. Work items are (batch element, group of heads,
range of keys), one per core (``parallel``); each step holds about TILE_BYTES of scores twice (P
and dP), so peak memory is the inputs, the gradients and O(cores × TILE_BYTES): no array of every
head's n × m scores exists at any time.
"""

from __future__ import annotations

import math

import numpy as np

from ..lowering.targets import numpy as runtime
from . import parallel, workspace
from .blocked import MIN_TILE, TILE_BYTES

#: keys per block when the scores of a group of heads do not fit in TILE_BYTES
KEY_BLOCK = 512


def row_dots(do, o):
    """D = rowsum(dO ∘ O), (..., n): FlashAttention-2's D, once per call (line "D").

    >>> import numpy as np
    >>> row_dots(np.ones((1, 2, 3)), np.arange(6.0).reshape(1, 2, 3))
    array([[ 3., 12.]])
    """
    return np.einsum("...ij,...ij->...i", do, o)


def _steps(g, n, m, itemsize, block_size):
    """(query tile, key block) for a work item of ``g`` heads: everything in one step when its
    scores fit in TILE_BYTES, else keys in blocks of ``block_size`` (default KEY_BLOCK) and
    queries in tiles of about TILE_BYTES of scores."""
    if block_size is None and g * n * m * itemsize <= TILE_BYTES:
        return n, m
    block = min(m, block_size or KEY_BLOCK)
    tile = min(n, max(MIN_TILE, TILE_BYTES // max(1, g * block * itemsize)))
    return tile, block


def _plan(B, H, G, n, m, itemsize, block_size, workers):
    """Work items (batch element, first head, end head, first key, end key) and the number of key
    ranges: heads in groups whose scores fit in TILE_BYTES (within one key group when r > 1 is not
    required: a group's keys are gathered per item), keys split into ranges only when there are
    fewer than two items per core otherwise."""
    group = max(1, min(H, TILE_BYTES // max(1, n * m * itemsize)))
    while B * -(-H // group) < 2 * workers and group > 1:
        group = (group + 1) // 2
    heads = [(h0, min(H, h0 + group)) for h0 in range(0, H, group)]
    ranges = 1
    if B * len(heads) < 2 * workers:
        _, block = _steps(heads[0][1] - heads[0][0], n, m, itemsize, block_size)
        ranges = max(1, min(-(-m // block), -(-2 * workers // (B * len(heads)))))
    width = -(-m // ranges)
    keys = [(j0, min(m, j0 + width)) for j0 in range(0, m, width)]
    return [(b, h0, h1, j0, j1) for b in range(B) for h0, h1 in heads for j0, j1 in keys], len(keys)


def core_backward(q, k, v, o, do, lse, *, mask=None, causal=False, block_size=None):
    """(dQ, dK, dV) of O = softmax(Q Kᵀ + M) V at the cotangent dO, Q already scaled.

    q: (B, H, n, d_k); k: (B, G, m, d_k); v: (B, G, m, d_v) (query head h reads group
    h // (H/G)); o, do: (B, H, n, d_v); lse: (B, H, n), the forward's log-sum-exp of each row;
    mask: None or additive, (n, m) or (B, 1 or H, n, m); causal: query i sees keys j <= i + m - n.
    Returns dQ (B, H, n, d_k), dK (B, G, m, d_k), dV (B, G, m, d_v): dK and dV summed over the
    query heads of each group. A row that sees no key gets no gradient.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.normal(size=(1, 1, 3, 2)), rng.normal(size=(1, 1, 4, 2)), rng.normal(size=(1, 1, 4, 2))
    >>> s = q @ k.swapaxes(-1, -2)
    >>> lse = np.log(np.exp(s).sum(-1))
    >>> o = np.exp(s - lse[..., None]) @ v
    >>> dq, dk, dv = core_backward(q, k, v, o, np.ones_like(o), lse)
    >>> bool(np.allclose(dv, np.exp(s - lse[..., None]).swapaxes(-1, -2) @ np.ones_like(o)))
    True
    """
    B, H, n, d_k = q.shape
    G, m, d_v = k.shape[1], k.shape[2], v.shape[3]
    r = H // G
    dtype = np.result_type(q, k, v, o, do)
    D = row_dots(do, o).astype(dtype, copy=False)
    L = lse.astype(dtype, copy=True)
    seen = np.isfinite(L)
    if not seen.all():  # a row that saw no key: P = exp(S - inf) = 0, and D must stay finite
        L[~seen], D[~seen] = np.inf, 0
    offset = m - n
    items, ranges = _plan(B, H, G, n, m, dtype.itemsize, block_size, runtime.cores() if parallel.can_split() else 1)
    dq_parts = np.zeros((ranges, B, H, n, d_k), dtype)
    dk_heads = np.zeros((B, H, m, d_k), dtype)  # per query head; summed over each group at the end
    dv_heads = np.zeros((B, H, m, d_v), dtype)
    width = -(-m // ranges)

    def item(spec):
        b, h0, h1, j_start, j_end = spec
        heads = np.arange(h0, h1)
        kg = k[b, heads // r] if r > 1 else k[b, h0:h1]
        vg = v[b, heads // r] if r > 1 else v[b, h0:h1]
        qg, dog, Lg, Dg = q[b, h0:h1], do[b, h0:h1], L[b, h0:h1], D[b, h0:h1]
        dq = dq_parts[j_start // width, b, h0:h1]
        dk, dv = dk_heads[b, h0:h1], dv_heads[b, h0:h1]
        mg = mask
        if mask is not None and mask.ndim == 4:
            mg = mask[b] if mask.shape[1] == 1 else mask[b, h0:h1]
        tile, block = _steps(h1 - h0, n, j_end - j_start, dtype.itemsize, block_size)
        for j0 in range(j_start, j_end, block):
            j1 = min(j_end, j0 + block)
            kb, vb = kg[:, j0:j1], vg[:, j0:j1]
            for i0 in range(0, n, tile):
                i1 = min(n, i0 + tile)
                if causal and j0 > i1 - 1 + offset:  # every key of the block is after every query
                    continue
                _step(qg[:, i0:i1], kb, vb, dog[:, i0:i1], Lg[:, i0:i1], Dg[:, i0:i1],
                      None if mg is None else mg[..., i0:i1, j0:j1],
                      causal and j1 - 1 > i0 + offset, i0, j0, offset,
                      dq[:, i0:i1], dk[:, j0:j1], dv[:, j0:j1])

    parallel.run_items(item, items)
    dq = dq_parts[0] if ranges == 1 else dq_parts.sum(axis=0)
    if r > 1:
        return dq, dk_heads.reshape(B, G, r, m, d_k).sum(axis=2), dv_heads.reshape(B, G, r, m, d_v).sum(axis=2)
    return dq, dk_heads, dv_heads


def _step(q, k, v, do, L, D, mask, partial_causal, i0, j0, offset, dq, dk, dv):
    """One tile of queries against one block of keys: the lines P, dV, dP, dS, dQ, dK, the
    gradients added into ``dq``, ``dk``, ``dv`` (views of the item's own rows)."""
    g, t, b = q.shape[0], q.shape[1], k.shape[1]
    dtype = dq.dtype
    s = np.matmul(q, k.swapaxes(-1, -2), out=workspace.take("bw_scores", (g, t, b), dtype))
    if mask is not None:
        s += mask
    if partial_causal:  # key j hidden from query i when j > i + offset: a boolean (t, b), no index arrays
        hide = (j0 + np.arange(b))[None, :] > (i0 + offset + np.arange(t))[:, None]
        np.copyto(s, -np.inf, where=hide)
    s -= L[..., None]
    with np.errstate(under="ignore"):
        p = np.exp(s, out=s)                                        # line P
    dv += np.matmul(p.swapaxes(-1, -2), do, out=workspace.take("bw_dv", dv.shape, dtype))   # line dV
    dp = np.matmul(do, v.swapaxes(-1, -2), out=workspace.take("bw_dp", (g, t, b), dtype))  # line dP
    dp -= D[..., None]
    ds = np.multiply(dp, p, out=dp)                                 # line dS
    dq += np.matmul(ds, k, out=workspace.take("bw_dq", dq.shape, dtype))                    # line dQ
    dk += np.matmul(ds.swapaxes(-1, -2), q, out=workspace.take("bw_dk", dk.shape, dtype))   # line dK


def heads_first(x, lead, rows, heads, width):
    """(..., rows, heads·width) -> (B, heads, rows, width), contiguous, B = prod(lead) (the batch
    axes broadcast to ``lead``)."""
    x = x.reshape(x.shape[:-1] + (heads, width))
    x = np.broadcast_to(x, lead + (rows, heads, width))
    return np.ascontiguousarray(np.moveaxis(x, -2, -3)).reshape((math.prod(lead), heads, rows, width))


def heads_last(x, lead):
    """(B, heads, rows, width) -> lead + (rows, heads·width)."""
    B, heads, rows, width = x.shape
    return np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(lead + (rows, heads * width))
