"""The engine fix found while checking derivations: entrywise normalization of sums that
SymPy merged into one Sum with several limits (it used to raise ValueError)."""

import sympy as sp

import symattn as sa
from symattn.proof.entrywise import rename_bound
from symattn.proof.sums import simplify_sums


def test_sum_simplification_handles_a_sum_with_two_limits():
    k, l = sp.symbols("k l", integer=True)
    n, m = sp.symbols("n m", integer=True, positive=True)
    a, b, c = sp.IndexedBase("a"), sp.IndexedBase("b"), sp.Symbol("c")
    merged = sp.Sum(c * a[k] * b[l] + 2, (k, 0, n - 1), (l, 0, m - 1))
    assert len(merged.limits) == 2
    out = simplify_sums(merged)
    assert not out.has(sp.Sum) or all(not s.function.is_Add for s in out.atoms(sp.Sum))
    assert sp.expand(out.subs({n: 2, m: 3}).doit() - merged.subs({n: 2, m: 3}).doit()) == 0


def test_rename_bound_renames_every_limit_of_a_merged_sum():
    k, l, n = sp.symbols("k l n", integer=True)
    a = sp.IndexedBase("a")
    x = rename_bound(sp.Sum(a[k, l], (k, 0, n), (l, 0, n)), fresh=False)
    y = rename_bound(sp.Sum(a[l, k], (l, 0, n), (k, 0, n)), fresh=False)
    assert x == y


def test_softmax_on_the_wrong_axis_inside_head_sums_is_refuted_not_a_crash():
    n, m, d_model, d_k, d_v, H = sa.dims("n m d_model d_k d_v H")
    Q = sp.MatrixSymbol("Q", d_model, n)
    K, V = sp.MatrixSymbol("K", d_model, m), sp.MatrixSymbol("V", d_model, m)
    W_Q, W_K = sa.Family("W^Q", d_k, d_model), sa.Family("W^K", d_k, d_model)
    W_V, W_O = sa.Family("W^V", d_v, d_model), sa.Family("W^O", d_model, d_v)
    f = sa.ScoreFunction("f")
    good = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form="sum", score=f)
    h = sa.h
    bad = sa.head_sum(W_O[h] * (W_V[h] * V) * sa.softmax(f(W_Q[h] * Q, W_K[h] * K), 1), H)
    v = sa.verify(good, bad)
    assert v.status == "refuted" and v.counterexample is not None
