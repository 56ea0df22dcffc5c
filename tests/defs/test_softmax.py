"""The Softmax node: shape, transpose law, entries and explicit evaluation."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import softmax_columns, softmax_rows

import symattn as sa
from symattn.proof.evaluate import evaluate

m, n = sa.dims("m n")
X = sp.MatrixSymbol("X", m, n)


def test_shape_and_transpose_law():
    S = sa.softmax(X)
    assert S.shape == (m, n)
    assert S.T == sp.Transpose(S)  # kept as written (shown as the user typed it) ...
    assert S.T.doit() == sa.Softmax(X.T, 1)  # ... and the transpose law applied by rewriting
    assert sp.transpose(S) == sa.Softmax(X.T, 1)
    assert S.T.T == S
    assert sa.softmax(X, axis=1).T.doit() == sa.Softmax(X.T, 0)


def test_entry_normalizes_the_column():
    e = sa.softmax(X)[1, 2]
    assert e.has(sp.Sum)
    (k, lo, hi), = e.atoms(sp.Sum).pop().limits
    assert (lo, hi) == (0, m - 1)


def test_explicit_evaluation_columns_sum_to_one():
    M = sp.ImmutableMatrix([[1, 2], [3, 5], [0, -1]])
    S = sa.softmax(M).doit()
    assert [sp.simplify(sum(S[:, j])) for j in range(2)] == [1, 1]
    R = sa.softmax(M, axis=1).doit()
    assert [sp.simplify(sum(R[i, :])) for i in range(3)] == [1, 1, 1]
    assert S[0, 0] == sp.E / (sp.E + sp.exp(3) + 1)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.lists(st.integers(1, 3), max_size=2))
def test_numeric_softmax_matches_reference_with_batch_axes(rows, cols, batch):
    x = np.random.default_rng(rows * 7 + cols).standard_normal((*batch, rows, cols)) * 5
    Y = sp.MatrixSymbol("Y", rows, cols)
    np.testing.assert_allclose(evaluate(sa.softmax(Y), {"Y": x}), softmax_columns(x), rtol=1e-12)
    np.testing.assert_allclose(evaluate(sa.softmax(Y, 1), {"Y": x}), softmax_rows(x), rtol=1e-12)
