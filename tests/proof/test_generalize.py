"""A claim proved with each softmax an arbitrary matrix is proved for the softmax; nothing else is taken from it."""

from __future__ import annotations

import sympy as sp

import symattn as sa
from symattn.defs.softmax import softmax
from symattn.proof.budget import Budget
from symattn.proof.entrywise import same_entrywise
from symattn.proof.generalize import generalized


def test_both_orientations_of_one_softmax_get_one_symbol():
    r, n = sa.dims("r n")
    Y = sp.MatrixSymbol("Y", r, n)
    A = softmax(Y, 1)
    lhs, rhs = generalized(A * A.T, A * softmax(Y.T, 0))  # Softmax(Yᵀ, 0) = Softmax(Y, 1)ᵀ
    assert lhs == rhs or same_entrywise(lhs, rhs, Budget(20))[0]
    assert not lhs.has(A) and not rhs.has(A)


def test_no_softmax_means_nothing_to_generalize():
    X = sp.MatrixSymbol("X", 2, 2)
    assert generalized(X, X.T) is None


def test_a_claim_that_holds_for_every_matrix_is_proved_and_a_false_one_is_not():
    r, n = sa.dims("r n")
    Y = sp.MatrixSymbol("Y", r, n)
    A = softmax(Y, 1)
    ones = sp.OneMatrix(r, r)
    v = sa.verify((A * A.T - ones) * (A * A.T - ones).T, A * A.T * A * A.T - ones * A * A.T - A * A.T * ones
                  + ones * ones)
    assert v.status == "proved" and v.general
    w = sa.verify(A * A.T * A * A.T, A * A.T)
    assert w.status != "proved"
