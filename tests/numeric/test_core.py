"""symattn.numeric: provenance of every kernel, correctness against the definitions, bad input."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symattn as sa
import symattn.numeric as sn
import symattn.proofs.rewrites as R
from symattn.errors import ConventionError, HeadError, InputError, ShapeError
from symattn.lowering import lower_theorem
from symattn.numeric import blocked, kernels
from symattn.proof.evaluate import evaluate
from symattn.theorems import load_library

RNG = np.random.default_rng(12345)


def weights(d_model, H, G, d_k, d_v, rng=RNG, dtype=np.float64):
    w = [rng.normal(size=s) / np.sqrt(d_model) for s in
         ((d_model, H * d_k), (d_model, G * d_k), (d_model, G * d_v), (H * d_v, d_model))]
    return [a.astype(dtype) for a in w]


def biases(H, G, d_k, d_v, d_model, rng=RNG):
    return dict(b_q=rng.normal(size=H * d_k), b_k=rng.normal(size=G * d_k), b_v=rng.normal(size=G * d_v),
                b_o=rng.normal(size=d_model))


def reference_mha(q, k, v, w_q, w_k, w_v, w_o, H, G, b_q=None, b_k=None, b_v=None, b_o=None, mask=None):
    """A loop over heads in plain NumPy: head h reads key/value group h // (H // G)."""
    d_k, d_v = w_q.shape[1] // H, w_v.shape[1] // G
    zero = lambda w: 0 if w is None else w  # noqa: E731
    Q, K, V = q @ w_q + zero(b_q), k @ w_k + zero(b_k), v @ w_v + zero(b_v)
    heads = []
    for h in range(H):
        g = h // (H // G)
        s = Q[..., h * d_k:(h + 1) * d_k] @ np.swapaxes(K[..., g * d_k:(g + 1) * d_k], -1, -2) / np.sqrt(d_k)
        if mask is not None:
            s = s + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        heads.append(s / s.sum(-1, keepdims=True) @ V[..., g * d_v:(g + 1) * d_v])
    return np.concatenate(heads, -1) @ w_o + zero(b_o)


# -- provenance -----------------------------------------------------------------------------------

def distinct(used):
    """The kernels of a trace, each once, in the order of first use."""
    out = []
    for k in used:
        if not any(k is seen for seen in out):
            out.append(k)
    return out


def test_every_numeric_kernel_is_lowered_from_a_proved_theorem():
    for name in kernels.names():
        k = kernels.get(name)
        assert k.provenance is not None, name
        assert k.provenance.status == "proved" and k.provenance.general, name
        assert load_library()[k.provenance.theorem].family == "rewrites", name


