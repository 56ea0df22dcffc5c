"""Structured inputs: a symmetric matrix is assumed symmetric everywhere the engine looks."""

import numpy as np
import sympy as sp

import symattn as sa
from symattn.errors import ShapeError

n = sa.dims("n")
S, A = sa.Symmetric("S", n), sp.MatrixSymbol("A", n, n)


def test_claims_true_for_symmetric_matrices_are_proved():
    assert sa.verify(S.T, S).general
    assert sa.verify((A * S * A.T).T, A * S * A.T).general
    assert sa.verify(sa.softmax(S).T, sa.softmax(S, 1)).status == "proved"


def test_claims_false_for_some_symmetric_matrix_are_refuted_with_a_symmetric_counterexample():
    for lhs, rhs in ((S * A, A * S), (sa.softmax(S).T, sa.softmax(S, 0)), (S * S.T, S)):
        v = sa.verify(lhs, rhs)
        assert v.status == "refuted", v.explain()
        value = np.asarray(v.counterexample.values["S"])
        np.testing.assert_array_equal(value, value.T)  # the value shown is the value evaluated


def test_a_symmetric_matrix_is_not_a_plain_matrix_of_the_same_name():
    import pytest

    with pytest.raises(sa.ClaimError, match="both named S"):
        sa.verify(S, sp.MatrixSymbol("S", n, n))
    with pytest.raises(ShapeError, match="square"):
        sa.Symmetric("T", n).func("T", n, n + 1)


def test_explicit_entries_of_a_symmetric_matrix_mirror():
    S2 = sa.Symmetric("S", 2)
    assert S2[1, 0] == S2[0, 1]
    assert sa.verify(S2, S2.as_explicit()).status == "proved"
