"""Theorem 10: E[qᵀk] = 0 and Var(qᵀk) = d_k, proved symbolically; checked by exact enumeration."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.theorems import load_library, prove


@pytest.fixture(scope="module")
def library():
    return load_library()


def test_general_theorem_is_proved_for_every_d_k(library):
    r = prove(library["dot_product_variance_grows_with_d_k"])
    assert r.status == "proved" and r.general
    assert r.scope == "all dimensions (d_k)" and r.method == "moment calculus (S)"


def test_sympy_stats_cross_check_is_closed_and_proved(library):
    r = prove(library["dot_product_variance_sympy_stats"])
    assert r.status == "proved" and "d_k = 1, 2, 3 only" in r.theorem.statement
    assert r.scope.startswith("as stated")
    assert len(r.verdicts) == 12


# ---- independent check: exact enumeration of finite distributions ------------------------

def standardized(values, weights):
    """A finite distribution (support, probabilities) shifted and scaled to mean 0, variance 1."""
    x, p = np.asarray(values, float), np.asarray(weights, float) / np.sum(weights)
    mu = p @ x
    sd = np.sqrt(p @ (x - mu) ** 2)
    return (x - mu) / sd, p


distribution = st.tuples(
    st.lists(st.integers(-5, 5), min_size=2, max_size=3, unique=True),
    st.lists(st.integers(1, 4), min_size=3, max_size=3),
).map(lambda vw: standardized(vw[0], vw[1][: len(vw[0])]))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3).flatmap(lambda d: st.lists(distribution, min_size=2 * d, max_size=2 * d)))
def test_moments_of_the_dot_product_by_exact_enumeration(dists):
    d_k = len(dists) // 2
    # entry e varies along axis e of the joint outcome grid; q_i = entry 2i, k_i = entry 2i + 1
    grid = [np.reshape(x, [-1 if a == e else 1 for a in range(len(dists))]) for e, (x, _) in enumerate(dists)]
    prob = np.ones([1] * len(dists))
    for e, (_, p) in enumerate(dists):
        prob = prob * np.reshape(p, [-1 if a == e else 1 for a in range(len(dists))])
    s = sum(grid[2 * i] * grid[2 * i + 1] for i in range(d_k))
    mean = np.sum(prob * s)
    var = np.sum(prob * s**2) - mean**2
    assert np.isclose(np.sum(prob), 1.0)
    assert abs(mean) < 1e-9
    assert np.isclose(var, d_k, rtol=1e-9)
    assert np.isclose(np.sum(prob * (s / np.sqrt(d_k)) ** 2), 1.0, rtol=1e-9)
