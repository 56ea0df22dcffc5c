"""Rules for true claims the engine used to leave unknown: each class is proved general, and a false
neighbour of each is not proved (refuted where the search can do it); each rule fires only under its
side condition."""

import pytest
import sympy as sp

import symattn as sa
from symattn.defs.mask import Visible
from symattn.defs.permutation import PermIndex
from symattn.defs.rope import rotation
from symattn.proof.canon import (
    ceilings_as_floors,
    identity_block_diagonals,
    slice_block_diagonals,
    split_softmax_over_blocks,
)
from symattn.proof.sums import (
    absorb_mask_scale,
    cancel_permutation,
    linearize_delta,
    order_limits,
    pull_sums_out,
    simplify_sums,
    split_into_blocks,
)

n, m, a, b, d_k, d_v, d_model, H, G, r, p = sa.dims("n m a b d_k d_v d_model H G r p")


def proved_general(lhs, rhs):
    v = sa.verify(lhs, rhs)
    assert (v.status, v.general) == ("proved", True), "\n".join(v.trace)
    return v


def refuted(lhs, rhs):
    v = sa.verify(lhs, rhs)
    assert v.status == "refuted", "\n".join(v.trace)
    return v


# 1. Softmax over side-by-side (stacked) blocks, on the axis that stays inside one block


def test_column_softmax_of_side_by_side_blocks_is_the_blocks_softmaxes():
    A, B = sp.MatrixSymbol("A", m, a), sp.MatrixSymbol("B", m, b)
    lhs = sa.softmax(sp.BlockMatrix([[A, B]]), 0)
    proved_general(lhs, sp.BlockMatrix([[sa.softmax(A, 0), sa.softmax(B, 0)]]))


def test_row_softmax_of_stacked_blocks_is_the_blocks_softmaxes():
    A, B = sp.MatrixSymbol("A", a, m), sp.MatrixSymbol("B", b, m)
    lhs = sa.softmax(sp.BlockMatrix([[A], [B]]), 1)
    proved_general(lhs, sp.BlockMatrix([[sa.softmax(A, 1)], [sa.softmax(B, 1)]]))


def test_row_softmax_of_side_by_side_blocks_is_refuted():
    A, B = sp.MatrixSymbol("A", m, a), sp.MatrixSymbol("B", m, b)
    refuted(sa.softmax(sp.BlockMatrix([[A, B]]), 1), sp.BlockMatrix([[sa.softmax(A, 1), sa.softmax(B, 1)]]))


def test_column_softmax_of_stacked_blocks_is_refuted():
    A, B = sp.MatrixSymbol("A", a, m), sp.MatrixSymbol("B", b, m)
    refuted(sa.softmax(sp.BlockMatrix([[A], [B]]), 0), sp.BlockMatrix([[sa.softmax(A, 0)], [sa.softmax(B, 0)]]))


def test_block_split_keeps_stacked_blocks_of_a_column_together():
    A, B, C, D = (sp.MatrixSymbol(s, 2, 2) for s in "ABCD")
    out = split_softmax_over_blocks(sa.softmax(sp.BlockMatrix([[A, B], [C, D]]), 0))
    assert out == sp.BlockMatrix([[sa.softmax(sp.BlockMatrix([[A], [C]]), 0),
                                   sa.softmax(sp.BlockMatrix([[B], [D]]), 0)]])
    # the other axis crosses the stacked blocks of a column: nothing is split
    other = sa.softmax(sp.BlockMatrix([[A], [C]]), 0)
    assert split_softmax_over_blocks(other) == other


def test_column_softmax_of_a_head_concatenation_is_proved_general():
    X = sa.Family("X", m, n)
    lhs = sa.softmax(sa.head_concat(lambda h: X[h], H), 0)
    proved_general(lhs, sa.head_concat(lambda h: sa.softmax(X[h], 0), H))


# 2. Softmax of the identity


def test_softmax_of_identity_is_the_same_over_both_axes():
    proved_general(sa.softmax(sp.Identity(n), 0), sa.softmax(sp.Identity(n), 1))