def test_multihead_runs_exactly_the_kernels_lowered_from_its_theorems():
    x = RNG.normal(size=(2, 5, 8))
    w = weights(8, 4, 2, 2, 3)
    with sn.trace() as used:
        sn.multihead_attention(x, x, x, *w, num_heads=4, num_kv_heads=2, causal=True,
                               **biases(4, 2, 2, 3, 8))
    q, k, _ = R.head_inputs(True)
    Z = sp.MatrixSymbol("Z", R.n, R.H * R.d_v)
    W_O = sp.MatrixSymbol("W^O", R.H * R.d_v, R.d_model)
    U_1 = sp.MatrixSymbol("U_1", R.n, R.d_v)
    add = lower_theorem("blockwise_logsumexp_merge", 7, "rhs", donate=(R.S_2,),
                        inputs={R.Exp(R.S_1) * R.V_1: U_1})
    first = lower_theorem("blockwise_logsumexp_merge", 6, "rhs", part=R.Exp(R.S) * R.V, donate=(R.S,),
                          args=[R.S, R.V])
    normalize = lower_theorem("blockwise_logsumexp_merge", 0, "rhs",
                              inputs={R.Exp(R.ShiftRows(R.S, R.c)) * R.V: sp.MatrixSymbol("U", R.n, R.d_v),
                                      R.Exp(R.ShiftRows(R.S, R.c)) * R.ones(R.m): sp.MatrixSymbol("l", R.n, 1)})
    expected = [
        lower_theorem("fused_qkv_projection", 0, "lhs"),
        lower_theorem("scale_folds_into_query_projection", 0, "rhs", part=q * k.T,
                      inputs={q: R.Q, k: R.K}, args=[R.Q, R.K]),
        first,  # small scores: the shift c = 0, numerator and denominator in one GEMM (claim 6)
        normalize,
        lower_theorem("heads_concatenate_before_output_projection", 0, "lhs",
                      inputs={R.CONCAT: Z, R.STACK_O: W_O}),
    ]
    used = distinct(used)  # each work item (heads × query tile) runs the same kernels
    assert len(used) == 5 and all(a is b for a, b in zip(used, expected))
    assert "exp_(S)" in used[2].source  # the scores are overwritten in place (donated)
    big = 1000 * x
    with sn.trace() as used:  # large scores: the shifted form (claim 0), the row max as the shift
        sn.multihead_attention(big, big, big, *w, num_heads=4, num_kv_heads=2)
    shifted = lower_theorem("blockwise_logsumexp_merge", 0, "rhs", donate=(R.S,), args=[R.S, R.c, R.V])
    assert any(k is shifted for k in used)
    assert "shift_exp_(S, c)" in shifted.source
    with sn.trace() as used:
        sn.multihead_attention(big, big, big, *w, num_heads=4, num_kv_heads=2, block_size=2)  # 3 key blocks
    merge = lower_theorem("blockwise_logsumexp_merge", 2, "rhs", donate=(R.S_2,),
                          inputs={R.Exp(R.ShiftRows(R.S_1, R.c_1)) * R.V_1: U_1})
    items = [k is normalize for k in used].count(True)  # one normalization per work item
    assert items >= 1 and [k is merge for k in used].count(True) == 3 * items
    with sn.trace() as used:  # small scores: c = 0, the blocks simply add up (claim 7)
        sn.multihead_attention(x, x, x, *w, num_heads=4, num_kv_heads=2, block_size=2)
    items = [k is normalize for k in used].count(True)
    assert items >= 1 and [k is first for k in used].count(True) == items
    assert [k is add for k in used].count(True) == 2 * items


