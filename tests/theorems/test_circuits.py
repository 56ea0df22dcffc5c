"""Theorem 9, the circuits decomposition: the proof verdicts and an independent NumPy check."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symattn as sa
from symattn.theorems import load_library, prove


@pytest.fixture(scope="module")
def library():
    return load_library()


@pytest.mark.parametrize("name", ["circuits_decomposition", "circuits_decomposition_row"])
def test_circuits_theorems_are_proved_for_all_dimensions_and_heads(library, name):
    r = prove(library[name])
    assert r.status == "proved" and r.general, r.as_dict()
    assert "every H >= 1" in r.scope


def test_untransposed_qk_circuit_in_column_scores_is_refuted():
    # scores are Xᵀ W_QKᵀ X in the column convention; Xᵀ W_QK X is a different matrix
    from symattn.proofs.circuits import circuit, head_contribution

    d_model, d_k, d_v, n = sa.dims("d_model d_k d_v n")
    X = sp.MatrixSymbol("X", d_model, n)
    WQ, WK = sp.MatrixSymbol("W^Q", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model)
    WV, WO = sp.MatrixSymbol("W^V", d_v, d_model), sp.MatrixSymbol("W^O", d_model, d_v)
    wrong = circuit(WO * WV, (WQ.T * WK).T, X, d_k)
    v = sa.verify(head_contribution(X, WQ, WK, WV, WO), wrong, budget=10)
    assert v.status == "refuted"


# ---- independent NumPy computation -------------------------------------------------------

def softmax(S, axis):
    e = np.exp(S - S.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def T(a):
    return np.swapaxes(a, -1, -2)


shapes = st.fixed_dictionaries({
    "batch": st.lists(st.integers(1, 3), max_size=2).map(tuple),
    "n": st.integers(1, 5), "d_model": st.integers(1, 5), "d_k": st.integers(1, 4),
    "d_v": st.integers(1, 4), "H": st.integers(1, 3), "seed": st.integers(0, 2**32 - 1),
})


def draw(s):
    rng = np.random.default_rng(s["seed"])
    X = rng.normal(size=s["batch"] + (s["d_model"], s["n"]))
    W = [dict(Q=rng.normal(size=(s["d_k"], s["d_model"])), K=rng.normal(size=(s["d_k"], s["d_model"])),
              V=rng.normal(size=(s["d_v"], s["d_model"])), O=rng.normal(size=(s["d_model"], s["d_v"])))
         for _ in range(s["H"])]
    return rng, X, W


def multihead_column(X, W, d_k):
    """Σ_h W_h^O (W_h^V X) softmax_columns((W_h^K X)ᵀ (W_h^Q X) / sqrt(d_k)), batched over X."""
    out = 0
    for w in W:
        q, k, v = w["Q"] @ X, w["K"] @ X, w["V"] @ X
        out = out + w["O"] @ v @ softmax(T(k) @ q / np.sqrt(d_k), axis=-2)
    return out


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_multihead_equals_sum_of_ov_qk_circuits_numerically(s):
    _, X, W = draw(s)
    circuits = 0
    for w in W:
        W_OV, W_QK = w["O"] @ w["V"], w["Q"].T @ w["K"]
        circuits = circuits + W_OV @ X @ softmax(T(X) @ W_QK.T @ X / np.sqrt(s["d_k"]), axis=-2)
    np.testing.assert_allclose(multihead_column(X, W, s["d_k"]), circuits, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_head_depends_on_weights_only_through_w_ov_and_w_qk(s):
    rng, X, W = draw(s)
    M = rng.normal(size=(s["d_v"], s["d_v"])) + 3 * np.eye(s["d_v"])
    N = rng.normal(size=(s["d_k"], s["d_k"])) + 3 * np.eye(s["d_k"])
    moved = [dict(Q=N @ w["Q"], K=np.linalg.inv(N).T @ w["K"], V=np.linalg.solve(M, w["V"]), O=w["O"] @ M)
             for w in W]
    np.testing.assert_allclose(multihead_column(X, moved, s["d_k"]), multihead_column(X, W, s["d_k"]),
                               rtol=1e-7, atol=1e-7)


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_row_twin_uses_w_v_w_o_and_w_q_w_k_transposed(s):
    _, X, W = draw(s)
    Xr = T(X)  # tokens are rows
    rows, twin = 0, 0
    for w in W:
        RQ, RK, RV, RO = w["Q"].T, w["K"].T, w["V"].T, w["O"].T  # row weights = column weightsᵀ
        A = softmax((Xr @ RQ) @ T(Xr @ RK) / np.sqrt(s["d_k"]), axis=-1)
        rows = rows + A @ (Xr @ RV) @ RO
        W_QK_row, W_OV_row = RQ @ RK.T, RV @ RO
        np.testing.assert_allclose(W_QK_row, w["Q"].T @ w["K"], atol=1e-12)      # W_QK^row = W_QK
        np.testing.assert_allclose(W_OV_row, (w["O"] @ w["V"]).T, atol=1e-12)    # W_OV^row = W_OVᵀ
        twin = twin + softmax(Xr @ W_QK_row @ T(Xr) / np.sqrt(s["d_k"]), axis=-1) @ Xr @ W_OV_row
    np.testing.assert_allclose(rows, twin, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rows, T(multihead_column(X, W, s["d_k"])), rtol=1e-9, atol=1e-9)
