"""Theorem 11, seed 002's worked example: softmax([14, 12]) = [e²/(1+e²), 1/(1+e²)] ≈ [0.88, 0.12]."""

import numpy as np
import sympy as sp

from symattn.proof.scalar import verify_scalar
from symattn.proofs.worked_example import rounded, weights
from symattn.theorems import load_library, prove


def test_worked_example_is_proved_exactly():
    r = prove(load_library()["worked_example_thinking_machines"])
    assert r.status == "proved" and len(r.verdicts) == 5
    assert "certified floor (S)" in r.method


def test_weights_are_not_exactly_the_rounded_values():
    A = weights()
    assert verify_scalar(A[0, 0], sp.Rational(88, 100)).status == "refuted"
    assert verify_scalar(rounded(A[0, 0]), 89).status == "refuted"
    assert verify_scalar(rounded(A[0, 1], 3), 119).status == "proved"  # 0.1192 -> 0.119


def test_worked_example_numerically():
    s = np.array([112.0, 96.0]) / np.sqrt(64)
    np.testing.assert_array_equal(s, [14.0, 12.0])
    w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
    np.testing.assert_allclose(w, [np.e**2 / (1 + np.e**2), 1 / (1 + np.e**2)], rtol=1e-14)
    np.testing.assert_array_equal(np.round(w, 2), [0.88, 0.12])
