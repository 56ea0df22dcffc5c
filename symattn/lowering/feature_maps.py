"""Feature maps at concrete sizes folded back into phi(X) for lowering.

With every size a number, ``FeatureMap("phi", X, C)`` is the explicit matrix of its coordinate
functions, entry (r, c) = phi[c](X[r, 0], ..., X[r, D-1]) (what the proof engine instantiates). A kernel
takes phi as one callable on the rows, (..., N, D) -> (..., N, C), at every size, so before lowering such
a matrix (or its transpose, the column form phi(x) of a vector x) becomes the node phi(X) again.

>>> import sympy as sp
>>> from symattn.defs.feature_map import FeatureMap
>>> explicit = FeatureMap("phi", sp.MatrixSymbol("Q", 2, 3), 4)
>>> explicit.shape, type(explicit).__name__
((2, 4), 'ImmutableDenseMatrix')
>>> folded = fold_feature_maps(explicit * sp.MatrixSymbol("V", 4, 5))
>>> folded, type(folded.args[0]).__name__
(phi(Q)*V, 'FeatureMap')
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixElement

from ..defs.feature_map import FeatureMap, explicit
from ..errors import LoweringError


def is_coordinate(e) -> bool:
    """True for phi[c](x_1, ..., x_D), a coordinate function of a feature map applied to a row."""
    return isinstance(e, AppliedUndef) and getattr(e.func, "symattn_feature_map", False) is True


def folded(M):
    """phi(X) (or phi(X)ᵀ) when the explicit matrix ``M`` is exactly the matrix of the coordinate
    functions of a feature map applied to the rows of one matrix X; else None."""
    if not isinstance(M, sp.MatrixBase) or M.rows * M.cols == 0 or not is_coordinate(M[0, 0]):
        return None
    first = M[0, 0]
    name = first.func.__name__.rsplit("[", 1)[0]
    parents = {a.parent for a in first.args if isinstance(a, MatrixElement)}
    if len(parents) != 1 or len(first.args) == 0:
        return None
    (X,) = parents
    for transposed in (False, True):
        target = M.T if transposed else M
        if X.cols == len(first.args) and X.rows == target.rows and explicit(name, X, target.cols) == target:
            node = sp.Basic.__new__(FeatureMap, Str(name), X, sp.Integer(target.cols))  # kept unevaluated
            return node.T if transposed else node
    return None


def fold_feature_maps(expr):
    """``expr`` with every explicit matrix of a feature map's coordinate functions written as phi(X).

    A coordinate function left over (SymPy multiplies explicit matrices out as soon as they meet, so
    phi(Q) phi(K)ᵀ at concrete sizes is a matrix of sums of products phi[c](Q_i) phi[c](K_j)) is a
    LoweringError naming the feature map: its values need phi of whole rows, which the kernel computes
    only from phi(X)."""
    if not any(is_coordinate(a) for a in sp.preorder_traversal(expr)):
        return expr
    found: dict = {}

    def fold(e):
        if e not in found:
            found[e] = folded(e)
        return found[e]

    if isinstance(expr, sp.MatrixBase):  # a matrix's own replace() works on its entries
        out = fold(expr) if fold(expr) is not None else expr
    else:
        out = expr.replace(lambda e: isinstance(e, sp.MatrixBase) and fold(e) is not None, fold)
    left = next((a for a in sp.preorder_traversal(out) if is_coordinate(a)), None)
    if left is not None:
        name = left.func.__name__.rsplit("[", 1)[0]
        raise LoweringError(
            f"cannot lower the FeatureMap {name} at concrete sizes: SymPy has multiplied its explicit matrix "
            f"of coordinate functions out (an entry holds {sp.sstr(left)[:60]}), and a kernel applies {name} "
            f"to whole rows only; build the expression with symbolic sizes (sa.dims) and fix them with "
            f"lower(expr, at={{...}}), which keeps {name}(X) whole")
    return out


class Hidden(sp.MatrixSymbol):
    """A feature map phi(X) set aside while sizes are substituted (:func:`fix_feature_map_sizes`)."""


def fix_feature_map_sizes(expr, mapping: dict):
    """``expr.subs(mapping)`` with each feature map phi(X) kept whole (at concrete sizes FeatureMap would
    become its explicit matrix of coordinate functions, and products of those are multiplied out)."""
    maps = [e for e in sp.preorder_traversal(expr) if isinstance(e, FeatureMap)]
    if not maps:
        return expr.subs(mapping)
    hidden, back = {}, {}
    for k, e in enumerate(maps):
        if e in hidden:
            continue
        sym = Hidden(f"feature_map_{k}", *(sp.sympify(d).subs(mapping) for d in e.shape))
        X = fold_feature_maps(fix_feature_map_sizes(e.arg, mapping))
        hidden[e] = sym
        back[sym] = sp.Basic.__new__(FeatureMap, e.function, X, sp.sympify(e.features).subs(mapping))
    outer = {e: s for e, s in hidden.items() if not any(e != o and o.has(e) for o in hidden)}
    return expr.xreplace(outer).subs(mapping).xreplace(back)
