"""An entry of the trust base and its check: exactly at every small size, numerically at larger ones.

A :class:`Rule` names one rewrite rule or axiom the engine relies on: where it is implemented, its
statement in the project's notation, and an instance family, a function of concrete sizes that
returns :class:`Case` objects. In a case,

- ``lhs`` and ``rhs`` are two expressions whose equality IS the rule at those sizes (``rhs`` is
  None where the rule's side condition does not hold and it states nothing);
- ``rewritten`` is what the engine's own implementation made of ``lhs`` (None: it did not apply),
  so the check covers the code, not only the statement: the rewrite must equal ``lhs``, also on
  instances that violate the side condition.

:func:`check_rule` evaluates both sides from the definitions (:mod:`symattn.proof.trust_eval`):

- exactly, with fresh Dummy entries and exact cancellation, at every combination of the size
  parameters in ``exact`` (by default 1..4), and over every permutation of a size <= 4 when the
  case holds a permutation (a rule with ``integer_entries`` uses random integers in -3..3 instead
  of symbols, still with exact arithmetic: cheaper where many exp atoms meet);
- in float64 (relative 1e-9) at ``samples`` random size combinations drawn from ``numeric``
  (by default 5..12), with random normal entries and random permutations.

A rule whose implementation never changed any ``lhs`` of its family fails too (``must_fire``):
a family that does not exercise the code checks nothing.
"""

from __future__ import annotations

import itertools
import time
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import sympy as sp

from ..defs.permutation import PermIndex, Permutation
from .trust_eval import Inputs, NotPolynomial, close, exactly_equal, polys_equal, value

SMALL = range(1, 5)
LARGE = range(5, 13)
MAX_FAILURES = 5


@dataclass(frozen=True)
class Case:
    """One instance of a rule: lhs = rhs (the statement) and lhs = rewritten (the implementation)."""

    lhs: object
    rhs: object = None
    rewritten: object = None  # an expression, or a function of the Inputs that evaluates the instance
    changed: bool | None = None  # did the implementation change its (symbolic) input? default: rewritten != lhs


@dataclass(frozen=True)
class Rule:
    """One entry of the trust base."""

    name: str
    where: tuple
    statement: str
    family: Callable[..., list] | None = None
    params: tuple = ()
    exact: dict = field(default_factory=dict)
    numeric: dict = field(default_factory=dict)
    samples: int = 3
    admits: Callable[..., bool] | None = None
    must_fire: bool = True
    axiom: str = ""
    integer_entries: bool = False  # exact check with random integer entries instead of symbols (exp-heavy rules)

    def exact_sizes(self) -> list[dict]:
        ranges = [list(self.exact.get(p, SMALL)) for p in self.params]
        grid = [dict(zip(self.params, combo)) for combo in itertools.product(*ranges)]
        return [s for s in grid if self.admits is None or self.admits(**s)]

    def numeric_sizes(self, rng) -> list[dict]:
        out: list[dict] = []
        if not self.numeric and not self.params:
            return out
        for _ in range(200):
            if len(out) >= self.samples:
                break
            s = {p: int(rng.choice(list(self.numeric.get(p, LARGE)))) for p in self.params}
            if (self.admits is None or self.admits(**s)) and s not in out:
                out.append(s)
        return out


@dataclass
class RuleCheck:
    """The outcome of checking one rule."""

    rule: Rule
    exact_sizes: int = 0
    exact_instances: int = 0
    numeric_sizes: list = field(default_factory=list)
    numeric_instances: int = 0
    fired: int = 0
    failures: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """How the rule was checked, in one line (or why it failed)."""
        if self.rule.family is None:
            return f"axiom, not checked by instances: {self.rule.axiom}"
        if self.failures:
            return f"FAILED: {self.failures[0]}"
        ranges = ", ".join(f"{p} in {min(r)}..{max(r)}" for p, r in
                           ((p, list(self.rule.exact.get(p, SMALL))) for p in self.rule.params))
        sizes = "; ".join(" ".join(f"{k}={v}" for k, v in s.items()) for s in self.numeric_sizes)
        numeric = (f"numerically (float64, relative 1e-9) at {self.numeric_instances} ({sizes})"
                   if self.numeric_sizes else "no float check")
        return (f"exactly at {self.exact_instances} instances (every {ranges or 'case'}), {numeric}; "
                f"the implementation rewrote {self.fired}")


