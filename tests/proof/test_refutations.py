"""False statements are refuted with certified counterexamples, re-checked here by hand."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import exact_scalar_pairs

import symattn as sa

n, m, d_k, d_v, d_model = sa.dims("n m d_k d_v d_model")


def exact(a):
    return sp.Matrix(np.asarray(a).tolist())


def softmax_cols(S):
    E = S.applyfunc(sp.exp)
    return sp.Matrix(S.rows, S.cols, lambda i, j: E[i, j] / sum(E[:, j]))


def assert_certified_difference(v, lhs_exact, rhs_exact):
    """The counterexample's entry differs in an independent exact recomputation."""
    assert v.status == "refuted" and not v.general
    cex = v.counterexample
    i, j = cex.entry
    d = lhs_exact[i, j] - rhs_exact[i, j]
    assert abs(sp.N(d, 50)) > sp.Float("1e-30"), "the recomputed entries agree"
    assert abs(sp.N(d - cex.difference, 50)) < sp.Float("1e-40"), "engine and hand computation disagree"
    assert cex.certificate
    np.testing.assert_allclose(np.asarray(cex.lhs, float), np.asarray(lhs_exact.evalf(), float), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cex.rhs, float), np.asarray(rhs_exact.evalf(), float), rtol=1e-12)


def test_refutation_certifies_softmax_transpose_mistake():
    X = sp.MatrixSymbol("X", m, n)
    v = sa.verify(sa.softmax(X).T, sa.softmax(X.T))  # same axis on both sides: wrong
    Xv = exact(v.counterexample.values["X"])
    assert_certified_difference(v, softmax_cols(Xv).T, softmax_cols(Xv.T))


def test_refutation_certifies_transpose_of_product_mistake():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    v = sa.verify((A * B).T, A.T * B.T)
    Av, Bv = (exact(v.counterexample.values[k]) for k in "AB")
    assert_certified_difference(v, (Av * Bv).T, Av.T * Bv.T)
    assert v.counterexample.certificate.startswith("exact rational")


def test_refutation_certifies_two_heads_are_not_one_attention_with_concatenated_weights():
    Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    W = {w: [sp.MatrixSymbol(f"W^{w}_{i}", d_v if w == "V" else d_k, d_model) for i in (1, 2)] for w in "QKV"}
    W_O = [sp.MatrixSymbol(f"W^O_{i}", d_model, d_v) for i in (1, 2)]
    two_heads = sa.multihead(Q, K, V, W["Q"], W["K"], W["V"], W_O)
    stacked = {w: sp.BlockMatrix([[W[w][0]], [W[w][1]]]) for w in "QKV"}
    one = sp.BlockMatrix([W_O]) * sa.attention(stacked["Q"] * Q, stacked["K"] * K, stacked["V"] * V)
    v = sa.verify(two_heads, one)
    cex = v.counterexample
    val = {k: exact(a) for k, a in cex.values.items()}
    dk = cex.dims["d_k"]

    def att(q, k, vv, scale):
        return vv * softmax_cols(k.T * q / sp.sqrt(scale))

    lhs = sum((val[f"W^O_{i}"] * att(val[f"W^Q_{i}"] * val["Q"], val[f"W^K_{i}"] * val["K"],
                                     val[f"W^V_{i}"] * val["V"], dk) for i in (1, 2)), sp.zeros(*cex.lhs.shape))
    st = {w: val[f"W^{w}_1"].col_join(val[f"W^{w}_2"]) for w in "QKV"}
    rhs = val["W^O_1"].row_join(val["W^O_2"]) * att(st["Q"] * val["Q"], st["K"] * val["K"], st["V"] * val["V"],
                                                    2 * dk)
    assert_certified_difference(v, lhs, rhs)


def test_dropping_the_scale_is_refuted_never_proved_general():
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    v = sa.verify(sa.attention(Q, K, V), sa.attention(Q, K, V, score="dot"))
    assert v.status == "refuted" and not v.general
    assert v.counterexample.dims["d_k"] != 1  # at d_k = 1 the two agree
    val = {k: exact(a) for k, a in v.counterexample.values.items()}
    dk = v.counterexample.dims["d_k"]
    lhs = val["V"] * softmax_cols(val["K"].T * val["Q"] / sp.sqrt(dk))
    rhs = val["V"] * softmax_cols(val["K"].T * val["Q"])
    assert_certified_difference(v, lhs, rhs)


