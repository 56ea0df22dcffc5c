"""False statements are refuted with certified counterexamples, re-checked here by hand."""

import numpy as np
import pytest
import sympy as sp

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