def test_large_float32_tiles_run_the_base2_kernels_of_their_theorems():
    """float32 tiles of at least BASE2_MIN_ROWS queries and no additive mask: the query tile divided by
    ln 2 once (claim 9), 2^T [V 1] for the first key block (claim 9) and the base-2 accumulate for the
    others (claim 11); the result equals the base-e path up to rounding."""
    n = blocked.BASE2_MIN_ROWS
    q, k, v = (RNG.normal(size=(2, n, 4)).astype(np.float32) for _ in range(3))
    T, T_2 = sp.MatrixSymbol("T", R.n, R.m), sp.MatrixSymbol("T_2", R.n, R.m_2)
    U_1 = sp.MatrixSymbol("U_1", R.n, R.d_v)
    query = lower_theorem("blockwise_logsumexp_merge", 9, "rhs", part=R.Q / R.LN2, args=[R.Q])
    first = lower_theorem("blockwise_logsumexp_merge", 9, "rhs", inputs={(R.Q / R.LN2) * R.K.T: T},
                          donate=(T,), args=[T, R.V])
    add = lower_theorem("blockwise_logsumexp_merge", 11, "rhs", donate=(T_2,), args=[T_2, U_1, R.V_2],
                        inputs={R.Exp2(R.S_1 / R.LN2) * R.V_1: U_1, R.S_2 / R.LN2: T_2})
    with sn.trace() as used:
        got = sn.blocked_core(q, k, v, tile=n, block_size=n // 4)  # tiles of n queries, 4 key blocks
    items = [k is query for k in used].count(True)
    assert items >= 1 and [k is first for k in used].count(True) == items
    assert [k is add for k in used].count(True) == 3 * items
    assert "exp2_(T)" in first.source
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(blocked, "BASE2", False)
        np.testing.assert_allclose(got, sn.blocked_core(q, k, v, tile=n, block_size=n // 4), rtol=2e-5, atol=1e-6)


def test_attention_and_decode_and_pooling_kernels_come_from_their_theorems():
    x = RNG.normal(size=(2, 6, 8))
    w_q, w_k, w_v, w_o = weights(8, 2, 2, 3, 3)
    with sn.trace() as used:
        sn.mean_pool(x)
        sn.kv_decode_step(x[:, :1, :3], x[:, :1, :3], x[:, :1, :3])
        sn.attention_pool(x, x[0, :1], w_q, w_k, w_v, w_o, num_heads=2)
    assert used[0] is lower_theorem("mean_pool_is_uniform_attention", 0, "rhs")
    assert used[1] is lower_theorem("kv_cache_step_needs_no_mask", 0, "rhs", args=[R.q_new, R.K, R.V])
    assert used[2] is lower_theorem("attention_pooling_folds_projections", 1, "rhs",
                                    part=R.pooling_fold(False))
    assert used[3] is lower_theorem("attention_pooling_folds_projections", 2, "lhs",
                                    part=sa.softmax(R.U * R.X.T, 1) * R.X)
    assert "X" not in used[2].arg_names  # the folded query never touches X


def test_blocked_kernel_merges_by_the_proved_rule():
    """Scores in the thousands overflow exp without a shift: the merge with the running row max runs."""
    q, k, v = 1000 * RNG.normal(size=(2, 7, 3)), RNG.normal(size=(2, 11, 3)), RNG.normal(size=(2, 11, 4))
    with sn.trace() as used:
        out = sn.blocked_core(q, k, v, block_size=4, tile=3)
    np.testing.assert_allclose(out, sn.attention(q * np.sqrt(3), k, v), rtol=1e-10, atol=1e-12)
    U_1 = sp.MatrixSymbol("U_1", R.n, R.d_v)
    step = lower_theorem("blockwise_logsumexp_merge", 2, "rhs", donate=(R.S_2,),
                         inputs={R.Exp(R.ShiftRows(R.S_1, R.c_1)) * R.V_1: U_1})
    assert step in used and "ScaleRows" in sp.sstr(step.expr)
    theorems = {k.provenance.theorem for k in used}
    assert theorems == {"blockwise_logsumexp_merge", "scale_folds_into_query_projection"}


# -- correctness ------------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(batch=st.lists(st.integers(1, 3), max_size=2).map(tuple), n=st.integers(1, 6), m=st.integers(1, 6),
       d_k=st.integers(1, 4), d_v=st.integers(1, 4), causal=st.booleans(), seed=st.integers(0, 999))
def test_attention_equals_the_definition_evaluated_per_matrix(batch, n, m, d_k, d_v, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.normal(size=batch + (n, d_k)), rng.normal(size=(m, d_k)), rng.normal(size=batch + (m, d_v))
    got = sn.attention(q, k, v, causal=causal)
    Q, K, V = (sp.MatrixSymbol(s, r, c) for s, r, c in (("Q", n, d_k), ("K", m, d_k), ("V", m, d_v)))
    expr = sa.attention(Q, K, V, convention="row")
    if causal:
        expr = sa.softmax(Q * K.T / sp.sqrt(d_k) + R.row_causal_mask(n, m), 1) * V
    for idx in np.ndindex(*batch):
        want = evaluate(expr, {"Q": q[idx], "K": k, "V": v[idx]})
        np.testing.assert_allclose(got[idx], want, rtol=1e-10, atol=1e-12)


def test_column_convention_is_the_transpose_of_the_row_convention():
    q, k, v = RNG.normal(size=(3, 4, 5)), RNG.normal(size=(3, 4, 7)), RNG.normal(size=(3, 2, 7))
    col = sn.attention(q, k, v, convention="column")
    row = sn.attention(*(np.swapaxes(a, -1, -2) for a in (q, k, v)))
    np.testing.assert_allclose(col, np.swapaxes(row, -1, -2), rtol=1e-12)
    assert col.shape == (3, 2, 5)


@pytest.mark.parametrize("H, G", [(4, 4), (4, 2), (4, 1), (6, 3)])
@pytest.mark.parametrize("causal", [False, True])
def test_multihead_with_groups_equals_a_loop_over_heads(H, G, causal):
    d_model, d_k, d_v, n, m = 12, 3, 2, 5, 5
    x = RNG.normal(size=(2, 3, n, d_model))
    w = weights(d_model, H, G, d_k, d_v)
    b = biases(H, G, d_k, d_v, d_model)
    mask = np.triu(np.full((n, m), -np.inf), 1) if causal else None
    want = reference_mha(x, x, x, *w, H, G, mask=mask, **b)
    got = sn.multihead_attention(x, x, x, *w, num_heads=H, num_kv_heads=G, causal=causal, **b)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got = sn.multihead_attention(x, x.copy(), x.copy(), *w, num_heads=H, num_kv_heads=G, mask=mask, **b)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    got = sn.multihead_attention(x, x, x, *w, num_heads=H, num_kv_heads=G, causal=causal, block_size=2, **b)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_cross_attention_without_biases_and_boolean_mask():
    q, kv = RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 6, 8))
    w = weights(8, 2, 2, 4, 4)
    allowed = RNG.random((4, 6)) > 0.3
    allowed[:, 0] = True
    want = reference_mha(q, kv, kv, *w, 2, 2, mask=np.where(allowed, 0.0, -np.inf))
    got = sn.multihead_attention(q, kv, kv, *w, num_heads=2, mask=allowed)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 9), m=st.integers(1, 13), block=st.integers(1, 5), tile=st.integers(1, 5),
       causal=st.booleans(), seed=st.integers(0, 999), scale=st.sampled_from([1.0, 300.0]))
