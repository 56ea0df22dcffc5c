"""Two gaps of the engine, closed: sums over 1..N meet sums over 0..N-1 (the index shift of strategy B),
and a dimension that occurs only in a family member's index is drawn by the counterexample search."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn import defs as D
from symattn.defs.mask import Visible
from symattn.defs.permutation import PermIndex
from symattn.proof import sums
from symattn.proof.refute import index_dimensions, with_index_sizes

N, Dd = sa.dims("N D")
c = sp.Symbol("c", real=True)
x = D.Family("x", 1, Dd)
X = D.head_stack(x[D.h], N)


def exact(a):
    return sp.Matrix(np.asarray(a).tolist())


# --- gap 1: the index shift -------------------------------------------------------------------

def test_mean_pooling_is_softmax_of_a_constant_row_proved_general():
    v = sa.verify(D.head_sum(lambda k: x[k] / N, N), D.softmax(c * sp.OneMatrix(1, N), 1) * X)
    assert v.status == "proved" and v.general
    assert v.method == "entrywise (B)"


def test_sum_of_rows_is_ones_row_times_stack_proved_general():
    v = sa.verify(D.head_sum(lambda k: x[k], N), sp.OneMatrix(1, N) * X)
    assert v.status == "proved" and v.general


def test_sum_shifted_by_one_is_refuted_not_proved():
    wrong = D.head_stack(x[D.h + 1], N)  # [x_2; ...; x_{N+1}]
    v = sa.verify(D.head_sum(lambda k: x[k], N), sp.OneMatrix(1, N) * wrong)
    assert v.status == "refuted"
    v = sa.verify(D.head_sum(lambda k: x[k] / N, N), D.softmax(c * sp.OneMatrix(1, N), 1) * wrong)
    assert v.status == "refuted"


def test_mean_with_the_wrong_normalizer_is_refuted():
    v = sa.verify(D.head_sum(lambda k: x[k] / (N + 1), N), D.softmax(c * sp.OneMatrix(1, N), 1) * X)
    assert v.status == "refuted"


k = sp.Dummy("k", integer=True)
a = sp.IndexedBase("a")
lo_int, hi_int = sp.Symbol("lo", integer=True), sp.Symbol("hi", integer=True)


def test_shift_moves_an_integer_lower_limit_to_zero():
    got = sums.shift_to_zero(a[k] * k, k, lo_int, hi_int)
    assert isinstance(got, sp.Sum)
    (m, lo, hi), = got.limits
    assert lo == 0 and sp.expand(hi - (hi_int - lo_int)) == 0
    assert sp.expand(got.function - a[m + lo_int] * (m + lo_int)) == 0


def test_shift_does_not_fire_at_zero_or_on_a_lower_limit_not_known_integer():
    assert sums.shift_to_zero(a[k], k, 0, hi_int) is None
    assert sums.shift_to_zero(a[k], k, sp.Symbol("t"), hi_int) is None  # t may be 1/2
    assert sums.shift_to_zero(a[k], k, sp.Rational(1, 2), hi_int) is None
    assert sums.shift_to_zero(a[0], k, 1, hi_int) is None  # k does not occur: nothing to shift


@pytest.mark.parametrize("guard", [
    lambda: sp.KroneckerDelta(k, hi_int), lambda: sp.floor(k / 2), lambda: sp.ceiling(k / 3),
    lambda: sp.exp(Visible(k, hi_int)), lambda: a[PermIndex(sp.Dummy("sigma"), N, k, 0)],
])
def test_shift_leaves_k_where_the_other_sum_rules_look_for_it(guard):
    assert sums.shift_to_zero(a[k] * guard(), k, 1, hi_int) is None
    # the same factor without k does not block the shift
    assert sums.shift_to_zero(a[k] * sp.KroneckerDelta(lo_int, hi_int), k, 1, hi_int) is not None


@pytest.mark.parametrize("lo,hi", [(1, 5), (-3, 2), (2, 2), (3, 2), (4, 1), (-1, -4)])
def test_shift_keeps_the_value_at_concrete_ranges_reversed_ones_included(lo, hi):
    body = k ** 3 - 2 * k + 1
    got = sums.shift_to_zero(body, k, sp.Integer(lo), sp.Integer(hi))
    assert got is not None
    assert sp.Sum(body, (k, lo, hi)).doit() == got.doit()  # SymPy's (Karr) convention for hi < lo


def test_shift_is_in_the_trust_base_and_checked():
    from symattn.proof import trust

    [rule] = [r for r in trust.TRUST_BASE if r.name == "shift_to_zero"]
    assert "symattn.proof.sums.shift_to_zero" in rule.where
    [check] = trust.check_trust_base(names={"shift_to_zero"})
    assert check.ok, check.failures
    assert check.fired > 0


# --- gap 2: a dimension only in a family index ------------------------------------------------

n, d, dk, h, G = sa.dims("n d d_k h G")
Q = sp.MatrixSymbol("Q", n, d)
WQ, WK = D.Family("W^Q", d, dk), D.Family("W^K", d, dk)


def _ceil(p, q):
    return -(-p // q)


def _grouped(values, hv, group):
    """Σ_{i=1}^{h} Q W^Q_i W^K_{group(i)}ᵀ from the counterexample's values, by hand."""
    Qv = exact(values["Q"])
    return sum((Qv * exact(values[f"W^Q_{i}"]) * exact(values[f"W^K_{group(i)}"]).T for i in range(1, hv + 1)),
               sp.zeros(Qv.rows, exact(values["W^K_1"]).rows))


