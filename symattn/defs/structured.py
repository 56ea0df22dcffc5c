"""Matrices assumed to have a structure: symmetric S = Sᵀ.

A structured matrix is an input like a MatrixSymbol, with the assumption built into the node:

- rewriting knows its rule (Sᵀ = S, through ``_eval_transpose``);
- the entrywise strategy reads entry (i, j) at concrete indices as entry (min, max);
- every evaluation (exact instances, the counterexample search, the audit) gives it values that have
  the structure, through :meth:`impose`, which maps any square matrix to one with the structure.

So a claim that holds only for symmetric matrices can be proved, and its counterexamples are
symmetric: a counterexample that breaks the assumption would refute nothing.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

from ..errors import ShapeError
from .dims import check_dimension


class Symmetric(sp.MatrixSymbol):
    """S ∈ M^{n×n} with S = Sᵀ.

    >>> from symattn import dims
    >>> n = dims("n")
    >>> S = Symmetric("S", n)
    >>> S.T
    S
    >>> Symmetric.impose(sp.Matrix([[1, 2], [3, 4]]))
    Matrix([
    [1, 2],
    [2, 4]])
    """

    structure = "symmetric"

    def __new__(cls, name, n, cols=None):
        n = check_dimension(n, f"Symmetric {name}: ")
        if cols is not None and sp.sympify(cols) != n:  # SymPy rebuilds nodes as func(name, rows, cols)
            raise ShapeError(f"Symmetric {name}: a symmetric matrix is square, got {n} × {cols}")
        return super().__new__(cls, name, n, n)

    def _eval_transpose(self):
        return self

    def _entry(self, i, j, **kwargs):
        i, j = sp.sympify(i), sp.sympify(j)
        if i.is_Integer and j.is_Integer and i > j:
            i, j = j, i
        return MatrixElement(self, i, j)

    @staticmethod
    def impose(value):
        """The symmetric matrix with the upper triangle (diagonal included) of ``value``, a square
        NumPy array (last two axes) or SymPy matrix."""
        if isinstance(value, sp.MatrixBase):
            return sp.ImmutableMatrix(value.rows, value.cols,
                                      lambda i, j: value[min(i, j), max(i, j)])
        out = value.copy()  # an array: mirror the upper triangle below the diagonal
        k = out.shape[-1]
        for i in range(k):
            for j in range(i):
                out[..., i, j] = value[..., j, i]
        return out
