"""Named theorems: a statement in the seed's notation, the claims that make it, and its verdict.

The theorem library lives in the top-level ``proofs`` package (one module per family);
each module registers its theorems with the :func:`theorem` decorator:

    @theorem("single_head_reduces_to_attention", "MultiHead with H = 1 = W^O Attention(...)")
    def _():
        ...
        return [(lhs, rhs), ...]

A theorem with several claims is proved when every claim is, and general when every
claim is general. Items of the gallery of mistakes (``expect="refuted"``) pass when
they are refuted with a certified counterexample.

A claim whose two sides are both scalars (neither is a matrix), such as
``(Expectation(dot(q, k)), 0)``, is decided by :func:`symattn.proof.scalar.verify_scalar`
instead of :func:`symattn.verify`; it returns the same kind of Verdict.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from dataclasses import dataclass, field
from typing import Callable

from .errors import SymattnError
from .proof import Verdict, verify
from .proof.scalar import is_scalar_claim, verify_scalar
from .proof.verdict import general_scope as _scope_of


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

    def claims(self) -> list:
        out = self.build()
        return [out] if isinstance(out, tuple) else list(out)

    def _repr_markdown_(self) -> str:
        from .teach.display import theorem_markdown

        return theorem_markdown(self)


@dataclass
class Result:
    theorem: Theorem
    verdicts: list = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""

    @property
    def status(self) -> str:
        if self.error or not self.verdicts:
            return "unknown"
        st = [v.status for v in self.verdicts]
        if "refuted" in st:
            return "refuted"
        return "proved" if all(s == "proved" for s in st) else "unknown"

    @property
    def general(self) -> bool:
        if self.theorem.only_at:
            return False
        return self.status == "proved" and all(v.general for v in self.verdicts)

    @property
    def method(self) -> str:
        seen = []
        for v in self.verdicts:
            if v.status == self.status and v.method not in seen:
                seen.append(v.method)
        return " + ".join(seen) or "none"

    @property
    def scope(self) -> str:
        if self.error:
            return "error"
        if self.status == "refuted":
            return next(v.scope for v in self.verdicts if v.status == "refuted")
        if self.theorem.only_at and self.status == "proved":
            widest = sorted({v.scope for v in self.verdicts}, key=len)[-1]
            return f"only at {self.theorem.only_at}; {widest}"
        if self.general:
            return general_scope(self.verdicts)
        if self.status == "proved":
            return "; ".join(dict.fromkeys(v.scope for v in self.verdicts if not v.general))
        return "not established"

    @property
    def ok(self) -> bool:
        return self.status == self.theorem.expect

    def __str__(self) -> str:
        from .teach.display import result_text

        return result_text(self)

    def _repr_markdown_(self) -> str:
        from .teach.display import result_markdown

        return result_markdown(self)

    def _repr_html_(self) -> str:
        from .teach.display import result_html

        return result_html(self)

    def as_dict(self) -> dict:
        return {
            "name": self.theorem.name,
            "statement": self.theorem.statement,
            "status": self.status,
            "general": self.general,
            "scope": self.scope,
            "method": self.method,
            "seconds": round(self.seconds, 3),
            "expect": self.theorem.expect,
            "claims": [v.as_dict() for v in self.verdicts],
            "error": self.error or None,
        }


def general_scope(verdicts) -> str:
    """The scope of a general theorem: every symbol any of its claims quantifies over."""
    over = [set(), set(), set()]
    for v in verdicts:
        for k in range(3):
            over[k] |= set(v.over[k])
    return _scope_of(tuple(tuple(sorted(x)) for x in over))


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


def load_library() -> dict[str, Theorem]:
    """Import every module of the bundled ``proofs`` package and return the registry."""
    from . import proofs

    for mod in pkgutil.iter_modules(proofs.__path__):
        importlib.import_module(f"symattn.proofs.{mod.name}")
    return REGISTRY


def prove(th: Theorem) -> Result:
    start = time.perf_counter()
    res = Result(th)
    try:
        for lhs, rhs in th.claims():
            if is_scalar_claim(lhs, rhs):
                v: Verdict = verify_scalar(lhs, rhs, budget=th.budget)
            else:
                v = verify(lhs, rhs, at=th.at, budget=th.budget)
            res.verdicts.append(v)
            if v.status != "proved":
                break
    except SymattnError as exc:
        res.error = f"{type(exc).__name__}: {exc}"
    res.seconds = time.perf_counter() - start
    return res