def test_blocked_online_softmax_equals_full_attention(n, m, block, tile, causal, seed, scale):
    rng = np.random.default_rng(seed)  # scale 300: scores too large for the shift c = 0
    q, k, v = scale * rng.normal(size=(2, n, 3)), rng.normal(size=(2, m, 3)), rng.normal(size=(m, 2))
    want = sn.attention(q * np.sqrt(3), k, v, causal=causal)
    got = sn.blocked_core(q, k, v, causal=causal, block_size=block, tile=tile)
    if causal and m < n:  # the first n - m queries see no key at all
        assert np.isnan(got[:, : n - m]).all()
        got, want = got[:, n - m:], want[:, n - m:]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_kv_decode_steps_give_the_rows_of_causal_attention():
    q, k, v = RNG.normal(size=(3, 2, 7, 4)), RNG.normal(size=(3, 2, 7, 4)), RNG.normal(size=(3, 2, 7, 5))
    full = sn.attention(q, k, v, causal=True)
    K = V = None
    for t in range(7):
        out, K, V = sn.kv_decode_step(q[..., t:t + 1, :], k[..., t:t + 1, :], v[..., t:t + 1, :], K, V)
        np.testing.assert_allclose(out[..., 0, :], full[..., t, :], rtol=1e-10, atol=1e-12)
    assert K.shape == (3, 2, 7, 4)


def test_attention_pool_equals_projected_attention_with_one_query():
    d_model, H, d_k, d_v = 8, 2, 3, 4
    x, qp = RNG.normal(size=(5, 6, d_model)), RNG.normal(size=d_model)
    w_q, w_k, w_v, w_o = weights(d_model, H, H, d_k, d_v)
    b = biases(H, H, d_k, d_v, d_model)
    want = reference_mha(qp[None, :], x, x, w_q, w_k, w_v, w_o, H, H, **b)
    got = sn.attention_pool(x, qp, w_q, w_k, w_v, w_o, num_heads=H, **b)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    single = sn.attention_pool(x, qp, w_q[:, :d_k], w_k[:, :d_k], w_v[:, :d_v])
    want1 = reference_mha(qp[None, :], x, x, w_q[:, :d_k], w_k[:, :d_k], w_v[:, :d_v], np.eye(d_v), 1, 1)
    np.testing.assert_allclose(single, want1, rtol=1e-10, atol=1e-12)


def test_mean_pool_is_the_mean_of_rows():
    x = RNG.normal(size=(2, 3, 5, 4)).astype(np.float32)
    out = sn.mean_pool(x)
    assert out.dtype == np.float32 and out.shape == (2, 3, 1, 4)
    np.testing.assert_allclose(out[..., 0, :], x.mean(-2), rtol=1e-6)


def test_float32_stays_float32_everywhere():
    x = RNG.normal(size=(2, 5, 8)).astype(np.float32)
    w = weights(8, 2, 2, 4, 4, dtype=np.float32)
    assert sn.multihead_attention(x, x, x, *w, num_heads=2).dtype == np.float32
    assert sn.multihead_attention(x, x, x, *w, num_heads=2, block_size=2, causal=True).dtype == np.float32
    assert sn.attention_pool(x, x[0, :1], *w, num_heads=2).dtype == np.float32
    assert sn.attention(x, x, x, causal=True).dtype == np.float32


# -- bad input ---------------------------------------------------------------------------------------

