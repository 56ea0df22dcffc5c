"""Seed 002, permutation equivariance, invariance, and the causal counterexample."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from seed002_helpers import (
    assert_refutation_rechecks,
    at,
    batch,
    exact_attention,
    exact_causal_mask,
    np_attention,
    np_softmax,
    result,
    rng_arrays,
    seeds,
    small,
)

import symattn as sa

FAST = settings(deadline=None, max_examples=12)


def test_equivariance_theorems_are_proved_for_every_permutation():
    for name in ("self_attention_is_permutation_equivariant", "attention_pool_is_permutation_invariant",
                 "joint_key_value_permutation_changes_nothing"):
        r = result(name)
        assert r.status == "proved" and r.general, (name, [v.explain() for v in r.verdicts])


def _perm_matrix(seed, n):
    p = np.random.default_rng(seed).permutation(n)
    return np.eye(n)[:, p], p


@FAST
@given(dm=small, n=small, dk=small, dv=small, b=batch, seed=seeds)
def test_self_attention_commutes_with_permuting_tokens(dm, n, dk, dv, b, seed):
    from symattn.proofs._seed002 import W_K, W_Q, W_V, N, X, d_k, d_model, d_v
    env = rng_arrays(seed, {"X": (dm, n), "W^Q": (dk, dm), "W^K": (dk, dm), "W^V": (dv, dm)}, (b,))
    P, p = _perm_matrix(seed, n)
    env["P"] = P.astype(int)

    def sa_np(Xv):
        return np_attention(env["W^Q"] @ Xv, env["W^K"] @ Xv, env["W^V"] @ Xv)

    X_perm = env["X"][..., :, p]                          # token j of X P is token σ(j) of X
    np.testing.assert_allclose(sa_np(X_perm), sa_np(env["X"])[..., :, p], rtol=1e-10, atol=1e-12)
    Pm = sa.Permutation("P", N)
    dims = {d_model: dm, N: n, d_k: dk, d_v: dv}
    got = at(sa.self_attention(X * Pm, W_Q, W_K, W_V), dims, env)
    np.testing.assert_allclose(got, sa_np(env["X"])[..., :, p], rtol=1e-10, atol=1e-12)


@FAST
@given(dm=small, n=small, m=small, dk=small, heads=small, seed=seeds)
def test_multihead_and_cross_attention_commute_with_permutations(dm, n, m, dk, heads, seed):
    from symattn.proofs._seed002 import F_K, F_O, F_Q, F_V, W_K, W_Q, W_V, H, N, X, d_k, d_model, d_v
    shapes = {"X": (dm, n), "Y": (dm, m), "W^Q": (dk, dm), "W^K": (dk, dm), "W^V": (dk, dm)}
    for h in range(1, heads + 1):
        shapes.update({f"W^{x}_{h}": (dk, dm) for x in "QKV"})
        shapes[f"W^O_{h}"] = (dm, dk)
    env = rng_arrays(seed, shapes)
    P, p = _perm_matrix(seed, n)
    P2, p2 = _perm_matrix(seed + 1, m)
    env["P"], env["P'"] = P.astype(int), P2.astype(int)

    def mha(Xv):
        return sum(env[f"W^O_{h}"] @ np_attention(*(env[f"W^{x}_{h}"] @ Xv for x in "QKV"))
                   for h in range(1, heads + 1))

    np.testing.assert_allclose(mha(env["X"][:, p]), mha(env["X"])[:, p], rtol=1e-10, atol=1e-12)

    def cross(Xv, Yv):
        return np_attention(env["W^Q"] @ Xv, env["W^K"] @ Yv, env["W^V"] @ Yv)

    want = cross(env["X"], env["Y"])[:, p]
    np.testing.assert_allclose(cross(env["X"][:, p], env["Y"][:, p2]), want, rtol=1e-10, atol=1e-12)
    Mm = sa.dims("m")
    Pn, Pm = sa.Permutation("P", N), sa.Permutation("P'", Mm)
    Y = sp.MatrixSymbol("Y", d_model, Mm)
    dims = {d_model: dm, N: n, Mm: m, d_k: dk, d_v: dk, H: heads}
    got = at(sa.cross_attention(X * Pn, Y * Pm, W_Q, W_K, W_V), dims, env)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got = at(sa.multihead(X * Pn, X * Pn, X * Pn, F_Q, F_K, F_V, F_O, H=H, form="sum"), dims, env)
    np.testing.assert_allclose(got, mha(env["X"])[:, p], rtol=1e-10, atol=1e-12)


@FAST
@given(dm=small, n=small, dk=small, dv=small, b=batch, seed=seeds)
def test_pooling_ignores_the_order_of_the_features(dm, n, dk, dv, b, seed):
    from symattn.proofs._seed002 import W_K, W_V, N, W_p, X, d_k, d_model, d_v, q_pool
    env = rng_arrays(seed, {"X": (dm, n), "q_pool": (dm, 1), "W_p": (dk, dm), "W^K": (dk, dm),
                            "W^V": (dv, dm)}, (b,))
    P, p = _perm_matrix(seed, n)
    env["P"] = P.astype(int)

    def pool_np(Xv):
        return np_attention(env["W_p"] @ env["q_pool"], env["W^K"] @ Xv, env["W^V"] @ Xv)

    np.testing.assert_allclose(pool_np(env["X"][..., :, p]), pool_np(env["X"]), rtol=1e-10, atol=1e-12)
    Pm = sa.Permutation("P", N)
    dims = {d_model: dm, N: n, d_k: dk, d_v: dv}
    got = at(sa.query_attention_pool(X * Pm, q_pool, W_p, W_K, W_V), dims, env)
    np.testing.assert_allclose(got, pool_np(env["X"]), rtol=1e-10, atol=1e-12)
    mean = at(sa.mean_pool(X * Pm), dims, env)
    np.testing.assert_allclose(mean, env["X"].mean(axis=-1, keepdims=True), rtol=1e-10, atol=1e-12)


@FAST
@given(m=small, n=small, dk=small, dv=small, b=batch, seed=seeds)
def test_permuting_keys_and_values_together_changes_nothing(m, n, dk, dv, b, seed):
    env = rng_arrays(seed, {"Q": (dk, n), "K": (dk, m), "V": (dv, m)}, (b,))
    _, p = _perm_matrix(seed, m)
    Q, K, V = env["Q"], env["K"], env["V"]
    np.testing.assert_allclose(np_attention(Q, K[..., p], V[..., p]), np_attention(Q, K, V),
                               rtol=1e-10, atol=1e-12)
    # row convention: softmax(Q Kᵀ) V with the keys as rows
    Qr, Kr, Vr = (np.swapaxes(x, -1, -2) for x in (Q, K, V))
    row = np_softmax(Qr @ np.swapaxes(Kr[..., p, :], -1, -2) / np.sqrt(dk), axis=-1) @ Vr[..., p, :]
    np.testing.assert_allclose(row, np.swapaxes(np_attention(Q, K, V), -1, -2), rtol=1e-10, atol=1e-12)


def test_value_permutation_alone_is_not_proved_by_the_engine():
    # soundness of the reindexing rule: permuting only the values must not be "proved"
    m, n, d = sa.dims("m n d")
    P = sa.Permutation("P", m)
    Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
    v = sa.verify(sa.attention(Q, K, V * P), sa.attention(Q, K, V), budget=10)
    assert v.status == "refuted"


def test_causal_equivariance_counterexample_rechecks_exactly():
    r = result("causal_attention_is_permutation_equivariant")
    assert r.status == "refuted" and r.theorem.expect == "refuted" and r.theorem.explanation
    (v,) = r.verdicts

    def recompute(values, dims):
        X, P = values["X"], values["P"]
        Wq, Wk, Wv = values["W^Q"], values["W^K"], values["W^V"]
        mask = exact_causal_mask(X.cols, X.cols)

        def causal(Z):
            return exact_attention(Wq * Z, Wk * Z, Wv * Z, mask)

        return causal(X * P), causal(X) * P

    assert_refutation_rechecks(v, recompute)
