"""VJPs through a head sum over a symbolic head count H: the member rule (dW_k is the
k-th term's VJP, for 1 ≤ k ≤ H shown), the group rule (GQA's W_{g(h)}), the shared rule (an input
every head reads gets the head sum of the per-head VJPs), their exact checks at H = 1..3, and the
gradient audit writing head sums out at its instances."""

import importlib

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import SoundnessError
from symattn.grad import rule_check
from symattn.grad.vjp import vjp_with_rules
from symattn.proof.audit_gradient import run_gradient_audit

vjp_module = importlib.import_module("symattn.grad.vjp")  # symattn.grad.vjp is also the function's name

d, n = sa.dims("d n")
k, r, H = sa.dims("k r H")
W = sa.Family("W", d, d)
A, X = sp.MatrixSymbol("A", d, n), sp.MatrixSymbol("X", d, n)
Gc = sp.MatrixSymbol("G", d, n)


def test_the_gradient_of_a_member_is_its_own_term_and_an_input_of_every_head_gets_the_sum():
    e = sa.head_sum(lambda h: W[h] * sa.softmax(W[h].T * A), k + r)
    g, used = vjp_with_rules(e, W[k], Gc)
    assert used[0] == "head_sum_member"
    assert g == sa.vjp(W[k] * sa.softmax(W[k].T * A), W[k], Gc)  # the term h = k, nothing of the others
    assert not g.has(r)
    shared = sa.head_sum(lambda h: W[h] * sa.softmax(X), H)
    g, used = vjp_with_rules(shared, X, Gc)
    assert used[0] == "head_sum_shared" and isinstance(g, sa.HeadSum) and g.count == H
    fixed = sa.head_sum(lambda h: W[k] * sa.softmax(X), H)  # a member free of h is read by every head
    g, used = vjp_with_rules(fixed, W[k], Gc)
    assert used[0] == "head_sum_shared" and isinstance(g, sa.HeadSum)


def test_a_member_whose_place_in_the_sum_is_not_shown_is_refused_with_the_reason():
    e = sa.head_sum(lambda h: W[h] * A, H)  # k may exceed H: W_k need not be one of the terms
    with pytest.raises(sa.GradientError, match=r"1 ≤ k ≤ H is not shown"):
        sa.vjp(e, W[k], Gc)
    nested = sa.head_sum(lambda h: W[h] * sa.head_sum(lambda j: W[j] * A, H), k + r)  # W_k in every head
    with pytest.raises(sa.GradientError, match=r"which every head reads"):
        sa.vjp(nested, W[k], Gc)
    both = sa.head_sum(lambda h: W[h] * W[k] * A, k + r)
    with pytest.raises(sa.GradientError, match=r"which every head reads"):
        sa.vjp(both, W[k], Gc)
    shifted = sa.head_sum(lambda h: W[h + 1] * A, H)  # the term that reads W_k is h = k - 1
    with pytest.raises(sa.GradientError, match=r"not at the head index"):
        sa.vjp(shifted, W[k], Gc)


@pytest.mark.parametrize("name", ["head_sum_member", "head_sum_shared", "head_sum_group"])
def test_each_head_sum_rule_is_checked_exactly_at_every_H_in_1_to_3(name):
    c = rule_check.check_rule(name)
    assert c.ok and c.instances >= 9, c.line()
    assert "checked exactly" in c.line()


def test_a_wrong_member_rule_fails_its_exact_check(monkeypatch):
    real = vjp_module._head_sum

    def doubled(e, wrt, G):  # the slip: the member counted once per head that reads the family
        child, g, names = real(e, wrt, G)
        return child, sp.MatMul(2, g), names

    monkeypatch.setattr(vjp_module, "_head_sum", doubled)
    rule_check.check_rule.cache_clear()
    try:
        assert not rule_check.check_rule("head_sum_member").ok
    finally:
        monkeypatch.undo()
        rule_check.check_rule.cache_clear()


def test_a_head_sum_gradient_is_proved_for_every_head_count_and_its_slip_refuted():
    e = sa.head_sum(lambda h: W[h] * sa.Exp(A), k + r)
    v = sa.verify_gradient(e, W[k], Gc * sp.Transpose(sa.Exp(A)), Gc)
    assert v.proved and v.general and "r" in v.scope and "head_sum_member" in v.scope, v.scope
    assert v.audit.agreed >= 1
    wrong = sa.verify_gradient(e, W[k], r * Gc * sp.Transpose(sa.Exp(A)), Gc)  # summed over all heads
    assert wrong.status == "refuted"


def test_the_audit_writes_the_heads_out_and_catches_a_false_head_gradient():
    e = sa.head_sum(lambda h: W[h] * A, k + r)
    good = run_gradient_audit(e, W[k], Gc * A.T, Gc)
    assert good.agreed == 3 and not good.skipped
    with pytest.raises(SoundnessError, match="proved a gradient that is false"):
        run_gradient_audit(e, W[k], (k + r) * Gc * A.T, Gc)  # every head's share given to W_k
    shared = sa.head_sum(lambda h: W[h] * X, H)
    with pytest.raises(SoundnessError):
        run_gradient_audit(shared, X, W[1].T * Gc, Gc)  # head 1 only, for an input every head reads
    assert run_gradient_audit(shared, X, sa.head_sum(lambda h: W[h].T * Gc, H), Gc).agreed == 3
