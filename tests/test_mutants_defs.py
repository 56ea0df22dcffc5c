"""Properties of the definition nodes that the other tests leave unpinned (found by mutation testing).

Each test states what the seed's definition says: which sum a Softmax entry divides by, how a
node prints, which axis a transpose lands on, what an error says.
"""

import pytest
import sympy as sp

import symattn as sa
from symattn.defs.softmax import Softmax, softmax_explicit
from symattn.errors import ConventionError, NotAMatrixError

m, n = sa.dims("m n")
X = sp.MatrixSymbol("X", m, n)


def _summed_index_and_limits(entry):
    (total,) = entry.atoms(sp.Sum)
    ((k, lo, hi),) = total.limits
    return total, k, lo, hi


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_entry_is_exp_over_the_sum_along_its_axis(axis):
    i, j = sp.symbols("i j", integer=True)
    e = Softmax(X, axis)[i, j]
    total, k, lo, hi = _summed_index_and_limits(e)
    assert (lo, hi) == ((0, m - 1) if axis == 0 else (0, n - 1))
    summand = sp.exp(X[k, j]) if axis == 0 else sp.exp(X[i, k])
    assert total.function == summand
    assert sp.simplify(e - sp.exp(X[i, j]) / total) == 0


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_entry_at_explicit_size_equals_explicit_softmax(axis):
    Y = sp.MatrixSymbol("Y", 2, 3)
    M = sp.ImmutableMatrix([[1, 2, 0], [3, 5, -1]])
    symbolic = Softmax(Y, axis).as_explicit().subs(Y, M).doit()
    exact = softmax_explicit(M, axis)
    assert all(sp.simplify(symbolic[r, c] - exact[r, c]) == 0 for r in range(2) for c in range(3))


def test_softmax_explicit_normalizes_columns_and_rows():
    M = sp.ImmutableMatrix([[0, 1, 2], [2, 0, 1]])
    cols, rows = softmax_explicit(M, 0), softmax_explicit(M, 1)
    assert cols.shape == rows.shape == (2, 3)
    assert [sp.simplify(sum(cols[:, j])) for j in range(3)] == [1, 1, 1]
    assert [sp.simplify(sum(rows[i, :])) for i in range(2)] == [1, 1]
    assert cols[0, 1] == sp.E / (sp.E + 1)
    assert rows[0, 1] == sp.E / (1 + sp.E + sp.exp(2))


def test_softmax_default_axis_is_columns():
    assert sa.softmax(X) == Softmax(X, 0) == Softmax(X)
    assert sa.softmax(X).axis == 0 and sa.softmax(X, 1).axis == 1
    assert softmax_explicit(sp.ImmutableMatrix([[0, 0], [0, 0]]))[0, 0] == sp.Rational(1, 2)
    assert softmax_explicit(sp.ImmutableMatrix([[0, 0, 0], [0, 0, 0]]))[0, 0] == sp.Rational(1, 2)


def test_softmax_doit_evaluates_explicit_arguments_on_the_same_axis():
    M = sp.ImmutableMatrix([[0, 1, 2], [2, 0, 1]])
    Y = sp.MatrixSymbol("Y", 2, 3)
    for axis in (0, 1):
        assert Softmax(M, axis).doit() == softmax_explicit(M, axis)
        assert Softmax(sp.MatMul(sp.Identity(2), M), axis).doit() == softmax_explicit(M, axis)
        kept = Softmax(sp.MatMul(sp.Identity(2), Y), axis).doit(deep=False)
        assert isinstance(kept, Softmax) and kept.axis == axis
        assert Softmax(Y, axis).doit() == Softmax(Y, axis)


def test_softmax_prints_its_axis_only_when_it_is_rows():
    assert sp.sstr(Softmax(X, 0)) == "Softmax(X)"
    assert sp.sstr(Softmax(X, 1)) == "Softmax(X, 1)"
    assert sp.latex(Softmax(X, 0)) == r"\operatorname{Softmax}\left(X\right)"
    assert sp.latex(Softmax(X, 1)) == r"\operatorname{softmax}_{\mathrm{row}}\left(X\right)"


@pytest.mark.parametrize("axis", [0, 1, sp.Integer(0), sp.Integer(1)])
def test_softmax_accepts_both_axes_also_as_sympy_integers(axis):
    assert Softmax(X, axis).axis == int(axis)
    assert Softmax(X, axis).T == Softmax(X.T, 1 - int(axis))


@pytest.mark.parametrize("axis", [2, -1, True, False, "0", sp.Integer(2)])
def test_softmax_refuses_other_axes_and_says_what_they_mean(axis):
    with pytest.raises(ConventionError, match=r"axis must be 0 \(normalize each column, as seed 000\) or 1 "
                       r"\(normalize each row, as the Transformer paper\), got "):
        sa.softmax(X, axis)


def test_softmax_of_a_non_matrix_names_the_type():
    with pytest.raises(NotAMatrixError, match=r"^softmax: X must be a matrix expression, got Symbol: m$"):
        sa.softmax(m)
    with pytest.raises(NotAMatrixError, match=r"^softmax: X must be a matrix expression \(for example "):
        Softmax(m)
