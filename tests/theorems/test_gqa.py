"""Seed 002, GQA: GQA / MQA / repeat_kv, and the refuted "h mod G"."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from seed002_helpers import (
    assert_refutation_rechecks,
    at,
    exact_attention,
    np_attention,
    result,
    rng_arrays,
    seeds,
    small,
)

import symattn as sa
from symattn.errors import HeadError

FAST = settings(deadline=None, max_examples=12)


def test_gqa_theorems_have_their_honest_verdicts():
    for name in ("gqa_with_G_equal_H_is_multihead", "gqa_with_one_group_is_mqa",
                 "gqa_row_convention_is_the_transpose", "repeat_kv_head_h_reads_group_floor"):
        r = result(name)
        assert r.status == "proved" and r.general, (name, [v.explain() for v in r.verdicts])
    r = result("repeat_kv_equals_sharing")
    assert r.status == "proved" and not r.general
    assert r.scope.startswith("only at (H, G) = (4, 2)")


def test_group_of_matches_llama_repeat_kv_order():
    for H, G in ((4, 2), (6, 3), (8, 2), (8, 8), (5, 1)):
        rep = sa.repeat_kv(list(range(1, G + 1)), H // G)
        assert [int(sa.group_of(h, H, G)) for h in range(1, H + 1)] == rep


@FAST
@given(groups=st.integers(1, 3), n_rep=st.integers(1, 3), dm=small, n=small, m=small, dk=small,
       seed=seeds)
def test_gqa_equals_heads_over_repeated_kv_tensors(groups, n_rep, dm, n, m, dk, seed):
    """Independent NumPy: Llama's repeat_kv on a (G, d_k, m) tensor (expand + reshape), per head."""
    H = groups * n_rep
    Hs, Gs, d_model, d_k, N, M = sa.dims("H G d_model d_k N M")
    Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", N), ("K", M), ("V", M)))
    fams = [sa.Family(nm, r, c) for nm, r, c in (("W^Q", d_k, d_model), ("W^K", d_k, d_model),
                                                  ("W^V", d_k, d_model), ("W^O", d_model, d_k))]
    shapes = {"Q": (dm, n), "K": (dm, m), "V": (dm, m)}
    shapes.update({f"W^Q_{h}": (dk, dm) for h in range(1, H + 1)})
    shapes.update({f"W^O_{h}": (dm, dk) for h in range(1, H + 1)})
    shapes.update({f"W^K_{g}": (dk, dm) for g in range(1, groups + 1)})
    shapes.update({f"W^V_{g}": (dk, dm) for g in range(1, groups + 1)})
    env = rng_arrays(seed, shapes)
    keys = np.stack([env[f"W^K_{g}"] @ env["K"] for g in range(1, groups + 1)])      # (G, d_k, m)
    vals = np.stack([env[f"W^V_{g}"] @ env["V"] for g in range(1, groups + 1)])
    keys = np.broadcast_to(keys[:, None], (groups, n_rep) + keys.shape[1:]).reshape((H,) + keys.shape[1:])
    vals = np.broadcast_to(vals[:, None], (groups, n_rep) + vals.shape[1:]).reshape((H,) + vals.shape[1:])
    want = sum(env[f"W^O_{h}"] @ np_attention(env[f"W^Q_{h}"] @ env["Q"], keys[h - 1], vals[h - 1])
               for h in range(1, H + 1))
    expr = sa.gqa(Q, K, V, *fams, H=Gs * n_rep, G=Gs)
    got = at(expr, {Gs: groups, d_model: dm, d_k: dk, N: n, M: m}, env)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    row = sa.gqa(Q.T, K.T, V.T, *(f.T for f in fams), H=Gs * n_rep, G=Gs, convention="row")
    got = at(row, {Gs: groups, d_model: dm, d_k: dk, N: n, M: m}, env)
    np.testing.assert_allclose(got, want.T, rtol=1e-10, atol=1e-12)
    if groups == 1:    # MQA: one shared W^K, W^V
        mqa = sa.mqa(Q, K, V, fams[0], fams[1][1], fams[2][1], fams[3], H=n_rep)
        got = at(mqa, {d_model: dm, d_k: dk, N: n, M: m}, env)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    if n_rep == 1:     # G = H: plain multi-head attention
        mha = sa.multihead(Q, K, V, *fams, H=Hs)
        got = at(mha, {Hs: groups, d_model: dm, d_k: dk, N: n, M: m}, env)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_gqa_rejects_a_head_count_that_groups_do_not_divide():
    d, n = sa.dims("d n")
    X = sp.MatrixSymbol("X", d, n)
    W = sa.Family("W", d, d)
    with pytest.raises(HeadError, match=r"H = 6 query heads cannot be split evenly into G = 4"):
        sa.gqa(X, X, X, W, W, W, W, H=6, G=4)
    with pytest.raises(HeadError, match="holds 3 key/value heads but G = 2"):
        sa.gqa(X, X, X, [X] * 4, [X] * 3, [X] * 2, [X] * 4, H=4, G=2)


