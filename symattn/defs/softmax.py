"""The Softmax node: softmax of every column (axis=0, seed 000) or every row (axis=1).

Seed 000 defines, for X = [x_1 ... x_N],

    Softmax(X) := [softmax(x_1) ... softmax(x_N)],

so each column sums to one. The Transformer paper works with rows; ``axis=1``
normalizes each row. The transpose law Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1) links them.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import ConventionError, NotAMatrixError

AXES = {0: "columns", 1: "rows"}


def _axis(axis) -> sp.Integer:
    if isinstance(axis, sp.Integer):
        axis = int(axis)
    if isinstance(axis, bool) or axis not in AXES:
        raise ConventionError(
            f"softmax: axis must be 0 (normalize each column, as seed 000) or 1 "
            f"(normalize each row, as the Transformer paper), got {axis!r}"
        )
    return sp.Integer(axis)


class Softmax(MatrixExpr):
    """Softmax(X, axis): exp of every entry, divided by its column sum (0) or row sum (1).

    >>> import sympy as sp
    >>> from symattn import dims
    >>> m, n = dims("m n")
    >>> S = Softmax(sp.MatrixSymbol("X", m, n))
    >>> S.shape
    (m, n)
    >>> S.T
    Softmax(X).T
    >>> S.T.doit()
    Softmax(X.T, 1)
    """

    is_commutative = False

    def __new__(cls, arg, axis=0):
        from .shapes import as_matrix

        axis = _axis(axis)
        arg = as_matrix(arg, "X", "softmax")
        return super().__new__(cls, arg, axis)

    @property
    def arg(self):
        return self.args[0]

    @property
    def axis(self) -> int:
        return int(self.args[1])

    @property
    def shape(self):
        return self.arg.shape

    shape_of_first_argument = shape  # its shape is its argument's (defs/shapes.py reads it memoized)

    def _entry(self, i, j, **kwargs):
        X = self.arg
        k = sp.Dummy("k", integer=True)
        if self.axis == 0:
            return sp.exp(X[i, j]) / sp.Sum(sp.exp(X[k, j]), (k, 0, X.rows - 1))
        return sp.exp(X[i, j]) / sp.Sum(sp.exp(X[i, k]), (k, 0, X.cols - 1))

    def _eval_transpose(self):
        return Softmax(self.arg.T, 1 - self.axis)

    @property
    def T(self):
        """Softmax(X)ᵀ as written: an unevaluated transpose, so that a claim is shown as the user
        typed it. The transpose law Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1) is applied by rewriting
        (``doit``, ``transpose``, the proof engine's normal forms), never at construction."""
        return sp.Transpose(self)

    def doit(self, **hints):
        arg = self.arg.doit(**hints) if hints.get("deep", True) else self.arg
        if isinstance(arg, sp.MatrixBase):
            return softmax_explicit(arg, self.axis)
        return Softmax(arg, self.axis)

    def _sympystr(self, printer):
        a = printer._print(self.arg)
        return f"Softmax({a})" if self.axis == 0 else f"Softmax({a}, 1)"

    def _latex(self, printer):
        name = r"\operatorname{Softmax}" if self.axis == 0 else r"\operatorname{softmax}_{\mathrm{row}}"
        return rf"{name}\left({printer._print(self.arg)}\right)"


def softmax_explicit(X: sp.MatrixBase, axis: int = 0) -> sp.ImmutableMatrix:
    """Softmax of an explicit matrix, entry by entry (exact)."""
    if axis == 1:
        return softmax_explicit(X.T, 0).T
    E = X.applyfunc(sp.exp)
    sums = [sp.Add(*E[:, j]) for j in range(E.cols)]
    return sp.ImmutableMatrix(E.rows, E.cols, lambda i, j: E[i, j] / sums[j])


def softmax(X, axis: int = 0) -> Softmax:
    """Softmax(X): each column sums to 1 (axis=0, seed 000); axis=1: each row.

    Raises NotAMatrixError for a non-matrix and ConventionError for an unknown axis.
    """
    if not isinstance(X, (MatrixExpr, sp.MatrixBase)):
        raise NotAMatrixError(
            f"softmax: X must be a matrix expression, got {type(X).__name__}: {X!r}"
        )
    return Softmax(X, axis)
