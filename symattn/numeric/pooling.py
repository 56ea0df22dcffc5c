"""Pooling: attention pooling with a learnable query (seed 002), single and multi-head, and mean pooling.

Attention pooling of X (n × d_model) with a learnable query q (1 × d_model), per head h:

    pool_h = softmax((q W_h^Q + b_h^Q)(X W_h^K + 1 b_h^K)ᵀ/sqrt(d_k)) (X W_h^V + 1 b_h^V)
           = (softmax(u_h Xᵀ) X) W_h^V + b_h^V,   u_h = (q W_h^Q + b_h^Q) W_h^Kᵀ/sqrt(d_k)

(``attention_pooling_folds_projections``): the query is folded through W^K, W^V is applied after
pooling, so neither K nor V is ever projected, and b^K drops out (a constant shift of every
score). The H folded queries are the rows of U, and softmax(U Xᵀ) X pools every head in one
product (its row h is head h's pool, by the same theorem). Results keep a row axis:
(..., 1, width).
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from . import checks
from .kernels import (
    MEAN_POOL,
    OUTPUT,
    OUTPUT_BIAS,
    POOL_FOLD,
    POOL_FOLD_BIAS,
    POOL_ROWS,
    POOL_VALUE,
    POOL_VALUE_BIAS,
)


def _per_head(w, H, width):
    """(d_model, H·width) -> (H, d_model, width)."""
    return np.moveaxis(w.reshape(w.shape[0], H, width), 1, 0)


def attention_pool(x, query, w_q, w_k, w_v, w_o=None, *, num_heads: int = 1, b_q=None, b_k=None, b_v=None,
                   b_o=None):
    """Attention pooling of x (..., n, d_model) with one learnable query (d_model,) or (1, d_model).

    w_q, w_k: (d_model, H·d_k); w_v: (d_model, H·d_v); w_o: (H·d_v, d_model) or None (then the
    heads are returned side by side, (..., 1, H·d_v)). Returns (..., 1, d_model) with w_o.
    ``b_k`` is accepted and provably has no effect.
    """
    H, _ = checks.head_counts(num_heads, None)
    x = checks.array("x", x)
    q = checks.array("query", query, 1)
    q = q[None, :] if q.ndim == 1 else q
    if q.shape[-2] != 1 or q.ndim != 2:
        raise ShapeError(f"query: one learnable query of shape (d_model,) or (1, d_model), got {q.shape}")
    d_model = x.shape[-1]
    checks.same("attention_pool", "x's d_model", d_model, "query's d_model", q.shape[-1])
    W = {nm: checks.array(nm, a) for nm, a in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v))}
    for nm, w in W.items():
        checks.same("attention_pool", "x's d_model", d_model, f"the rows of {nm}", w.shape[0])
    d_k = checks.divide("attention_pool", "the columns of w_q (H·d_k)", W["w_q"].shape[1], "num_heads", H)
    checks.same("attention_pool", "the columns of w_q", W["w_q"].shape[1], "the columns of w_k",
                W["w_k"].shape[1])
    d_v = checks.divide("attention_pool", "the columns of w_v (H·d_v)", W["w_v"].shape[1], "num_heads", H)
    dtype = np.result_type(x, q, *W.values())
    bq = checks.bias_row("b_q", b_q, H * d_k, dtype)
    bk = checks.bias_row("b_k", b_k, H * d_k, dtype)  # drops out (the pooling fold), unless not finite
    bv = checks.bias_row("b_v", b_v, H * d_v, dtype)
    wq, wk, wv = _per_head(W["w_q"], H, d_k), _per_head(W["w_k"], H, d_k), _per_head(W["w_v"], H, d_v)
    if bq is not None:
        u = POOL_FOLD_BIAS(q=q, **{"W^Q": wq, "W^K": wk, "b^Q": _per_head(bq, H, d_k)})
    else:
        u = POOL_FOLD(q=q, **{"W^Q": wq, "W^K": wk})     # (H, 1, d_model)
    P = POOL_ROWS(U=u.reshape(H, d_model), X=x)          # (..., H, d_model)
    P = P[..., :, None, :]                                      # (..., H, 1, d_model)
    if bv is not None:
        heads = POOL_VALUE_BIAS(P=P, **{"W^V": wv, "b^V": _per_head(bv, H, d_v)})
    else:
        heads = POOL_VALUE(P=P, **{"W^V": wv})           # (..., H, 1, d_v)
    z = np.moveaxis(heads, -3, -2).reshape(heads.shape[:-3] + (1, H * d_v))  # (..., 1, H·d_v)
    if bk is not None and not np.all(np.isfinite(bk)):
        # b^K adds the same number to every score of a head only when it is finite; a NaN or inf
        # in it makes those scores NaN, and NaN must propagate, never be folded away
        bad = ~np.all(np.isfinite(_per_head(bk, H, d_k)), axis=(-2, -1))      # (H,)
        z = z.copy()
        z.reshape(z.shape[:-1] + (H, d_v))[..., bad, :] = np.nan
    if w_o is None:
        return z
    w_o = checks.array("w_o", w_o)
    if w_o.shape != (H * d_v, d_model):
        raise ShapeError(f"attention_pool: w_o should be (num_heads·d_v, d_model) = ({H * d_v}, {d_model}), "
                         f"got {w_o.shape}")
    bo = checks.bias_row("b_o", b_o, d_model, dtype)
    if bo is not None:
        return OUTPUT_BIAS(Z=z, **{"W^O": w_o, "b^O": bo}, H=H, d_v=d_v)
    return OUTPUT(Z=z, **{"W^O": w_o}, H=H, d_v=d_v)


def mean_pool(x):
    """The mean of the rows of x (..., n, d_model), as (..., 1, d_model): (1/n) 1ᵀ X, which is
    attention pooling with constant scores (``mean_pool_is_uniform_attention``)."""
    return MEAN_POOL(X=checks.array("x", x))
