"""symattn.lowering (behind symattn.lower): the batched printer, matrix-chain ordering, Kernel, provenance."""

import itertools

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symattn as sa
from symattn.errors import InputError, LoweringError, ShapeError
from symattn.lowering import chain_order, lower, lower_theorem
from symattn.proof.evaluate import evaluate
from symattn.theorems import REGISTRY, Theorem

n, m, d_k, d_v, d = sa.dims("n m d_k d_v d")
Q, K = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k)
V = sp.MatrixSymbol("V", m, d_v)
ROW = sa.attention(Q, K, V, convention="row")

small = st.integers(1, 4)
batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


def _per_matrix(expr, env_batched, batch):
    """Apply the float evaluator to each matrix of the stack."""
    out = np.empty(batch, dtype=object)
    for idx in itertools.product(*[range(b) for b in batch]):
        env = {k: np.broadcast_to(v, batch + v.shape[-2:])[idx] for k, v in env_batched.items()}
        out[idx] = evaluate(expr, env)
    return np.array(out.tolist()) if batch else evaluate(expr, env_batched)


@settings(max_examples=25, deadline=None)
@given(batch=batch_shapes, nn=small, mm=small, dk=small, dv=small, seed=st.integers(0, 2**16))
def test_batched_kernel_equals_per_matrix_loop(batch, nn, mm, dk, dv, seed):
    rng = np.random.default_rng(seed)
    env = {"Q": rng.normal(size=batch + (nn, dk)), "K": rng.normal(size=(mm, dk)),
           "V": rng.normal(size=batch + (mm, dv))}
    got = lower(ROW, args=[Q, K, V])(**env)
    concrete = ROW.subs({n: nn, m: mm, d_k: dk, d_v: dv})
    np.testing.assert_allclose(got, _per_matrix(concrete, env, batch), rtol=1e-12, atol=1e-12)


def test_column_convention_is_transpose_of_row():
    col = sa.attention(Q.T, K.T, V.T)  # V.T * Softmax(K Q.T / sqrt(d_k))
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    a = lower(ROW, args=[Q, K, V])(q, k, v)
    b = lower(col, args=[Q, K, V])(q, k, v)
    np.testing.assert_allclose(np.swapaxes(b, -1, -2), a, rtol=1e-12)


def test_float32_in_gives_float32_out_and_matches_float64():
    rng = np.random.default_rng(2)
    arrs = [rng.normal(size=s).astype(np.float32) for s in ((3, 7, 8), (3, 9, 8), (3, 9, 5))]
    k = lower(ROW, args=[Q, K, V])
    out32 = k(*arrs)
    assert out32.dtype == np.float32
    out64 = k(*[a.astype(np.float64) for a in arrs])
    assert out64.dtype == np.float64
    np.testing.assert_allclose(out32, out64, rtol=1e-4, atol=1e-5)


def test_keywords_by_symbol_name_and_identifier():
    W = sp.MatrixSymbol("W^Q", d, d_k)
    X = sp.MatrixSymbol("X", n, d)
    k = lower(X * W)
    x, w = np.ones((2, 3)), np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(k(**{"W^Q": w, "X": x}), x @ w)
    np.testing.assert_allclose(k(W_Q=w, X=x), x @ w)
    np.testing.assert_allclose(k(x, w), x @ w)  # positional: the order of a statement, inputs before weights
    assert k.arg_names == ("X", "W^Q")
    with pytest.raises(InputError, match="no input 'Y'"):
        k(W_Q=w, Y=x)
    with pytest.raises(InputError, match="missing input"):
        k(W_Q=w)


def test_lowering_twice_returns_the_cached_kernel():
    assert lower(ROW, args=[Q, K, V]) is lower(ROW, args=[Q, K, V])


def test_source_is_batched_numpy():
    src = lower(ROW, args=[Q, K, V]).source
    assert "swapaxes" in src and "@" in src or "chain(" in src
    assert ".T" not in src.split("\n", 1)[1] and ".dot" not in src
    assert "softmax_(" in src


def _brute(shapes):
    """Cost of every parenthesization (exhaustive), for checking the dynamic program."""
    def best(i, j):
        if i == j:
            return 0
        return min(best(i, s) + best(s + 1, j) + shapes[i][0] * shapes[s][1] * shapes[j][1]
                   for s in range(i, j))
    return best(0, len(shapes) - 1)


def _cost(order, shapes):
    if isinstance(order, int):
        return 0, shapes[order]
    (ca, (r, _)), (cb, (_, c)) = _cost(order[0], shapes), _cost(order[1], shapes)
    inner = _cost(order[0], shapes)[1][1]
    return ca + cb + r * inner * c, (r, c)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 60), min_size=3, max_size=6))
