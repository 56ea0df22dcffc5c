"""The VJP of a head stack or concatenation over a symbolic head count H: head k's weight W_k gets the
VJP of its head at the k-th block of the cotangent, an input every head reads gets the head sum over
the blocks; proved general in H (and k), refused where k is not shown to be a head, and the neighbour
that takes block k + 1 is refuted."""

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import SoundnessError
from symattn.grad.stacks import head_block
from symattn.proof.audit_gradient import run_gradient_audit

k, r, d, n, H = sa.dims("k r d n H")
W = sa.Family("W", d, d)
X = sp.MatrixSymbol("X", d, n)
Gs, Gc = sp.MatrixSymbol("G", (k + r) * d, n), sp.MatrixSymbol("G", d, (k + r) * n)
S = sa.head_stack(lambda h: W[h] * X, k + r)
C = sa.head_concat(lambda h: W[h] * X, k + r)


def rows(M, j):
    return sp.MatrixSlice(M, ((j - 1) * d, j * d, 1), (0, M.cols, 1))


def cols(M, j):
    return sp.MatrixSlice(M, (0, M.rows, 1), ((j - 1) * n, j * n, 1))


def test_head_k_gets_the_kth_block_of_the_cotangent():
    assert head_block(S, Gs, k) == rows(Gs, k) and head_block(C, Gc, k) == cols(Gc, k)
    assert sa.vjp(S, W[k], Gs).args == (rows(Gs, k), X.T)
    assert sa.vjp(C, W[k], Gc).args == (cols(Gc, k), X.T)
    shared = sa.vjp(S, X, Gs)  # X is read by every head: the head sum of W_hᵀ G_h
    assert isinstance(shared, sa.HeadSum) and shared.count == k + r


@pytest.mark.parametrize("expr, cot, candidate", [
    (S, Gs, rows(Gs, k) * X.T), (C, Gc, cols(Gc, k) * X.T)], ids=["stack", "concat"])
def test_the_member_gradient_is_proved_general_in_the_head_count(expr, cot, candidate):
    v = sa.verify_gradient(expr, W[k], candidate, cot)
    assert v.proved and v.general, v.trace
    assert "k" in v.scope and "r" in v.scope and "head_" in v.scope, v.scope
    assert v.audit.agreed >= 1, v.audit.line


@pytest.mark.parametrize("expr, cot, candidate", [
    (S, Gs, rows(Gs, k + 1) * X.T), (C, Gc, cols(Gc, k + 1) * X.T)], ids=["stack", "concat"])
def test_taking_the_next_heads_block_is_refuted(expr, cot, candidate):
    v = sa.verify_gradient(expr, W[k], candidate, cot)
    assert v.status == "refuted" and v.counterexample.certificate, v.trace


def test_the_gradient_audit_evaluates_the_block_and_catches_the_next_one():
    assert run_gradient_audit(S, W[k], rows(Gs, k) * X.T, Gs).agreed == 3
    with pytest.raises(SoundnessError, match="false"):
        run_gradient_audit(S, W[k], rows(Gs, k + 1) * X.T, Gs)


def test_a_head_not_shown_to_be_one_of_the_stack_is_refused():
    j = sa.dims("j")
    G = sp.MatrixSymbol("G", H * d, n)
    with pytest.raises(sa.GradientError, match="is not shown"):
        sa.vjp(sa.head_stack(lambda h: W[h] * X, H), W[j], G)
    with pytest.raises(sa.GradientError, match="not only at the head index"):
        sa.vjp(sa.head_stack(lambda h: W[h] * W[h + 1] * X, k + r), W[k], Gs)


def test_a_stack_rule_that_passes_the_wrong_block_fails_its_check(monkeypatch):
    from symattn.grad import rule_check, stacks

    real = stacks.head_block
    monkeypatch.setattr(stacks, "head_block", lambda e, G, h: real(e, G, 1))  # every head gets block 1
    rule_check.check_rule.cache_clear()
    try:
        assert not rule_check.check_rule("head_stack_member").ok
        assert not rule_check.check_rule("head_concat_shared").ok
    finally:
        monkeypatch.undo()
        rule_check.check_rule.cache_clear()