def test_fully_masked_rows_give_nan_and_other_rows_are_untouched():
    q, k, v = RNG.normal(size=(4, 3)), RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))
    allowed = np.ones((4, 5), bool)
    allowed[2] = False
    out = sn.attention(q, k, v, mask=allowed)
    assert np.isnan(out[2]).all()
    np.testing.assert_allclose(out[[0, 1, 3]], sn.attention(q[[0, 1, 3]], k, v), rtol=1e-12)
    blocked = sn.blocked_core(q / np.sqrt(3), k, v, causal=True, block_size=2)  # m >= n: no empty rows
    assert np.isfinite(blocked).all()


def test_nan_and_inf_in_inputs_propagate():
    x = RNG.normal(size=(1, 4, 8))
    w = weights(8, 2, 2, 4, 4)
    x[0, 1, 3] = np.nan
    out = sn.multihead_attention(x, x, x, *w, num_heads=2)
    assert np.isnan(out).all()  # the NaN key is seen by every query
    # a NaN value reaches even the queries that mask it out (0·NaN = NaN in the product): never hidden
    assert np.isnan(sn.multihead_attention(x, x, x, *w, num_heads=2, causal=True)).all()
    kv = RNG.normal(size=(1, 4, 8))
    out = sn.multihead_attention(x, kv, kv, *w, num_heads=2)  # NaN in query row 1 only
    assert np.isnan(out[0, 1]).all() and np.isfinite(out[0, [0, 2, 3]]).all()
    kv[0, 2, 0] = np.inf
    assert not np.isfinite(sn.multihead_attention(kv, kv, kv, *w, num_heads=2)).all()


def test_bad_head_counts_are_named():
    x = RNG.normal(size=(2, 4, 8))
    w = weights(8, 4, 4, 2, 2)
    with pytest.raises(HeadError, match=r"w_q \(H·d_k\) = 8 is not divisible by num_heads = 3"):
        sn.multihead_attention(x, x, x, *w, num_heads=3)
    with pytest.raises(HeadError, match="num_heads = 4 is not divisible by num_kv_heads = 3"):
        sn.multihead_attention(x, x, x, *w, num_heads=4, num_kv_heads=3)
    with pytest.raises(HeadError, match="num_heads must be a positive integer"):
        sn.multihead_attention(x, x, x, *w, num_heads=0)
    with pytest.raises(ShapeError, match=r"the columns of w_k is 8 but num_kv_heads·d_k = 2·2 is 4"):
        sn.multihead_attention(x, x, x, *w, num_heads=4, num_kv_heads=2)


def test_shape_mismatches_name_both_sizes():
    x = RNG.normal(size=(2, 4, 8))
    w = weights(8, 2, 2, 4, 4)
    with pytest.raises(ShapeError, match="query's d_model is 8 but key's d_model is 6"):
        sn.multihead_attention(x, x[..., :6], x, *w, num_heads=2)
    with pytest.raises(ShapeError, match="key's number of positions m is 4 but value's .* m is 3"):
        sn.attention(x, x, x[:, :3])
    with pytest.raises(ShapeError, match=r"mask: expected shape \(\.\.\., 4, 4\)"):
        sn.multihead_attention(x, x, x, *w, num_heads=2, mask=np.zeros((3, 4)))
    with pytest.raises(ShapeError, match=r"b_q: expected shape \(8,\) or \(1, 8\), got \(7,\)"):
        sn.multihead_attention(x, x, x, *w, num_heads=2, b_q=np.zeros(7))


@pytest.mark.parametrize("dtype", [np.int32, np.complex64, np.bool_])
def test_integer_complex_and_boolean_arrays_are_refused(dtype):
    x = np.ones((2, 4, 8), dtype=dtype)
    with pytest.raises(InputError, match=f"query: expected a real floating-point array, got dtype "
                                         f"{np.dtype(dtype)}"):
        sn.attention(x, x, x)


def test_unknown_convention_is_refused():
    x = np.ones((4, 4))
    with pytest.raises(ConventionError, match="'row' or 'column'"):
        sn.attention(x, x, x, convention="rows")


def test_blocked_kernel_memory_grows_linearly_in_the_sequence_length():
    import tracemalloc

    def peak(n):
        q, k, v = (RNG.normal(size=(n, 8)) for _ in range(3))
        tracemalloc.start()
        sn.blocked_core(q, k, v, causal=True, block_size=128, tile=128)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(1024), peak(4096)
    assert large < 8 * 4096 * 4096 / 16  # far below the n × m scores (128 MiB in float64)
    assert large < 6 * small  # 4x the length: about 4x the memory, not 16x


