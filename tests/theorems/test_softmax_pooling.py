"""Seed 002, softmax laws, mean and attention pooling, query and multi-head pooling."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from seed002_helpers import at, batch, np_softmax, result, rng_arrays, seeds, small

import symattn as sa
from symattn.errors import ShapeError

FAST = settings(deadline=None, max_examples=15)


def test_softmax_laws_and_pooling_theorems_are_proved_generally():
    for name in ("softmax_columns_sum_to_one", "softmax_shift_invariance",
                 "mean_pool_is_constant_score_attention_pool", "query_pool_is_cross_attention_with_one_query",
                 "multihead_pool_is_concat_of_head_pools"):
        r = result(name)
        assert r.status == "proved" and r.general, (name, [v.explain() for v in r.verdicts])


@FAST
@given(m=small, n=small, b=batch, seed=seeds)
def test_softmax_columns_sum_to_one_batched(m, n, b, seed):
    M, N = sa.dims("m n")
    X = sp.MatrixSymbol("X", M, N)
    env = rng_arrays(seed, {"X": (m, n)}, (b,))
    got = at(sa.softmax(X, 0), {M: m, N: n}, env)
    want = np.exp(env["X"]) / np.exp(env["X"]).sum(axis=-2, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got.sum(axis=-2), np.ones((b, n)), rtol=1e-12)
    np.testing.assert_allclose(at(sa.softmax(X, 1), {M: m, N: n}, env).sum(axis=-1), np.ones((b, m)))


@FAST
@given(m=small, n=small, d=small, b=batch, seed=seeds)
def test_shift_invariance_numerically(m, n, d, b, seed):
    M, N, D = sa.dims("m n d")
    shapes = {"X": (m, n), "c": (1, n), "Q": (d, n), "K": (d, m), "V": (d, m), "ck": (d, 1)}
    env = rng_arrays(seed, shapes, (b,))
    X, c = sp.MatrixSymbol("X", M, N), sp.MatrixSymbol("c", 1, N)
    lhs = at(sa.softmax(X + sp.OneMatrix(M, 1) * c), {M: m, N: n}, env)
    np.testing.assert_allclose(lhs, np_softmax(env["X"] + env["c"], axis=-2), rtol=1e-10)
    np.testing.assert_allclose(lhs, np_softmax(env["X"], axis=-2), rtol=1e-10)
    Q, K, V = env["Q"], env["K"], env["V"]
    shifted = K + env["ck"]  # the same vector added to every key (column)
    w1 = np_softmax(np.swapaxes(shifted, -1, -2) @ Q / np.sqrt(d), axis=-2)
    w0 = np_softmax(np.swapaxes(K, -1, -2) @ Q / np.sqrt(d), axis=-2)
    np.testing.assert_allclose(w1, w0, rtol=1e-10, atol=1e-12)
    Qs, Ks, Vs, cs = (sp.MatrixSymbol(s, D, c_) for s, c_ in (("Q", N), ("K", M), ("V", M), ("ck", 1)))
    got = at(sa.attention(Qs, Ks + cs * sp.OneMatrix(1, M), Vs), {M: m, N: n, D: d}, env)
    np.testing.assert_allclose(got, V @ w0, rtol=1e-10, atol=1e-12)


@FAST
@given(d=small, n=small, b=batch, a=st.floats(-5, 5), seed=seeds)
def test_constant_score_attention_pool_is_mean_pool(d, n, b, a, seed):
    D, N = sa.dims("d N")
    X = sp.MatrixSymbol("X", D, N)
    env = rng_arrays(seed, {"X": (d, n)}, (b,))
    sym_a = sp.Symbol("a", real=True)
    pool = sa.attention_pool(X, sym_a * sp.OneMatrix(N, 1)).subs(sym_a, a)
    got = at(pool, {D: d, N: n}, env)
    np.testing.assert_allclose(got, env["X"].mean(axis=-1, keepdims=True), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(at(sa.mean_pool(X), {D: d, N: n}, env), got, rtol=1e-10, atol=1e-12)
    row = at(sa.mean_pool(X.T, "row"), {D: d, N: n}, env)
    np.testing.assert_allclose(row, np.swapaxes(got, -1, -2), rtol=1e-10, atol=1e-12)


def _np_query_pool(X, q, Wp, Wk, Wv):
    """Column convention: z = V softmax(Kᵀ Q / sqrt(d_k)), Q = W_p q, K = W_K X, V = W_V X."""
    Q, K, V = Wp @ q, Wk @ X, Wv @ X
    return V @ np_softmax(np.swapaxes(K, -1, -2) @ Q / np.sqrt(Q.shape[-2]), axis=-2)


@FAST
@given(dm=small, n=small, dk=small, dv=small, b=batch, seed=seeds)
def test_query_pool_equals_cross_attention_with_one_query(dm, n, dk, dv, b, seed):
    from symattn.proofs._seed002 import W_K, W_V, N, W_p, X, d_k, d_model, d_v, q_pool
    dims = {d_model: dm, N: n, d_k: dk, d_v: dv}
    env = rng_arrays(seed, {"X": (dm, n), "q_pool": (dm, 1), "W_p": (dk, dm), "W^K": (dk, dm),
                            "W^V": (dv, dm)}, (b,))
    want = _np_query_pool(env["X"], env["q_pool"], env["W_p"], env["W^K"], env["W^V"])
    pool = at(sa.query_attention_pool(X, q_pool, W_p, W_K, W_V), dims, env)
    cross = at(sa.cross_attention(q_pool, X, W_p, W_K, W_V), dims, env)
    np.testing.assert_allclose(pool, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cross, want, rtol=1e-10, atol=1e-12)
    row = at(sa.query_attention_pool(X.T, q_pool.T, W_p.T, W_K.T, W_V.T, "row"), dims, env)
    np.testing.assert_allclose(row, np.swapaxes(want, -1, -2), rtol=1e-10, atol=1e-12)
    assert want.shape == (b, dv, 1)  # pooling: N features -> one vector
    zero_K = at(sa.query_attention_pool(X, q_pool, W_p, sp.ZeroMatrix(d_k, d_model), W_V), dims, env)
    np.testing.assert_allclose(zero_K, (env["W^V"] @ env["X"]).mean(axis=-1, keepdims=True),
                               rtol=1e-10, atol=1e-12)


@FAST
@given(dm=small, n=small, dk=small, dv=small, heads=small, seed=seeds)
def test_multihead_pool_is_concat_of_pools_times_WO(dm, n, dk, dv, heads, seed):
    from symattn.proofs._seed002 import F_K, F_O, F_V, F_p, H, N, X, d_k, d_model, d_v, q_pool
    dims = {d_model: dm, N: n, d_k: dk, d_v: dv, H: heads}
    shapes = {"X": (dm, n), "q_pool": (dm, 1)}
    for hh in range(1, heads + 1):
        shapes.update({f"W_p_{hh}": (dk, dm), f"W^K_{hh}": (dk, dm), f"W^V_{hh}": (dv, dm),
                       f"W^O_{hh}": (dm, dv)})
    env = rng_arrays(seed, shapes)
    pools = [_np_query_pool(env["X"], env["q_pool"], env[f"W_p_{k}"], env[f"W^K_{k}"], env[f"W^V_{k}"])
             for k in range(1, heads + 1)]
    W_O = np.concatenate([env[f"W^O_{k}"] for k in range(1, heads + 1)], axis=1)
    want = W_O @ np.concatenate(pools, axis=0)
    got = at(sa.multihead_pool(X, q_pool, F_p, F_K, F_V, F_O, H=H), dims, env)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got_sum = at(sa.multihead_pool_sum(X, q_pool, F_p, F_K, F_V, F_O, H=H), dims, env)
    np.testing.assert_allclose(got_sum, want, rtol=1e-10, atol=1e-12)
    row = at(sa.multihead_pool(X.T, q_pool.T, F_p.T, F_K.T, F_V.T, F_O.T, H=H, convention="row"), dims, env)
    np.testing.assert_allclose(row, want.T, rtol=1e-10, atol=1e-12)


def test_pooling_rejects_a_query_matrix_with_a_clear_message():
    d, N, k = sa.dims("d N k")
    X, q = sp.MatrixSymbol("X", d, N), sp.MatrixSymbol("q", d, 2)
    W = sp.MatrixSymbol("W", k, d)
    with pytest.raises(ShapeError, match=r"q_pool must be a single column \(d × 1\)"):
        sa.query_attention_pool(X, q, W, W, W)
    with pytest.raises(ShapeError, match="one score per feature"):
        sa.attention_pool(X, sp.MatrixSymbol("s", N + 1, 1))