def test_softmax_of_identity_in_closed_form():
    e = sp.E
    closed = (e - 1) / (e + n - 1) * sp.Identity(n) + 1 / (e + n - 1) * sp.OneMatrix(n, n)
    proved_general(sa.softmax(sp.Identity(n), 0), closed)
    proved_general(sa.softmax(sp.Identity(n), 1), closed)


def test_softmax_of_identity_with_a_wrong_diagonal_is_refuted():
    e = sp.E
    wrong = e / (e + n - 1) * sp.Identity(n) + 1 / (e + n - 1) * sp.OneMatrix(n, n)
    refuted(sa.softmax(sp.Identity(n), 0), wrong)


def test_softmax_of_twice_the_identity_differs_from_softmax_of_identity():
    refuted(sa.softmax(2 * sp.Identity(n), 0), sa.softmax(sp.Identity(n), 1))


def test_exp_of_delta_is_linearized_only_for_a_finite_factor():
    i, j = sp.symbols("i j", integer=True)
    dl = sp.KroneckerDelta(i, j)
    assert linearize_delta(sp.exp(3 * dl)) == 1 + (sp.exp(3) - 1) * dl
    assert linearize_delta(sp.exp(Visible(i, j) * dl)) is None
    assert linearize_delta(sp.exp(dl + i)) is None  # exp(a + b) is split first, by expansion


# 3. W^O [head_1; ...; head_H] with column slices of a whole W^O


def _multihead_parts():
    Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    W_Q, W_K = sa.Family("W^Q", d_k, d_model), sa.Family("W^K", d_k, d_model)
    W_V = sa.Family("W^V", d_v, d_model)
    return Q, K, V, W_Q, W_K, W_V


def test_whole_output_matrix_equals_the_sum_over_its_column_slices():
    Q, K, V, W_Q, W_K, W_V = _multihead_parts()
    W_O = sp.MatrixSymbol("W^O", d_model, H * d_v)
    block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H)
    total = sa.multihead(Q, K, V, W_Q, W_K, W_V, lambda h: W_O[:, (h - 1) * d_v: h * d_v], H=H, form="sum")
    proved_general(block, total)


def test_column_slices_in_reverse_head_order_are_refuted():
    Q, K, V, W_Q, W_K, W_V = _multihead_parts()
    W_O = sp.MatrixSymbol("W^O", d_model, H * d_v)
    block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H)
    reverse = sa.multihead(Q, K, V, W_Q, W_K, W_V, lambda h: W_O[:, (H - h) * d_v: (H - h + 1) * d_v], H=H,
                           form="sum")
    refuted(block, reverse)


def test_block_split_needs_a_range_of_whole_blocks():
    k = sp.Dummy("k", integer=True)
    f = sp.Function("f")
    body = f(k, sp.floor(k / d_v))
    split = split_into_blocks(body, k, 0, H * d_v - 1)
    assert split is not None and not split.has(sp.floor)
    assert split_into_blocks(body, k, 0, H * d_v - 2) is None      # not a whole number of blocks
    assert split_into_blocks(body, k, 1, H * d_v) is None          # not from 0
    assert split_into_blocks(f(k, sp.floor(k / a * b)), k, 0, H * d_v - 1) is None  # a/b not an integer


def test_block_split_is_the_division_with_remainder_at_small_sizes():
    k = sp.Dummy("k", integer=True)
    body = (k + 1) ** 2 * (sp.floor(k / 3) + 2) ** 3
    for count in (1, 2, 4):
        split = split_into_blocks(body, k, 0, 3 * count - 1)
        assert split.doit() == sp.Sum(body, (k, 0, 3 * count - 1)).doit()


# 4. GQA with H = G·r heads: block form = sum form


def test_gqa_block_form_equals_sum_form_for_every_group_count():
    Q, K, V, W_Q, W_K, W_V = _multihead_parts()
    W_O = sa.Family("W^O", d_model, d_v)
    block = sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G)
    total = sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G, form="sum")
    proved_general(block, total)


def test_gqa_is_not_multihead_with_a_key_value_head_per_query_head():
    Q, K, V, W_Q, W_K, W_V = _multihead_parts()
    W_O = sa.Family("W^O", d_model, d_v)
    block = sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G)
    refuted(block, sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, form="sum"))


