"""Seed 002, causal and padding masks as -inf scores, and KV-cache decoding."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from seed002_helpers import at, batch, np_attention, np_causal_mask, result, rng_arrays, seeds, small

import symattn as sa
from symattn.errors import ShapeError

FAST = settings(deadline=None, max_examples=12)
d_k, d_v, n, t = sa.dims("d_k d_v n t")


def test_causal_theorems_are_proved_for_every_t():
    for name in ("causal_mask_attends_to_prefix", "kv_cache_decoding_is_last_causal_column"):
        r = result(name)
        assert r.status == "proved" and r.general, (name, [v.explain() for v in r.verdicts])
        assert "t" in r.scope


def test_causal_mask_is_lower_triangular_visibility():
    M = sa.CausalMask(3).as_explicit()
    assert M == sp.Matrix([[0, 0, 0], [-sp.oo, 0, 0], [-sp.oo, -sp.oo, 0]])
    assert sa.CausalMask(2, 3, offset=1).as_explicit() == sp.Matrix([[0, 0, 0], [0, 0, 0]])
    assert sa.PaddingMask(3, 2, 1).as_explicit() == sp.Matrix([[0, 0], [-sp.oo, -sp.oo], [-sp.oo, -sp.oo]])


@FAST
@given(length=st.integers(1, 6), dk=small, dv=small, b=batch, seed=seeds)
def test_causal_attention_column_t_is_attention_over_the_prefix(length, dk, dv, b, seed):
    env = rng_arrays(seed, {"Q": (dk, length), "K": (dk, length), "V": (dv, length)}, (b,))
    Q, K, V = (sp.MatrixSymbol(s, d, n) for s, d in (("Q", d_k), ("K", d_k), ("V", d_v)))
    got = at(sa.causal_attention(Q, K, V), {d_k: dk, d_v: dv, n: length}, env)
    want = np_attention(env["Q"], env["K"], env["V"], np_causal_mask(length, length))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for tt in range(1, length + 1):   # query at position tt sees keys 1..tt
        prefix = np_attention(env["Q"][..., tt - 1:tt], env["K"][..., :tt], env["V"][..., :tt])
        np.testing.assert_allclose(want[..., tt - 1:tt], prefix, rtol=1e-10, atol=1e-12)
    row = at(sa.causal_attention(Q.T, K.T, V.T, convention="row"), {d_k: dk, d_v: dv, n: length}, env)
    np.testing.assert_allclose(row, np.swapaxes(want, -1, -2), rtol=1e-10, atol=1e-12)


@FAST
@given(valid=st.integers(1, 4), pad=st.integers(1, 3), nq=small, dk=small, dv=small, seed=seeds)
def test_padding_mask_drops_the_padded_keys(valid, pad, nq, dk, dv, seed):
    m = valid + pad
    M = sa.dims("m")
    env = rng_arrays(seed, {"Q": (dk, nq), "K": (dk, m), "V": (dv, m)})
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, M), sp.MatrixSymbol("V", d_v, M)
    got = at(sa.masked_attention(Q, K, V, sa.PaddingMask(M, n, valid)), {d_k: dk, d_v: dv, n: nq, M: m}, env)
    want = np_attention(env["Q"], env["K"][:, :valid], env["V"][:, :valid])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@FAST
@given(length=st.integers(1, 6), dk=small, dv=small, seed=seeds)
def test_kv_cache_decoding_loop_reproduces_full_causal_attention(length, dk, dv, seed):
    env = rng_arrays(seed, {"Q": (dk, length), "K": (dk, length), "V": (dv, length)})
    full = np_attention(env["Q"], env["K"], env["V"], np_causal_mask(length, length))
    cache_k, cache_v = np.zeros((dk, 0)), np.zeros((dv, 0))     # an independent decoding loop
    for step in range(length):
        cache_k = np.concatenate([cache_k, env["K"][:, step:step + 1]], axis=1)
        cache_v = np.concatenate([cache_v, env["V"][:, step:step + 1]], axis=1)
        z = np_attention(env["Q"][:, step:step + 1], cache_k, cache_v)
        np.testing.assert_allclose(z, full[:, step:step + 1], rtol=1e-10, atol=1e-12)
    if length >= 2:   # the project's KVCache: a cache of t = length - 1 positions, one step
        T = sa.dims("T")
        Qs, Ks, Vs = (sp.MatrixSymbol(s, d, T + 1) for s, d in (("Q", d_k), ("K", d_k), ("V", d_v)))
        cache = sa.KVCache(Ks[:, :T], Vs[:, :T])
        dec = cache.decode(Qs[:, T:T + 1], Ks[:, T:T + 1], Vs[:, T:T + 1])
        got = at(dec, {T: length - 1, d_k: dk, d_v: dv}, env)
        np.testing.assert_allclose(got, full[:, -1:], rtol=1e-10, atol=1e-12)


@FAST
@given(start=st.integers(1, 4), chunk=st.integers(1, 3), dk=small, dv=small, seed=seeds)
def test_llama_offset_mask_for_a_chunk_after_the_cache(start, chunk, dk, dv, seed):
    length = start + chunk
    env = rng_arrays(seed, {"Q": (dk, length), "K": (dk, length), "V": (dv, length)})
    full = np_attention(env["Q"], env["K"], env["V"], np_causal_mask(length, length))
    # Llama: mask = hstack([zeros(seqlen, start_pos), triu(full(-inf), diagonal=1)]) in rows
    llama = np.hstack([np.zeros((chunk, start)), np.triu(np.full((chunk, chunk), -np.inf), k=1)])
    chunk_out = np_attention(env["Q"][:, start:], env["K"], env["V"], llama.T)
    np.testing.assert_allclose(chunk_out, full[:, start:], rtol=1e-10, atol=1e-12)
    S, C = sa.dims("S C")
    Q, K, V = (sp.MatrixSymbol(s, d, S + C) for s, d in (("Q", d_k), ("K", d_k), ("V", d_v)))
    expr = sa.causal_attention(Q[:, S:S + C], K, V, offset=S)
    got = at(expr, {S: start, C: chunk, d_k: dk, d_v: dv}, env)
    np.testing.assert_allclose(got, full[:, start:], rtol=1e-10, atol=1e-12)


def test_mask_and_cache_errors_name_the_shapes():
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, n), sp.MatrixSymbol("V", d_v, n)
    with pytest.raises(ShapeError, match=r"the mask must be keys × queries \(n × n\)"):
        sa.masked_attention(Q, K, V, sa.CausalMask(n + 1, n))
    cache = sa.KVCache(sp.MatrixSymbol("K", d_k, t), sp.MatrixSymbol("V", d_v, t))
    with pytest.raises(ShapeError, match="the new key must have d_k rows"):
        cache.extend(sp.MatrixSymbol("k", d_v + 1, 1), sp.MatrixSymbol("v", d_v, 1))
    with pytest.raises(ShapeError, match="one value per key"):
        sa.KVCache(sp.MatrixSymbol("K", d_k, t), sp.MatrixSymbol("V", d_v, t + 1))


def test_mask_restriction_rule_does_not_fire_without_its_side_condition():
    # soundness: masking column t and dropping only keys after t + 1 is not the same
    s = sa.dims("s")
    Q, K, V = (sp.MatrixSymbol(x, d, t + s + 1) for x, d in (("Q", d_k), ("K", d_k), ("V", d_v)))
    v = sa.verify(sa.causal_attention(Q, K, V)[:, t - 1:t], sa.attention(Q[:, t - 1:t], K[:, :t + 1],
                                                                         V[:, :t + 1]), budget=10)
    assert v.status == "refuted"
