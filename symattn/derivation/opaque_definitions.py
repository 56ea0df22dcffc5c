"""A step about names the file defines, proved for every value of those names.

Jaegle et al. (2021) define Q = L W_Q, K = X W_K, V = X W_V and then write one latent's row of the
cross-attention, ``[softmax(QK^T/\\sqrt{F})V]_n = \\sum_m \\exp(Q_n K_m^T/\\sqrt{F}) / \\sum_{m'} ... V_m``:
a fact about any Q, K, V, which the definitions only instantiate. Read with the definitions put in,
both sides become sums over the inner dimensions of L W_Q W_K^T X^T nested in two different orders,
which the entrywise normal form may not identify.

:func:`prove_for_every_value` decides such a step again with each matrix the file defines without
parameters (``Q := L W_Q``) kept as a matrix of the shape of its value. A proof there holds for every
matrix of that shape, so for the file's definitions too, and the scope says so. Only a proof is taken:
a counterexample for some Q need not be one for Q = L W_Q, so any other outcome leaves the step as it was.
"""

from __future__ import annotations

import copy

import sympy as sp

from ..errors import DerivationError
from . import powers
from .matrix_exponential import read as exponentials


def _matrix_definitions(scope):
    """key -> the value of each parameterless, closed definition whose value is a matrix."""
    out = {}
    for k, d in scope.defs.items():
        if d.params or d.open or d.index is not None or "/" in k:
            continue
        try:
            value = scope.expr(d.body, {})
        except DerivationError:
            continue
        if isinstance(value, sp.MatrixExpr) or getattr(value, "is_Matrix", False):
            out[k] = value
    return out


def _sides_with_names(scope, s, keys_values):
    """The two sides of step ``s`` elaborated with the names ``keys_values`` as matrices of their shapes;
    None when either side cannot be read so, or when no such name is on either side."""
    saved = {name: copy.copy(getattr(scope, name)) for name in ("defs", "matrices", "notes", "hits", "assumptions")}
    try:
        for k, value in keys_values.items():
            del scope.defs[k]
            scope.matrices[k] = sp.MatrixSymbol(k, value.rows, value.cols)
        sides = [powers.guard(scope, n, exponentials(scope, n, scope.expr(n, s.bound)))
                 for n in (s.lhs_node, s.rhs_node)]
    except DerivationError:
        return None
    finally:
        for name, value in saved.items():
            setattr(scope, name, value)
    named = {k for k in keys_values for e in sides for x in e.atoms(sp.MatrixSymbol) if x.name == k}
    return (sides, sorted(named)) if named else None


def prove_for_every_value(s, budget, verify):
    """A proof of step ``s`` (whose verdict is not a proof) with the matrices the file defines kept as names,
    as ``verify(s, L, R, budget)`` gives it; None when there is none."""
    scope = getattr(s, "scope_obj", None)
    if scope is None or s.lhs_node is None or s.rhs_node is None or not getattr(scope, "defs", None):
        return None
    if s.given or s.orientation:  # sides the reader completed (dP given) or turned (a column read as a row)
        return None
    values = _matrix_definitions(scope)
    if not values:
        return None
    read = _sides_with_names(scope, s, values)
    if read is None:
        return None
    (L, R), named = read
    if not (isinstance(L, sp.MatrixExpr) and isinstance(R, sp.MatrixExpr)) or tuple(L.shape) != tuple(R.shape):
        return None
    try:
        v = verify(s, L, R, budget)
    except Exception:  # an engine failure: the step stays as it was
        return None
    if v.status != "proved":
        return None
    names = ", ".join(named)
    return v, (f"; with {names} kept as names (proved for every matrix of their shapes, so for the file's "
               f"definitions of {names})")