# 5. A -inf mask scaled inside Softmax


@pytest.mark.parametrize("mask", [sa.CausalMask(n), sa.PaddingMask(n, n, m)], ids=["causal", "padding"])
def test_a_positive_scale_of_a_mask_is_the_mask(mask):
    S = sp.MatrixSymbol("S", n, n)
    proved_general(sa.softmax(2 * (S + mask)), sa.softmax(2 * S + mask))
    proved_general(sa.softmax((S + mask) / sp.sqrt(d_k)), sa.softmax(S / sp.sqrt(d_k) + mask))


def test_row_convention_scaled_causal_mask():
    S = sp.MatrixSymbol("S", n, n)
    M = sa.CausalMask(n).T
    proved_general(sa.softmax(2 * (S + M), 1), sa.softmax(2 * S + M, 1))


def test_a_scaled_mask_does_not_scale_the_scores():
    S = sp.MatrixSymbol("S", n, n)
    refuted(sa.softmax(2 * (S + sa.CausalMask(n))), sa.softmax(S + sa.CausalMask(n)))


def test_mask_scale_is_absorbed_only_for_a_positive_factor():
    k, u = sp.symbols("k u", integer=True)
    vis = Visible(k, u)
    assert absorb_mask_scale(2 * vis) == vis
    assert absorb_mask_scale(vis / sp.sqrt(d_k)) == vis
    assert absorb_mask_scale(-2 * vis) is None
    assert absorb_mask_scale(sp.Symbol("c", real=True) * vis) is None  # the sign of c is unknown
    assert absorb_mask_scale(2 * vis * Visible(k, u + 1)) is None


# 6. A block diagonal of identities is the identity


def test_block_diagonal_of_identities_is_the_identity():
    i = sp.Dummy("i", integer=True, positive=True)
    proved_general(sa.BlockDiag(sp.Identity(2), i, p), sp.Identity(2 * p))
    proved_general(sa.BlockDiag(sp.eye(2), i, p), sp.Identity(2 * p))


def test_block_diagonal_of_identities_with_a_concrete_count():
    i = sp.Dummy("i", integer=True, positive=True)
    v = sa.verify(sa.BlockDiag(sp.Identity(2), i, 3), sp.Identity(6))
    assert v.status == "proved"
    assert sa.verify(sp.BlockDiagMatrix(sp.Identity(2), sp.Identity(3)), sp.Identity(5)).status == "proved"
    assert sa.verify(sp.BlockDiagMatrix(sp.Identity(2), 2 * sp.Identity(3)), sp.Identity(5)).status == "refuted"


def test_rope_at_position_zero_changes_nothing():
    q = sp.MatrixSymbol("q", 2 * p, n)
    proved_general(sa.apply_rope(q, 0, p), q)
    proved_general(sa.apply_rope(q, 0, p, sp.Function("theta")), q)


def test_block_diagonal_of_rotations_or_of_a_non_identity_block_is_refuted():
    i = sp.Dummy("i", integer=True, positive=True)
    refuted(sa.BlockDiag(sp.ImmutableMatrix([[1, 0], [0, 2]]), i, p), sp.Identity(2 * p))
    refuted(sa.BlockDiag(rotation(i), i, p), sp.Identity(2 * p))


def test_only_identity_and_zero_blocks_collapse():
    i = sp.Dummy("i", integer=True, positive=True)
    assert identity_block_diagonals(sa.BlockDiag(sp.ZeroMatrix(2, 3), i, p)) == sp.ZeroMatrix(2 * p, 3 * p)
    ones = sa.BlockDiag(sp.OneMatrix(2, 2), i, p)
    assert identity_block_diagonals(ones) == ones


# 7. Permutation matrices are orthogonal on both sides


def test_transpose_of_a_permutation_times_itself_is_the_identity():
    P = sa.Permutation("P", n)
    proved_general(P.T * P, sp.Identity(n))
    proved_general(P * P.T, sp.Identity(n))


def test_permutation_orthogonality_false_neighbours_are_refuted():
    P, R = sa.Permutation("P", n), sa.Permutation("R", n)
    refuted(P.T * R, sp.Identity(n))
    refuted(P.T * P, P)


