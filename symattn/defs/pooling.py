"""Pooling (seed 002): mean pooling, attention pooling, query attention pooling, multi-head pooling.

Column convention (seed 000), the N features are the columns of X = [x_1 ... x_N] ∈ M^{d×N}:

    MeanPool(X)              = (1/N) Σ_i x_i = (1/N) X 1_N                         ∈ M^{d×1}
    AttentionPool(X; s)      = Σ_i α_i x_i = X Softmax(s),  s ∈ M^{N×1}             ∈ M^{d×1}
    QueryAttentionPool(X)    = V Softmax(Kᵀ Q / sqrt(d_k)),
                               Q = W_p q_pool, K = W^K X, V = W^V X                  ∈ M^{d_v×1}
    MultiHeadPool(X)         = W^O [z_1; ...; z_H],  z_h = QueryAttentionPool_h(X)   ∈ M^{d_model×1}

Row convention (seed 002: X ∈ R^{N×D}, Q = q_pool W_p, K = X W_K, V = X W_V): every formula
is the transpose, e.g. MeanPool(X) = (1/N) 1_Nᵀ X and z = softmax(Q Kᵀ / sqrt(d_k)) V ∈ M^{1×d_v};
multi-head pooling is [z_1 ... z_H] W^O. The learnable query q_pool is *not* computed from X.
"""

from __future__ import annotations

import sympy as sp

from ..errors import HeadError, ShapeError
from .attention import check_convention
from .heads import Family, head_concat, head_stack, head_sum
from .shapes import as_matrix, require_equal, show_shape
from .softmax import Softmax


def _single(v, what: str, op: str, col: bool):
    """Check that ``v`` is one vector: a column (d × 1) or a row (1 × d)."""
    k = 1 if col else 0
    if not (v.shape[k] == 1):
        raise ShapeError(
            f"{op}: {what} must be a single {'column (d × 1)' if col else 'row (1 × d)'} vector "
            f"in the {'column' if col else 'row'} convention.\n  {what}: {show_shape(v)}"
        )


def mean_pool(X, convention: str = "column"):
    """z = (1/N) Σ_i x_i: (1/N) X 1_N (column, X is d × N) or (1/N) 1_Nᵀ X (row, X is N × d).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> d, N = dims("d N")
    >>> mean_pool(sp.MatrixSymbol("X", d, N))
    1/N*X*1
    """
    check_convention(convention)
    X = as_matrix(X, "X", "mean_pool(X)")
    if convention == "column":
        return X * sp.OneMatrix(X.cols, 1) / X.cols
    return sp.OneMatrix(1, X.rows) * X / X.rows


def attention_pool(X, s, convention: str = "column"):
    """z = Σ_i α_i x_i with α = softmax(s): X Softmax(s) (column, s is N × 1) or softmax(s) X (row).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> d, N = dims("d N")
    >>> attention_pool(sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("s", N, 1))
    X*Softmax(s)
    """
    check_convention(convention)
    op = "attention_pool(X, s)"
    X, s = as_matrix(X, "X", op), as_matrix(s, "s", op)
    col = convention == "column"
    _single(s, "the scores s", op, col)
    if col:
        require_equal(X.cols, s.rows, op, "one score per feature: s needs N rows", [("X", X), ("s", s)])
        return X * Softmax(s, 0)
    require_equal(s.cols, X.rows, op, "one score per feature: s needs N columns", [("s", s), ("X", X)])
    return Softmax(s, 1) * X


