"""merge_blocks: a sum over N blocks of R consecutive positions is the sum over the RN positions."""

import sympy as sp

from symattn import dims
from symattn.proof.sums import merge_blocks


def _inner(body_of):
    R = dims("R")
    q, s = sp.Symbol("q", integer=True), sp.Symbol("s", integer=True)
    return R, q, s, sp.Sum(body_of(R, q, s), (s, 0, R - 1))


def test_the_blocks_merge_into_one_range():
    x = sp.IndexedBase("x")
    R, q, s, inner = _inner(lambda R, q, s: x[R * q + s])
    N = dims("N")
    got = merge_blocks(inner, q, 1, N)
    (u, lo, hi), = got.limits
    assert got.function == x[u] and lo == R and sp.expand(hi - (R * N + R - 1)) == 0


def test_a_body_that_reads_the_block_index_elsewhere_is_left():
    x = sp.IndexedBase("x")
    _, q, _, inner = _inner(lambda R, q, s: x[R * q + s] * q)
    assert merge_blocks(inner, q, 1, dims("N")) is None


def test_blocks_of_another_stride_are_left():
    x = sp.IndexedBase("x")
    _, q, _, inner = _inner(lambda R, q, s: x[(R + 1) * q + s])
    assert merge_blocks(inner, q, 1, dims("N")) is None


def test_the_merged_sum_has_the_value_of_the_blocks_at_given_sizes():
    x = sp.IndexedBase("x")
    R, q, s, inner = _inner(lambda R, q, s: x[R * q + s] ** 2)
    N = dims("N")
    got = merge_blocks(inner, q, 0, N - 1)
    for r, n in ((1, 3), (2, 2), (3, 4)):
        at = {R: r, N: n}
        assert sp.expand(sp.Sum(inner, (q, 0, N - 1)).xreplace(at).doit() - got.xreplace(at).doit()) == 0
