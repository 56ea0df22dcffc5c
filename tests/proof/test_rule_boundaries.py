"""Side conditions of the engine's rules, tested at their boundaries.

A rule whose side condition is weakened fires where it is false, which only the audit would catch
at run time. Each test states the rule's meaning as a property (the rewritten expression has the
value of the original wherever the rule fires) and probes the cases just inside and just outside
the side condition.
"""

import itertools

import sympy as sp

import symattn as sa
from symattn.defs.permutation import PermIndex
from symattn.proof import canon, sums
from symattn.proof.entrywise import merge_slices

h = sp.Symbol("h", integer=True, positive=True)


def test_a_floor_is_settled_only_where_it_is_constant_on_every_head():
    settled = 0
    for r, b, count in itertools.product((1, 2, 3), (-2, -1, 0, 1), (1, 2, 3, 4)):
        f = sp.floor((h + b) / r)
        if not f.has(sp.floor):  # floor((h + b)/1) is h + b already
            continue
        out = canon._settle(f, h, sp.Integer(count))
        for k in range(1, count + 1):  # wherever it fired, the value is kept at every head
            assert out.subs(h, k) == f.subs(h, k), (r, b, count, k, out)
        if out != f:
            settled += 1
        constant = len({f.subs(h, k) for k in range(1, count + 1)}) == 1
        assert (out != f) == constant, (r, b, count)  # and it fires exactly when the floor is constant
    assert settled > 0


def test_the_floor_at_the_last_head_reaching_the_next_integer_blocks_settling():
    f = sp.floor((h - 1) / 2)
    assert canon._settle(f, h, sp.Integer(2)) == 0            # h = 1, 2: floor is 0 throughout
    assert canon._settle(f, h, sp.Integer(3)) == f            # h = 3 reaches 1


def test_exp_of_a_delta_is_linearized_only_for_a_finite_coefficient():
    a, b = sp.symbols("a b", integer=True)
    d = sp.KroneckerDelta(a, b)
    for c in (sp.oo, -sp.oo, sp.zoo, sp.nan):
        assert sums.linearize_delta(sp.exp(c * d)) is None, c
    for c in (sp.Integer(2), sp.Rational(-1, 3), sp.Symbol("c", real=True)):
        out = sums.linearize_delta(sp.exp(c * d))
        assert out is not None
        for value in (0, 1):                                  # [a = b] is 0 or 1
            assert sp.simplify(out.subs(d, value) - sp.exp(c * value)) == 0


def test_delta_elimination_through_a_permutation_solves_for_the_index():
    n = sa.dims("n")
    k, u = sp.Dummy("k", integer=True), sp.Dummy("u", integer=True)
    s = sa.Permutation("P", n).args[0]
    ranges = {u: (0, n - 1)}
    for inverse in (0, 1):
        delta = sp.KroneckerDelta(PermIndex(s, n, k, inverse), u)
        assert sums._delta_target(delta, k, 0, n - 1, ranges) == PermIndex(s, n, u, 1 - inverse)
    # σ(j) with j not the summation index gives nothing to solve for
    j = sp.Dummy("j", integer=True)
    assert sums._delta_target(sp.KroneckerDelta(PermIndex(s, n, j, 0), u), k, 0, n - 1, ranges) is None


def test_adjacent_slices_glue_along_the_axis_they_are_side_by_side_on():
    n, a, b, c = sa.dims("n a b c")
    X = sp.MatrixSymbol("X", n, a + b + c)
    Y = sp.MatrixSymbol("Y", a + b + c, n)
    side = sp.BlockMatrix([[X[:, :a], X[:, a:a + b]]])
    assert merge_slices(side) == X[:, :a + b]
    stacked = sp.BlockMatrix([[Y[:a, :]], [Y[a:a + b, :]]])
    assert merge_slices(stacked) == Y[:a + b, :]
    # slices side by side that are adjacent only along the other axis do not glue
    assert merge_slices(sp.BlockMatrix([[Y[:a, :], Y[a:2 * a, :]]])) is None
    assert merge_slices(sp.BlockMatrix([[X[:, :a]], [X[:, a:2 * a]]])) is None


def test_only_a_matrix_of_zeros_is_the_zero_matrix():
    from symattn.proof.canon import is_zero_matrix

    assert is_zero_matrix(sp.ImmutableMatrix([[0, 0], [0, 0]])) and is_zero_matrix(sp.ZeroMatrix(2, 3))
    for m in ([[1, 2], [3, 4]], [[0, 1], [0, 0]], [[5]]):
        assert not is_zero_matrix(sp.ImmutableMatrix(m))
    # the strategies refute explicit claims that differ in every entry or in one
    for lhs, rhs in (([[1, 2]], [[2, 3]]), ([[1, 0]], [[1, 1]])):
        v = sa.verify(sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs))
        assert v.status == "refuted", v.explain()


