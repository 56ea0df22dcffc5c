"""Functions the file defines on scalars: ``\\sigma(u) = \\frac{1}{1 + e^{-u}}`` applied to a number.

A paper often defines a function of one real variable and then evaluates it at a scalar expression,
as Ramapuram et al. (2024) write for sigmoid attention::

    \\sigma(u) = \\frac{1}{1 + e^{-u}}, \\quad s \\in \\mathbb{R}
    \\sigma(s - \\log(n)) = \\frac{1}{1 + n e^{-s}}

The call ``\\sigma(s - \\log(n))`` of the document's own ``\\sigma`` is its body with ``u`` bound to the
scalar ``s - log(n)``; the step is then a claim about scalars, checked as such. A parameter is bound
to a matrix or a scalar, as the argument is; the body decides whether the value makes sense (a
scalar ``u`` in ``u W`` scales W; a matrix ``u`` in ``1 / (1 + e^{-u})`` is a division by a matrix,
refused as everywhere else).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import ast


@dataclass(frozen=True)
class ScalarArgument:
    """The value of a function parameter bound to a scalar argument (kept apart from head indices,
    which are bound in the same table of locals)."""

    value: sp.Expr


def bind_arguments(scope, node: ast.Call, d, L) -> dict:
    """The parameters of the definition ``d`` bound to the arguments of the call ``node``: a matrix as
    itself, a scalar wrapped as a :class:`ScalarArgument`."""
    count = len(d.params)
    if len(node.args) != count or any(isinstance(a, ast.Dots) for a in node.args):
        scope.fail(node, f"{node.target.text()} takes {count} argument{'s' if count > 1 else ''}, "
                   f"got {len(node.args)}", f"{count} argument{'s' if count > 1 else ''}")
    out = {}
    for p, a in zip(d.params, node.args):
        if p.sub is not None:  # FFN(x, W, V, W_2): the declared W_2, which the body names as it is
            if not (isinstance(a, ast.Name) and a.text() == p.text()):
                scope.fail(a, f"the parameter {p.text()} of {node.target.text()} is a declared matrix, bound here "
                           f"to {a.text()}", f"{p.text()} itself as the argument, or a parameter without a subscript")
            continue
        v = scope._expr(a, L)
        out[p.base] = v if getattr(v, "is_Matrix", False) else ScalarArgument(sp.sympify(v))
        if isinstance(a, ast.Name) and (a.base, "count") in L:  # a_t(s) in a sum over s: s keeps its range
            out[(p.base, "count")] = L[(a.base, "count")]
    return out


def is_scalar_argument(v) -> bool:
    return isinstance(v, ScalarArgument)


def value_of(v):
    """The value bound to a parameter: the scalar of a :class:`ScalarArgument`, else ``v`` itself."""
    return v.value if isinstance(v, ScalarArgument) else v