def test_dropping_the_scale_is_proved_when_d_k_is_one():
    Q, K, V = sp.MatrixSymbol("Q", 1, n), sp.MatrixSymbol("K", 1, m), sp.MatrixSymbol("V", d_v, m)
    v = sa.verify(sa.attention(Q, K, V), sa.attention(Q, K, V, score="dot"))
    assert v.status == "proved"


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_on_the_other_axis_is_refuted(axis):
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(sa.softmax(X, axis), sa.softmax(X, 1 - axis))
    Xv = exact(v.counterexample.values["X"])
    by_axis = {0: softmax_cols(Xv), 1: softmax_cols(Xv.T).T}
    assert_certified_difference(v, by_axis[axis], by_axis[1 - axis])


# A refutation never trusts a float: small exact differences, explicit matrices, generic RoPE
# frequencies, score functions that are not bilinear, and claims at fixed sizes.


def assert_refuted_with_exact_difference(v):
    """The verdict is a refutation whose certified entry is recomputed exactly from the exact sides."""
    assert v.status == "refuted", v.explain()
    cex = v.counterexample
    i, j = cex.entry
    d = sp.nsimplify(cex.lhs_exact[i, j] - cex.rhs_exact[i, j])
    assert sp.simplify(d - cex.difference) == 0
    assert abs(sp.N(d, 60)) > 0
    assert cex.certificate
    return cex


@pytest.mark.parametrize("power", [15, 20])
def test_claim_off_by_a_tiny_multiple_of_the_identity_is_refuted(power):
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(X + sp.Rational(1, 10**power) * sp.Identity(n), X)
    cex = assert_refuted_with_exact_difference(v)
    assert cex.difference == sp.Rational(1, 10**power)


def test_coefficient_written_as_a_decimal_third_is_refuted():
    X = sp.MatrixSymbol("X", n, m)
    third = sp.Rational(int("3" * 20), 10**20)  # 0.333...3, equal to 1/3 in float64
    assert float(third) == 1 / 3
    v = sa.verify(third * X, X / 3)
    cex = assert_refuted_with_exact_difference(v)
    Xv = exact(cex.values["X"])
    i, j = cex.entry
    assert cex.difference == (third - sp.Rational(1, 3)) * Xv[i, j]


def test_explicit_matrices_of_matrix_elements_are_evaluated_and_refuted():
    X, Y = sp.MatrixSymbol("X", 2, 2), sp.MatrixSymbol("Y", 2, 2)
    v = sa.verify((X * Y).as_explicit(), (Y * X).as_explicit())
    cex = assert_refuted_with_exact_difference(v)
    Xv, Yv = exact(cex.values["X"]), exact(cex.values["Y"])
    i, j = cex.entry
    assert cex.difference == (Xv * Yv - Yv * Xv)[i, j]


def test_explicit_matrix_of_expressions_of_matrix_elements_is_refuted():
    X = sp.MatrixSymbol("X", 2, 2)
    squared = sp.ImmutableMatrix(2, 2, lambda i, j: X[i, j] ** 2 if (i, j) == (0, 0) else X[i, j])
    v = sa.verify(squared, X)
    cex = assert_refuted_with_exact_difference(v)
    x = exact(cex.values["X"])[0, 0]
    assert cex.entry == (0, 0) and cex.difference == x**2 - x


def test_explicit_matrix_with_symbolic_entries_agrees_exactly_when_true():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import search

    X = sp.MatrixSymbol("X", 2, 3)
    cex, trace, agreed = search(sp.Matrix(X.as_explicit()).T, X.T, Budget(10.0))
    assert cex is None and agreed > 0, trace


def test_rope_with_generic_frequencies_is_refuted():
    p = sa.dims("p")
    a, b = sp.symbols("a b", integer=True)
    theta = sp.Function("theta")
    v = sa.verify(sa.rope(a, p, theta) * sa.rope(b, p, theta), sa.rope(a - b, p, theta))
    cex = assert_refuted_with_exact_difference(v)
    assert "theta" in cex.functions and "theta(" in cex.functions["theta"]


def test_rope_with_generic_frequencies_composes_exactly():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import search

    p = sa.dims("p")
    a, b = sp.symbols("a b", integer=True)
    theta = sp.Function("theta")
    cex, trace, agreed = search(sa.rope(a, p, theta) * sa.rope(b, p, theta), sa.rope(a + b, p, theta),
                                Budget(20.0))
    assert cex is None and agreed > 0, trace


