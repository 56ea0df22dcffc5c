"""Where a mask may stand: only as a summand of a Softmax argument.

Masks hold -oo entries, so outside a Softmax argument they make -oo - (-oo) = nan and 0·(-oo)
undefined. :func:`check_mask_placement` refuses a claim or a definition with a mask anywhere else.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import ShapeError
from .shapes import show
from .softmax import Softmax


def _is_mask(e) -> bool:
    return getattr(e, "is_mask", False) or (isinstance(e, sp.Transpose) and getattr(e.arg, "is_mask", False))


def _score_terms(arg):
    """The summands of a Softmax argument, looking through positive scalar factors:
    Softmax(c (S + M)) = Softmax(c S + c M) for c > 0, and c·(-oo) = -oo."""
    if isinstance(arg, sp.MatMul):
        coeff, mats = arg.as_coeff_matrices()
        if coeff.is_positive and len(mats) == 1:
            return _score_terms(mats[0])
    if isinstance(arg, sp.MatAdd):
        return [t for a in arg.args for t in _score_terms(a)]
    return [arg]


def check_mask_placement(expr, allowed: bool = False, where: str = "") -> None:
    """Allow a mask only as a summand (coefficient 1) of a Softmax argument; raise ShapeError
    naming the mask anywhere else. Each distinct subexpression is visited once (a deep model's
    tree is exponentially larger than its DAG)."""
    seen: dict = {}  # (id, allowed) -> node, by identity (equal deep trees built apart compare slowly)
    stack = [(expr, allowed)]
    while stack:
        e, ok = stack.pop()
        if (id(e), ok) in seen:
            continue
        seen[(id(e), ok)] = e
        if _is_mask(e):
            if not ok:
                raise ShapeError(
                    f"{where}the mask {show(e)} holds -oo entries and may only be added to the scores "
                    "inside a Softmax, as in Softmax(S + M); anywhere else it is undefined (-oo - (-oo), 0·(-oo))")
            continue
        if isinstance(e, Softmax):
            stack.extend((term, True) for term in _score_terms(e.arg))
            continue
        stack.extend((a, False) for a in e.args if isinstance(a, MatrixExpr))
