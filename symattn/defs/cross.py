"""Self- and cross-attention (seed 002): where the queries, keys and values come from.

Column convention (seed 000), tokens are the columns of X ∈ M^{d_model×n}, Y ∈ M^{d_model×m}:

    CrossAttention(X, Y) = Attention(W^Q X, W^K Y, W^V Y)    ∈ M^{d_v×n}
    SelfAttention(X)     = CrossAttention(X, X)               ∈ M^{d_v×n}

Row convention (seed 002: Q = X W_Q, K = X W_K, V = X W_V), tokens are the rows:

    CrossAttention(X, Y) = Attention(X W^Q, Y W^K, Y W^V)    ∈ M^{n×d_v}
"""

from __future__ import annotations

from .attention import attention, check_convention
from .shapes import as_matrix, require_equal


def _project(W, X, name: str, op: str, col: bool):
    W = as_matrix(W, f"W^{name}", op)
    if col:
        require_equal(W.cols, X.rows, op, f"cannot form W^{name}·{'X' if name == 'Q' else 'Y'}",
                      [(f"W^{name}", W), ("X" if name == "Q" else "Y", X)])
        return W * X
    require_equal(X.cols, W.rows, op, f"cannot form {'X' if name == 'Q' else 'Y'}·W^{name}",
                  [("X" if name == "Q" else "Y", X), (f"W^{name}", W)])
    return X * W


def cross_attention(X, Y, W_Q, W_K, W_V, *, score=None, convention: str = "column"):
    """Queries from X, keys and values from Y: Attention(W^Q X, W^K Y, W^V Y) (column).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, m, d, d_k = dims("n m d d_k")
    >>> X, Y = sp.MatrixSymbol("X", d, n), sp.MatrixSymbol("Y", d, m)
    >>> W = sp.MatrixSymbol("W", d_k, d)
    >>> cross_attention(X, Y, W, W, W).shape
    (d_k, n)
    >>> cross_attention(X.T, Y.T, W.T, W.T, W.T, convention="row").shape
    (n, d_k)
    """
    check_convention(convention)
    op = "cross_attention(X, Y)"
    X, Y = as_matrix(X, "X", op), as_matrix(Y, "Y", op)
    col = convention == "column"
    return attention(_project(W_Q, X, "Q", op, col), _project(W_K, Y, "K", op, col),
                     _project(W_V, Y, "V", op, col), score=score, convention=convention)


def self_attention(X, W_Q, W_K, W_V, *, score=None, convention: str = "column"):
    """Queries, keys and values all from X: Attention(W^Q X, W^K X, W^V X) (column).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, d, d_k = dims("n d d_k")
    >>> X, W = sp.MatrixSymbol("X", d, n), sp.MatrixSymbol("W", d_k, d)
    >>> self_attention(X, W, W, W)
    W*X*Softmax(1/sqrt(d_k)*X.T*W.T*W*X)
    """
    return cross_attention(X, X, W_Q, W_K, W_V, score=score, convention=convention)
