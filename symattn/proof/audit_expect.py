"""Expectations for the audit of scalar claims, computed at concrete distributions.

The moment calculus (:mod:`symattn.proof.moments`) proves claims about E[...] of standardized
random vectors that hold for every distribution with independent entries of mean 0 and variance
1. The audit checks such a claim at one such distribution per instance, by enumerating every
outcome of the vectors' entries:

- Rademacher: ±1 with probability 1/2 each (E[x⁴] = 1);
- three-point: -2, 0, 2 with probabilities 1/8, 3/4, 1/8 (E[x⁴] = 4).

``sympy.stats`` expectations are enumerated the same way: a finite random variable over its
values, a normal one N(μ, σ²) over the three-point Gauss-Hermite rule μ + σ·{-√3, 0, √3} with
weights 1/6, 2/3, 1/6, which is exact for polynomials of degree at most 5 in that variable
(a higher degree is not audited).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import sympy as sp
from sympy.stats.rv import RandomSymbol
from sympy.stats.symbolic_probability import Expectation as StatsExpectation

from . import audit_numbers as num
from .audit_numbers import Unevaluable
from .moments import Expectation, StandardVector

LAWS = (
    ("Rademacher ±1", ((-1, Fraction(1, 2)), (1, Fraction(1, 2)))),
    ("three-point -2, 0, 2 with probabilities 1/8, 3/4, 1/8",
     ((-2, Fraction(1, 8)), (0, Fraction(3, 4)), (2, Fraction(1, 8)))),
)
MAX_OUTCOMES = 5000


class Expectations:
    """Evaluates Expectation nodes for :class:`~symattn.proof.audit_eval.Evaluator` (instance ``kind``
    picks the law of the standardized entries)."""

    def __init__(self, kind: int):
        self.name, self.law = LAWS[kind % len(LAWS)]

    def handles(self, e) -> bool:
        return isinstance(e, (Expectation, StatsExpectation, sp.Indexed, RandomSymbol))

    def value(self, ev, e, bound):
        if isinstance(e, (sp.Indexed, RandomSymbol)):
            return self._bound_value(ev, e, bound)
        arg = e.args[0]
        if isinstance(e, Expectation):
            slots = self._vector_slots(ev, arg, bound)
        else:
            slots = self._random_slots(ev, arg, bound)
        total = 1
        for _, choices in slots:
            total *= len(choices)
        if total > MAX_OUTCOMES:
            raise Unevaluable(f"an expectation over {total} outcomes")
        out = 0
        for combo in itertools.product(*(choices for _, choices in slots)):
            prob, binding = 1, []
            for (key, _), (value, p) in zip(slots, combo):
                prob = num.mul(prob, p)
                binding.append((key, value))
            out = num.add(out, num.mul(prob, ev.scalar(arg, bound + tuple(binding))))
        return out

    def _vector_slots(self, ev, arg, bound):
        """One slot per entry of every standardized vector in ``arg``: key (vector, k)."""
        vectors = sorted({x.base for x in arg.atoms(sp.Indexed) if isinstance(x.base, StandardVector)}, key=str)
        slots = []
        for v in vectors:
            d = ev.dim(v.length, bound, f"the length of {v}")
            slots += [((v, k), self.law) for k in range(1, d + 1)]
        return slots

    def _random_slots(self, ev, arg, bound):
        symbols = sorted(arg.atoms(RandomSymbol), key=str)
        slots = []
        for rs in symbols:
            dist = rs.pspace.distribution
            name = type(dist).__name__
            if hasattr(dist, "dict"):
                law = tuple((ev.scalar(sp.sympify(k), bound), ev.scalar(sp.sympify(p), bound))
                            for k, p in dist.dict.items())
            elif name == "NormalDistribution":
                degree = sp.Poly(arg, rs).degree() if arg.is_polynomial(rs) else None
                if degree is None or degree > 5:
                    raise Unevaluable(f"E of a non-polynomial or degree > 5 function of the normal {rs}")
                mu, sigma = (ev.scalar(a, bound) for a in dist.args)
                r3 = num.power(3, Fraction(1, 2))
                law = tuple((num.add(mu, num.mul(sigma, c)), w)
                            for c, w in ((num.neg(r3), Fraction(1, 6)), (0, Fraction(2, 3)), (r3, Fraction(1, 6))))
            else:
                raise Unevaluable(f"the audit has no rule for the distribution {name}")
            slots.append((rs, law))
        return slots

    def _bound_value(self, ev, e, bound):
        if isinstance(e, RandomSymbol):
            return ev.lookup(e, bound)
        k = num.as_int(ev.scalar(e.indices[0], bound), "an entry index")
        return ev.lookup((e.base, k), bound)
