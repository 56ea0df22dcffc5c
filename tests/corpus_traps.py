"""More entries of the adversarial corpus (registered into ``corpus.CORPUS``): the classes that a
fresh outside set found proved wrongly or left unknown, and traps of our own.

- shapes SymPy gets wrong: strided slices whose length SymPy rounds down (refused), and those whose
  step divides their length (decided);
- undefined values: a softmax column with every entry -oo (SymPy builds nan; refused);
- determinants, traces, powers SymPy folds: det(AB), Trace(AB), (A + B)(A + B) = (A + B)², A∘A;
- deep stacks: the row and column conventions of six residual self-attention layers, and the same
  claim with one slip at one layer (weights swapped, a transpose dropped);
- biases in a softmax: a shift of every score of one normalized slice cancels, one across slices not;
- head orders permuted on one side only, or on every weight (then the sum is the same);
- masks added twice (-oo + -oo = -oo) or along the other axis;
- 1 × n shapes: a column softmax over one row is all ones, a row softmax over it is not;
- inverses, proved only where they exist;
- scalar maxima, minima, absolute values and floors.
"""

from __future__ import annotations

import sympy as sp
from corpus import claim, d, d_k, d_v, m, n, qkv, r

import symattn as sa

k = sa.dims("k")[0] if isinstance(sa.dims("k"), tuple) else sa.dims("k")
a_int = sp.Symbol("a", integer=True)
u, w = sp.symbols("u w", real=True)


# ----------------------------------------------------------------------------- strided slices
@claim("strided_slice_of_three_columns_is_one_column", False, "shapes SymPy gets wrong", refusable=True,
       note="SymPy gives X[:, ::2] of a 1 × 3 matrix the shape 1 × 1; it has two columns")
def _():
    X = sp.MatrixSymbol("X", 1, 3)
    return X[:, ::2], X[:, 0:1]


@claim("strided_keys_of_an_odd_count", False, "shapes SymPy gets wrong", refusable=True)
def _():
    Q, K, V = sp.MatrixSymbol("Q", d, 1), sp.MatrixSymbol("K", d, 2 * k + 1), sp.MatrixSymbol("V", d, 2 * k + 1)
    return sa.attention(Q, K[:, ::2], V[:, ::2]), sa.attention(Q, K[:, 0:2 * k:2], V[:, 0:2 * k:2])


@claim("strided_softmax_of_three_rows_is_one", False, "shapes SymPy gets wrong", refusable=True)
def _():
    Z = sp.MatrixSymbol("Z", 3, 1)
    return sa.softmax(Z[::2, :]), sp.ImmutableMatrix([[1]])


@claim("strided_slice_transposes", True, "shapes SymPy gets wrong")
def _():
    X = sp.MatrixSymbol("X", n, 2 * k)
    return X[:, 0:2 * k:2].T, X.T[0:2 * k:2, :]


@claim("strided_slice_is_not_the_first_half", False, "shapes SymPy gets wrong")
def _():
    X = sp.MatrixSymbol("X", n, 2 * k)
    return X[:, 0:2 * k:2], X[:, 0:k]


# ----------------------------------------------------------------------------- undefined values
@claim("softmax_of_a_fully_masked_column_doubled", False, "undefined values", refusable=True,
       note="every entry -oo: 0/0, which SymPy builds as nan on the right side")
def _():
    M = sp.ImmutableMatrix([[-sp.oo], [-sp.oo]])
    return sa.softmax(M), 2 * sa.softmax(M)


# ----------------------------------------------------------------------------- det, trace, powers
def _square(name_a="A", name_b="B"):
    return sp.MatrixSymbol(name_a, n, n), sp.MatrixSymbol(name_b, n, n)


@claim("determinant_of_a_product", True, "determinants and traces")
def _():
    A, B = _square()
    return sp.det(A * B), sp.det(A) * sp.det(B)


@claim("determinant_of_a_sum_is_not_the_sum", False, "determinants and traces")
def _():
    A, B = _square()
    return sp.det(A + B), sp.det(A) + sp.det(B)


@claim("trace_is_cyclic", True, "determinants and traces")
def _():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    return sp.Trace(A * B), sp.Trace(B * A)