def test_chain_order_is_optimal(sizes):
    shapes = [(a, b) for a, b in zip(sizes, sizes[1:])]
    assert _cost(chain_order(shapes), shapes)[0] == _brute(shapes)


def test_concrete_chain_is_parenthesized_cheaply():
    A, B, C = sp.MatrixSymbol("A", 50, 5), sp.MatrixSymbol("B", 5, 100), sp.MatrixSymbol("C", 100, 1)
    k = lower(A * B * C)
    assert "mm(A, mm(B, C)" in k.source
    rng = np.random.default_rng(3)
    a, b, c = rng.normal(size=(50, 5)), rng.normal(size=(5, 100)), rng.normal(size=(100, 1))
    np.testing.assert_allclose(k(A=a, B=b, C=c), a @ b @ c, rtol=1e-10)


def test_shape_mismatch_names_the_symbol_and_both_sizes():
    k = lower(ROW, args=[Q, K, V])
    with pytest.raises(ShapeError, match=r"dimension m: K has 5 rows but V has 6 rows"):
        k(np.ones((3, 4)), np.ones((5, 4)), np.ones((6, 2)))
    with pytest.raises(ShapeError, match=r"dimension d_k: Q has 4 columns but K has 3 columns"):
        k(np.ones((3, 4)), np.ones((5, 3)), np.ones((5, 2)))


@pytest.mark.parametrize("dtype, word", [(np.int64, "integer"), (np.complex128, "complex"),
                                         (np.bool_, "boolean")])
def test_integer_and_complex_inputs_are_refused(dtype, word):
    k = lower(ROW, args=[Q, K, V])
    with pytest.raises(InputError, match=f"Q: .*dtype .*{word}"):
        k(np.ones((3, 4), dtype=dtype), np.ones((5, 4)), np.ones((5, 2)))


def test_vectors_are_refused_with_their_shape():
    with pytest.raises(InputError, match=r"K: expected a matrix .* shape \(4,\)"):
        lower(ROW, args=[Q, K, V])(np.ones((3, 4)), np.ones(4), np.ones((5, 2)))


def test_nan_and_inf_propagate():
    k = lower(ROW, args=[Q, K, V])
    q = np.ones((3, 4))
    q[1, 2] = np.nan
    out = k(q, np.ones((5, 4)), np.ones((5, 2)))
    assert np.isnan(out[1]).all() and np.isfinite(out[[0, 2]]).all()
    v = np.ones((5, 2))
    v[0, 0] = np.inf
    out = k(np.ones((3, 4)), np.ones((5, 4)), v)
    assert np.isinf(out[:, 0]).all()


def _multihead(form):
    H = sa.dims("H")
    W_Q, W_K = sa.Family("W^Q", d_k, d), sa.Family("W^K", d_k, d)
    W_V, W_O = sa.Family("W^V", d_v, d), sa.Family("W^O", d, d_v)
    Xq, Xk = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m)
    Xv = sp.MatrixSymbol("V", d, m)
    return H, sa.multihead(Xq, Xk, Xv, W_Q, W_K, W_V, W_O, H=H, form=form)


def _heads_env(rng, heads, batch=()):
    """Values of Q, K, V and of every member W^X_1..W^X_heads, and the stacked arrays of the families."""
    sizes = {"Q": (4, 3), "K": (4, 5), "V": (4, 5)}
    env = {k: rng.normal(size=batch + s) for k, s in sizes.items()}
    stacked = {}
    for fam, s in (("W^Q", (2, 4)), ("W^K", (2, 4)), ("W^V", (3, 4)), ("W^O", (4, 3))):
        stacked[fam] = rng.normal(size=(heads,) + s)
        env.update({f"{fam}_{k}": stacked[fam][k - 1] for k in range(1, heads + 1)})
    return env, stacked


@pytest.mark.parametrize("form", ["sum", "block"])
@pytest.mark.parametrize("heads", [1, 2, 3])
def test_symbolic_head_count_becomes_a_head_axis_read_at_run_time(form, heads):
    H, expr = _multihead(form)
    k = lower(expr)
    assert k.arg_names == ("Q", "K", "V", "W^Q", "W^K", "W^V", "W^O")  # the order of the statement
    assert "H" not in [str(x) for x in k.extra_dims]  # H is read from the arrays
    rng = np.random.default_rng(heads)
    env, stacked = _heads_env(rng, heads, batch=(2,))
    got = k(env["Q"], env["K"], env["V"], *(stacked[f] for f in ("W^Q", "W^K", "W^V", "W^O")))
    concrete = expr.subs({H: heads, d: 4, n: 3, m: 5, d_k: 2, d_v: 3}).doit()
    want = _per_matrix(concrete, {**{x: env[x] for x in "QKV"},
                                  **{x: v for x, v in env.items() if x.startswith("W")}}, (2,))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    by_keyword = k(**{"W^O": stacked["W^O"], "W_V": stacked["W^V"], "W^K": stacked["W^K"], "W^Q": stacked["W^Q"]},
                   Q=env["Q"], K=env["K"], V=env["V"])
    np.testing.assert_allclose(by_keyword, got, rtol=0, atol=0)