def test_entries_of_constant_and_block_matrices_are_their_definitions():
    from symattn.proof.entrywise import entry

    i, j = sp.Dummy("i", integer=True), sp.Dummy("j", integer=True)
    assert entry(sp.ZeroMatrix(3, 3), i, j) == 0
    assert entry(sp.OneMatrix(3, 3), i, j) == 1
    assert entry(sp.Identity(3), i, j) == sp.KroneckerDelta(i, j)
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 3)
    C, D = sp.MatrixSymbol("C", 1, 2), sp.MatrixSymbol("D", 1, 3)
    M = sp.BlockMatrix([[A, B], [C, D]])
    explicit = M.as_explicit()
    for r in range(3):
        for c in range(5):
            assert entry(M, sp.Integer(r), sp.Integer(c)) == explicit[r, c], (r, c)


def test_three_adjacent_slices_glue_to_their_whole_span():
    n, a, b, c = sa.dims("n a b c")
    X = sp.MatrixSymbol("X", n, a + b + c)
    three = sp.BlockMatrix([[X[:, :a], X[:, a:a + b], X[:, a + b:a + b + c]]])
    assert merge_slices(three) == X                                    # the whole range is X itself
    Y = sp.MatrixSymbol("Y", n, 4 * a)
    assert merge_slices(sp.BlockMatrix([[Y[:, a:2 * a], Y[:, 2 * a:3 * a], Y[:, 3 * a:4 * a]]])) == Y[:, a:4 * a]
    # a gap between the slices: nothing glues
    assert merge_slices(sp.BlockMatrix([[Y[:, :a], Y[:, 2 * a:3 * a]]])) is None


def test_a_sum_is_written_out_exactly_up_to_the_short_length():
    k = sp.Symbol("k", integer=True)
    f = sp.Function("f")
    for length in range(1, sums.SHORT_SUM + 2):
        s = sp.Sum(f(k), (k, 0, length - 1))
        out = sums.simplify_sums(s)
        if length <= sums.SHORT_SUM:
            assert out == sp.Add(*[f(r) for r in range(length)]), length
        else:
            assert out == s, length                   # longer sums stay sums


def test_a_sum_of_terms_is_split_into_one_sum_per_term():
    k = sp.Symbol("k", integer=True)
    n = sa.dims("n")
    f, g = sp.Function("f"), sp.Function("g")
    assert sums.pull_sums_out(sp.Sum(f(k) + g(k), (k, 0, n))) == sp.Sum(f(k), (k, 0, n)) + sp.Sum(g(k), (k, 0, n))


def test_the_order_of_two_sums_over_the_same_range_does_not_matter():
    i, j = sp.symbols("i j", integer=True)
    n = sa.dims("n")
    A, f = sp.Function("A"), sp.Function("f")
    body = A(i, j) * f(j)
    one, other = sp.Sum(body, (i, 0, n), (j, 0, n)), sp.Sum(body, (j, 0, n), (i, 0, n))
    assert one != other and sums.order_limits(one) == sums.order_limits(other)


def test_rewriting_settles_the_group_of_every_head_when_there_is_one_group():
    # GQA with G = 1 reads group floor((h - 1)/H) + 1 = 1 at every head h = 1..H: it is MQA
    d, n, d_k, H = sa.dims("d n d_k H")
    X = sp.MatrixSymbol("X", d, n)
    Wq, Wk, Wv = (sa.Family(s, d_k, d) for s in ("W^Q", "W^K", "W^V"))
    Wo = sa.Family("W^O", d, d_k)
    same, _ = canon.same_by_rewriting(sa.gqa(X, X, X, Wq, Wk, Wv, Wo, H=H, G=1, form="sum"),
                                      sa.mqa(X, X, X, Wq, Wk[1], Wv[1], Wo, H=H, form="sum"))
    assert same
    # with two groups the group varies with h, and rewriting must not identify the two
    same, _ = canon.same_by_rewriting(sa.gqa(X, X, X, Wq, Wk, Wv, Wo, H=2 * H, G=2, form="sum"),
                                      sa.mqa(X, X, X, Wq, Wk[1], Wv[1], Wo, H=2 * H, form="sum"))
    assert not same


