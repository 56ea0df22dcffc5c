r"""The matrix exponential of a matrix the file inverts: ``\exp(\Delta A)`` beside ``A^{-1}``.

Attention papers write ``\exp`` of a matrix for the exponential of every entry (``\exp(QK^\top)``), and the
reader reads it so. State-space models write ``\exp(\Delta A)`` for the matrix exponential e^{ΔA} = Σ_k
(ΔA)^k / k!: Gu & Dao (2023) discretize (Δ, A, B) by the zero-order hold ``\bar{A} = \exp(\Delta A)``,
``\bar{B} = (\Delta A)^{-1}(\exp(\Delta A) - I) \cdot \Delta B``, and use that e^{ΔA} and A^{-1}, functions of
the one matrix A, commute. What tells the two apart in a file is the inverse: a file that takes the inverse
of the square matrix A (``A^{-1}``, ``(\Delta A)^{-1}``) and writes ``\exp(cA)`` of that same A means the
matrix exponential; no paper inverts a matrix of scores whose entries it exponentiates.

Such a side is decided with A diagonal, A = diag(λ) with λ = exp(μ_A) entry by entry (``mu_A`` in the report:
positive, so that every instance is invertible), e^{cA} = diag(e^{cλ}) and (cA)^{-1} = diag(λ)^{-1} / c. This is
sound for a side built from
sums, scalar multiples, products and inverses of matrices, the identity, A and e^{cA} (no transpose, no
entrywise product, no other function of a matrix): a change of basis A = S Λ S^{-1}, applied to every
dimension of A's size, carries every such expression to the same expression with Λ in place of A and
S^{-1} X S (or S^{-1} X, X S) in place of each other matrix X, which is again any matrix. So a step proved
with A diagonal holds for every A with distinct positive eigenvalues, an open set; multiplied by a power of
det(A) (and of c), both sides are analytic in every entry of A, so the step holds for every invertible A. A
counterexample with A diagonal (and invertible) is a counterexample. A side with e^{cA} and anything else is
refused, naming what is not read.
"""

from __future__ import annotations

import sympy as sp

from ..defs import Exp
from ..defs.numeric_nodes import DivideRows
from ..defs.shapes import same_dim
from . import ast
from .diagonal import diagonal_of
from .symbols import key_of

ALLOWED = (sp.MatMul, sp.MatAdd, sp.MatrixSymbol, sp.Identity, sp.ZeroMatrix, sp.MatPow, Exp)


def inverted_names(stmts) -> set:
    """The names the file both inverts (inside the base of a negative power, ``A^{-1}``, ``(\\Delta A)^{-1}``) and
    exponentiates (inside the argument of ``\\exp``)."""
    inverted, exponentiated = set(), set()
    for st in stmts:
        for n in ast.nodes_of(st):
            if isinstance(n, ast.Power) and n.num < 0 and n.den == 1:
                inverted |= {key_of(x) for x in ast.names_of(n.base)}
            if isinstance(n, ast.Call) and n.target.base == "exp" and n.target.sub is None:
                exponentiated |= {key_of(x) for x in ast.names_of(n.args)}
    return inverted & exponentiated


def _exponentiated(e, inverted):
    """A for e = Exp(c A) with A a square matrix symbol (larger than 1 × 1) the file inverts, else None."""
    if not isinstance(e, Exp) or e.rows == 1 or not same_dim(e.rows, e.cols):
        return None
    arg = e.args[0]
    mats = arg.as_coeff_matrices()[1] if isinstance(arg, sp.MatMul) else [arg]
    if len(mats) == 1 and isinstance(mats[0], sp.MatrixSymbol) and mats[0].name in inverted:
        return mats[0]
    return None


def _fresh(scope, A):
    """exp(mu_A) entry by entry: the diagonal of A, positive, so that every instance of A is invertible."""
    name = f"mu_{A.name}"
    while name in scope.matrices:
        name += "'"
    return Exp(sp.MatrixSymbol(name, A.rows, 1))