def _permutation_symbols(case: Case) -> dict:
    """σ -> n for every permutation in the case (as a matrix P_σ or as σ(k))."""
    out = {}
    for x in (case.lhs, case.rhs, case.rewritten):
        if not isinstance(x, sp.Basic):
            continue
        for node in sp.preorder_traversal(x):
            if isinstance(node, (Permutation, PermIndex)):
                n = node.args[1]
                if not sp.sympify(n).is_Integer:
                    continue
                out[node.args[0]] = int(n)
    return out


def _assignments(case: Case, mode: str, rng) -> list[dict]:
    sigmas = _permutation_symbols(case)
    if not sigmas:
        return [{}]
    names = list(sigmas)
    if mode == "exact":
        choices = [list(itertools.permutations(range(sigmas[s]))) for s in names]
        return [dict(zip(names, combo)) for combo in itertools.product(*choices)]
    return [{s: tuple(int(v) for v in rng.permutation(sigmas[s])) for s in names} for _ in range(2)]


def _check_case(case: Case, mode: str, rng, perms: dict, integers: bool = False) -> list[str]:
    if mode == "exact" and not integers:
        try:
            return _check_case(case, "poly", rng, perms)
        except NotPolynomial:
            pass
    inp = Inputs(mode, rng, perms, integers=integers)
    same = {"exact": exactly_equal, "poly": polys_equal, "float": close}[mode]
    L = value(case.lhs, inp)
    out = []
    if case.rhs is not None:
        ok, why = same(L, value(case.rhs, inp))
        if not ok:
            out.append(f"lhs != rhs: {why}")
    if case.rewritten is not None:
        rewritten = case.rewritten
        if callable(rewritten):  # the implementation evaluates the instance itself, from these inputs
            if mode == "poly":
                raise NotPolynomial("the implementation is given the inputs")
            rewritten = rewritten(inp)
        ok, why = same(L, value(rewritten, inp))
        if not ok:
            out.append(f"the implementation changed the value: {why}")
    return out


def _run(rule: Rule, sizes: dict, mode: str, rng, result: RuleCheck) -> int:
    where = ", ".join(f"{k}={v}" for k, v in sizes.items()) or "no parameters"
    try:
        cases = rule.family(**sizes)
    except Exception as exc:  # a family that cannot be built is a failure, reported with the sizes
        result.failures.append(f"at {where} ({mode}): building the instances raised {type(exc).__name__}: {exc}")
        return 0
    count = 0
    for n, case in enumerate(cases):
        changed = case.changed if case.changed is not None else (callable(case.rewritten)
                                                                 or case.rewritten != case.lhs)
        if case.rewritten is not None and changed:
            result.fired += 1
        for perms in _assignments(case, mode, rng):
            count += 1
            try:
                with np.errstate(all="ignore"):  # a row with no visible key is nan on both sides
                    problems = _check_case(case, mode, rng, perms, rule.integer_entries)
            except Exception as exc:  # evaluation errors are failures too, never skipped
                problems = [f"evaluation raised {type(exc).__name__}: {exc}"]
            for p in problems:
                shown = f" with σ = {perms}" if perms else ""
                result.failures.append(f"at {where}, case {n}{shown} ({mode}): {p}")
    return count


def check_rule(rule: Rule, seed: int | None = None) -> RuleCheck:
    """Check ``rule`` exactly at every small size and numerically at random larger sizes."""
    start = time.perf_counter()
    result = RuleCheck(rule)
    if rule.family is None:
        result.seconds = time.perf_counter() - start
        return result
    rng = np.random.default_rng(zlib.crc32(rule.name.encode()) if seed is None else seed)
    sizes = rule.exact_sizes()
    result.exact_sizes = len(sizes)
    for s in sizes:
        result.exact_instances += _run(rule, s, "exact", rng, result)
        if len(result.failures) >= MAX_FAILURES:
            break
    if not result.failures:
        for s in rule.numeric_sizes(rng):
            result.numeric_sizes.append(s)
            result.numeric_instances += _run(rule, s, "float", rng, result)
    if rule.must_fire and result.fired == 0 and not result.failures:
        result.failures.append("the implementation never rewrote any instance: the family does not exercise it")
    if result.exact_instances == 0 and not result.failures:
        result.failures.append("no exact instance was checked")
    result.seconds = time.perf_counter() - start
    return result