def test_injectivity_needs_one_permutation_and_indices_in_its_domain():
    i, j = sp.Dummy("i", integer=True), sp.Dummy("j", integer=True)
    sigma, tau = sp.Symbol("sigma"), sp.Symbol("tau")
    inside = {i: (0, n - 1), j: (0, n - 1)}
    same = sp.KroneckerDelta(PermIndex(sigma, n, i), PermIndex(sigma, n, j))
    assert cancel_permutation(same, inside) == sp.KroneckerDelta(i, j)
    assert simplify_sums(same, inside) == sp.KroneckerDelta(i, j)
    assert cancel_permutation(same, {i: (0, n), j: (0, n - 1)}) is None   # i may leave the domain
    two = sp.KroneckerDelta(PermIndex(sigma, n, i), PermIndex(tau, n, j))
    assert cancel_permutation(two, inside) is None
    mixed = sp.KroneckerDelta(PermIndex(sigma, n, i), PermIndex(sigma, n, j, 1))
    assert cancel_permutation(mixed, inside) is None


# Row twins of 3 and 4: the sums meet in another order, the interchange form puts them in one


def _row_parts():
    Q, K, V = (sp.MatrixSymbol(s, n, d_model) for s in "QKV")
    W_Q, W_K = sa.Family("W^Q", d_model, d_k), sa.Family("W^K", d_model, d_k)
    W_V = sa.Family("W^V", d_model, d_v)
    return Q, K, V, W_Q, W_K, W_V


def test_row_convention_whole_output_matrix_equals_the_sum_over_its_row_slices():
    Q, K, V, W_Q, W_K, W_V = _row_parts()
    W_O = sp.MatrixSymbol("W^O", H * d_v, d_model)
    block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, convention="row")
    total = sa.multihead(Q, K, V, W_Q, W_K, W_V, lambda h: W_O[(h - 1) * d_v: h * d_v, :], H=H, form="sum",
                         convention="row")
    v = proved_general(block, total)
    assert any("pulling sums out" in t for t in v.trace)


def test_row_convention_row_slices_shifted_by_one_head_are_refuted():
    Q, K, V, W_Q, W_K, W_V = _row_parts()
    W_O = sp.MatrixSymbol("W^O", H * d_v, d_model)
    block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, convention="row")
    reverse = sa.multihead(Q, K, V, W_Q, W_K, W_V, lambda h: W_O[(H - h) * d_v: (H - h + 1) * d_v, :], H=H,
                           form="sum", convention="row")
    refuted(block, reverse)


def test_row_convention_gqa_block_form_equals_sum_form():
    Q, K, V, W_Q, W_K, W_V = _row_parts()
    W_O = sa.Family("W^O", d_v, d_model)
    block = sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G, convention="row")
    proved_general(block, sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G, form="sum", convention="row"))


def test_pulling_sums_out_renames_indices_shared_by_two_factors():
    k = sp.Dummy("k", integer=True)
    x = sp.Function("x")
    product = sp.Sum(x(k), (k, 0, 2)) * sp.Sum(k * x(k), (k, 0, 2))
    pulled = pull_sums_out(product)
    assert isinstance(pulled, sp.Sum) and len(pulled.limits) == 2
    assert sp.expand(pulled.doit() - product.doit()) == 0


def test_limits_are_reordered_only_when_independent():
    j, k = sp.Dummy("j", integer=True), sp.Dummy("k", integer=True)
    x = sp.Function("x")
    a = order_limits(sp.Sum(x(j, k), (j, 0, n - 1), (k, 0, m - 1)))
    b = order_limits(sp.Sum(x(j, k), (k, 0, m - 1), (j, 0, n - 1)))
    assert a == b
    triangle = sp.Sum(x(j, k), (j, 0, k), (k, 0, n - 1))
    assert order_limits(triangle) == triangle


# Binders built by hand: alpha-renaming, constant sums, scalars into block diagonals, ceilings


