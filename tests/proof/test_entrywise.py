"""Strategy B on explicit matrices: short concrete ranges are written out index by index."""

import sympy as sp

import symattn as sa

n = sa.dims("n")


def test_explicit_matrices_split_by_entries_are_proved_general_in_n():
    X = sp.MatrixSymbol("X", 2, n)
    M = sp.ImmutableMatrix([[1, 2], [3, 4]])
    parts = sp.ImmutableMatrix([[1, 0], [3, 0]]) * X + sp.ImmutableMatrix([[0, 2], [0, 4]]) * X
    v = sa.verify(M * X, parts)
    assert (v.status, v.general, v.scope) == ("proved", True, "all dimensions (n)")
    assert v.method == "entrywise (B)"
    assert any("for all 2 index pairs" in t for t in v.trace)  # rows 0 and 1, symbolic column j


def test_a_wrong_explicit_split_is_refuted():
    X = sp.MatrixSymbol("X", 2, n)
    M = sp.ImmutableMatrix([[1, 2], [3, 4]])
    parts = sp.ImmutableMatrix([[1, 0], [3, 0]]) * X + sp.ImmutableMatrix([[0, 2], [0, 5]]) * X
    assert sa.verify(M * X, parts).status == "refuted"
