"""``sympy.diff`` of a symattn node: SymPy's matrix-derivative extension point (``array_derive``, a
single-dispatch function) learns every matrix node class of :mod:`symattn.defs`. A node that does
not contain the variable contributes the zero array, so ``sympy.diff(V * Softmax(S), V)`` works;
one that does raises :class:`~symattn.errors.GradientError` pointing to ``symattn.vjp`` (SymPy's
own fallback recursed until RecursionError).

>>> import sympy as sp, symattn as sa
>>> S = sp.MatrixSymbol("S", 2, 2)
>>> try:
...     sp.diff(sa.softmax(S), S)
... except sa.GradientError as e:
...     print(str(e).splitlines()[0][:67])
sympy.diff cannot differentiate through the symattn node Softmax; u
"""

from __future__ import annotations

import inspect
import pkgutil
from importlib import import_module

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr
from sympy.tensor.array.expressions import ZeroArray
from sympy.tensor.array.expressions.arrayexpr_derivatives import array_derive

from .. import defs
from ..errors import GradientError


def node_classes() -> list:
    """Every matrix node class defined in :mod:`symattn.defs` (abstract bases included)."""
    out = []
    for info in pkgutil.iter_modules(defs.__path__):
        module = import_module(f"{defs.__name__}.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, MatrixExpr):
                out.append(cls)
    return sorted(set(out), key=lambda c: (c.__module__, c.__name__))


def _derive(expr, x):
    if not expr.has(x):
        return ZeroArray(*(tuple(getattr(x, "shape", ())) + tuple(expr.shape)))
    raise GradientError(
        f"sympy.diff cannot differentiate through the symattn node {type(expr).__name__}; use "
        f"symattn.vjp(expr, wrt, cotangent) (the vector-Jacobian product, with a proof by "
        f"symattn.verify_gradient).\n  node: {sp.sstr(expr)[:120]}\n  with respect to: {x}")


def _scalar_derivative(self, v):
    return _derive(self, v)


def register() -> None:
    """Teach sympy.diff the symattn nodes (idempotent)."""
    for cls in node_classes():
        if issubclass(cls, sp.MatrixSymbol):  # Symmetric: SymPy's rule for a matrix symbol applies
            continue
        array_derive.register(cls)(_derive)
        if "_eval_derivative" not in cls.__dict__:
            cls._eval_derivative = _scalar_derivative
