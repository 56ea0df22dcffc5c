"""verify() stays on the evidence ladder: general only from symbolic proofs, never from numbers."""

import time

import pytest
import sympy as sp

import symattn as sa
from symattn.proof import engine

n, m = sa.dims("n m")


@pytest.fixture
def without_symbolic_strategies(monkeypatch):
    """The engine with strategies A, B and C switched off: only E and D are left."""
    for name in ("same_by_rewriting", "by_induction"):
        monkeypatch.setattr(engine, name, lambda *a: (False, ["switched off for this test"]))
    monkeypatch.setattr(engine, "same_entrywise", lambda *a: (False, ["switched off for this test"]))


def test_instance_proof_is_not_general_and_names_the_dimensions(without_symbolic_strategies):
    x = sp.MatrixSymbol("x", 1, n)  # a true identity: a 1-row column softmax is all ones
    v = sa.verify(sa.softmax(x), sp.OneMatrix(1, n), at=[{n: 2}, {n: 3}])
    assert v.status == "proved"
    assert v.general is False
    assert v.method == "exact instances (D)"
    assert v.scope == "only at n=2; n=3"


def test_numeric_agreement_alone_is_unknown(without_symbolic_strategies):
    x = sp.MatrixSymbol("x", 1, n)
    v = sa.verify(sa.softmax(x), sp.OneMatrix(1, n))
    assert v.status == "unknown" and not v.general
    assert any("numerically consistent" in t and "not a proof" in t for t in v.trace)


def test_the_same_identity_is_proved_general_by_the_full_engine():
    x = sp.MatrixSymbol("x", 1, n)
    v = sa.verify(sa.softmax(x), sp.OneMatrix(1, n))
    assert v.status == "proved" and v.general and v.scope == "all dimensions (n)"


def test_a_closed_claim_is_proved_as_stated_not_general():
    M = sp.ImmutableMatrix([[1, 2], [3, 4]])
    v = sa.verify(sa.softmax(M), sa.softmax(M.T, 1).T)
    assert v.status == "proved" and not v.general
    assert v.scope == "as stated (a closed claim)"


def test_false_claim_with_instances_requested_is_still_refuted():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    v = sa.verify(A * B, B * A, at=[{n: 1}])
    assert v.status == "refuted"


def test_budget_turns_an_explosion_into_unknown():
    X = sp.MatrixSymbol("X", 7, 7)
    lhs = sa.softmax(sa.softmax(sa.softmax(X) * X) * X)
    rhs = sa.softmax(sa.softmax(X * sa.softmax(X)) * X)  # probably false, but too big to decide quickly
    start = time.perf_counter()
    v = sa.verify(lhs, rhs, at=[{}], budget=1.0, search_counterexample=False)
    assert time.perf_counter() - start < 10  # a guard against hanging, not a benchmark
    assert v.status == "unknown"
    assert any("gave up" in t or "exceeded" in t for t in v.trace)


def test_verdict_records_method_scope_trace_and_time():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    v = sa.verify((A * B).T, B.T * A.T)
    assert (v.status, v.general, v.method) == ("proved", True, "rewriting (A)")
    assert v.scope == "all dimensions (m, n)"
    assert v.trace and v.seconds >= 0
    assert "proved" in v.explain()


def test_uninterpreted_score_function_is_never_looked_inside():
    d_k = sa.dims("d_k")
    Q, K = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m)
    V = sp.MatrixSymbol("V", d_k, m)
    f = sa.ScoreFunction("f")
    v = sa.verify(sa.attention(Q, K, V, score=f), sa.attention(Q, K, V))  # f is not the scaled dot
    assert v.status == "refuted"
    assert "f" in v.counterexample.functions
