"""Properties of the definitions that mutation testing found unchecked (docs/mutation.md): GQA and
MQA, RoPE, permutations, structured matrices, the KV cache, cross-attention, dimensions, the
numeric nodes, pooling, score functions and shape checking. Each test states what the definition
means, at the boundary where a small change to the code would show."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.defs.permutation import PermIndex
from symattn.defs.score import dot


def test_impose_mirrors_every_matrix_of_a_stack_of_any_rank():
    # the last two axes are the matrix; the leading axes (here 2 × 3) are a batch of any sizes
    value = np.arange(2 * 3 * 4 * 4, dtype=float).reshape(2, 3, 4, 4)
    out = sa.Symmetric.impose(value)
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))
    np.testing.assert_array_equal(np.triu(out), np.triu(value))  # the upper triangle is kept


# --- the numeric nodes: each entry is its definition, and the elementwise ones act blockwise


def _explicit_entries(node, formula):
    """Check entry (r, c) of ``node`` (through the entrywise strategy) against formula(r, c)."""
    from symattn.proof.entrywise import entry

    rows, cols = node.shape
    for r in range(rows):
        for c in range(cols):
            assert entry(node, sp.Integer(r), sp.Integer(c)) == formula(r, c), (node, r, c)


def test_entries_of_the_numeric_nodes_are_their_definitions():
    from symattn.defs.numeric_nodes import DivideRows, RowOf, ScaleRows, ShiftRows

    A, c = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("c", 2, 1)   # not square: rows and columns differ
    _explicit_entries(sa.Exp(A), lambda r, k: sp.exp(A[r, k]))
    _explicit_entries(sa.Log(A), lambda r, k: sp.log(A[r, k]))
    _explicit_entries(ShiftRows(A, c), lambda r, k: A[r, k] - c[r, 0])
    _explicit_entries(ScaleRows(c, A), lambda r, k: c[r, 0] * A[r, k])
    _explicit_entries(DivideRows(A, c), lambda r, k: A[r, k] / c[r, 0])
    _explicit_entries(RowOf(A, 1), lambda r, k: A[1, k])
    assert ShiftRows(A, c).shape == ScaleRows(c, A).shape == DivideRows(A, c).shape == (2, 3)
    k = sp.Symbol("k", integer=True)
    assert RowOf(A, 1).shape == (1, 3) and RowOf(A, k).free_symbols == RowOf(A, 1).free_symbols | {k}


def test_elementwise_nodes_act_on_each_block_of_a_block_matrix():
    from symattn.defs.numeric_nodes import ShiftRows

    A, B, c = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("B", 2, 2), sp.MatrixSymbol("c", 2, 1)
    row = sp.BlockMatrix([[A, B]])
    assert sa.Exp(row).doit() == sp.BlockMatrix([[sa.Exp(A), sa.Exp(B)]])
    assert sa.Log(row).doit() == sp.BlockMatrix([[sa.Log(A), sa.Log(B)]])
    assert ShiftRows(row, c).doit() == sp.BlockMatrix([[ShiftRows(A, c), ShiftRows(B, c)]])
    C = sp.MatrixSymbol("C", 1, 3)
    column = sp.BlockMatrix([[A], [C]])  # entry by entry, so a block column is split too
    assert sa.Exp(column).doit() == sp.BlockMatrix([[sa.Exp(A)], [sa.Exp(C)]])
    assert ShiftRows(column, sp.MatrixSymbol("c3", 3, 1)).doit() == ShiftRows(column, sp.MatrixSymbol("c3", 3, 1))


def test_doit_on_a_numeric_node_evaluates_its_arguments_unless_deep_is_false():
    from symattn.defs.numeric_nodes import DivideRows, RowOf, ScaleRows, ShiftRows

    A, c = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("c", 2, 1)
    lazy_A, lazy_c = sp.Transpose(A.T), sp.Transpose(c.T)            # evaluate to A and c
    for node, done in ((sa.Exp(lazy_A), sa.Exp(A)), (sa.Log(lazy_A), sa.Log(A)),
                       (ShiftRows(lazy_A, lazy_c), ShiftRows(A, c)), (ScaleRows(lazy_c, lazy_A), ScaleRows(c, A)),
                       (DivideRows(lazy_A, lazy_c), DivideRows(A, c)), (RowOf(lazy_A, 1), RowOf(A, 1))):
        assert node.doit() == done, node
        assert node.doit(deep=False) == node, node


def test_the_row_causal_mask_is_the_transposed_causal_mask_aligned_bottom_right():
    from symattn.defs.numeric_nodes import row_causal_mask

    for n, m in ((1, 1), (2, 3), (3, 3), (1, 4)):
        M = sp.Matrix(row_causal_mask(n, m).doit().as_explicit())
        assert M.shape == (n, m)
        for i in range(n):
            for j in range(m):
                assert M[i, j] == (0 if j <= i + m - n else -sp.oo), (n, m, i, j)


# --- GQA and MQA: query head h reads the key/value weights of its group g(h)

_d, _n, _dk = sa.dims("d n d_k")
_X = sp.MatrixSymbol("X", _d, _n)
_Wq, _Wk, _Wv = (sa.Family(s, _dk, _d) for s in ("W^Q", "W^K", "W^V"))
_Wo = sa.Family("W^O", _d, _dk)


def _heads_by_hand(H, key, value, score=None, form="sum"):
    heads = [sa.attention(_Wq[h] * _X, key(h) * _X, value(h) * _X, score=score) for h in range(1, H + 1)]
    if form == "sum":
        return sp.MatAdd(*[_Wo[h] * heads[h - 1] for h in range(1, H + 1)]).doit()
    return (sp.BlockMatrix([[_Wo[h] for h in range(1, H + 1)]]) * sp.BlockMatrix([[x] for x in heads])).doit()


@pytest.mark.parametrize("form", ["sum", "block"])
@pytest.mark.parametrize("score", [None, dot, sa.ScoreFunction("f")])
def test_mqa_shares_one_key_and_one_value_weight_among_all_heads(form, score):
    W_K, W_V = sp.MatrixSymbol("W^K", _dk, _d), sp.MatrixSymbol("W^V", _dk, _d)
    got = sa.mqa(_X, _X, _X, _Wq, W_K, W_V, _Wo, H=2, form=form, score=score).doit()
    assert got == _heads_by_hand(2, lambda h: W_K, lambda h: W_V, score, form)


@pytest.mark.parametrize("form", ["sum", "block"])
@pytest.mark.parametrize("score", [None, dot, sa.ScoreFunction("f")])
def test_gqa_gives_head_h_the_keys_and_values_of_its_group(form, score):
    # H = 4 query heads in G = 2 groups: heads 1, 2 read group 1 and heads 3, 4 read group 2
    got = sa.gqa(_X, _X, _X, _Wq, _Wk, _Wv, _Wo, H=4, G=2, form=form, score=score).doit()
    assert got == _heads_by_hand(4, lambda h: _Wk[(h + 1) // 2], lambda h: _Wv[(h + 1) // 2], score, form)
    listed = sa.gqa(_X, _X, _X, _Wq, [_Wk[1], _Wk[2]], [_Wv[1], _Wv[2]], _Wo, H=4, G=2, form=form, score=score)
    assert listed.doit() == got


def test_the_group_of_a_head_is_its_block_of_h_over_g_consecutive_heads():
    from symattn.defs.gqa import group_of

    for G in (1, 2, 3):
        for r in (1, 2, 3):
            heads = range(1, G * r + 1)
            assert [group_of(h, G * r, G) for h in heads] == [(h - 1) // r + 1 for h in heads]
    G, r = sa.dims("G r")
    assert group_of(1, G * r, G) == 1 and group_of(r + 1, G * r, G) == 2


def test_repeat_kv_heads_prints_its_nested_binders():
    from symattn.defs.gqa import repeat_kv_heads

    G, r, d_k, m = sa.dims("G r d_k m")
    K = sa.Family("K", d_k, m)
    assert str(repeat_kv_heads(K, G, r)) == "HeadStack(HeadStack(K_g, j=1..r), g=1..G)"
    assert str(repeat_kv_heads(lambda g: K[g].T, G, r, "row")) == "HeadConcat(HeadConcat(K_g.T, j=1..r), g=1..G)"
    assert repeat_kv_heads(K, 2, 3).doit().shape == (6 * d_k, m)


# --- RoPE


def test_llamas_frequencies_start_at_one_and_fall_by_base_to_the_minus_one_over_p():
    from symattn.defs.rope import llama_theta

    p = sa.dims("p")
    theta = llama_theta(p)
    assert theta(1) == 1 and theta(2) == sp.Integer(10000) ** (-1 / p) and theta(p + 1) == sp.Rational(1, 10000)
    assert llama_theta(4, base=100)(3) == sp.Integer(100) ** sp.Rational(-2, 4)


def test_block_diag_doit_writes_out_every_block_and_evaluates_it_unless_deep_is_false():
    from symattn.defs.rope import BlockDiag, i

    A = sp.MatrixSymbol("A", 2, 2)
    lazy = sp.MatAdd(i * A, A)                                   # evaluates to (i + 1)·A
    B = BlockDiag(lazy, i, 3)
    assert B.doit().as_explicit() == sp.BlockDiagMatrix(2 * A, 3 * A, 4 * A).as_explicit()
    assert B.doit().blockshape == (3, 3)
    p = sa.dims("p")
    assert BlockDiag(lazy, i, p).doit() == BlockDiag((i + 1) * A, i, p)
    assert BlockDiag(lazy, i, p).doit(deep=False).body == lazy
    assert str(BlockDiag(A, i, p)) == "BlockDiag(A, i=1..p)"


# --- permutations: σ(σ⁻¹(k)) = k, and nothing else cancels


def test_a_permutation_index_cancels_only_against_its_own_inverse():
    s, t = sa.Permutation("P", sa.dims("n")).args[0], sa.Permutation("Q", sa.dims("n")).args[0]
    n, m = sa.dims("n m")
    k = sp.Symbol("k", integer=True)
    assert PermIndex(s, n, PermIndex(s, n, k, 1), 0) == k and PermIndex(s, n, PermIndex(s, n, k, 0), 1) == k
    for inner in (PermIndex(t, n, k, 1), PermIndex(s, m, k, 1), PermIndex(s, n, k, 0)):   # other σ, other n, same way
        assert PermIndex(s, n, inner, 0).args[2] == inner, inner


def test_a_permutation_matrix_has_entry_one_exactly_where_i_is_sigma_of_j():
    n = sa.dims("n")
    P = sa.Permutation("P", n)
    i, j = sp.symbols("i j", integer=True)
    s = P.args[0]
    assert P._entry(i, j) == sp.KroneckerDelta(i, P.sigma(j)) and P.sigma(j) == PermIndex(s, n, j, 0)
    assert P.sigma(j, 1).args == (s, n, j, 1)
    assert str(P.sigma(j)) == "P(j)" and str(P.sigma(j, 1)) == "P⁻¹(j)"


# --- the KV cache and cross-attention

_t, _dv = sa.dims("t d_v")


def _error(call):
    with pytest.raises(sa.SymattnError) as err:
        call()
    return str(err.value)


def test_a_cache_grows_by_columns_or_by_rows_and_decodes_with_the_new_query():
    from symattn.defs.cache import KVCache

    K, V = sp.MatrixSymbol("K", _dk, _t), sp.MatrixSymbol("V", _dv, _t)
    k, v, q = sp.MatrixSymbol("k", _dk, 1), sp.MatrixSymbol("v", _dv, 1), sp.MatrixSymbol("q", _dk, 1)
    col = KVCache(K, V)
    assert col.length == _t and col.extend(k, v).length == _t + 1
    grown = col.extend(k, v)
    assert grown.keys == sp.BlockMatrix([[K, k]]) and grown.values == sp.BlockMatrix([[V, v]])
    f = sa.ScoreFunction("f")
    assert col.decode(q, k, v, score=f) == sa.attention(q, grown.keys, grown.values, score=f)
    row = KVCache(K.T, V.T, "row")
    assert row.length == _t and row.extend(k.T, v.T).length == _t + 1
    grown = row.extend(k.T, v.T)
    assert grown.convention == "row" and grown.keys == sp.BlockMatrix([[K.T], [k.T]])
    assert grown.values == sp.BlockMatrix([[V.T], [v.T]])
    assert row.decode(q.T, k.T, v.T) == sa.attention(q.T, grown.keys, grown.values, convention="row")


def test_cache_errors_name_the_operation_and_the_operands():
    from symattn.defs.cache import KVCache

    K, V = sp.MatrixSymbol("K", _dk, _t), sp.MatrixSymbol("V", _dv, _t)
    bad_V = sp.MatrixSymbol("V", _dv, _t + 1)
    assert _error(lambda: KVCache(K, bad_V)) == (
        "KVCache(keys, values): the cache needs one value per key.\n  keys  : d_k × t\n  values: d_v × t + 1\n"
        "  the dimensions t and t + 1 are not known to be equal")
    assert _error(lambda: KVCache(K.T, bad_V.T, "row")).startswith(
        "KVCache(keys, values): the cache needs one value per key.\n  keys  : t × d_k\n  values: t + 1 × d_v\n")
    col, row = KVCache(K, V), KVCache(K.T, V.T, "row")
    k, v = sp.MatrixSymbol("k", _dk, 1), sp.MatrixSymbol("v", _dv, 1)
    wide_k, wide_v = sp.MatrixSymbol("k", _dk + 1, 1), sp.MatrixSymbol("v", _dv + 1, 1)
    assert _error(lambda: col.extend(wide_k, v)) == (
        "KVCache.extend(k, v): the new key must have d_k rows.\n  keys: d_k × t\n  k   : d_k + 1 × 1\n"
        "  the dimensions d_k + 1 and d_k are not known to be equal")
    assert _error(lambda: col.extend(k, wide_v)).startswith(
        "KVCache.extend(k, v): the new value must have d_v rows.\n  values: d_v × t\n  v     : d_v + 1 × 1\n")
    assert _error(lambda: row.extend(wide_k.T, v.T)).startswith(
        "KVCache.extend(k, v): the new key must have d_k columns.\n  keys: t × d_k\n  k   : 1 × d_k + 1\n")
    assert _error(lambda: row.extend(k.T, wide_v.T)).startswith(
        "KVCache.extend(k, v): the new value must have d_v columns.\n  values: t × d_v\n  v     : 1 × d_v + 1\n")
    assert _error(lambda: KVCache(K, 2)).startswith("KVCache(keys, values): values must be a matrix expression")
    assert _error(lambda: col.extend(1, v)).startswith("KVCache.extend(k, v): k must be a matrix expression")


def test_cross_attention_takes_queries_from_x_and_keys_and_values_from_y():
    m = sa.dims("m")
    X, Y = sp.MatrixSymbol("X", _d, _n), sp.MatrixSymbol("Y", _d, m)
    A, B, C = (sp.MatrixSymbol(s, _dk, _d) for s in "ABC")
    f = sa.ScoreFunction("f")
    assert sa.cross_attention(X, Y, A, B, C, score=f) == sa.attention(A * X, B * Y, C * Y, score=f)
    assert sa.cross_attention(X.T, Y.T, A.T, B.T, C.T, convention="row") == sa.attention(
        X.T * A.T, Y.T * B.T, Y.T * C.T, convention="row")
    assert sa.self_attention(X, A, B, C, score=f) == sa.attention(A * X, B * X, C * X, score=f)
    assert sa.self_attention(X.T, A.T, B.T, C.T, convention="row") == sa.attention(
        X.T * A.T, X.T * B.T, X.T * C.T, convention="row")


def test_cross_attention_errors_name_the_projection_that_does_not_fit():
    m = sa.dims("m")
    X, Y = sp.MatrixSymbol("X", _d, _n), sp.MatrixSymbol("Y", _d, m)
    W, U = sp.MatrixSymbol("W", _dk, _d), sp.MatrixSymbol("U", _dk, _d + 1)
    assert _error(lambda: sa.cross_attention(X, Y, U, W, W)) == (
        "cross_attention(X, Y): cannot form W^Q·X.\n  W^Q: d_k × d + 1\n  X  : d × n\n"
        "  the dimensions d + 1 and d are not known to be equal")
    assert _error(lambda: sa.cross_attention(X, Y, W, U, W)).startswith(
        "cross_attention(X, Y): cannot form W^K·Y.\n  W^K: d_k × d + 1\n  Y  : d × m\n")
    assert _error(lambda: sa.cross_attention(X.T, Y.T, U.T, W.T, W.T, convention="row")).startswith(
        "cross_attention(X, Y): cannot form X·W^Q.\n  X  : n × d\n  W^Q: d + 1 × d_k\n")
    assert _error(lambda: sa.cross_attention(X.T, Y.T, W.T, W.T, U.T, convention="row")).startswith(
        "cross_attention(X, Y): cannot form Y·W^V.\n  Y  : m × d\n  W^V: d + 1 × d_k\n")
    assert _error(lambda: sa.cross_attention(X, 1, W, W, W)).startswith("cross_attention(X, Y): Y must be a matrix")


# --- pooling


def test_multihead_pooling_pools_each_head_with_its_own_weights_in_both_forms_and_conventions():
    from symattn.defs.pooling import multihead_pool, multihead_pool_sum, query_attention_pool

    N = sa.dims("N")
    X, q = sp.MatrixSymbol("X", _d, N), sp.MatrixSymbol("q", _d, 1)
    Wp, Wk, Wv = (sa.Family(s, _dk, _d) for s in ("W_p", "W^K", "W^V"))
    Wo = sa.Family("W^O", _d, _dk)
    pools = [query_attention_pool(X, q, Wp[h], Wk[h], Wv[h]) for h in (1, 2)]
    by_hand = Wo[1] * pools[0] + Wo[2] * pools[1]
    assert multihead_pool_sum(X, q, Wp, Wk, Wv, Wo, H=2).doit() == by_hand.doit()
    block = multihead_pool(X, q, Wp, Wk, Wv, Wo, H=2).doit()
    assert block == (sp.BlockMatrix([[Wo[1], Wo[2]]]) * sp.BlockMatrix([[pools[0]], [pools[1]]])).doit()
    lists = [[M[1], M[2]] for M in (Wp, Wk, Wv, Wo)]
    assert multihead_pool_sum(X, q, *lists, H=2).doit() == by_hand.doit()
    # the row convention is the transpose, head by head
    T = [lambda h, M=M: M[h].T for M in (Wp, Wk, Wv, Wo)]
    rows = [query_attention_pool(X.T, q.T, Wp[h].T, Wk[h].T, Wv[h].T, "row") for h in (1, 2)]
    assert multihead_pool_sum(X.T, q.T, *T, H=2, convention="row").doit() == (
        rows[0] * Wo[1].T + rows[1] * Wo[2].T).doit()
    assert multihead_pool(X.T, q.T, *T, H=2, convention="row").doit() == (
        sp.BlockMatrix([[rows[0], rows[1]]]) * sp.BlockMatrix([[Wo[1].T], [Wo[2].T]])).doit()


def test_pooling_errors_name_the_operation_the_operand_and_the_convention():
    from symattn.defs.pooling import attention_pool, query_attention_pool

    N = sa.dims("N")
    X, W = sp.MatrixSymbol("X", _d, N), sp.MatrixSymbol("W", _dk, _d)
    assert _error(lambda: attention_pool(X, sp.MatrixSymbol("s", N, 2))) == (
        "attention_pool(X, s): the scores s must be a single column (d × 1) vector in the column convention.\n"
        "  the scores s: N × 2")
    assert _error(lambda: attention_pool(X.T, sp.MatrixSymbol("s", 2, N), "row")) == (
        "attention_pool(X, s): the scores s must be a single row (1 × d) vector in the row convention.\n"
        "  the scores s: 2 × N")
    assert _error(lambda: attention_pool(X, sp.MatrixSymbol("s", N + 1, 1))).startswith(
        "attention_pool(X, s): one score per feature: s needs N rows.\n  X: d × N\n  s: N + 1 × 1\n")
    assert _error(lambda: attention_pool(X.T, sp.MatrixSymbol("s", 1, N + 1), "row")).startswith(
        "attention_pool(X, s): one score per feature: s needs N columns.\n  s: 1 × N + 1\n  X: N × d\n")
    assert _error(lambda: query_attention_pool(X, sp.MatrixSymbol("q", _d, 2), W, W, W)) == (
        "query_attention_pool(X): the learnable query q_pool must be a single column (d × 1) vector in the "
        "column convention.\n  the learnable query q_pool: d × 2")
    assert _error(lambda: query_attention_pool(X, sp.MatrixSymbol("q", _d + 1, 1), W, W, W)).startswith(
        "query_attention_pool(X): cannot form W_p·q_pool.\n  W_p   : d_k × d\n  q_pool: d + 1 × 1\n")
    assert _error(lambda: query_attention_pool(X.T, sp.MatrixSymbol("q", 1, _d + 1), W.T, W.T, W.T, "row")).startswith(
        "query_attention_pool(X): cannot form q_pool·W_p.\n  q_pool: 1 × d + 1\n  W_p   : d × d_k\n")


def test_rope_and_repeat_kv_errors_name_the_operation_and_the_operands():
    from symattn.defs.gqa import repeat_kv_heads, repeat_kv_matrix
    from symattn.defs.rope import apply_rope

    p, G, r = sa.dims("p G r")
    assert _error(lambda: apply_rope(sp.MatrixSymbol("x", 2 * p + 1, _n), 3, p)) == (
        "apply_rope(x, t): x needs d = 2p rows.\n  R_t: 2*p × 2*p\n  x  : 2*p + 1 × n\n"
        "  the dimensions 2*p + 1 and 2*p are not known to be equal")
    assert _error(lambda: apply_rope(sp.MatrixSymbol("x", _n, 2 * p + 1), 3, p, convention="row")).startswith(
        "apply_rope(x, t): x needs d = 2p columns.\n  x  : n × 2*p + 1\n  R_t: 2*p × 2*p\n")
    assert _error(lambda: repeat_kv_heads(lambda g: 1, G, r)).startswith(
        "repeat_kv_heads: K_g must be a matrix expression")
    assert _error(lambda: repeat_kv_matrix(2, 2, 0)).startswith("repeat_kv_matrix: dimension 0 must be")


def test_the_default_score_function_is_named_f():
    Q, K = sp.MatrixSymbol("Q", _dk, _n), sp.MatrixSymbol("K", _dk, _n)
    f = sa.ScoreFunction()
    assert repr(f) == "ScoreFunction('f')" and str(f(Q, K)) == "f(Q, K)" and str(f.row(Q.T, K.T)) == "f(Q, K).T"


def test_attention_pooling_in_the_row_convention_is_the_transpose_of_the_column_convention():
    from symattn.defs.pooling import attention_pool

    X, s = sp.MatrixSymbol("X", 2, 3), sp.MatrixSymbol("s", 3, 1)     # 3 features of size 2, one score each
    column = sp.Matrix(attention_pool(X, s).as_explicit())
    row = sp.Matrix(attention_pool(X.T, s.T, "row").as_explicit())
    assert row.shape == (1, 2) and sp.simplify(row - column.T) == sp.zeros(1, 2)
    total = sum(sp.exp(s[k, 0]) for k in range(3))
    assert sp.simplify(column[0, 0] - sum(X[0, k] * sp.exp(s[k, 0]) for k in range(3)) / total) == 0


def test_numeric_nodes_print_as_their_name_and_arguments():
    from symattn.defs.numeric_nodes import DivideRows, RowOf, ShiftRows

    A, c = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("c", 2, 1)
    assert [str(x) for x in (sa.Exp(A), ShiftRows(A, c), DivideRows(A, c), RowOf(A, 1))] == [
        "Exp(A)", "ShiftRows(A, c)", "DivideRows(A, c)", "RowOf(A, 1)"]


def test_rope_uses_the_frequencies_it_is_given():
    from symattn.defs.rope import i, rope, rotation

    p, t = sa.dims("p t")
    theta = sp.Function("theta")
    assert rope(t, p, theta).body == rotation(t * theta(i))
    assert rope(t, p).body == rotation(t * sp.Integer(10000) ** (-(i - 1) / p))


def test_a_mask_may_only_be_a_summand_of_a_softmax_argument():
    from symattn.defs.mask_placement import check_mask_placement

    n = sa.dims("n")
    S, M = sp.MatrixSymbol("S", n, n), sa.CausalMask(n)
    check_mask_placement(sa.softmax(S + M))                      # allowed, also with the default where=""
    check_mask_placement(sa.softmax(2 * (S + M)))
    with pytest.raises(sa.ShapeError, match="may only be added to the scores inside a Softmax"):
        check_mask_placement(S + M)


def test_mqa_rope_and_pooling_errors_name_the_operand():
    from symattn.defs.pooling import query_attention_pool
    from symattn.defs.rope import apply_rope

    p, N = sa.dims("p N")
    W = sa.Family("W", _dk, _d)
    assert _error(lambda: sa.mqa(_X, _X, _X, W, 1, sp.MatrixSymbol("V", _dk, _d), W, H=2)).startswith(
        "mqa: W^K must be a matrix expression")
    assert _error(lambda: apply_rope(1, 3, p)).startswith("apply_rope(x, t): x must be a matrix expression")
    X, w, u = sp.MatrixSymbol("X", _d, N), sp.MatrixSymbol("W", _dk, _d), sp.MatrixSymbol("U", _dk, _d + 1)
    assert _error(lambda: query_attention_pool(X, sp.MatrixSymbol("q", _d, 1), w, u, w)).startswith(
        "query_attention_pool(X): cannot form W^K·X.\n  W^K: d_k × d + 1\n  X  : d × N\n")
    assert _error(lambda: query_attention_pool(X.T, sp.MatrixSymbol("q", 1, _d), w.T, u.T, w.T, "row")).startswith(
        "query_attention_pool(X): cannot form X·W^K.\n  X  : N × d\n  W^K: d + 1 × d_k\n")