def _check_by_hand(v, left, right):
    assert v.status == "refuted" and not v.general
    cex = v.counterexample
    assert "G" in cex.dims  # drawn like any dimension
    hv, gv = cex.dims["h"], cex.dims["G"]
    L = _grouped(cex.values, hv, lambda i: left(i, gv, hv))
    R = _grouped(cex.values, hv, lambda i: right(i, gv, hv))
    i, j = cex.entry
    assert L[i, j] - R[i, j] != 0 and L[i, j] - R[i, j] == cex.difference
    assert (L, R) == (sp.Matrix(cex.lhs_exact), sp.Matrix(cex.rhs_exact))
    return cex


def test_wrong_gqa_group_map_is_refuted_with_values_for_every_member_read():
    v = sa.verify(D.head_sum(lambda i: Q * WQ[i] * WK[sp.ceiling(i * G / h)].T, h),
                  D.head_sum(lambda i: Q * WQ[i] * WK[sp.ceiling(i / h)].T, h))
    cex = _check_by_hand(v, lambda i, g, hv: _ceil(i * g, hv), lambda i, g, hv: _ceil(i, hv))
    hv, gv = cex.dims["h"], cex.dims["G"]
    read = {f"W^Q_{i}" for i in range(1, hv + 1)} | {f"W^K_{_ceil(i * gv, hv)}" for i in range(1, hv + 1)}
    assert read <= set(cex.values)


def test_group_map_true_only_when_g_divides_h_is_refuted_at_a_g_that_does_not():
    # ⌈iG/h⌉ = ⌊(i-1)G/h⌋ + 1 for every i when G divides h, not otherwise: nothing says G divides h
    v = sa.verify(D.head_sum(lambda i: Q * WQ[i] * WK[sp.ceiling(i * G / h)].T, h),
                  D.head_sum(lambda i: Q * WQ[i] * WK[sp.floor((i - 1) * G / h) + 1].T, h))
    cex = _check_by_hand(v, lambda i, g, hv: _ceil(i * g, hv), lambda i, g, hv: (i - 1) * g // hv + 1)
    assert cex.dims["h"] % cex.dims["G"] != 0


def test_the_same_group_map_on_both_sides_is_proved():
    left = D.head_sum(lambda i: Q * WQ[i] * WK[sp.ceiling(i * G / h)].T, h)
    right = D.head_sum(lambda i: Q * WQ[i] * WK[sp.ceiling(G * i / h)].T, h)
    assert sa.verify(left, right).status == "proved"


def test_an_integer_scalar_in_a_member_index_gets_its_member_a_value():
    o = sp.Symbol("o", integer=True)
    v = sa.verify(D.head_sum(lambda i: WQ[i + o], h), D.head_sum(lambda i: WQ[i], h))
    assert v.status == "refuted"
    cex = v.counterexample
    ov, hv = int(cex.values["o"]), cex.dims["h"]
    assert ov != 0
    left = sum((exact(cex.values[f"W^Q_{i + ov}"]) for i in range(1, hv + 1)), sp.zeros(cex.dims["d"], cex.dims["d_k"]))
    right = sum((exact(cex.values[f"W^Q_{i}"]) for i in range(1, hv + 1)), sp.zeros(cex.dims["d"], cex.dims["d_k"]))
    i, j = cex.entry
    assert left[i, j] - right[i, j] == cex.difference != 0


def test_index_dimensions_are_the_positive_integer_symbols_in_member_indices():
    t = sp.Symbol("t", real=True)
    e = D.head_sum(lambda i: WK[sp.ceiling(i * G / h)] * t, h)
    assert index_dimensions([G, t], e) == [G]
    assert index_dimensions([t], e) == []
    grid = with_index_sizes([{h: 2}, {h: 3}], [G])
    assert {(a[h], a[G]) for a in grid} == {(hv, g) for hv in (2, 3) for g in (1, 2, 3)}
    assert with_index_sizes([{h: 2}], []) == [{h: 2}]
    even = sp.Symbol("G", integer=True, positive=True, even=True)
    assert with_index_sizes([{h: 3}], [even]) == [{even: 2, h: 3}]  # only sizes its assumptions allow
