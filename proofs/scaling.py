"""Why Q Kᵀ is divided by sqrt(d_k) (seed 002): the dot product of two random vectors grows with d_k.

For q, k ∈ R^{d_k} whose 2·d_k entries are independent with mean 0 and variance 1,

    E[qᵀk] = 0,   Var(qᵀk) = d_k,   so   Var(qᵀk / sqrt(d_k)) = 1.

The general theorem is derived symbolically in d_k by the moment calculus of
:mod:`symattn.proof.moments` (linearity, independence, E[q_a] = 0, E[q_a q_b] = δ_ab, delta
summation); no distribution is assumed. The second theorem cross-checks it with sympy.stats for
two concrete distributions at d_k = 1, 2, 3 only.
"""

import sympy as sp
from sympy import stats

from symattn.proof.moments import Expectation, StandardVector, dot, variance
from symattn.statements import theorem

from ._common import d_k

q, k = StandardVector("q", d_k), StandardVector("k", d_k)


@theorem(
    "dot_product_variance_grows_with_d_k",
    "q, k ∈ R^{d_k} with independent mean-0 variance-1 entries: E[qᵀk] = 0, Var(qᵀk) = d_k, "
    "Var(qᵀk / sqrt(d_k)) = 1, for every d_k",
    budget=10.0,
)
def _():
    s = dot(q, k)
    return [
        (Expectation(s), 0),
        (variance(s), d_k),
        (Expectation(s / sp.sqrt(d_k)), 0),
        (variance(s / sp.sqrt(d_k)), 1),
    ]


def _vectors(dist: str, d: int):
    def entry(name):
        if dist == "normal":
            return stats.Normal(name, 0, 1)
        return stats.FiniteRV(name, {-1: sp.Rational(1, 2), 1: sp.Rational(1, 2)})

    return [entry(f"q_{i}") for i in range(1, d + 1)], [entry(f"k_{i}") for i in range(1, d + 1)]


@theorem(
    "dot_product_variance_sympy_stats",
    "sympy.stats at d_k = 1, 2, 3 only, entries Normal(0, 1) or Rademacher ±1: "
    "E[qᵀk] = 0 and Var(qᵀk) = d_k",
    budget=10.0,
)
def _():
    claims = []
    for dist in ("rademacher", "normal"):
        for d in (1, 2, 3):
            qs, ks = _vectors(dist, d)
            s = sum(a * b for a, b in zip(qs, ks))
            var = stats.Expectation(s**2) - stats.Expectation(s) ** 2  # Var(s) = E[s²] - E[s]²
            claims += [(stats.Expectation(s), 0), (var, d)]
    return claims