def test_families_disagreeing_on_the_head_count_are_refused():
    _, expr = _multihead("sum")
    k = lower(expr)
    env, stacked = _heads_env(np.random.default_rng(0), 3)
    stacked["W^O"] = stacked["W^O"][:2]
    with pytest.raises(ShapeError, match=r"dimension H: W\^O has 2 heads \(axis -3\) but W\^V has 3 heads"):
        k(env["Q"], env["K"], env["V"], *(stacked[f] for f in ("W^Q", "W^K", "W^V", "W^O")))
    with pytest.raises(InputError, match=r"W\^Q: expected the heads of a family, \(\.\.\., H, rows, cols\)"):
        k(env["Q"], env["K"], env["V"], stacked["W^Q"][0], *(stacked[f] for f in ("W^K", "W^V", "W^O")))


def test_concrete_heads_lower_with_one_input_per_member():
    H, expr = _multihead("sum")
    two = expr.subs(H, 2).doit()
    k = lower(two)
    assert k.arg_names == ("Q", "K", "V", "W^Q_1", "W^K_1", "W^V_1", "W^O_1", "W^Q_2", "W^K_2", "W^V_2", "W^O_2")
    rng = np.random.default_rng(4)
    dims = {d: 4, n: 3, m: 5, d_k: 2, d_v: 2}
    env = {x.name: rng.normal(size=tuple(int(sp.sympify(s).subs(dims)) for s in x.shape)) for x in k.args}
    np.testing.assert_allclose(k(**env), evaluate(two.subs(dims), env), rtol=1e-10)


def test_lower_theorem_records_provenance():
    k = lower_theorem("column_row_transpose", 0, "lhs")
    assert k.provenance.theorem == "column_row_transpose"
    assert k.provenance.status == "proved" and k.provenance.general
    assert "column_row_transpose" in k.provenance.describe()


def test_lower_theorem_refuses_an_unproved_claim(monkeypatch):
    A = sp.MatrixSymbol("A", n, n)
    B = sp.MatrixSymbol("B", n, n)
    th = Theorem("test_wrong_transpose", "(AB)ᵀ = AᵀBᵀ", lambda: ((A * B).T, A.T * B.T))
    monkeypatch.setitem(REGISTRY, th.name, th)
    with pytest.raises(LoweringError, match="claim 0 of theorem test_wrong_transpose is refuted, not proved"):
        lower_theorem("test_wrong_transpose")


