"""The identity matrix written without its size: ``0.5 W_{att} + 0.5 I``, ``\\exp(\\Delta A) - \\bm{I}``.

Papers write ``I`` for the identity and leave its size to the sum it stands in: beside an n × n
matrix it is the n × n identity. A term of a sum that is an undeclared ``I`` (``\\mathbf{I}``,
``\\bm{I}``), alone or times scalars (``0.25\\, I``, ``\\frac{1}{2} I``), is the identity of the size of the
sum's other terms, which must be square; the report says so. A file that declares ``I`` keeps its
own ``I``; an ``I`` anywhere else (a factor of a matrix product) stays an unknown symbol.
"""

from __future__ import annotations

import sympy as sp

from . import ast
from .symbols import is_matrix, shape_text

USAGE = "the identity beside a square term of the sum (A + I), or I declared with its size"


def _is_bare_identity(scope, n) -> bool:
    return (isinstance(n, ast.Name) and n.base == "I" and n.sub is None and n.sup is None
            and scope.is_undefined_name(n))


def identity_factors(scope, term):
    """The other factors of ``term`` when it is I or a product with one factor I; None otherwise."""
    if _is_bare_identity(scope, term):
        return ()
    if isinstance(term, ast.Mul):
        at = [k for k, f in enumerate(term.factors) if _is_bare_identity(scope, f)]
        if len(at) == 1:
            return term.factors[:at[0]] + term.factors[at[0] + 1:]
    return None


def identity_term(scope, term, L, terms):
    """The value of the term ``term`` (I, or scalars times I) of a sum whose other terms are ``terms``."""
    rest = identity_factors(scope, term)
    others = [u for u in terms if u is not term and identity_factors(scope, u) is None]
    ref = scope._expr(others[0], L) if others else None
    if not is_matrix(ref):
        scope.fail(term, f"the identity I without its size in {term.text()}, and no matrix term of the sum fixes it",
                   USAGE)
    if ref.rows != ref.cols and not sp.simplify(ref.rows - ref.cols) == 0:
        scope.fail(term, f"the identity I beside {others[0].text()}, which is {shape_text(ref)}, not square", USAGE)
    coeff = sp.Integer(1)
    for f in rest:
        c = scope._expr(f, L)
        if is_matrix(c):
            scope.fail(f, f"{f.text()} multiplies the identity I in {term.text()}, and its size does not fix I's",
                       "scalars times I, as in 0.5 I, or I declared with its size")
        coeff = coeff * c
    note = (f"I is the identity of the size of {others[0].text()} ({sp.sstr(ref.rows)} × {sp.sstr(ref.rows)}), "
            "the square term beside it")
    if note not in scope.notes:
        scope.notes.append(note)
    return coeff * sp.Identity(ref.rows)
