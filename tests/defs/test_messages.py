"""Bad input gives a symattn error that says what was wrong and what was expected."""

import re

import pytest
import sympy as sp

import symattn as sa
from symattn import ConventionError, DimensionError, HeadError, NotAMatrixError, ShapeError, SymattnError

n, m, d_k, d_v, d_model, a, d = sa.dims("n m d_k d_v d_model a d")
Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)


def test_error_hierarchy():
    for cls in (ShapeError, DimensionError, ConventionError, NotAMatrixError, HeadError):
        assert issubclass(cls, SymattnError)


def test_product_with_symbolic_mismatch_is_rejected_with_operands_and_shapes():
    A, X = sp.MatrixSymbol("A", d, a), sp.MatrixSymbol("X", a + 1, n)
    with pytest.raises(ShapeError, match=r"cannot form A·X\.\n  A: d × a\n  X: a \+ 1 × n\n"
                                         r"  the dimensions a and a \+ 1 are not known to be equal"):
        sa.verify(A * X, A * X)


def test_attention_names_the_inner_dimensions():
    with pytest.raises(ShapeError, match=r"attention\(Q, K, V\): cannot form Kᵀ·Q\.\n  Q: d_k × n\n"
                                         r"  K: d_model × m\n  the dimensions d_k and d_model"):
        sa.attention(Q, sp.MatrixSymbol("K", d_model, m), V)


def test_attention_keys_and_values_must_pair_up():
    with pytest.raises(ShapeError, match=r"K and V must hold the same number m of columns"):
        sa.attention(Q, K, sp.MatrixSymbol("V", d_v, n))


def test_row_convention_checks_rows():
    with pytest.raises(ShapeError, match=r"cannot form Q·Kᵀ"):
        sa.attention(Q.T, sp.MatrixSymbol("K", m, d_v), V.T, convention="row")


def test_sum_of_different_shapes_is_rejected():
    with pytest.raises(ShapeError, match=r"cannot add"):
        sa.verify(Q + sp.MatrixSymbol("P", d_k, m), Q)


def test_block_matrix_with_unequal_heights_is_rejected():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", n, m)
    bad = sp.BlockMatrix([[A, B]]).xreplace({B: sp.MatrixSymbol("B", n + 1, m)})
    with pytest.raises(ShapeError, match=r"blocks in block row 1 have different heights"):
        sa.check_shapes(bad)


def test_sides_of_different_shapes_are_rejected_by_verify():
    with pytest.raises(ShapeError, match=r"the two sides have different shapes"):
        sa.verify(Q, Q.T)


def test_zero_dimension():
    with pytest.raises(DimensionError, match=r"matrix Q: dimension 0 must be a positive integer"):
        sa.attention(sp.MatrixSymbol("Q", 0, n), K, V)


def test_negative_dimension_of_a_family_and_zero_heads():
    with pytest.raises(DimensionError, match=r"family W\^Q: dimension -2 must be a positive integer"):
        sa.Family("W^Q", -2, d_model)
    with pytest.raises(DimensionError, match=r"head count H: dimension 0 must be a positive integer"):
        sa.head_sum(lambda h: Q, 0)


def test_unconstrained_dimension_symbol_is_rejected():
    k = sp.Symbol("k")
    with pytest.raises(DimensionError, match=r"declare k with symattn.dims"):
        sa.softmax(sp.MatrixSymbol("X", k, n))


def test_non_matrix_arguments():
    with pytest.raises(NotAMatrixError, match=r"attention\(Q, K, V\): Q must be a matrix expression"):
        sa.attention(3, K, V)
    with pytest.raises(NotAMatrixError, match=r"softmax: X must be a matrix expression"):
        sa.softmax([1, 2, 3])
    with pytest.raises(NotAMatrixError):
        sa.verify(Q, "Q")


@pytest.mark.parametrize("axis", [2, -1, "rows", True])
def test_unknown_axis(axis):
    with pytest.raises(ConventionError, match=r"axis must be 0 .* or 1"):
        sa.softmax(sp.MatrixSymbol("X", n, n), axis=axis)


def test_unknown_convention():
    with pytest.raises(ConventionError, match=r"convention must be 'column' .* or 'row'"):
        sa.attention(Q, K, V, convention="columns")


def test_unknown_score():
    with pytest.raises(ConventionError, match=r"score must be"):
        sa.attention(Q, K, V, score="cosine")


def test_head_lists_of_different_lengths():
    Qm, Km, Vm = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    wq = [sp.MatrixSymbol(f"W^Q_{i}", d_k, d_model) for i in (1, 2)]
    wk = [sp.MatrixSymbol(f"W^K_{i}", d_k, d_model) for i in (1, 2, 3)]
    wv = [sp.MatrixSymbol(f"W^V_{i}", d_v, d_model) for i in (1, 2)]
    wo = [sp.MatrixSymbol(f"W^O_{i}", d_model, d_v) for i in (1, 2)]
    with pytest.raises(HeadError, match=r"different numbers of heads \(W\^Q: 2, W\^K: 3, W\^V: 2, W\^O: 2\)"):
        sa.multihead(Qm, Km, Vm, wq, wk, wv, wo)


def test_family_without_head_count():
    Qm = sp.MatrixSymbol("Q", d_model, n)
    W = sa.Family("W^Q", d_k, d_model)
    with pytest.raises(HeadError, match=r"give the head count H"):
        sa.multihead(Qm, Qm, Qm, W, W, W, W)


def test_score_function_shape_is_checked():
    with pytest.raises(ShapeError, match=r"the score f\(Q, K\) must be m × n"):
        sa.attention(Q, K, V, score=lambda q, k: q.T * k)