def test_chunked_elementwise_helpers_equal_numpy_and_survive_fork():
    import multiprocessing

    from symattn.lowering.targets import numpy as runtime

    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 700, 1000)).astype(np.float32)  # above 2 * CHUNK: the pool is used
    c = rng.normal(size=(3, 700, 1))
    np.testing.assert_allclose(runtime.rowsum(x), x.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(runtime.rowmax(x), x.max(-1, keepdims=True))
    np.testing.assert_allclose(runtime.shift_exp_(x.copy(), c.astype(np.float32)), np.exp(x - c), rtol=1e-6)
    y = x.copy()
    np.testing.assert_allclose(runtime.softmax_(y, -1), np.exp(x) / np.exp(x).sum(-1, keepdims=True),
                               rtol=1e-5)
    if "fork" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(1) as pool:  # the child must not wait on the parent's (absent) threads
            got = pool.apply_async(runtime.rowsum, (x,)).get(timeout=60)
        np.testing.assert_allclose(got, x.sum(-1, keepdims=True), rtol=1e-5)


def test_arguments_follow_the_statement_inputs_then_weights_by_head_then_biases():
    from symattn.lowering.lower import theorem_side

    k = lower(theorem_side("scale_folds_into_query_projection", 1, "lhs"))
    assert k.arg_names == ("X", "Y", "M", "W^Q", "W^K", "W^V", "b^Q", "b^K", "b^V")
    two = lower(theorem_side("repeat_kv_equals_sharing", 0, "lhs"))
    heads = [x for x in two.arg_names if x.startswith("W")]
    assert heads[:4] == ["W^Q_1", "W^K_1", "W^V_1", "W^O_1"]  # head 1 before head 2


def test_a_size_shown_only_inside_a_sum_is_solved_and_a_position_is_a_keyword():
    from symattn.lowering.lower import theorem_side

    k = lower(theorem_side("causal_mask_attends_to_prefix", 0, "lhs"))  # inputs have s + t columns
    assert [str(d) for d in k.extra_dims] == ["t"]
    rng = np.random.default_rng(6)
    q, kk, v = rng.normal(size=(2, 5)), rng.normal(size=(2, 5)), rng.normal(size=(3, 5))
    out = k(q, kk, v, t=2)  # s = 5 - 2 is read from the arrays
    concrete = theorem_side("causal_mask_attends_to_prefix", 0, "lhs").subs(
        {sa.dims("s"): 3, sa.dims("t"): 2, sa.dims("d_k"): 2, sa.dims("d_v"): 3})
    np.testing.assert_allclose(out, evaluate(concrete.doit(), {"Q": q, "K": kk, "V": v}), rtol=1e-12)
    with pytest.raises(ShapeError, match=r"dimension s = \(Q columns\) - t is -1, not a positive integer"):
        k(q, kk, v, t=6)


def test_a_group_size_is_solved_from_the_head_counts_and_must_divide():
    from symattn.lowering.lower import theorem_side

    k = lower(theorem_side("gqa_row_convention_is_the_transpose", 0, "lhs"))
    assert k.extra_dims == []  # G from W^K's heads, r = H / G from W^Q's
    rng = np.random.default_rng(8)
    arrays = {"Q": rng.normal(size=(4, 3)), "K": rng.normal(size=(4, 5)), "V": rng.normal(size=(4, 5)),
              "W^Q": rng.normal(size=(6, 2, 4)), "W^K": rng.normal(size=(4, 2, 4)),
              "W^V": rng.normal(size=(4, 3, 4)), "W^O": rng.normal(size=(6, 4, 3))}
    with pytest.raises(ShapeError, match=r"dimension r = \(W\^Q heads \(axis -3\)\)/G is 1.5, not a positive integer"):
        k(**arrays)


def test_a_free_head_index_beside_a_bound_one_is_not_captured():
    H = sa.dims("H")
    W, X = sa.Family("W", d, d), sp.MatrixSymbol("X", d, n)
    expr = W[sa.h] * X + sa.head_sum(W[sa.h] * X, H)  # W_h X with h free, plus Σ_h W_h X
    k = lower(expr)
    assert k.arg_names == ("X", "W", "h")  # the free h picks one member of the stacked family
    rng = np.random.default_rng(9)
    ws, x = rng.normal(size=(3, 2, 2)), rng.normal(size=(2, 4))
    np.testing.assert_allclose(k(X=x, W=ws, h=2), ws[1] @ x + sum(w @ x for w in ws), rtol=1e-12)


def test_a_fixed_size_may_be_a_numpy_integer_but_not_a_bool_or_a_float():
    from symattn.lowering.lower import fix_sizes

    d, n, H = sa.dims("d n H")
    W = sa.Family("W", d, d)
    e = sa.head_sum(W[sa.h] * sp.MatrixSymbol("X", d, n), H)
    assert fix_sizes(e, {"H": np.int64(2)}) == fix_sizes(e, {"H": 2})
    for bad in (True, 2.0, "2", 0, np.int32(-1)):
        with pytest.raises(LoweringError, match="is not a positive integer"):
            fix_sizes(e, {"H": bad})


def test_a_keyword_that_is_one_input_s_name_and_another_s_identifier_means_the_named_input():
    n = sa.dims("n")
    n = n[0] if isinstance(n, (list, tuple)) else n
    A, B = sp.MatrixSymbol("W^Q", n, n), sp.MatrixSymbol("W_Q", n, n)
    k = lower(A * B.T)
    a, b = np.arange(4.0).reshape(2, 2), 3 * np.eye(2)
    want = a @ b.T
    np.testing.assert_allclose(k(a, b), want)
    np.testing.assert_allclose(k(**{"W^Q": a, "W_Q": b}), want)
    np.testing.assert_allclose(k(W_Q=b, **{"W^Q": a}), want)
    np.testing.assert_allclose(k(W_Q_2=a, W_Q=b), want)  # W^Q's identifier, as W_Q keeps its own name
    assert "def _lambdifygenerated(W_Q_2, W_Q, out):" in k.source


def test_a_scale_that_a_fixed_size_turns_into_one_lowers():
    from symattn.lowering.lower import fix_sizes

    X, W = sp.MatrixSymbol("X", n, d), sp.MatrixSymbol("W", d, d_k)
    e = fix_sizes(X * sp.BlockMatrix([[W / sp.sqrt(d_k), W]]), {"d_k": 1})
    assert any(isinstance(a, sp.MatMul) and a.args[0] == 1 for a in sp.preorder_traversal(e))  # 1*W stays
    x, w = np.arange(6.0).reshape(2, 3), np.arange(3.0).reshape(3, 1)
    np.testing.assert_allclose(lower(e)(x, w), np.hstack([x @ w, x @ w]))
    k = lower_theorem("fused_qkv_projection", 0, "lhs", at={"d_k": 1})
    assert " * W_Q" not in k.source
