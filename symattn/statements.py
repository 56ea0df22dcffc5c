"""The theorem library's statements: :class:`Theorem`, the :func:`theorem` decorator and the
:data:`REGISTRY` the modules of ``proofs/`` fill.

A floor below the library's driver (:mod:`symattn.theorems`, which loads ``proofs/`` and proves
what it registered): a module of ``proofs/`` imports only this and the definitions, so loading
the library is not an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .displays import show
from .errors import GradientError, SymattnError


class VJP(MatrixExpr):
    """vjp(E, W, G): the vector-Jacobian product Σ_ij G_ij ∂E_ij/∂W_kl, left unevaluated, of W's shape.

    The right side of a gradient claim of the library (see :func:`gradient`): the claim
    ``(candidate, VJP(E, W, G))`` says "candidate is the VJP of E with respect to W at the cotangent
    G" and is decided by :func:`symattn.verify_gradient` (never by :func:`symattn.verify`). The node
    is a statement, not a definition: nothing evaluates it (``symattn.vjp`` computes one).

    >>> n = sp.Symbol("n", integer=True, positive=True)
    >>> X, G = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("G", n, n)
    >>> VJP(X.T, X, G), VJP(X.T, X, G).shape
    (vjp(X.T, X, G), (n, n))
    """

    def __new__(cls, expr, wrt, cotangent):
        expr, wrt, cotangent = (sp.sympify(x) for x in (expr, wrt, cotangent))
        for what, x in (("expr", expr), ("wrt", wrt), ("cotangent", cotangent)):
            if not getattr(x, "is_Matrix", False):
                raise GradientError(f"VJP(expr, wrt, cotangent): {what} must be a matrix expression, got "
                                    f"{type(x).__name__}: {sp.sstr(x)[:80]}")
        if tuple(expr.shape) != tuple(cotangent.shape):
            raise GradientError(f"VJP(expr, wrt, cotangent): the cotangent must have the shape of expr.\n"
                                f"  expr: {expr.shape[0]} × {expr.shape[1]}\n"
                                f"  cotangent {cotangent}: {cotangent.shape[0]} × {cotangent.shape[1]}")
        return super().__new__(cls, expr, wrt, cotangent)

    expr = property(lambda self: self.args[0])
    wrt = property(lambda self: self.args[1])
    cotangent = property(lambda self: self.args[2])

    @property
    def shape(self):
        return self.wrt.shape

    def doit(self, **hints):
        return self

    def _sympystr(self, printer):
        return f"vjp({printer._print(self.expr)}, {printer._print(self.wrt)}, {printer._print(self.cotangent)})"

    def _latex(self, printer):
        return (rf"\operatorname{{vjp}}_{{{printer._print(self.wrt)}}}\!\left({printer._print(self.expr)}"
                rf"\right)\left[{printer._print(self.cotangent)}\right]")


def gradient(expr, wrt, candidate, cotangent) -> tuple:
    """The gradient claim "candidate is the VJP of expr with respect to wrt at cotangent", as a claim
    (lhs, rhs) = (candidate, VJP(expr, wrt, cotangent)) a theorem's builder returns."""
    return candidate, VJP(expr, wrt, cotangent)


def is_gradient_claim(lhs, rhs) -> bool:
    return isinstance(rhs, VJP)


@dataclass
class Theorem:
    name: str
    statement: str
    build: Callable
    expect: str = "proved"
    at: list | None = None
    explanation: str = ""
    family: str = ""
    budget: float = 20.0
    only_at: str = ""  # the claims are built at these values only (e.g. head counts); never general
    _built: list | None = field(default=None, init=False, repr=False, compare=False)

    def claims(self) -> list:
        """The claims [(lhs, rhs), ...], built once (the sides are immutable SymPy objects)."""
        if self._built is None:
            out = self.build()
            self._built = [out] if isinstance(out, tuple) else list(out)
        return list(self._built)

    def __str__(self) -> str:
        return show("theorem_text", self, fallback=lambda th: f"{th.name}: {th.statement}")

    def _repr_markdown_(self):
        return show("theorem_markdown", self)

    def _repr_html_(self):
        return show("theorem_html", self)



REGISTRY: dict[str, Theorem] = {}


def theorem(name: str, statement: str, *, expect: str = "proved", at=None, explanation: str = "",
            budget: float = 20.0, only_at: str = ""):
    """Register the decorated builder (returning (lhs, rhs) or a list of them) as a theorem.

    ``only_at`` names values the builder fixes (for example "(H, G) = (4, 2), (8, 2)"): the
    theorem is then reported as proved at those values only, never as general."""

    def register(build):
        if name in REGISTRY:
            raise SymattnError(f"theorem {name!r} is registered twice")
        family = build.__module__.rsplit(".", 1)[-1]
        REGISTRY[name] = Theorem(name, statement, build, expect, at, explanation, family, budget, only_at)
        return build

    return register