def query_attention_pool(X, q_pool, W_p, W_K, W_V, convention: str = "column"):
    """Query attention pooling with a learnable query q_pool (not computed from X).

    Column: Q = W_p q_pool, K = W^K X, V = W^V X, z = V Softmax(Kᵀ Q / sqrt(d_k)) (d_v × 1).
    Row (seed 002): Q = q_pool W_p, K = X W_K, V = X W_V, z = softmax(Q Kᵀ / sqrt(d_k)) V.

    >>> import sympy as sp
    >>> from symattn import dims
    >>> d, N, d_k, d_v = dims("d N d_k d_v")
    >>> X, q = sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("q", d, 1)
    >>> W_p, W_K = sp.MatrixSymbol("W_p", d_k, d), sp.MatrixSymbol("W_K", d_k, d)
    >>> query_attention_pool(X, q, W_p, W_K, sp.MatrixSymbol("W_V", d_v, d)).shape
    (d_v, 1)
    """
    check_convention(convention)
    op = "query_attention_pool(X)"
    col = convention == "column"
    X, q = as_matrix(X, "X", op), as_matrix(q_pool, "q_pool", op)
    W_p, W_K, W_V = (as_matrix(W, nm, op) for W, nm in ((W_p, "W_p"), (W_K, "W^K"), (W_V, "W^V")))
    _single(q, "the learnable query q_pool", op, col)
    if col:
        for W, Z, nm, z in ((W_p, q, "W_p", "q_pool"), (W_K, X, "W^K", "X"), (W_V, X, "W^V", "X")):
            require_equal(W.cols, Z.rows, op, f"cannot form {nm}·{z}", [(nm, W), (z, Z)])
        Q, K, V = W_p * q, W_K * X, W_V * X
        require_equal(Q.rows, K.rows, op, "cannot form Kᵀ·Q", [("W_p q_pool", Q), ("W^K X", K)])
        return V * Softmax(K.T * Q / sp.sqrt(Q.rows), 0)
    for W, Z, nm, z in ((W_p, q, "W_p", "q_pool"), (W_K, X, "W^K", "X"), (W_V, X, "W^V", "X")):
        require_equal(Z.cols, W.rows, op, f"cannot form {z}·{nm}", [(z, Z), (nm, W)])
    Q, K, V = q * W_p, X * W_K, X * W_V
    require_equal(Q.cols, K.cols, op, "cannot form Q·Kᵀ", [("q_pool W_p", Q), ("X W^K", K)])
    return Softmax(Q * K.T / sp.sqrt(Q.cols), 1) * V


def _member(W, nm: str, H, op: str):
    """member(k) for a Family, a list (one matrix per head) or a function of the head index."""
    if isinstance(W, (list, tuple)):
        if not (sp.sympify(H).is_Integer and len(W) == int(H)):
            raise HeadError(f"{op}: {nm} holds {len(W)} heads but H = {H}")
        return lambda k: W[int(k) - 1]
    if isinstance(W, Family):
        return lambda k: W[k]
    if callable(W):
        return W
    raise HeadError(f"{op}: {nm} must be a Family, a list or a function of h, got {type(W).__name__}")


def multihead_pool(X, q_pool, W_p, W_K, W_V, W_O, *, H, convention: str = "column"):
    """Multi-head attention pooling: each head pools with its own W_p^h, W_h^K, W_h^V, and the
    pools are concatenated and mixed by W^O: W^O [z_1; ...; z_H] (column) or [z_1 ... z_H] W^O (row).

    The weights are Families (or lists) indexed by the head h = 1..H.

    >>> import sympy as sp
    >>> from symattn import dims, Family
    >>> d, N, d_k, d_v, H = dims("d N d_k d_v H")
    >>> X, q = sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("q", d, 1)
    >>> W_p, W_K = Family("W_p", d_k, d), Family("W^K", d_k, d)
    >>> W_V, W_O = Family("W^V", d_v, d), Family("W^O", d, d_v)
    >>> multihead_pool(X, q, W_p, W_K, W_V, W_O, H=H).shape
    (d, 1)
    """
    check_convention(convention)
    op = "multihead_pool(X)"
    col = convention == "column"
    named = ((W_p, "W_p"), (W_K, "W^K"), (W_V, "W^V"), (W_O, "W^O"))
    wp, wk, wv, wo = (_member(W, nm, H, op) for W, nm in named)

    def pool(k):
        return query_attention_pool(X, q_pool, wp(k), wk(k), wv(k), convention)

    if col:
        return head_concat(wo, H) * head_stack(pool, H)
    return head_concat(pool, H) * head_stack(wo, H)


def multihead_pool_sum(X, q_pool, W_p, W_K, W_V, W_O, *, H, convention: str = "column"):
    """Σ_h W_h^O z_h (column) or Σ_h z_h W_h^O (row): multi-head pooling as a sum over heads."""
    check_convention(convention)
    op = "multihead_pool_sum(X)"
    named = ((W_p, "W_p"), (W_K, "W^K"), (W_V, "W^V"), (W_O, "W^O"))
    wp, wk, wv, wo = (_member(W, nm, H, op) for W, nm in named)

    def term(k):
        z = query_attention_pool(X, q_pool, wp(k), wk(k), wv(k), convention)
        return wo(k) * z if convention == "column" else z * wo(k)

    return head_sum(term, H)
