"""The theorem library's statements: :class:`Theorem`, the :func:`theorem` decorator and the
:data:`REGISTRY` the modules of ``proofs/`` fill.

A floor below the library's driver (:mod:`symattn.theorems`, which loads ``proofs/`` and proves
what it registered): a module of ``proofs/`` imports only this and the definitions, so loading
the library is not an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .displays import show
from .errors import SymattnError


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
