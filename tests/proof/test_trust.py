"""The trust base: every rule the engine applies is listed, and each one's check passes and can fail."""

from __future__ import annotations

import importlib

import pytest
import sympy as sp

from symattn.cli import main
from symattn.defs.heads import FamilyMember, HeadSum
from symattn.defs.softmax import Softmax
from symattn.proof import canon, trust
from symattn.proof.trust_check import Case, Rule, check_rule
from symattn.proof.trust_eval import exactly_equal

CHECKED = [r for r in trust.TRUST_BASE if r.family is not None]


@pytest.mark.parametrize("rule", CHECKED, ids=lambda r: r.name)
def test_trust_rule_holds_exactly_at_every_small_size_and_in_float64_at_larger_ones(rule):
    result = check_rule(rule)
    assert result.ok, "\n".join(result.failures)
    assert result.exact_sizes == len(rule.exact_sizes()) > 0
    assert result.exact_instances >= result.exact_sizes
    if rule.samples:
        assert result.numeric_instances > 0 and result.numeric_sizes


def test_every_rule_function_of_the_rule_modules_has_a_trust_entry():
    assert trust.rule_functions(), "no rule functions were collected"
    assert trust.unlisted_rule_functions() == []


def test_a_new_rule_function_without_an_entry_is_reported(monkeypatch):
    def fold_everything(e):
        return e

    fold_everything.__module__ = canon.__name__
    monkeypatch.setattr(canon, "fold_everything", fold_everything, raising=False)
    assert trust.unlisted_rule_functions() == ["symattn.proof.canon.fold_everything"]


def _resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_every_entry_names_an_implementation_that_exists_and_a_statement():
    names = [r.name for r in trust.TRUST_BASE]
    assert len(names) == len(set(names))
    for r in trust.TRUST_BASE:
        assert r.statement and r.where
        for w in r.where:
            if w.startswith("symattn."):
                assert callable(_resolve(w)), w
        assert (r.family is None) == bool(r.axiom), r.name
    for name in trust.DRIVERS:
        assert callable(_resolve(name)), name


def _rule_named(name):
    return next(r for r in trust.TRUST_BASE if r.name == name)


def test_a_wrong_transpose_rule_in_the_softmax_node_is_caught(monkeypatch):
    monkeypatch.setattr(Softmax, "_eval_transpose", lambda self: Softmax(self.arg.T, self.axis))
    result = check_rule(_rule_named("transpose_of_softmax"))
    assert not result.ok and "the implementation changed the value" in result.failures[0]


def test_pushing_a_factor_that_mentions_the_index_into_a_head_sum_is_caught(monkeypatch):
    def reckless(e):
        """M Σ_h e_h -> Σ_h M e_h even when M mentions h (captured by the sum)."""
        if isinstance(e, HeadSum):
            return HeadSum(reckless(e.body), e.index, e.count)
        if isinstance(e, sp.MatMul):
            f = list(e.args)
            for k, x in enumerate(f):
                if isinstance(x, HeadSum):
                    return HeadSum(sp.MatMul(*f[:k], x.body, *f[k + 1:]), x.index, x.count)
        return e

    monkeypatch.setattr(canon, "push_into_head_sums", reckless)
    trust.clear_caches()  # the families rewrite on a symbolic H once per process
    try:
        result = check_rule(_rule_named("push_into_head_sums"))
    finally:
        monkeypatch.undo()
        trust.clear_caches()
    assert not result.ok
    assert any("case 5" in f and "the implementation changed the value" in f for f in result.failures)


def _square(n):
    return sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)


def test_transpose_keeping_the_order_fails_its_check_at_size_two():
    def family(n):
        A, B = _square(n)
        return [Case(sp.Transpose(A * B), A.T * B.T)]

    result = check_rule(Rule("transpose_keeps_order", ("test",), "(AB)ᵀ = AᵀBᵀ", family, ("n",), must_fire=False))
    assert not result.ok
    assert result.failures[0].startswith("at n=2, case 0 (exact): lhs != rhs")
    assert not any(f.startswith("at n=1,") for f in result.failures)


def test_softmax_transpose_keeping_the_axis_fails_its_check():
    def family(m, n):
        X = sp.MatrixSymbol("X", m, n)
        return [Case(sp.Transpose(Softmax(X, 0)), Softmax(X.T, 0))]

    result = check_rule(Rule("softmax_transpose_same_axis", ("test",), "Softmax(X)ᵀ = Softmax(Xᵀ)", family, "mn",
                             must_fire=False))
    assert not result.ok and "lhs != rhs" in result.failures[0]