def test_floor_rule_does_not_settle_a_group_that_varies():
    # soundness: with G = 2 groups the group of head h is not constant; the engine must not
    # identify GQA with MQA, and the block-selection matrix must not match the "mod" order
    d, n, dk, H = sa.dims("d n d_k H")
    X = sp.MatrixSymbol("X", d, n)
    Wq, Wk, Wv = (sa.Family(s, dk, d) for s in ("W^Q", "W^K", "W^V"))
    Wo = sa.Family("W^O", d, dk)
    v = sa.verify(sa.gqa(X, X, X, Wq, Wk, Wv, Wo, H=2 * H, G=2, form="sum"),
                  sa.mqa(X, X, X, Wq, Wk[1], Wv[1], Wo, H=2 * H, form="sum"), budget=10)
    assert v.status != "proved"
    stacked = sp.BlockMatrix([[Wk[1]], [Wk[2]]])
    mod = sa.head_stack(lambda h: Wk[sp.Mod(h - 1, 2) + 1], 4)
    assert sa.verify(sa.repeat_kv_matrix(2, 2, dk) * stacked, mod, budget=10).status == "refuted"


def test_h_mod_G_counterexample_rechecks_exactly():
    r = result("gqa_head_reads_group_h_mod_G")
    assert r.status == "refuted" and r.theorem.explanation
    (v,) = r.verdicts
    G, rep = v.counterexample.dims["G"], v.counterexample.dims["r"]

    def recompute(values, dims):
        H = G * rep

        def total(group):
            return sum((values[f"W^O_{h}"] * exact_attention(values[f"W^Q_{h}"] * values["Q"],
                                                             values[f"W^K_{group(h)}"] * values["K"],
                                                             values[f"W^V_{group(h)}"] * values["V"])
                        for h in range(1, H + 1)), sp.zeros(values["Q"].rows, values["Q"].cols))

        by_floor = total(lambda h: (h - 1) // rep + 1)      # Llama: head h reads group floor(h/(H/G))
        by_mod = total(lambda h: (h - 1) % G + 1)
        return by_floor, by_mod

    assert_refutation_rechecks(v, recompute)


@FAST
@given(groups=st.integers(1, 3), n_rep=st.integers(1, 3), dk=small, m=small, seed=seeds)
def test_repeat_kv_on_stacked_heads_is_llamas_expand_and_reshape(groups, n_rep, dk, m, seed):
    Gs, r, d_k, M = sa.dims("G r d_k M")
    Kf = sa.Family("K", d_k, M)
    env = rng_arrays(seed, {f"K_{g}": (dk, m) for g in range(1, groups + 1)})
    heads = np.stack([env[f"K_{g}"] for g in range(1, groups + 1)])          # (G, d_k, m)
    want = np.broadcast_to(heads[:, None], (groups, n_rep, dk, m)).reshape(groups * n_rep * dk, m)
    dims = {Gs: groups, r: n_rep, d_k: dk, M: m}
    np.testing.assert_allclose(at(sa.repeat_kv_heads(Kf, Gs, r), dims, env), want)
    flat = sa.head_stack(lambda h: Kf[sa.group_of(h, Gs * r, Gs)], Gs * r)
    np.testing.assert_allclose(at(flat, dims, env), want)


def test_nested_floor_rule_needs_a_positive_integer_divisor():
    from symattn.proof.entrywise import merge_nested_floors

    x = sp.Symbol("x", real=True)
    k = sp.Symbol("k", integer=True, positive=True)
    c = sp.Symbol("c", positive=True)            # not known to be an integer
    assert merge_nested_floors(sp.floor(sp.floor(x) / k)) == sp.floor(x / k)
    assert merge_nested_floors(sp.floor(sp.floor(x) / c)) == sp.floor(sp.floor(x) / c)


@FAST
@given(groups=st.integers(1, 3), n_rep=st.integers(1, 3), dk=small, dm=small, seed=seeds)
def test_repeat_kv_matrix_is_the_kronecker_product(groups, n_rep, dk, dm, seed):
    d_k, d_model = sa.dims("d_k d_model")
    Wk = sa.Family("W^K", d_k, d_model)
    env = rng_arrays(seed, {f"W^K_{g}": (dk, dm) for g in range(1, groups + 1)})
    R = sa.repeat_kv_matrix(groups, n_rep, d_k)
    kron = np.kron(np.eye(groups), np.kron(np.ones((n_rep, 1)), np.eye(dk)))   # I_G ⊗ 1_r ⊗ I_d
    np.testing.assert_allclose(at(R, {d_k: dk}, {}), kron)
    stacked = sp.BlockMatrix([[Wk[g]] for g in range(1, groups + 1)])
    want = np.concatenate([env[f"W^K_{g}"] for g in sa.repeat_kv(list(range(1, groups + 1)), n_rep)])
    np.testing.assert_allclose(at(R * stacked, {d_k: dk, d_model: dm}, env), want)