def test_claim_true_only_for_bilinear_scores_is_refuted():
    Q, K1, K2 = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K_1", d_k, m), sp.MatrixSymbol("K_2", d_k, m)
    f = sa.ScoreFunction("f")
    v = sa.verify(f(Q, K1 + K2), f(Q, K1) + f(Q, K2))  # additivity holds for Kᵀ M Q only
    cex = assert_refuted_with_exact_difference(v)
    assert not cex.functions["f"].startswith("f(Q, K) := Kᵀ·M·Q with")  # not the bilinear instance
    assert cex.functions["f"].startswith("f(Q, K) :=")


def test_each_score_instance_is_named_in_the_counterexample():
    from symattn.proof.samples import score_instance

    Q = sp.ImmutableMatrix([[1, 2], [0, -1]])
    K = sp.ImmutableMatrix([[2, 1, 0], [1, -1, 1]])
    kinds = set()
    for kind in range(4):
        f_float, f_exact, text = score_instance(kind, "f", 7)
        exact_value = f_exact(Q, K)
        assert exact_value.shape == (3, 2)
        np.testing.assert_allclose(f_float(np.array(Q.tolist(), float), np.array(K.tolist(), float)),
                                   np.array(exact_value.evalf(), float), rtol=1e-12)
        kinds.add(text().split(" with ")[0])
    assert len(kinds) == 4  # four different instances, each described


def test_concrete_size_claim_is_searched_hard_enough():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    x, y = sp.MatrixSymbol("x", 2, 1), sp.MatrixSymbol("y", 2, 1)
    v = sa.verify((A * x).T * (B * y), x.T * A * B * y)
    cex = assert_refuted_with_exact_difference(v)
    val = {k: exact(a) for k, a in cex.values.items()}
    assert cex.difference == ((val["A"] * val["x"]).T * val["B"] * val["y"] - val["x"].T * val["A"] * val["B"]
                              * val["y"])[0, 0]


def test_concrete_size_claim_gets_many_samples_with_non_integer_inputs():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import search

    A = sp.MatrixSymbol("A", 2, 2)
    cex, trace, agreed = search((A * A).T, A.T * A.T, Budget(20.0))
    assert cex is None and agreed >= 12, (agreed, trace)
    assert any("rational" in line for line in trace), trace


def test_float_agreement_is_never_reported_as_exact_agreement():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import search

    X = sp.MatrixSymbol("X", n, n)
    tiny = X + sp.Rational(1, 10**30) * sp.OneMatrix(n, n)  # equal to X in float64 for every integer X
    cex, trace, agreed = search(tiny, X, Budget(20.0))
    assert cex is not None and agreed == 0
    assert cex.certificate.startswith("exact rational")


def test_a_difference_too_small_to_certify_leaves_the_sample_undecided_never_agreeing():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import MIN_SAMPLES, search

    X = sp.MatrixSymbol("X", 1, 1)
    almost = sp.ImmutableMatrix([[sp.exp(sp.Rational(1, 10**300)) * X[0, 0]]])  # (1 + 1e-300) x: 1.0 x in floats
    cex, trace, agreed = search(almost, X, Budget(20.0))
    assert cex is None  # 600 bits do not separate 1e-300 from 0: no refutation without a certificate
    assert 0 < agreed < MIN_SAMPLES  # only the samples with x = 0 are equal exactly
    assert any("undecided" in line for line in trace), trace
    v = sa.verify(almost, X)
    assert v.status == "unknown" and v.counterexample is None


def test_exact_evaluation_reads_a_float_coefficient_as_the_binary_rational_it_is():
    from symattn.proof.evaluate import evaluate

    X = sp.MatrixSymbol("X", 1, 1)
    value = evaluate(sp.MatMul(sp.Float(0.1), X), {"X": np.array([[1]])}, "exact")[0, 0]
    assert value.is_Rational and value == sp.Rational(3602879701896397, 36028797018963968)  # binary64's 0.1
    assert value != sp.Rational(1, 10)