def test_an_implementation_that_ignores_its_side_condition_fails_its_check():
    """Σ_{k<n} [k = u] a_k -> a_u applied although u = n is outside the range."""

    def family(n):
        k = sp.Dummy("k", integer=True)
        a = sp.MatrixSymbol("a", n + 1, 1)
        return [Case(sp.Sum(sp.KroneckerDelta(k, u) * a[k, 0], (k, 0, n - 1)), None, a[u, 0]) for u in range(n + 1)]

    result = check_rule(Rule("delta_without_range", ("test",), "Σ_k [k = u] a_k = a_u", family, ("n",)))
    assert not result.ok
    assert "the implementation changed the value" in result.failures[0]


def test_an_implementation_that_never_fires_fails_its_check():
    def family(n):
        A, B = _square(n)
        return [Case(A + B, B + A, A + B)]

    result = check_rule(Rule("idle", ("test",), "A + B = B + A", family, ("n",)))
    assert result.failures == ["the implementation never rewrote any instance: the family does not exercise it"]


def test_a_rule_false_only_beyond_size_four_fails_its_float_check():
    """Σ_{k<n} a_k = Σ_{k<min(n, 4)} a_k holds at every n <= 4; the check at sizes 5..12 catches it."""

    def family(n):
        k = sp.Dummy("k", integer=True)
        a = sp.MatrixSymbol("a", n, 1)
        return [Case(sp.Sum(a[k, 0], (k, 0, n - 1)), sp.Sum(a[k, 0], (k, 0, min(n, 4) - 1)))]

    result = check_rule(Rule("only_small", ("test",), "Σ_{k<n} a_k = Σ_{k<4} a_k", family, ("n",), must_fire=False))
    assert not result.ok
    assert result.exact_instances == 4
    assert "(float)" in result.failures[0] and "lhs != rhs" in result.failures[0]


def test_leaves_are_told_apart_by_object_not_by_printed_name():
    def family(n):
        member, plain = FamilyMember("A", 1, n, n), sp.MatrixSymbol("A_1", n, n)
        assert sp.sstr(member) == sp.sstr(plain)
        return [Case(member, plain)]

    result = check_rule(Rule("same_name", ("test",), "A_1 (family) = A_1 (symbol)", family, ("n",), must_fire=False))
    assert not result.ok and result.failures[0].startswith("at n=1, case 0 (exact): lhs != rhs")


def test_exact_comparison_sees_a_difference_of_ten_to_the_minus_twenty():
    ok, _ = exactly_equal(sp.exp(1), sp.exp(1) + sp.Rational(1, 10**20))
    assert not ok
    assert exactly_equal(sp.exp(2), sp.exp(1) ** 2)[0]


def test_prove_trust_lists_every_rule_without_checking(capsys):
    assert main(["prove", "--trust", "--no-check"]) == 0
    out = capsys.readouterr().out
    for r in trust.TRUST_BASE:
        assert f"{r.name}  [" in out
    assert "not checked (--no-check)" in out and "axiom" in out


def test_prove_trust_checks_the_named_rules(capsys):
    assert main(["prove", "--trust", "transpose_of_product", "merge_nested_floors"]) == 0
    out = capsys.readouterr().out
    assert "transpose_of_product  [ok" in out
    assert "exactly at 128 instances (every a in 1..4, b in 1..4, c in 1..4)" in out
    assert "2 of 2 checks passed" in out


def test_prove_trust_exits_nonzero_when_a_rule_fails(monkeypatch, capsys):
    def family(n):
        A, B = _square(n)
        return [Case(A * B, B * A)]

    wrong = Rule("products_commute", ("test",), "AB = BA", family, ("n",), must_fire=False)
    monkeypatch.setattr(trust, "TRUST_BASE", [wrong])
    assert main(["prove", "--trust"]) == 1
    out = capsys.readouterr().out
    assert "products_commute  [FAILED" in out and "failed: products_commute" in out


def test_prove_trust_refuses_an_unknown_rule_name(capsys):
    assert main(["prove", "--trust", "no_such_rule"]) == 2
    assert "no rule named no_such_rule" in capsys.readouterr().err


def test_the_trust_base_checked_in_processes_is_the_trust_base_checked_here():
    from symattn.proof.trust import TRUST_BASE, check_trust_base

    names = [r.name for r in TRUST_BASE if r.family is not None][:3]
    here, forked = check_trust_base(names=names, jobs=1), check_trust_base(names=names, jobs=2)
    assert [c.rule.name for c in forked] == [c.rule.name for c in here] == names
    for a, b in zip(here, forked):
        assert (a.ok, a.exact_instances, a.numeric_instances, a.fired, a.failures) == \
            (b.ok, b.exact_instances, b.numeric_instances, b.fired, b.failures)
        assert a.summary() == b.summary()
