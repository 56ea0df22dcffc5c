r"""The diagonal matrix of a vector, ``\mathrm{diag}(v)``, and its inverse ``D^{-1}``.

Performers (Choromanski et al. 2021) normalize their approximate attention by
``\widehat{D} = \mathrm{diag}(\widehat{A}\mathbf{1}_L)`` and write ``\widehat{D}^{-1}(\widehat{A}V)``; the
softmax Jacobian is ``\mathrm{diag}(p) - p p^\top``. ``\mathrm{diag}(v)`` of a vector v of n entries (a
column, or a row in the row convention) is the n × n matrix I ∘ (v 1ᵀ), whose entries are δ_ij v_i. The
power ^{-1} of such a matrix is diag(v)⁻¹ = DivideRows(I, v), row i divided by v_i: read where every
entry of v is nonzero, as the paper's normalizer is. Any other inverse or root of a matrix is refused, as
before; so is the diag of a matrix that is not a vector (its diagonal, a vector, is not read).

>>> import sympy as sp
>>> v = sp.MatrixSymbol("v", 3, 1)
>>> D = diagonal_of(v)
>>> vector_of_diagonal(D) == v
True
"""

from __future__ import annotations

import sympy as sp

from ..defs.numeric_nodes import DivideRows
from . import powers
from .symbols import is_matrix


def diagonal_of(v):
    """diag(v) = I ∘ (v 1ᵀ) for a column v (the form the engine reads entry by entry)."""
    return sp.HadamardProduct(sp.Identity(v.rows), v * sp.OneMatrix(1, v.rows))


def vector_of_diagonal(D):
    """v for D = diag(v) as :func:`diagonal_of` builds it, else None."""
    if not isinstance(D, sp.HadamardProduct) or len(D.args) != 2:
        return None
    eye = [a for a in D.args if isinstance(a, sp.Identity)]
    rest = [a for a in D.args if not isinstance(a, sp.Identity)]
    if len(eye) != 1 or len(rest) != 1 or not isinstance(rest[0], sp.MatMul):
        return None
    *vs, ones = rest[0].args
    if not (isinstance(ones, sp.OneMatrix) and ones.rows == 1 and ones.cols == eye[0].rows) or not vs:
        return None
    v = vs[0] if len(vs) == 1 else sp.MatMul(*vs)
    return v if v.cols == 1 else None


def diag_call(scope, node, L):
    """``\\mathrm{diag}(v)`` of a vector; refused for a matrix that is not a vector."""
    if len(node.args) != 1:
        scope.fail(node, f"diag takes 1 argument, got {len(node.args)}", "diag(v) of a vector v")
    X = scope._expr(node.args[0], L)
    if not is_matrix(X) or (X.cols != 1 and X.rows != 1):
        what = f"the {sp.sstr(X.rows)} × {sp.sstr(X.cols)} matrix" if is_matrix(X) else "the number"
        scope.fail(node, f"diag of {what} {node.args[0].text()}: only the diagonal matrix of a vector is read (the "
                   "diagonal of a matrix, a vector, is not)", "diag(v) with v a vector, as in diag(A 1_L)")
    v = X if X.cols == 1 else X.T
    D = diagonal_of(v)
    diagonals(scope)[D] = v  # SymPy may fold v 1ᵀ (A 1 1ᵀ = A J): the vector is kept beside its matrix
    return D


def diagonals(scope) -> dict:
    """The diagonal matrices diag(v) the scope has built, each with its vector v."""
    if not hasattr(scope, "diagonals"):
        scope.diagonals = {}
    return scope.diagonals


def inverse_power(scope, node, v):
    """``D^{-1}`` of a diagonal matrix D = diag(v): DivideRows(I, v); any other negative power as :mod:`.powers`
    reads it (an inverse, where invertible); roots are refused there."""
    d = None
    if (node.num, node.den) == (-1, 1):
        d = diagonals(scope).get(v, None)
        d = vector_of_diagonal(v) if d is None else d
    if d is None:  # any other inverse: where invertible; roots refused (powers)
        return powers.non_positive_power(scope, node, v)
    note = (f"{node.base.text()}^{{-1}} is the inverse of a diagonal matrix diag(v): row i divided by v_i, read where "
            "every v_i is nonzero")
    if note not in scope.notes:
        scope.notes.append(note)
    return DivideRows(sp.Identity(d.rows), d)