def read(scope, node, value):
    """``value`` (of the side ``node``) with each matrix exponential e^{cA} read as described above, A diagonal;
    ``value`` itself where it has none."""
    inverted = getattr(scope, "inverted", set())
    if not inverted or not isinstance(value, sp.Basic):
        return value
    # every side with A, exp(cA) or not, so that the two sides of a step read the same A
    bases = {e for e in sp.preorder_traversal(value) if isinstance(e, sp.MatrixSymbol) and e.name in inverted
             and e.rows != 1 and same_dim(e.rows, e.cols)}
    if not bases:
        return value
    if len(bases) > 1:
        scope.fail(node, f"{node.text()} holds the matrix exponentials of {', '.join(sorted(A.name for A in bases))}, "
                   "which need not commute", "the exponential of one matrix per step")
    (A,) = bases
    for e in sp.preorder_traversal(value):
        if isinstance(e, sp.MatrixExpr) and not isinstance(e, ALLOWED) or (  # a number of a matrix, (A)_{11}
                not isinstance(e, sp.MatrixExpr) and any(isinstance(a, sp.MatrixExpr) for a in e.args)) or (
                isinstance(e, Exp) and _exponentiated(e, inverted) is None) or (
                isinstance(e, sp.MatPow) and not isinstance(e, sp.Inverse) and not sp.sympify(e.exp).is_Integer):
            scope.fail(node, f"{node.text()} holds {A.name}, whose exp(c {A.name}) is the matrix exponential (the file "
                       f"inverts {A.name}), beside {type(e).__name__} {sp.sstr(e)[:60]}, which is not read with it",
                       f"sums, products and inverses of matrices with exp(c {A.name}), or exp of scores (entrywise)")
    lam = _fresh(scope, A)
    mu = lam.args[0].name
    note = (f"exp(c {A.name}) is the matrix exponential: the file inverts {A.name} (a zero-order hold); a step with "
            f"it is decided with {A.name} = diag(exp({mu})), diagonal with positive entries, which a change of basis "
            f"and analyticity make general (a proof holds for every invertible {A.name}; a counterexample is one with "
            f"{A.name} = diag(exp({mu})))")
    if note not in scope.notes:
        scope.notes.append(note)
    return _substitute(scope, node, value, A, lam)


def _substitute(scope, node, e, A, lam):
    if not isinstance(e, sp.MatrixExpr):
        return e
    if e == A:
        return diagonal_of(lam)
    if isinstance(e, Exp):
        return diagonal_of(Exp(e.args[0].subs(A, lam)))
    if isinstance(e, sp.Inverse):
        X = e.args[0]
        if not X.has(A):
            return e
        coeff, mats = X.as_coeff_matrices() if isinstance(X, sp.MatMul) else (sp.Integer(1), [X])
        if len(mats) == 1 and mats[0] == A:
            return DivideRows(sp.Identity(A.rows), lam) / coeff
        if len(mats) == 1 and isinstance(mats[0], Exp):
            return DivideRows(sp.Identity(A.rows), Exp(mats[0].args[0].subs(A, lam))) / coeff
        scope.fail(node, f"the inverse of {sp.sstr(X)}, a function of {A.name} beside its matrix exponential, is not "
                   "read", f"the inverse of {A.name} or of a multiple of it")
    if isinstance(e, sp.MatPow):
        base = _substitute(scope, node, e.args[0], A, lam)
        k = int(e.exp)
        if k < 0:
            scope.fail(node, f"the power {k} of {sp.sstr(e.args[0])} beside a matrix exponential is not read",
                       f"the inverse of {A.name}")
        return sp.MatMul(*([base] * k)) if k > 0 else sp.Identity(e.rows)
    if isinstance(e, (sp.MatMul, sp.MatAdd)):
        return e.func(*[_substitute(scope, node, a, A, lam) for a in e.args])
    return e
