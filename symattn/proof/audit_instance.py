"""One random exact instance of a claim, for the audit (:mod:`symattn.proof.audit`).

:class:`Instance` holds integer values of the claim's dimension and scalar symbols (``base``)
and draws, lazily the first time the audit's interpreter needs them, the integer entries of
every input matrix (keyed by the object, never by a printed name), a random permutation σ for
each symbolic permutation, an instantiation of each score function, and a small rational for
each value of an uninterpreted scalar function such as RoPE's θ(i).
"""

from __future__ import annotations

import random
from fractions import Fraction

import sympy as sp

from .audit_numbers import Malformed

#: the score functions an instance can give an uninterpreted f(Q, K) (m × n from d × n, d × m)
SCORE_KINDS = ("bilinear Kᵀ M Q", "elementwise square of Kᵀ Q", "elementwise exp of Kᵀ M Q / 4")
ENTRIES = range(-3, 4)
#: the entries drawn once an instance showed that the claim takes logarithms of its inputs
POSITIVE_ENTRIES = range(1, 4)


def admissible(symbol, value: int) -> bool:
    """True when the integer ``value`` has every property declared on ``symbol`` (positive, even...)."""
    v = sp.Integer(value)
    for fact, held in symbol.assumptions0.items():
        got = getattr(v, f"is_{fact}", None)
        if got is not None and got is not held:
            return False
    return True


class Instance:
    """One random exact instance: symbol values and lazily drawn inputs (see the module docstring)."""

    def __init__(self, rng: random.Random, base: dict, kind: int = 0, entries=ENTRIES):
        self.rng, self.base, self.kind, self.entries = rng, dict(base), kind, entries
        self.matrices: dict = {}   # key -> (label, rows)
        self.perms: dict = {}      # (sigma symbol, n) -> (label, list σ)
        self.scores: dict = {}     # f -> kind
        self.bilinear: dict = {}   # (f, d) -> rows of M
        self.functions: dict = {}  # (function, argument values) -> Fraction
        self.entries_of: dict = {}  # (vector label, index values) -> int: entries x[k] of a scalar claim

    def matrix(self, key, label: str, r: int, c: int):
        if key not in self.matrices:
            rows = [[self.rng.choice(self.entries) for _ in range(c)] for _ in range(r)]
            self.matrices[key] = (label, rows)
        label0, rows = self.matrices[key]
        if (len(rows), len(rows[0]) if rows else 0) != (r, c):
            raise Malformed(f"{label} is used with two shapes")
        return rows

    def permutation(self, sigma, n: int, label: str) -> list:
        key = (sigma, n)
        if key not in self.perms:
            p = list(range(n))
            self.rng.shuffle(p)
            if self.kind % 2:  # every other instance: an n-cycle, far from the involutions
                p = [p[(p.index(k) + 1) % n] for k in range(n)]
            self.perms[key] = (label, p)
        return self.perms[key][1]

    def score_kind(self, f) -> int:
        if f not in self.scores:
            self.scores[f] = (self.kind + len(self.scores)) % len(SCORE_KINDS)
        return self.scores[f]

    def bilinear_form(self, f, d: int):
        key = (f, d)
        if key not in self.bilinear:
            self.bilinear[key] = [[self.rng.choice((-1, 0, 1, 2)) for _ in range(d)] for _ in range(d)]
        return self.bilinear[key]

    def function_value(self, func, args: tuple) -> Fraction:
        key = (func, args)
        if key not in self.functions:
            self.functions[key] = Fraction(self.rng.randint(1, 6), self.rng.randint(1, 4))
        return self.functions[key]

    def entry(self, label, indices: tuple) -> int:
        """The value of the entry ``label[indices]`` of a vector (an Indexed of a scalar claim)."""
        key = (label, indices)
        if key not in self.entries_of:
            self.entries_of[key] = self.rng.choice(self.entries)
        return self.entries_of[key]

    def drew_anything(self) -> bool:
        """True when the instance holds a random value (a symbol, an input, a permutation, a
        function, an entry of a vector)."""
        return bool(self.base or self.matrices or self.perms or self.scores or self.functions or self.entries_of)

    def describe(self) -> list[str]:
        """The instance as text: symbol values, inputs, permutations, functions."""
        out = [", ".join(f"{s}={v}" for s, v in sorted(self.base.items(), key=lambda kv: str(kv[0])))
               or "no symbols"]
        out += [f"{label} = {rows}" for label, rows in self.matrices.values()]
        out += [f"{label}: σ = {p}" for label, p in self.perms.values()]
        out += [f"{f} instantiated as {SCORE_KINDS[k]}" for f, k in self.scores.items()]
        out += [f"  M_{f} ({d}×{d}) = {m}" for (f, d), m in self.bilinear.items()]
        out += [f"{func}{tuple(a)} = {v}" for (func, a), v in self.functions.items()]
        out += [f"{label}[{', '.join(map(str, idx))}] = {v}" for (label, idx), v in self.entries_of.items()]
        return out
