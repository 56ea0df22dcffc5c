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
    # the strategies alone (audit off) refute explicit claims that differ in every entry or in one
    for lhs, rhs in (([[1, 2]], [[2, 3]]), ([[1, 0]], [[1, 1]])):
        v = sa.verify(sp.ImmutableMatrix(lhs), sp.ImmutableMatrix(rhs), audit=False)
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
