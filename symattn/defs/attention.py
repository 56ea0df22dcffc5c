"""Attention (seed 000, eq. 1) in the column convention and the Transformer's row convention.

Column (seed 000): Q ∈ M^{d_k×n}, K ∈ M^{d_k×m}, V ∈ M^{d_v×m},

    Attention(Q, K, V) = V Softmax(f(Q, K)) ∈ M^{d_v×n},  f(Q, K) = Kᵀ Q / sqrt(d_k) by default.

Row (Transformer paper, seed 002): Q ∈ M^{n×d_k}, K ∈ M^{m×d_k}, V ∈ M^{m×d_v},

    Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k)) V ∈ M^{n×d_v}, softmax over each row.
"""

from __future__ import annotations

from ..errors import ConventionError, ShapeError
from .score import ScoreFunction, dot, scaled_dot
from .shapes import as_matrix, require_equal, same_dim, show, show_shape
from .softmax import Softmax

CONVENTIONS = ("column", "row")


def check_convention(convention) -> str:
    if convention not in CONVENTIONS:
        raise ConventionError(
            f"convention must be 'column' (vectors are columns, seed 000) or 'row' "
            f"(vectors are rows, the Transformer paper), got {convention!r}"
        )
    return convention


def scores(Q, K, score=None, convention: str = "column"):
    """The score matrix f(Q, K): m × n (column) or n × m (row), checked."""
    check_convention(convention)
    op = "attention(Q, K, V)"
    col = convention == "column"
    inner_q, inner_k = (Q.rows, K.rows) if col else (Q.cols, K.cols)
    if score is None or score in ("scaled_dot", "dot"):
        require_equal(
            inner_q, inner_k, op,
            f"cannot form {'Kᵀ·Q' if col else 'Q·Kᵀ'}",
            [("Q", Q), ("K", K)],
        )
        return dot(Q, K, convention) if score == "dot" else scaled_dot(Q, K, convention)
    if isinstance(score, ScoreFunction):
        return score(Q, K) if col else score.row(Q, K)
    if callable(score):
        S = as_matrix(score(Q, K), "f(Q, K)", op)
        want = (K.cols, Q.cols) if col else (Q.rows, K.rows)
        for k, dim in enumerate(("rows", "columns")):
            require_equal(
                S.shape[k], want[k], op,
                f"the score f(Q, K) must be {'m × n' if col else 'n × m'}; its {dim} do not fit",
                [("f(Q, K)", S), ("Q", Q), ("K", K)],
            )
        return S
    raise ConventionError(
        f"{op}: score must be None or 'scaled_dot' (Kᵀ Q / sqrt(d_k)), 'dot' (Kᵀ Q), "
        f"a ScoreFunction, or a callable f(Q, K); got {score!r}"
    )


def attention(Q, K, V, score=None, convention: str = "column"):
    """Attention(Q, K, V) = V·Softmax(f(Q, K)) (column) or softmax(f(Q, K))·V (row).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, m, d_k, d_v = dims("n m d_k d_v")
    >>> Q, K = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m)
    >>> V = sp.MatrixSymbol("V", d_v, m)
    >>> attention(Q, K, V)
    V*Softmax(1/sqrt(d_k)*K.T*Q)
    >>> attention(Q.T, K.T, V.T, convention="row")
    Softmax(1/sqrt(d_k)*Q.T*K, 1)*V.T
    """
    check_convention(convention)
    Q = as_matrix(Q, "Q", "attention(Q, K, V)")
    K = as_matrix(K, "K", "attention(Q, K, V)")
    V = as_matrix(V, "V", "attention(Q, K, V)")
    col = convention == "column"
    keys_k, keys_v = (K.cols, V.cols) if col else (K.rows, V.rows)
    if not same_dim(keys_k, keys_v):
        raise ShapeError(
            f"attention(Q, K, V): K and V must hold the same number m of "
            f"{'columns' if col else 'rows'} (one value per key).\n"
            f"  K: {show_shape(K)}\n  V: {show_shape(V)}\n"
            f"  {show(keys_k)} and {show(keys_v)} are not known to be equal"
        )
    S = scores(Q, K, score, convention)
    return V * Softmax(S, 0) if col else Softmax(S, 1) * V