def test_zero_is_shown_only_by_exact_cancellation():
    from symattn.proof.certify import proves_zero

    a, b = sp.Rational(5, 6), sp.Rational(1, 3)
    assert proves_zero(sp.cos(a) * sp.cos(b) - sp.sin(a) * sp.sin(b) - sp.cos(a + b))
    assert proves_zero(sp.exp(sp.Rational(1, 2)) ** 2 - sp.E)
    assert proves_zero(sp.exp(1) / (sp.exp(1) + sp.exp(2)) - 1 / (1 + sp.E))
    assert not proves_zero(sp.exp(sp.Rational(1, 10**20)) - 1)  # 1e-20 away from 0
    assert not proves_zero(sp.Float(1e-30))
    assert not proves_zero(sp.exp(sp.Rational(1, 3)) - sp.exp(sp.Rational(1, 2)) ** sp.Rational(2, 3) + 1)


def test_explicit_softmax_with_sums_over_a_bound_index_is_evaluated():
    X = sp.MatrixSymbol("X", 2, 2)
    v = sa.verify(sa.softmax(X).T.as_explicit(), sa.softmax(X.T).as_explicit())  # same axis: wrong
    Xv = exact(v.counterexample.values["X"])
    assert_certified_difference(v, softmax_cols(Xv).T, softmax_cols(Xv.T))
    off = sa.verify(sa.softmax(X).as_explicit(), sa.softmax(X).as_explicit() + sp.Rational(1, 10**15) * sp.ones(2, 2))
    assert off.status == "refuted" and off.counterexample.difference == -sp.Rational(1, 10**15)


def test_a_real_scalar_takes_non_integer_values_and_a_positive_theta_stays_positive():
    c = sp.Symbol("c", real=True)
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(sp.cos(sp.pi * c) ** 2 * X, X)  # true at every integer c, false at c = 1/2
    cex = assert_refuted_with_exact_difference(v)
    assert not sp.sympify(cex.values["c"].item()).is_integer

    from symattn.proof.samples import function_instance

    theta, free = sp.Function("theta", positive=True), sp.Function("theta")
    rng = np.random.default_rng(0)
    for _ in range(20):
        lam, text = function_instance(theta, 1, rng)
        assert all(lam(k).is_positive for k in range(-5, 6)), text
    assert any(function_instance(free, 1, rng)[0](k).is_negative for _ in range(20) for k in range(-5, 6))


def test_sides_that_overflow_in_floats_are_compared_exactly():
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(sa.Exp(8000 * X), sa.Exp(8000 * X.T))  # exp(8000 x) overflows float64 for x >= 1
    cex = assert_refuted_with_exact_difference(v)
    Xv = exact(cex.values["X"])
    i, j = cex.entry
    assert cex.difference == sp.exp(8000 * Xv[i, j]) - sp.exp(8000 * Xv[j, i])


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(pair=exact_scalar_pairs(), tiny=st.sampled_from([0, sp.Rational(1, 10**15), sp.Rational(-1, 10**40)]))
def test_exact_decisions_agree_with_high_precision_values(pair, tiny):
    """A value shown 0 is 0, a certified value is nonzero, and e - e' (exactly 0) is never certified."""
    from symattn.proof.certify import certify_nonzero, proves_zero

    e, e2 = pair
    zero, shifted = e - e2, e - e2 + tiny
    assert certify_nonzero(zero) is None
    assert proves_zero(zero)
    assert abs(sp.N(zero, 80)) < sp.Float("1e-70")
    assert proves_zero(shifted) is (tiny == 0)
    if tiny != 0:
        assert certify_nonzero(shifted) is not None
    for value in (e, e2 + 1):
        if proves_zero(value):
            assert abs(sp.N(value, 80)) < sp.Float("1e-70")
        if certify_nonzero(value) is not None:
            assert abs(sp.N(value, 80)) > sp.Float("1e-70")


def test_a_symmetric_input_is_drawn_symmetric_and_shown_as_evaluated():
    from symattn.proof.budget import Budget
    from symattn.proof.refute import search

    S, A = sa.Symmetric("S", n), sp.MatrixSymbol("A", n, n)
    cex, trace, agreed = search(sa.Exp(S).T, sa.Exp(S), Budget(10.0))  # true for every symmetric S
    assert cex is None and agreed > 0, trace
    v = sa.verify(S * A, A * S)
    cex = assert_refuted_with_exact_difference(v)
    Sv, Av = exact(cex.values["S"]), exact(cex.values["A"])
    assert Sv == Sv.T  # the value shown is the value evaluated
    i, j = cex.entry
    assert cex.difference == (Sv * Av - Av * Sv)[i, j]