@claim("trace_of_a_product_is_not_the_product_of_traces", False, "determinants and traces")
def _():
    A, B = _square()
    return sp.Trace(A * B), sp.Trace(A) * sp.Trace(B)


@claim("square_of_a_sum_keeps_both_orders", True, "powers SymPy folds")
def _():
    A, B = _square()
    return (A + B) * (A + B), A * A + A * B + B * A + B * B


@claim("square_of_a_sum_as_if_commuting", False, "powers SymPy folds")
def _():
    A, B = _square()
    return (A + B) * (A + B), A * A + 2 * A * B + B * B


@claim("entrywise_square_is_a_hadamard_power", True, "powers SymPy folds")
def _():
    X = sp.MatrixSymbol("X", n, m)
    return sp.hadamard_product(X, X), sp.HadamardPower(X, 2)


@claim("exp_of_half_log_of_a_square_is_not_the_identity", False, "powers SymPy folds",
       note="exp(log(x²)/2) = |x|")
def _():
    X = sp.MatrixSymbol("X", n, n)
    return sa.Exp(sa.Log(sp.hadamard_product(X, X)) / 2), X, {"at": [{n: 2}]}


# ----------------------------------------------------------------------------- deep stacks
def _stacks(L, slip=None):
    """(row stack on Xᵀ, transpose of the column stack) of L residual self-attention layers, built
    unevaluated (as a deep model must be); ``slip``: (layer, kind) of one mistake on the row side."""
    X = sp.MatrixSymbol("X", d, n)
    col, row = X, sp.Transpose(X)
    for layer in range(1, L + 1):
        WQ, WK, WV = (sp.MatrixSymbol(f"W^{s}_{layer}", d, d) for s in "QKV")
        col = sp.MatAdd(col, sp.MatMul(WV, col, sa.softmax(sp.MatMul(sp.Transpose(sp.MatMul(WK, col)),
                                                                     sp.MatMul(WQ, col)))))
        q, kk, v = sp.Transpose(WQ), sp.Transpose(WK), sp.Transpose(WV)
        if slip == (layer, "swap"):
            q, kk = kk, q
        if slip == (layer, "value"):
            v = WV
        scores = sp.MatMul(sp.MatMul(row, q), sp.Transpose(sp.MatMul(row, kk)))
        row = sp.MatAdd(row, sp.MatMul(sa.softmax(scores, axis=1), row, v))
    return row, sp.Transpose(col)


@claim("deep_stack_of_six_layers_row_is_column_transposed", True, "deep stacks")
def _():
    return _stacks(6)


@claim("deep_stack_with_query_and_key_weights_swapped_at_layer_4", False, "deep stacks")
def _():
    return _stacks(6, (4, "swap"))


@claim("deep_stack_with_a_value_transpose_dropped_at_layer_2", False, "deep stacks")
def _():
    return _stacks(5, (2, "value"))


# ----------------------------------------------------------------------------- biases in a softmax
@claim("bias_per_column_cancels_in_a_column_softmax", True, "biases in a softmax")
def _():
    S, b = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("b", n, 1)
    return sa.softmax(S + sp.OneMatrix(m, 1) * b.T), sa.softmax(S)


@claim("bias_per_row_does_not_cancel_in_a_column_softmax", False, "biases in a softmax")
def _():
    S, c = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("c", m, 1)
    return sa.softmax(S + c * sp.OneMatrix(1, n)), sa.softmax(S)


@claim("bias_per_query_cancels_in_a_row_softmax", True, "biases in a softmax")
def _():
    S, b = sp.MatrixSymbol("S", n, m), sp.MatrixSymbol("b", n, 1)
    return sa.softmax(S + b * sp.OneMatrix(1, m), axis=1), sa.softmax(S, axis=1)


@claim("bias_per_key_does_not_cancel_in_a_row_softmax", False, "biases in a softmax")
def _():
    S, c = sp.MatrixSymbol("S", n, m), sp.MatrixSymbol("c", m, 1)
    return sa.softmax(S + sp.OneMatrix(n, 1) * c.T, axis=1), sa.softmax(S, axis=1)


