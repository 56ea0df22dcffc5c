"""Scaled dot-product attention on arrays, in both conventions.

Row (Transformer paper): query (..., n, d_k), key (..., m, d_k), value (..., m, d_v) →
softmax(Q Kᵀ/sqrt(d_k) + M) V, (..., n, d_v). Column (seed 000): query (..., d_k, n),
key (..., d_k, m), value (..., d_v, m) → V Softmax(Kᵀ Q/sqrt(d_k) + Mᵀ), (..., d_v, n); by the
theorem ``column_row_transpose`` it is the transpose of the row form on the transposed inputs.

A fully masked row (every score -inf) has no softmax: its output is NaN, never a silent number.
NaN and inf in the inputs propagate.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConventionError
from . import checks
from .kernels import CORE, CORE_CAUSAL, CORE_MASKED


def _swap(a):
    return np.swapaxes(a, -1, -2)


def attention(query, key, value, *, convention: str = "row", mask=None, causal: bool = False,
              scale: float | None = None):
    """Attention(Q, K, V) on arrays (batch axes first), lowered from the proved scale-fold theorem.

    ``mask``: boolean (True = attend) or float added to the scores, shape (..., n, m) in the row
    convention (queries × keys) in both conventions; ``causal``: query i sees keys j <= i + m - n;
    ``scale``: defaults to 1/sqrt(d_k).

    >>> import numpy as np
    >>> q = np.zeros((2, 3, 4), np.float32); k = np.zeros((5, 4), np.float32)
    >>> v = np.arange(10, dtype=np.float32).reshape(5, 2)
    >>> attention(q, k, v)[0, 0]   # equal scores: the mean of the values
    array([4., 5.], dtype=float32)
    """
    if convention not in ("row", "column"):
        raise ConventionError(f"convention must be 'row' or 'column', got {convention!r}")
    q, k, v = (checks.array(nm, a) for nm, a in (("query", query), ("key", key), ("value", value)))
    if convention == "column":
        q, k, v = _swap(q), _swap(k), _swap(v)
    checks.same("attention", "query's d_k", q.shape[-1], "key's d_k", k.shape[-1])
    checks.same("attention", "key's number of positions m", k.shape[-2],
                "value's number of positions m", v.shape[-2])
    dtype = np.result_type(q, k, v)
    n, m = q.shape[-2], k.shape[-2]
    factor = checks.scale_factor(scale, q.shape[-1])
    mask = checks.additive_mask(mask, n, m, dtype)
    checks.batches("attention", query=q, key=k, value=v, mask=mask)
    q = (q * dtype.type(factor)).astype(dtype, copy=False)  # the scale folded into the query
    out = _core(q, k.astype(dtype, copy=False), v.astype(dtype, copy=False), mask, causal)
    return _swap(out) if convention == "column" else out


def _core(q, k, v, mask, causal):
    """softmax(Q Kᵀ + M) V for already scaled queries; the mask and the causal mask may combine."""
    if causal and mask is not None:
        from ..lowering.targets.numpy import causal_mask

        mask = mask + causal_mask(q.shape[-2], k.shape[-2], mask.dtype)
        causal = False
    if causal:
        return CORE_CAUSAL(q, k, v)
    if mask is not None:
        return CORE_MASKED(q, k, v, mask)
    return CORE(q, k, v)