def test_power_of_a_non_square_matrix_is_rejected():
    A = sp.MatrixSymbol("A", n, m)
    bad = sp.MatPow(A, 2)
    with pytest.raises(ShapeError, match=r"A must be square"):
        sa.check_shapes(bad)


def test_verify_rejects_a_bad_at_request():
    X, Y = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("Y", n, n)
    with pytest.raises(DimensionError, match=r"verify: at n: dimension 0 must be a positive integer"):
        sa.verify(X * Y, Y * X, at=[{n: 0}], search_counterexample=False)
    with pytest.raises(sa.ClaimError, match=r"at must be a list of dicts"):
        sa.verify(X * Y, Y * X, at=5)
    with pytest.raises(sa.ClaimError, match=r"'m' is not a dimension of the claim \(its dimensions: n\)"):
        sa.verify(X * Y, Y * X, at=[{"m": 2}])
    with pytest.raises(sa.ClaimError, match=r"the key n is a Symbol with other assumptions .* pass that symbol"):
        sa.verify(X * Y, Y * X, at=[{sp.Symbol("n"): 2}])
    with pytest.raises(sa.ClaimError, match=r"missing: n$"):
        sa.verify(X * Y, Y * X, at=[{}])


def test_at_names_a_dimension_by_its_symbol_or_its_name_and_one_dict_is_one_entry():
    X, Y = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("Y", n, n)
    verdicts = [sa.verify(X * Y, Y * X, at=at, budget=5) for at in ([{n: 2}], {n: 2}, [{"n": 2}], {"n": 2})]
    assert [(v.status, v.counterexample.dims) for v in verdicts] == [("refuted", {"n": 2})] * 4
    with pytest.raises(sa.ClaimError, match=r"budget must be a positive number"):
        sa.verify(X, X, budget="a")


def test_verify_rejects_floats_and_name_clashes():
    X = sp.MatrixSymbol("X", n, n)
    with pytest.raises(sa.ClaimError, match=r"floating-point number 0.33"):
        sa.verify(0.3333333333333333 * X, X / 3)
    W = sa.Family("W", d, d)
    with pytest.raises(sa.ClaimError, match=r"two different objects are both named W_1"):
        sa.verify(sp.MatrixSymbol("W_1", d, d), W[1])


def test_a_mask_outside_a_softmax_argument_is_rejected():
    X = sp.MatrixSymbol("X", n, n)
    M = sa.CausalMask(n)
    with pytest.raises(ShapeError, match=r"the mask CausalMask\(n, n\) holds -oo entries"):
        sa.verify(sp.HadamardProduct(M, sp.ZeroMatrix(n, n)), sp.ZeroMatrix(n, n))
    with pytest.raises(ShapeError, match=r"may only be added to the scores inside a Softmax"):
        sa.verify(sa.softmax(X - M), sa.softmax(X))
    assert sa.verify(sa.softmax((X + M) / 2), sa.softmax(X / 2 + M / 2)).status == "proved"


# --- inputs that were accepted and should not be ----------------------------------


@pytest.mark.parametrize("names, message", [
    ("-n", "a sign is not part of a name"),
    ("+n", "a sign is not part of a name"),
    ("1n", "a name starts with a letter"),
    ("x+y", "does not read expressions"),
    ("x + y", "does not read expressions"),
    ("(a b)", "does not read expressions"),
    ("x:3", "ranges such as x:3 are not read"),
    ("d^k", "is not a dimension's name"),
    ("n n", "'n' given twice"),
    ("n, m, n", "'n' given twice"),
])
def test_dims_refuses_a_word_that_is_not_one_new_name(names, message):
    with pytest.raises(DimensionError, match=re.escape(message)):
        sa.dims(names)


def test_dims_makes_one_positive_integer_symbol_per_name_and_prints_it_as_written():
    written = ["n", "d_k", "d_model", "n2", "n'", "θ", "N_kv"]
    made = sa.dims(" ".join(written))
    assert [str(s) for s in made] == written
    assert all(s.is_integer and s.is_positive for s in made)
    assert sa.dims("n, m") == sa.dims("n m") and str(sa.dims("p")) == "p"


@pytest.mark.parametrize("t", [1.5, sp.Rational(3, 2), sp.Float(2.0), sp.Symbol("x", integer=False), "t", True])
def test_rope_refuses_a_position_that_is_not_an_integer(t):
    with pytest.raises(sa.ClaimError, match="rope: the position t = "):
        sa.rope(t, sa.dims("p"))


@pytest.mark.parametrize("t", [0, 3, -2, sp.Symbol("a", integer=True), sp.Symbol("a", integer=True) - 1])
def test_rope_takes_an_integer_position(t):
    assert sa.rope(t, sa.dims("p")).shape == (2 * sa.dims("p"), 2 * sa.dims("p"))


@pytest.mark.parametrize("rows, shown", [("-3", "-3"), ("0", "0"), ("2 - 2", "2 - 2 = 0"),
                                         ("2 (1 - 2)", "2 (1 - 2) = -2")])
def test_a_declared_constant_dimension_that_is_not_positive_is_a_derivation_error(rows, shown):
    """It raised SymPy's raw ValueError (a traceback from symattn check) for a negative number."""
    from symattn.derivation import check_statements, parse_notation
    from symattn.errors import DerivationError

    with pytest.raises(DerivationError, match=re.escape(f"the dimension {shown} is not positive")):
        sa.Derivation().declare("Q", rows, "n")
    with pytest.raises(DerivationError, match=re.escape(f"line 1, column 4: the dimension {shown} is not positive")):
        check_statements(parse_notation(f"Q: {rows} x n\nQ = Q\n"))