def test_top_level_lower_is_the_function():
    n, m = sa.dims("n m")
    A = sp.MatrixSymbol("A", n, m)
    k = sa.lower(A.T)
    np.testing.assert_array_equal(k(A=np.arange(6.0).reshape(2, 3)), np.arange(6.0).reshape(2, 3).T)


@pytest.mark.parametrize("claim, how", [(0, {}), (1, {"mask": np.zeros((3, 5))}), (2, {"causal": True})])
def test_attention_runs_the_kernel_of_its_scale_fold_claim(claim, how):
    q, k, v = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(2, 5, 4)), RNG.normal(size=(2, 5, 6))
    with sn.trace() as used:
        sn.attention(q, k, v, **how)
    qe, ke, ve = R.head_inputs(True)
    args = [R.Q, R.K, R.V] + ([R.M] if claim == 1 else [])
    assert used == [lower_theorem("scale_folds_into_query_projection", claim, "rhs",
                                  inputs={qe: R.Q, ke: R.K, ve: R.V}, args=args)]
    assert used[0].provenance.describe().count("stands for") == 3


def test_pooling_value_and_output_kernels_come_from_their_theorems():
    x = RNG.normal(size=(2, 6, 8))
    w_q, w_k, w_v, w_o = weights(8, 2, 2, 3, 3)
    with sn.trace() as used:
        sn.attention_pool(x, x[0, :1], w_q, w_k, w_v, w_o, num_heads=2, b_v=np.ones(6), b_o=np.ones(8))
    pooled = sa.softmax(R.pooling_fold(True) * R.X.T, 1) * R.X
    P = sp.MatrixSymbol("P", 1, R.d_model)
    assert used[2] is lower_theorem("attention_pooling_folds_projections", 0, "rhs", inputs={pooled: P})
    assert set(used[2].arg_names) == {"P", "W^V", "b^V"}  # W^V after pooling; K and V never formed
    Z = sp.MatrixSymbol("Z", R.n, R.H * R.d_v)
    W_O = sp.MatrixSymbol("W^O", R.H * R.d_v, R.d_model)
    assert used[3] is lower_theorem("heads_concatenate_before_output_projection", 0, "lhs",
                                    inputs={R.CONCAT: Z, R.STACK_O: W_O})


def test_shift_zero_is_kept_only_when_its_result_is_accurate():
    from symattn.numeric.blocked import unshifted_is_accurate

    q, k, v = RNG.normal(size=(2, 5, 4)) / 2, RNG.normal(size=(2, 7, 4)), RNG.normal(size=(2, 7, 3))
    s = q @ np.swapaxes(k, -1, -2)
    U = np.exp(s) @ np.concatenate([v, np.ones((2, 7, 1))], axis=-1)  # exp(S) [V 1], c = 0
    assert unshifted_is_accurate(U, 7)
    for bad in (np.inf, np.nan, 0.0, 1e-300):  # overflow, NaN, a row that vanished or is subnormal-bound
        worse = U.copy()
        worse[1, 2, -1 if bad in (0.0, 1e-300) else 0] = bad
        assert not unshifted_is_accurate(worse, 7), bad
    assert unshifted_is_accurate(U.astype(np.float32) * 1e-15, 7)  # float32: floor m e^-40 ~ 3e-17
    assert not unshifted_is_accurate(U.astype(np.float32) * 1e-19, 7)
    for scale in (1, 1000):  # scores in the thousands: exp overflows, the shifted form takes over
        out = sn.blocked_core(q * scale, k, v)
        np.testing.assert_allclose(out, sn.attention(q * scale * 2, k, v), rtol=1e-10)
        assert np.isfinite(out).all()
    plus = np.zeros((5, 7))
    plus[0, 3] = 800.0  # a positive mask entry: exp(800) overflows float64 without a shift
    np.testing.assert_allclose(sn.blocked_core(q, k, v, mask=plus),
                               sn.attention(q * 2, k, v, mask=plus), rtol=1e-10)


