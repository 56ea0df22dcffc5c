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
    assert any("equal exactly at" in t and "sampled instances (not a proof" in t for t in v.trace)


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


def test_counterexample_search_respects_scalar_assumptions():
    X = sp.MatrixSymbol("X", n, n)
    c = sp.Symbol("c", integer=True, positive=True)
    v = sa.verify((sp.sqrt(c**2 - 2 * c + 1) + 1) * X, c * X)  # true for every c >= 1
    assert v.status != "refuted"


def test_a_user_symbol_named_like_a_canonical_bound_index_is_not_captured():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    c = sp.Symbol("_b0", integer=True)  # row c of A times B is not the diagonal of A times B
    v = sa.verify(A[c:c + 1, :] * B, sp.OneMatrix(1, n) * sp.HadamardProduct(A, sp.Identity(n)) * B)
    assert v.status == "refuted"


def test_a_position_named_i_is_not_the_rope_block_index():
    i = sp.Symbol("i", integer=True, positive=True)
    th = sp.Function("theta")
    v = sa.verify(sa.rope(i, 2, th), sp.BlockDiagMatrix(sa.rotation(th(1)), sa.rotation(2 * th(2))))
    assert v.status != "proved"


def test_proofs_with_inverses_say_they_assume_invertibility():
    X, Y = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("Y", n, n)
    v = sa.verify((X * Y).I, Y.I * X.I)
    if v.status == "proved":
        assert "assuming every inverse in the claim exists" in v.scope


def test_a_time_limit_cannot_be_swallowed_by_code_that_catches_exception():
    from symattn.proof.budget import Budget

    start = time.perf_counter()
    with pytest.raises(sa.BudgetExceeded, match="exceeded its"):
        with Budget(0.3).limit(what="a stubborn loop"):
            while time.perf_counter() - start < 20:
                try:
                    sum(range(10_000))
                except Exception:  # what some library code does
                    pass
    assert time.perf_counter() - start < 5
