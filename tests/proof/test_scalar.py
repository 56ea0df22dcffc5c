"""The scalar path: proved only by exact simplification, refuted only with a certificate."""

import sympy as sp

from symattn.proof.moments import Expectation, StandardVector, dot, variance
from symattn.proof.scalar import is_scalar_claim, verify_scalar

d = sp.Symbol("d", integer=True, positive=True)


def test_exact_identity_is_proved_for_all_dimensions():
    v = verify_scalar(sp.Sum(2 * sp.Symbol("i") + 1, (sp.Symbol("i"), 0, d - 1)), d**2)
    assert v.status == "proved" and v.general and v.scope == "all dimensions (d)"


def test_false_identity_is_refuted_with_certified_counterexample():
    v = verify_scalar(2**d, 2 * d)
    assert v.status == "refuted" and not v.general
    cex = v.counterexample
    assert cex.dims == {"d": 3}
    assert cex.difference == 2**3 - 2 * 3
    assert "exact rational" in cex.certificate


def test_transcendental_difference_is_refuted_by_interval_certificate():
    v = verify_scalar(sp.exp(1) / (1 + sp.exp(1)), sp.Rational(73, 100))
    assert v.status == "refuted"
    assert "interval arithmetic" in v.counterexample.certificate
    assert sp.N(v.counterexample.difference, 30) != 0


def test_floor_is_certified_not_read_from_a_float():
    x = sp.floor(100 * sp.exp(2) / (1 + sp.exp(2)) + sp.Rational(1, 2), evaluate=False)
    v = verify_scalar(x, 88)
    assert v.status == "proved" and v.method == "certified floor (S)"
    assert any("interval arithmetic" in t for t in v.trace)
    assert verify_scalar(x, 89).status == "refuted"


def test_dot_product_moments_are_symbolic_in_the_length():
    q, k = StandardVector("q", d), StandardVector("k", d)
    assert verify_scalar(Expectation(dot(q, k)), 0).scope == "all dimensions (d)"
    v = verify_scalar(variance(dot(q, k)), d)
    assert v.status == "proved" and v.general and v.method == "moment calculus (S)"
    wrong = verify_scalar(variance(dot(q, k)), 1)
    assert wrong.status == "refuted" and wrong.counterexample.dims == {"d": 2}


def test_fourth_moments_are_undetermined_not_guessed():
    q = StandardVector("q", d)
    v = verify_scalar(variance(dot(q, q)), 2 * d)  # true for Gaussians, false for ±1 entries
    assert v.status == "unknown"
    assert any("order 4" in t for t in v.trace)


def test_only_non_matrix_claims_take_the_scalar_path():
    X = sp.MatrixSymbol("X", d, d)
    assert is_scalar_claim(sp.Integer(1), d)
    assert not is_scalar_claim(X, X)
    assert not is_scalar_claim(sp.ImmutableMatrix([[1]]), sp.Integer(1))


def test_counterexamples_respect_the_declared_assumptions():
    x, y = sp.Symbol("x", positive=True), sp.Symbol("y")
    assert verify_scalar(sp.sqrt(x**2), x).status == "proved"   # never tried at x = -1
    v = verify_scalar(sp.sqrt(y**2), y)
    assert v.status == "refuted" and int(v.counterexample.values["y"]) < 0