def test_a_row_masked_by_large_finite_values_stays_the_definition():
    x = RNG.normal(size=(3, 4))
    eye = np.eye(4)
    mask = np.zeros((3, 3))
    mask[1] = -1e9  # every key of row 1 pushed down by the same amount: its softmax is unchanged
    masked = sn.multihead_attention(x, x, x, eye, eye, eye, eye, num_heads=1, mask=mask)
    plain = sn.multihead_attention(x, x, x, eye, eye, eye, eye, num_heads=1)
    np.testing.assert_allclose(masked[1], plain[1], rtol=1e-6)
    assert np.isfinite(masked).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_merge_is_exact_when_a_row_sees_no_key_in_its_first_block(dtype):
    q = np.array([[1.0]], dtype)
    k = np.array([[1.0], [1.0], [-800.0], [-799.0]], dtype)
    v = np.array([[1.0], [2.0], [3.0], [4.0]], dtype)
    mask = np.array([[-np.inf, -np.inf, 0.0, 0.0]])  # left padding: the first key block is hidden
    s = np.array([-800.0, -799.0])
    want = (np.exp(s - s.max()) @ np.array([3.0, 4.0])) / np.exp(s - s.max()).sum()
    for block_size in (None, 1, 2, 3):
        got = sn.blocked_core(q, k, v, mask=mask, block_size=block_size)
        np.testing.assert_allclose(got[0, 0], want, rtol=1e-6)


@pytest.mark.parametrize("kw", [{"block_size": -1}, {"block_size": 0}, {"block_size": 2.5}, {"tile": 0}])
def test_blocked_core_refuses_bad_block_and_tile_sizes(kw):
    q = np.ones((2, 3))
    with pytest.raises(InputError, match=r"expected a positive integer"):
        sn.blocked_core(q, q, q, **kw)


def test_blocked_core_refuses_batches_that_do_not_broadcast():
    with pytest.raises(ShapeError, match=r"batch axes do not broadcast"):
        sn.blocked_core(np.ones((2, 3, 4)), np.ones((3, 3, 4)), np.ones((3, 3, 4)))


def test_a_non_finite_key_bias_propagates_through_attention_pooling():
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    eye = np.eye(8)
    b_k = np.zeros(8)
    b_k[1] = np.nan  # head 0 (columns 0..3) gets a NaN key bias; head 1 stays finite
    out = sn.attention_pool(x, x[0, :1], eye, eye, eye, b_k=b_k, num_heads=2)
    assert np.isnan(out[..., :4]).all() and np.isfinite(out[..., 4:]).all()


def test_numeric_functions_name_bad_shapes_instead_of_numpy_errors():
    r = np.random.default_rng(0)
    with pytest.raises(ShapeError, match=r"batch axes .* do not broadcast: query \(2, 3, 4\), key \(3, 5, 4\)"):
        sn.attention(r.random((2, 3, 4)), r.random((3, 5, 4)), r.random((3, 5, 4)))
    with pytest.raises(InputError, match=r"scale: expected a real number"):
        sn.attention(r.random((3, 4)), r.random((5, 4)), r.random((5, 4)), scale="a")
    with pytest.raises(ShapeError, match=r"key: a matrix needs at least one row"):
        sn.attention(r.random((3, 4)), r.random((0, 4)), r.random((0, 4)))
    with pytest.raises(ShapeError, match=r"key_cache's d_k is 5 but new_key's d_k is 4"):
        sn.kv_decode_step(r.random((1, 4)), r.random((1, 4)), r.random((1, 2)), r.random((3, 5)), r.random((3, 2)))


def test_products_that_all_underflow_send_the_tile_to_the_shifted_form():
    """Scores near -60 and values near 1e-300 in float64 (-30 and 1e-35 in float32): every product
    exp(s) v underflows to 0 with the shift 0, a numerator of exactly 0; the answer is the mean of
    the values, which the row max as the shift keeps. A column of zeros stays exactly 0."""
    for dtype, score, value in ((np.float64, 60.0, 1e-300), (np.float32, 30.0, 1e-35)):
        q = np.array([[-1.0]], dtype)
        k = np.full((4, 1), score, dtype)
        v = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]], dtype) * dtype(value)
        for base2 in (True, False):
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(blocked, "BASE2", base2)
                out = sn.blocked_core(q, k, v)
            np.testing.assert_allclose(out[0, 0], 2.5 * value, rtol=1e-5)
            assert out[0, 1] == 0
    from symattn.numeric.blocked import unshifted_is_accurate

    U = np.array([[0.0, 0.0, 1.0]])  # numerators 0, denominator 1
    assert not unshifted_is_accurate(U, 4, np.array([[1e-300, 0.0]] * 4))
    assert unshifted_is_accurate(U, 4, np.zeros((4, 2)))
    assert not unshifted_is_accurate(U, 4)
