"""The gallery of mistakes: every item is refuted, never proved, and its counterexample is
re-checked here exactly, from the integer inputs, with formulas written independently of the
proof engine (explicit SymPy matrices and a softmax written out below)."""

import mpmath
import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.proof.certify import certify_nonzero
from symattn.theorems import load_library, prove

GALLERY = [
    "mistake_softmax_wrong_axis",
    "mistake_softmax_transpose_same_axis",
    "mistake_transpose_keeps_order",
    "mistake_forgetting_the_scale",
    "mistake_multihead_as_one_attention",
    "mistake_value_permuted_without_key",
    "mistake_mean_pooling_for_any_query",
    "mistake_transformerlens_ov_without_transpose",
    "mistake_qk_circuit_untransposed_in_column_scores",
    "mistake_layers_composed_in_reading_order",
]


def columns(M):
    """Softmax of every column of an explicit matrix, exactly."""
    E = M.applyfunc(sp.exp)
    return sp.Matrix(E.rows, E.cols, lambda i, j: E[i, j] / sum(E[k, j] for k in range(E.rows)))


def rows(M):
    return columns(M.T).T


def mat(values, name):
    a = np.asarray(values[name])
    assert np.issubdtype(a.dtype, np.integer), f"{name} is not an integer input"
    return sp.Matrix(a.tolist())


def both_sides(name, x, dims):
    """(lhs, rhs) of each mistaken claim, recomputed from the inputs x (name -> sympy Matrix)."""
    if name == "mistake_softmax_wrong_axis":
        S = x["Q"] * x["K"].T / sp.sqrt(dims["d_k"])
        return rows(S) * x["V"], columns(S) * x["V"]
    if name == "mistake_softmax_transpose_same_axis":
        return columns(x["X"]).T, columns(x["X"].T)
    if name == "mistake_transpose_keeps_order":
        return (x["A"] * x["B"]).T, x["A"].T * x["B"].T
    if name == "mistake_forgetting_the_scale":
        S = x["K"].T * x["Q"]
        return x["V"] * columns(S), x["V"] * columns(S / sp.sqrt(dims["d_k"]))
    if name == "mistake_multihead_as_one_attention":
        Q, K, V = x["Q"], x["K"], x["V"]
        heads = sp.zeros(dims["d_model"], Q.cols)
        for h in (1, 2):
            q, k, v = x[f"W^Q_{h}"] * Q, x[f"W^K_{h}"] * K, x[f"W^V_{h}"] * V
            heads += x[f"W^O_{h}"] * v * columns(k.T * q / sp.sqrt(dims["d_k"]))
        WQ, WK, WV = (x[f"W^{c}_1"].col_join(x[f"W^{c}_2"]) for c in "QKV")
        WO = x["W^O_1"].row_join(x["W^O_2"])
        one = WO * (WV * V) * columns((WK * K).T * (WQ * Q) / sp.sqrt(2 * dims["d_k"]))
        return heads, one
    if name == "mistake_value_permuted_without_key":
        P = sp.Matrix([[0, 1], [1, 0]])
        A = columns(x["K"].T * x["Q"] / sp.sqrt(dims["d_k"]))
        return x["V"] * P * A, x["V"] * A
    if name == "mistake_mean_pooling_for_any_query":
        K, V = x["W^K"] * x["X"], x["W^V"] * x["X"]
        N = x["X"].cols
        return V * columns(K.T * x["q"] / sp.sqrt(dims["d_k"])), V * sp.ones(N, 1) / N
    if name == "mistake_transformerlens_ov_without_transpose":
        X = x["X"]
        A = columns((x["W^K"] * X).T * (x["W^Q"] * X) / sp.sqrt(dims["d_k"]))
        return x["W^O"] * x["W^V"] * X * A, (x["W^V"].T * x["W^O"].T) * X * A
    if name == "mistake_qk_circuit_untransposed_in_column_scores":
        X, WQ, WK = x["X"], x["W^Q"], x["W^K"]
        return (WK * X).T * (WQ * X), X.T * (WQ.T * WK) * X
    if name == "mistake_layers_composed_in_reading_order":  # refuted at L = 2: W_1 W_2 against W_2 W_1
        return x["W_1"] * x["W_2"], x["W_2"] * x["W_1"]
    raise AssertionError(f"no independent recomputation for {name}")


@pytest.fixture(scope="module")
def results():
    lib = load_library()
    return {name: prove(lib[name]) for name in GALLERY}


def test_every_gallery_item_is_registered_refuted_with_an_explanation():
    lib = load_library()
    for name in GALLERY:
        th = lib[name]
        assert th.expect == "refuted" and th.explanation.endswith("."), name


@pytest.mark.parametrize("name", GALLERY)
def test_counterexample_is_rechecked_exactly(results, name):
    r = results[name]
    assert r.status == "refuted" and r.ok and not r.general, r.as_dict()
    assert all(v.status != "proved" for v in r.verdicts)
    cex = next(v for v in r.verdicts if v.status == "refuted").counterexample
    x = {nm: mat(cex.values, nm) for nm in cex.values}
    lhs, rhs = both_sides(name, x, cex.dims)
    assert lhs.shape == rhs.shape == tuple(np.shape(cex.lhs))
    i, j = cex.entry
    diff = lhs[i, j] - rhs[i, j]
    # nonzero exactly: an interval certificate for the independently recomputed value ...
    assert certify_nonzero(diff) is not None
    # ... which agrees with the engine's difference to 40 digits and is far from zero
    with mpmath.workdps(50):
        ours, theirs = sp.N(diff, 50), sp.N(cex.difference, 50)
        assert abs(ours) > sp.Float("1e-6")
        assert abs(ours - theirs) < sp.Float("1e-40")
    np.testing.assert_allclose(np.array(lhs.evalf(), dtype=float), cex.lhs, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(np.array(rhs.evalf(), dtype=float), cex.rhs, rtol=1e-9, atol=1e-9)


def test_forgetting_the_scale_is_true_only_at_d_k_1():
    n, m, d_k, d_v = sa.dims("n m d_k d_v")
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    lhs, rhs = sa.attention(Q, K, V, score="dot"), sa.attention(Q, K, V)
    # asking for exact instances at d_k = 1 does not turn the general claim into a proof
    v = sa.verify(lhs, rhs, at=[{d_k: 1, n: 2, m: 2, d_v: 1}], budget=10)
    assert v.status == "refuted" and v.counterexample.dims["d_k"] > 1
    # the special case d_k = 1 itself is an identity
    assert sa.verify(lhs.subs(d_k, 1), rhs.subs(d_k, 1)).status == "proved"


def test_gallery_output_shows_inputs_both_sides_and_the_certificate(capsys):
    from symattn.cli import main

    assert main(["prove", "--gallery", "mistake_transpose_keeps_order"]) == 0
    out = capsys.readouterr().out
    for piece in ("why it is wrong: The transpose of a product reverses the order",
                  "counterexample at n = 2", "A = [[", "B = [[", "lhs = [[", "rhs = [[",
                  "differs", "certificate: exact rational value"):
        assert piece in out, piece