def test_entries_of_heads_side_by_side_and_stacked_come_from_the_right_head():
    from symattn.proof.entrywise import entry

    H = sa.dims("H")
    W = sa.Family("W", 2, 3)                            # each head is 2 × 3
    side, stacked = sa.head_concat(lambda h: W[h], H), sa.head_stack(lambda h: W[h], H)
    for r, c in itertools.product(range(2), range(9)):  # columns 0..8 reach heads 1..3
        assert entry(side, sp.Integer(r), sp.Integer(c)) == W[c // 3 + 1][r, c % 3], (r, c)
    for r, c in itertools.product(range(6), range(3)):
        assert entry(stacked, sp.Integer(r), sp.Integer(c)) == W[r // 2 + 1][r % 2, c], (r, c)


def test_slices_glue_only_when_they_cover_the_same_range_across():
    n, b = sa.dims("n b")
    X = sp.MatrixSymbol("X", 2 * n, 2 * b)
    # adjacent columns, but different rows: [X[:n, :b] X[n:, b:]] is no slice of X
    assert merge_slices(sp.BlockMatrix([[X[:n, :b], X[n:2 * n, b:2 * b]]])) is None
    assert merge_slices(sp.BlockMatrix([[X[:n, :b]], [X[n:2 * n, b:2 * b]]])) is None


def test_a_sum_cut_at_the_last_visible_key_keeps_the_ranges_of_the_indices_around_it():
    # Σ_{k=0}^{n-1} [k = v] f(k) exp(Visible(k, u)) with 0 <= v <= u <= n - 1 is f(v): the sum is cut
    # at u, and the delta is then eliminated because v is known to lie in 0..u
    from symattn.defs.mask import Visible

    n = sa.dims("n")
    k, u, v = (sp.Dummy(s, integer=True) for s in "kuv")
    f = sp.Function("f")
    body = sp.KroneckerDelta(k, v) * f(k) * sp.exp(Visible(k, u))
    assert sums.simplify_sum(body, k, 0, n - 1, {u: (0, n - 1), v: (0, u)}, sums.simplify_sums) == f(v)
    # v anywhere in 0..n-1: the delta goes first and the mask factor stays
    got = sums.simplify_sum(body, k, 0, n - 1, {u: (0, n - 1), v: (0, n - 1)}, sums.simplify_sums)
    assert got == f(v) * sp.exp(Visible(v, u))


def test_softmax_splits_over_side_by_side_blocks_only_along_the_columns():
    n, m, a = sa.dims("n m a")
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", n, a)
    side = sp.BlockMatrix([[A, B]])
    assert canon.same_by_rewriting(sa.softmax(side), sp.BlockMatrix([[sa.softmax(A), sa.softmax(B)]]))[0]
    # along the rows each row is normalized across both blocks: no split
    split_rows = sp.BlockMatrix([[sa.softmax(A, 1), sa.softmax(B, 1)]])
    assert not canon.same_by_rewriting(sa.softmax(side, 1), split_rows)[0]


def test_softmax_of_a_block_grid_splits_into_whole_block_columns_or_whole_block_rows():
    n, m, a, b = sa.dims("n m a b")
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", n, a)
    C, D = sp.MatrixSymbol("C", b, m), sp.MatrixSymbol("D", b, a)
    grid = sp.BlockMatrix([[A, B], [C, D]])
    left, right, stacked = sp.BlockMatrix([[A], [C]]), sp.BlockMatrix([[B], [D]]), sp.BlockMatrix([[A], [C]])
    by_columns = sp.BlockMatrix([[sa.softmax(left), sa.softmax(right)]])
    assert canon.same_by_rewriting(sa.softmax(grid), by_columns)[0]
    by_rows = sp.BlockMatrix([[sa.softmax(sp.BlockMatrix([[A, B]]), 1)], [sa.softmax(sp.BlockMatrix([[C, D]]), 1)]])
    assert canon.same_by_rewriting(sa.softmax(grid, 1), by_rows)[0]
    # a column is normalized over A and C together, a row over A and B: block by block is wrong
    blockwise = sp.BlockMatrix([[sa.softmax(A), sa.softmax(B)], [sa.softmax(C), sa.softmax(D)]])
    assert not canon.same_by_rewriting(sa.softmax(grid), blockwise)[0]
    split = sp.BlockMatrix([[sa.softmax(A, 1)], [sa.softmax(C, 1)]])
    assert canon.same_by_rewriting(sa.softmax(stacked, 1), split)[0]