def test_block_diagonals_differing_only_in_the_name_of_their_index_are_equal():
    u, v = sp.symbols("u v", integer=True, positive=True)
    x, theta = sp.Symbol("x", real=True), sp.Function("theta")
    proved_general(sa.BlockDiag(rotation(x * theta(u)), u, p), sa.BlockDiag(rotation(x * theta(v)), v, p))
    refuted(sa.BlockDiag(rotation(x * theta(u)), u, p), sa.BlockDiag(rotation(x * theta(v + 1)), v, p))


def test_a_head_sum_of_a_body_free_of_its_index_is_a_multiple():
    u = sp.Symbol("u", integer=True, positive=True)
    A, X = sa.Family("A", n, n), sp.MatrixSymbol("X", n, n)
    proved_general(sa.HeadSum(sa.HeadSum(A[u] * X, u, H), u, H), H * sa.HeadSum(A[u] * X, u, H))
    proved_general(sa.HeadSum(X, u, H), H * X)
    refuted(sa.HeadSum(sa.HeadSum(A[u] * X, u, H), u, H), sa.HeadSum(A[u] * X, u, H))


def test_alpha_renaming_never_captures_a_free_symbol_of_the_same_name():
    u = sp.Symbol("u", integer=True, positive=True)
    x, theta = sp.Symbol("x", real=True), sp.Function("theta")
    lhs = u * sa.BlockDiag(rotation(x * theta(u)), u, p)            # the factor u is free, the index bound
    w = sp.Symbol("w", integer=True, positive=True)
    proved_general(lhs, sa.BlockDiag(u * rotation(x * theta(w)), w, p))
    refuted(lhs, sa.BlockDiag(u * rotation(x * theta(u)), u, p))      # the factor captured by the binder


def test_gqa_group_as_a_ceiling_is_proved():
    Q, K, V, W_Q, W_K, W_V = _multihead_parts()
    W_O = sa.Family("W^O", d_model, d_v)
    total = sa.gqa(Q, K, V, W_Q, W_K, W_V, W_O, H=G * r, G=G, form="sum")
    ceil = sa.head_sum(lambda k: W_O[k] * sa.attention(W_Q[k] * Q, W_K[sp.ceiling(k / r)] * K,
                                                       W_V[sp.ceiling(k / r)] * V), G * r)
    proved_general(total, ceil)
    off = sa.head_sum(lambda k: W_O[k] * sa.attention(W_Q[k] * Q, W_K[sp.ceiling((k + 1) / r)] * K,
                                                      W_V[sp.ceiling((k + 1) / r)] * V), G * r)
    assert sa.verify(total, off).status != "proved"


def test_ceiling_becomes_a_floor_only_for_an_integer_over_a_positive_integer():
    k = sp.Symbol("k", integer=True)
    y = sp.Symbol("y", real=True)
    assert ceilings_as_floors(sp.ceiling(k / r)) == sp.floor(k / r - 1 / r) + 1
    assert ceilings_as_floors(sp.ceiling(y / r)) == sp.ceiling(y / r)
    for kk in range(-7, 8):
        for rr in range(1, 5):
            assert ceilings_as_floors(sp.ceiling(k / r)).subs({k: kk, r: rr}) == sp.ceiling(sp.Rational(kk, rr))


# Slices of a block diagonal on block boundaries


def test_slices_of_a_larger_rope_on_block_boundaries():
    t, theta = sp.Symbol("t", integer=True), sp.Function("theta")
    big = sa.rope(t, p + 1, theta)
    proved_general(big[:2 * p, :2 * p], sa.rope(t, p, theta))
    proved_general(big[2:, 2:], sa.rope(t, p, lambda k: theta(k + 1)))
    refuted(big[2:, 2:], sa.rope(t, p, theta))                       # the frequencies shift with the blocks


def test_block_diagonal_slices_off_the_diagonal_or_off_block_boundaries_are_kept():
    i = sp.Dummy("i", integer=True, positive=True)
    B = sa.BlockDiag(sp.MatrixSymbol("B", 2, 2), i, p + 2)
    for kept in (B[:2, 2:4], B[1:3, 1:3], B[:2 * n, :2 * n]):  # n <= p + 2 is not known
        assert slice_block_diagonals(kept) == kept
    inner = slice_block_diagonals(B[2:4, 2:4])
    assert isinstance(inner, sa.BlockDiag) and inner.count == 1