# ----------------------------------------------------------------------------- head orders
def _two_heads():
    names = ("Q", "K", "V", "O")
    shapes = ((d_k, d), (d_k, d), (d_v, d), (d, d_v))
    return [[sp.MatrixSymbol(f"W^{s}_{h}", *shape) for h in (1, 2)] for s, shape in zip(names, shapes)]


@claim("heads_reordered_on_every_weight_give_the_same_sum", True, "head order")
def _():
    X = sp.MatrixSymbol("X", d, n)
    wq, wk, wv, wo = _two_heads()
    rev = [list(reversed(x)) for x in (wq, wk, wv, wo)]
    return (sa.multihead(X, X, X, wq, wk, wv, wo, form="sum"), sa.multihead(X, X, X, *rev, form="sum"))


@claim("heads_reordered_on_the_queries_only", False, "head order")
def _():
    X = sp.MatrixSymbol("X", d, n)
    wq, wk, wv, wo = _two_heads()
    return (sa.multihead(X, X, X, wq, wk, wv, wo, form="sum"),
            sa.multihead(X, X, X, list(reversed(wq)), wk, wv, wo, form="sum"))


# ----------------------------------------------------------------------------- masks
@claim("a_causal_mask_added_twice_is_added_once", True, "masks", refusable=True,
       note="-oo + -oo = -oo and 0 + 0 = 0; a refusal of 2M as a scaled mask is acceptable")
def _():
    S, M = sp.MatrixSymbol("S", n, n), sa.CausalMask(n)
    return sa.softmax(S + M + M, axis=1), sa.softmax(S + M, axis=1)


@claim("a_causal_mask_along_the_other_axis", False, "masks")
def _():
    S, M = sp.MatrixSymbol("S", n, n), sa.CausalMask(n)
    return sa.softmax(S + M, axis=1), sa.softmax(S + M.T, axis=1)


# ----------------------------------------------------------------------------- 1 × n shapes
@claim("column_softmax_of_one_row_is_all_ones", True, "1 × n shapes")
def _():
    X = sp.MatrixSymbol("X", 1, n)
    return sa.softmax(X), sp.OneMatrix(1, n)


@claim("row_softmax_of_one_row_is_not_all_ones", False, "1 × n shapes")
def _():
    X = sp.MatrixSymbol("X", 1, n)
    return sa.softmax(X, axis=1), sp.OneMatrix(1, n)


@claim("attention_with_one_key_repeats_its_value", True, "1 × n shapes")
def _():
    Q, K, V = qkv(d_k, n, 1, d_v)
    return sa.attention(Q, K, V), V * sp.OneMatrix(1, n)


@claim("attention_with_one_query_is_not_the_mean_of_the_values", False, "1 × n shapes")
def _():
    Q, K, V = qkv(d_k, 1, m, d_v)
    return sa.attention(Q, K, V), V * sp.OneMatrix(m, 1) / m


# ----------------------------------------------------------------------------- inverses
@claim("inverse_of_a_product_reverses_the_order", True, "inverses")
def _():
    A, B = _square()
    return (A * B).inverse(), B.inverse() * A.inverse()


@claim("inverse_of_a_product_in_the_same_order", False, "inverses")
def _():
    A, B = _square()
    return (A * B).inverse(), A.inverse() * B.inverse()


# ----------------------------------------------------------------------------- scalar max, min, abs, floor
@claim("max_plus_min_is_the_sum", True, "scalar max/min/abs/floor")
def _():
    return sp.Max(u, w) + sp.Min(u, w), u + w


@claim("max_minus_min_is_the_distance", True, "scalar max/min/abs/floor")
def _():
    return sp.Max(u, w) - sp.Min(u, w), sp.Abs(u - w)


@claim("max_minus_min_is_not_the_difference", False, "scalar max/min/abs/floor")
def _():
    return sp.Max(u, w) - sp.Min(u, w), u - w


@claim("exp_of_a_max_is_the_max_of_the_exps", True, "scalar max/min/abs/floor")
def _():
    return sp.exp(sp.Max(u, w)), sp.Max(sp.exp(u), sp.exp(w))


