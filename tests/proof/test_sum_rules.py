"""The sum rules of strategy B (symattn.proof.sums): each fires only under its side condition."""

import sympy as sp

import symattn as sa
from symattn.defs.mask import Visible
from symattn.defs.permutation import PermIndex
from symattn.proof.sums import simplify_sums

n, t, s = sa.dims("n t s")
k = sp.Dummy("k", integer=True)
f = sp.Function("f")
sigma = sp.Symbol("sigma")


def test_delta_elimination_needs_the_target_in_range():
    j = sp.Dummy("j", integer=True)
    body = f(k) * sp.KroneckerDelta(k, j)
    assert simplify_sums(sp.Sum(body, (k, 0, n - 1)), {j: (0, n - 1)}) == f(j)
    # j may lie outside 0..n-2: the delta is not eliminated
    assert simplify_sums(sp.Sum(body, (k, 0, n - 2)), {j: (0, n - 1)}).has(sp.Sum)
    # sigma(j) is always in 0..n-1
    u = PermIndex(sigma, n, j)
    assert simplify_sums(sp.Sum(f(k) * sp.KroneckerDelta(k, u), (k, 0, n - 1)), {j: (0, n - 1)}) == f(u)


def test_reindexing_needs_k_only_inside_sigma_and_the_full_range():
    good = sp.Sum(f(PermIndex(sigma, n, k)), (k, 0, n - 1))
    assert simplify_sums(good) == sp.Sum(f(k), (k, 0, n - 1))
    mixed = sp.Sum(f(PermIndex(sigma, n, k)) * k, (k, 0, n - 1))
    assert simplify_sums(mixed).atoms(PermIndex)
    partial = sp.Sum(f(PermIndex(sigma, n, k)), (k, 0, n - 2))
    assert simplify_sums(partial).atoms(PermIndex)


def test_mask_restriction_needs_the_query_inside_the_range():
    body = f(k) * sp.exp(Visible(k, t - 1))
    assert simplify_sums(sp.Sum(body, (k, 0, t + s - 1))) == sp.Sum(f(k), (k, 0, t - 1))
    # nothing is known about u relative to the range: no restriction
    u = sp.Symbol("u", integer=True)
    assert simplify_sums(sp.Sum(f(k) * sp.exp(Visible(k, u)), (k, 0, n - 1))).has(Visible)
    # u beyond the range: every key is visible
    full = sp.Sum(f(k) * sp.exp(Visible(k, n + s)), (k, 0, n - 1))
    assert simplify_sums(full) == sp.Sum(f(k), (k, 0, n - 1))


def test_visible_is_zero_or_minus_infinity():
    assert Visible(2, 2) == 0 and Visible(3, 2) == -sp.oo
    assert Visible(t - 1, t) == 0 and Visible(t + s, t) == -sp.oo
    assert isinstance(Visible(k, t), Visible)
