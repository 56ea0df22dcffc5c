r"""The entries of a vector parameter of a function the file defines: ``x_i`` in
``\mathrm{lse}(\beta, x) = \beta^{-1} \log \sum_{i=1}^{N} \exp(\beta x_i)``.

Inside the body of a function of a vector x, with i the index of an enclosing sum, ``x_i`` is the
i-th entry of the argument x is bound to (a 1 × 1 slice), the index checked against its length. A sum
over all the entries, Σ_{i=1}^{n} e(x_i) with e built from exp, log, sums and numbers, is also
written as 1ᵀ e(x) by :func:`entrywise_sums` (entry by entry the same), the form the VJP rules
differentiate (:mod:`.scalar_gradients`).
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..defs.heads import HeadSum
from .symbols import is_matrix


def parameter_entry(scope, node, L, bound, check_bound):
    """``x_i`` of a column parameter x (bound in ``L``), i bound by a sum: the entry; else None (``bound`` and
    ``check_bound`` are those of :mod:`.entries`, which reads the entries of declared matrices)."""
    v = L.get(node.base)
    if node.sup is not None or node.sub is None or not is_matrix(v) or v.cols != 1 or v.rows == 1:
        return None
    k = bound(L, node.sub)
    if k is None:
        return None
    check_bound(scope, node, node.sub, v.rows, L)
    return v[k - 1:k, :]


def _lift(e, h, n):
    """e(v[h-1:h, :]) as e(v), or None when e is not an entrywise expression of such slices."""
    if isinstance(e, sp.MatrixSlice):
        rows, cols = e.rowslice, e.colslice
        if (e.parent.shape == (n, 1) and sp.simplify(rows[0] - (h - 1)) == 0 and sp.simplify(rows[1] - h) == 0
                and tuple(cols[:2]) == (0, 1)):
            return e.parent
        return None
    if isinstance(e, sp.Transpose) and e.arg.shape == (1, 1):
        return _lift(e.arg, h, n)
    if not e.has(h):
        return None
    if isinstance(e, (D.Exp, D.Log)):
        inner = _lift(e.args[0], h, n)
        return None if inner is None else type(e)(inner)
    if isinstance(e, sp.MatAdd):
        parts = [_lift(a, h, n) for a in e.args]
        return None if None in parts else sp.MatAdd(*parts)
    if isinstance(e, sp.MatMul):
        scalars = [a for a in e.args if not is_matrix(a)]
        mats = [a for a in e.args if is_matrix(a)]
        if len(mats) != 1 or any(s.has(h) for s in scalars):
            return None
        inner = _lift(mats[0], h, n)
        return None if inner is None else sp.MatMul(*scalars, inner)
    return None


def entrywise_sums(expr):
    """``expr`` with every Σ_{h=1}^{n} e(v[h-1:h, :]) written 1ᵀ e(v)."""
    def visit(e):
        if isinstance(e, HeadSum) and e.body.shape == (1, 1):
            lifted = _lift(e.body, e.index, e.count)
            if lifted is not None and lifted.shape == (e.count, 1):
                return sp.OneMatrix(1, e.count) * lifted
        if not getattr(e, "args", ()) or isinstance(e, (sp.MatrixSymbol, sp.Symbol)):
            return e
        new = [visit(a) for a in e.args]
        return e if all(a is b for a, b in zip(new, e.args)) else e.func(*new)
    return visit(expr)
