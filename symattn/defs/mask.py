"""Causal and padding masks as -inf scores (seed 002's Llama code: ``scores = scores + mask``).

Column convention (scores are keys × queries, m × n): key k is visible to query j when

    causal (offset o):  k <= j + o      padding (valid length L):  k <= L - 1   (0-based)

and the mask entry is 0 where visible and -inf elsewhere, so exp(-inf) = 0 drops the key:

    MaskedAttention(Q, K, V; M) = V Softmax(KᵀQ / sqrt(d_k) + M)              (column)
                                = softmax(QKᵀ / sqrt(d_k) + Mᵀ) V             (row, Mᵀ is n × m)

The entries are ``Visible(k, t)`` = 0 if k <= t else -oo, a scalar function that the proof
engine understands (a sum over k of f(k) exp(Visible(k, t)) is a sum over k <= t).
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import ShapeError
from .attention import check_convention, scores
from .dims import check_dimension
from .shapes import as_matrix, show_shape
from .softmax import Softmax


class Visible(sp.Function):
    """Visible(k, t): 0 when key position k <= t, -oo otherwise (the mask's score bias).

    >>> Visible(1, 2), Visible(3, 2)
    (0, -oo)
    """

    @classmethod
    def eval(cls, k, t):
        diff = sp.sympify(t) - sp.sympify(k)
        if diff.is_nonnegative:
            return sp.Integer(0)
        if diff.is_negative:
            return sp.S.NegativeInfinity
        return None


class CausalMask(MatrixExpr):
    """The m × n causal mask of the column convention: entry (k, j) = 0 if k <= j + offset, else -oo.

    With the default offset 0 and m = n this is the usual lower-triangular visibility (the query at
    position j sees keys 0..j); offset = start_pos is the Llama mask of a chunk after a cache, and
    offset = m - n aligns the queries with the last keys (PyTorch's bottom-right causal mask). A
    negative offset (more queries than keys, bottom-right) leaves the first -offset queries with no
    visible key: their softmax is undefined (NaN in the numeric core).

    >>> from symattn import dims
    >>> n = dims("n")
    >>> CausalMask(n).shape
    (n, n)
    >>> CausalMask(3).as_explicit()
    Matrix([
    [  0,   0, 0],
    [-oo,   0, 0],
    [-oo, -oo, 0]])
    """

    is_commutative = False
    is_mask = True  # entries 0 or -oo: allowed only as a summand of a Softmax argument
    entry_is_defined = True  # _entry is the exact definition (used by the proof engine)

    def __new__(cls, m, n=None, offset=0):
        m = check_dimension(m, "CausalMask: ")
        n = m if n is None else check_dimension(n, "CausalMask: ")
        offset = sp.sympify(offset)
        if offset.is_integer is False:
            raise ShapeError(f"CausalMask: the offset {offset} must be an integer (a number of positions)")
        return super().__new__(cls, m, n, offset)

    @property
    def shape(self):
        return (self.args[0], self.args[1])

    @property
    def offset(self):
        return self.args[2]

    def _entry(self, i, j, **kwargs):
        return Visible(i, j + self.offset)

    def doit(self, **hints):
        """The zero matrix when every key is visible to every query (m - 1 <= offset)."""
        if sp.expand(self.offset - self.args[0] + 1).is_nonnegative:
            return sp.ZeroMatrix(*self.shape)
        return self

    def _sympystr(self, printer):
        extra = "" if self.offset == 0 else f", offset={printer._print(self.offset)}"
        return f"CausalMask({printer._print(self.args[0])}, {printer._print(self.args[1])}{extra})"


class PaddingMask(MatrixExpr):
    """The m × n padding mask of the column convention: keys 0..L-1 are real, keys L..m-1 padding.

    >>> from symattn import dims
    >>> PaddingMask(3, 2, 2).as_explicit()
    Matrix([
    [  0,   0],
    [  0,   0],
    [-oo, -oo]])
    """

    is_commutative = False
    is_mask = True  # entries 0 or -oo: allowed only as a summand of a Softmax argument
    entry_is_defined = True  # _entry is the exact definition (used by the proof engine)

    def __new__(cls, m, n, length):
        m = check_dimension(m, "PaddingMask: ")
        n = check_dimension(n, "PaddingMask: ")
        length = check_dimension(length, "PaddingMask: valid length: ")
        return super().__new__(cls, m, n, length)

    @property
    def shape(self):
        return (self.args[0], self.args[1])

    @property
    def length(self):
        return self.args[2]

    def _entry(self, i, j, **kwargs):
        return Visible(i, self.length - 1)

    def _sympystr(self, printer):
        a = ", ".join(printer._print(x) for x in self.args)
        return f"PaddingMask({a})"


def masked_attention(Q, K, V, mask, *, score=None, convention: str = "column"):
    """Attention with a mask of -inf scores: V Softmax(f(Q, K) + M) (column, M is m × n) or
    softmax(f(Q, K) + Mᵀ) V (row). ``mask`` is a matrix in the column layout (keys × queries).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, d_k, d_v = dims("n d_k d_v")
    >>> Q, K = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, n)
    >>> masked_attention(Q, K, sp.MatrixSymbol("V", d_v, n), CausalMask(n))
    V*Softmax(CausalMask(n, n) + 1/sqrt(d_k)*K.T*Q)
    """
    check_convention(convention)
    op = "masked_attention(Q, K, V)"
    Q, K, V = (as_matrix(x, nm, op) for x, nm in ((Q, "Q"), (K, "K"), (V, "V")))
    M = as_matrix(mask, "mask", op)
    col = convention == "column"
    from .attention import attention

    attention(Q, K, V, score=score, convention=convention)  # shape checks of Q, K, V
    S = scores(Q, K, score, convention)
    want = S.shape if col else (S.cols, S.rows)
    for k, what in enumerate(("keys (rows)", "queries (columns)")):
        if not sp.expand(want[k] - M.shape[k]) == 0:
            raise ShapeError(
                f"{op}: the mask must be keys × queries ({sp.sstr(want[0])} × {sp.sstr(want[1])}) in "
                f"the column layout; its {what} do not fit.\n  mask: {show_shape(M)}\n  scores: "
                f"{show_shape(S)}"
            )
    return V * Softmax(S + M, 0) if col else Softmax(S + M.T, 1) * V


def causal_attention(Q, K, V, *, offset=0, score=None, convention: str = "column"):
    """Causal attention: query j sees keys 0..j + offset (the -inf causal mask).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, d_k = dims("n d_k")
    >>> X = sp.MatrixSymbol("X", n, d_k)
    >>> causal_attention(X, X, X, convention="row")
    Softmax(CausalMask(n, n).T + 1/sqrt(d_k)*X*X.T, 1)*X
    """
    check_convention(convention)
    col = convention == "column"
    m, n = (K.cols, Q.cols) if col else (K.rows, Q.rows)
    return masked_attention(Q, K, V, CausalMask(m, n, offset), score=score, convention=convention)