@claim("floor_and_ceiling_of_a_half_sum_to_the_integer", True, "scalar max/min/abs/floor")
def _():
    return sp.floor(a_int / 2) + sp.ceiling(a_int / 2), a_int


@claim("twice_the_floor_of_a_half_is_not_the_integer", False, "scalar max/min/abs/floor")
def _():
    return 2 * sp.floor(a_int / 2), a_int


@claim("a_max_scaled_by_a_positive_number", True, "scalar max/min/abs/floor")
def _():
    c = sp.Symbol("c", positive=True)
    return sp.Max(c * u, c * w), c * sp.Max(u, w)


@claim("a_max_scaled_by_any_real_number", False, "scalar max/min/abs/floor")
def _():
    c = sp.Symbol("c", real=True)
    return sp.Max(c * u, c * w), c * sp.Max(u, w)


# ----------------------------------------------------------------------------- logarithms
@claim("log_of_exp_is_the_identity", True, "entrywise log")
def _():
    X = sp.MatrixSymbol("X", n, r)
    return sa.Log(sa.Exp(X)), X


@claim("log_of_exp2_is_a_scaling_by_ln_2", True, "entrywise log")
def _():
    X = sp.MatrixSymbol("X", n, r)
    return sa.Log(sa.Exp2(X)), sp.log(2) * X


@claim("log_of_exp2_is_not_the_identity", False, "entrywise log")
def _():
    X = sp.MatrixSymbol("X", n, r)
    return sa.Log(sa.Exp2(X)), X


# ----------------------------------------------------------------------------- blocks, rows, permutations
@claim("exp_of_stacked_blocks_is_blockwise", True, "blocks and row maps")
def _():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", d, m)
    return sa.Exp(sp.BlockMatrix([[A], [B]])), sp.BlockMatrix([[sa.Exp(A)], [sa.Exp(B)]])


@claim("exp_of_stacked_blocks_swapped", False, "blocks and row maps")
def _():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", n, m)
    return sa.Exp(sp.BlockMatrix([[A], [B]])), sp.BlockMatrix([[sa.Exp(B)], [sa.Exp(A)]])


@claim("feature_map_of_stacked_rows", True, "blocks and row maps")
def _():
    from symattn.defs.feature_map import FeatureMap

    U, W = sp.MatrixSymbol("U", n, d), sp.MatrixSymbol("W", m, d)
    return FeatureMap("phi", sp.BlockMatrix([[U], [W]]), r), sp.BlockMatrix([[FeatureMap("phi", U, r)],
                                                                           [FeatureMap("phi", W, r)]])


@claim("feature_map_commutes_with_a_row_permutation", True, "blocks and row maps")
def _():
    from symattn.defs.feature_map import FeatureMap

    P, X = sa.Permutation("P", n), sp.MatrixSymbol("X", n, d)
    return FeatureMap("phi", P * X, r), P * FeatureMap("phi", X, r)


@claim("feature_map_ignores_a_row_permutation", False, "blocks and row maps")
def _():
    from symattn.defs.feature_map import FeatureMap

    P, X = sa.Permutation("P", n), sp.MatrixSymbol("X", n, d)
    return FeatureMap("phi", P * X, r), FeatureMap("phi", X, r)


@claim("inverse_of_a_permutation_is_its_transpose", True, "blocks and row maps")
def _():
    P = sa.Permutation("P", n)
    return sp.Inverse(P), P.T


@claim("inverse_of_a_permutation_is_not_itself", False, "blocks and row maps")
def _():
    P = sa.Permutation("P", n)
    return sp.Inverse(P), P


@claim("a_symmetric_bilinear_form_is_symmetric", True, "1 × n shapes")
def _():
    x, y, S = sp.MatrixSymbol("x", n, 1), sp.MatrixSymbol("y", n, 1), sa.Symmetric("S", n)
    return x.T * S * y, y.T * S * x


@claim("a_bilinear_form_is_not_symmetric", False, "1 × n shapes")
def _():
    x, y, M = sp.MatrixSymbol("x", n, 1), sp.MatrixSymbol("y", n, 1), sp.MatrixSymbol("M", n, n)
    return x.T * M * y, y.T * M * x
