"""Claims about a stack of L layers for every L: induction on the number of layers, and the audit at depth."""

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import ClaimError, ShapeError
from symattn.proof import kernel
from symattn.proof.audit import run_audit
from symattn.proof.verdict import AuditRecord, InductionVerdict
from symattn.proofs import layers as lib

n, L = sa.dims("n L")
d_model = lib.d_model


def attention_stacks(depth, names=("X", "W^Q", "W^K", "W^V", "S_col", "S_row"), d=d_model, m=n):
    """(row stack on Xᵀ, column stack on X) of residual self-attention layers, with the given names."""
    X = sp.MatrixSymbol(names[0], d, m)
    WQ, WK, WV = (sp.MatrixSymbol(s, d, d) for s in names[1:4])
    S, R = sp.MatrixSymbol(names[4], d, m), sp.MatrixSymbol(names[5], m, d)
    col_layer = S + WV * S * sa.softmax((WK * S).T * (WQ * S))
    row_layer = R + sa.softmax(R * WQ.T * (R * WK.T).T, axis=1) * R * WV.T
    col = sa.layer_stack(col_layer, S, X, depth, weights=(WQ, WK, WV))
    row = sa.layer_stack(row_layer, R, X.T, depth, weights=(WQ, WK, WV))
    return row, col


def test_the_row_stack_is_the_transpose_of_the_column_stack_for_every_L():
    row, col = attention_stacks(L)
    v = sa.verify(row, col.T)
    assert v.proved and v.general, v.explain()
    assert v.method == "induction on the number of layers"
    assert v.scope == "all dimensions (d_model, n) and every L >= 1"
    assert any(t.startswith("step: the stacks after L layers are fresh matrices") for t in v.trace)


def test_the_induction_verdict_carries_both_sub_verdicts_and_audits_at_L_1_2_3():
    row, col = attention_stacks(L)
    v = sa.verify(row, col.T)
    assert isinstance(v, InductionVerdict)
    for part in (v.base, v.step):
        assert part.proved and part.audit.agreed >= 1
    assert v.base.lhs != v.step.lhs  # the step is a claim of its own, about a fresh S_L
    assert "S1_L" in sp.sstr(v.step.rhs) or "S1_L" in sp.sstr(v.step.lhs)
    for k in (1, 2, 3):
        assert f"at L = {k}" in v.audit.line
    assert v.audit.agreed >= 3 * 4
    assert any(t.startswith("base L = 1: proved") for t in v.trace)


def test_the_library_theorem_is_proved_for_every_L():
    th = sa.theorem("row_stack_is_transpose_of_column_stack")
    from symattn.theorems import prove

    res = prove(th, cached=False, save=False)
    assert res.status == "proved" and res.general, res.verdicts[0].explain()
    assert "every L >= 1" in res.scope


def test_renaming_the_symbols_changes_no_verdict():
    M = sa.dims("M")
    k, m = sa.dims("k m")
    row, col = attention_stacks(M, names=("Z", "U^Q", "U^K", "U^V", "P", "T"), d=k, m=m)
    v = sa.verify(row, col.T)
    assert v.proved and v.scope == "all dimensions (k, m) and every M >= 1"
    w = sa.verify(*swapped_layers(M, names=("Y", "B", "T")))
    assert w.status == "refuted" and w.scope.startswith("counterexample at M = 2")


def swapped_layers(depth, names=("X", "A", "S")):
    """S_l = S_{l-1} A_l against S_l = A_l S_{l-1}, from the identity: equal at one layer
    (A_1 = A_1), not at two (A_1 A_2 ≠ A_2 A_1)."""
    A, S = sp.MatrixSymbol(names[1], n, n), sp.MatrixSymbol(names[2], n, n)
    I = sp.Identity(n)
    return (sa.layer_stack(S * A, S, I, depth, weights=[A]), sa.layer_stack(A * S, S, I, depth, weights=[A]))


def test_layers_that_do_not_commute_swapped_are_refuted_at_L_2():
    v = sa.verify(*swapped_layers(L))
    assert v.status == "refuted", v.explain()
    assert v.scope == "counterexample at L = 2, n=2"
    assert v.counterexample is not None and v.counterexample.difference != 0
    assert any("not proved for every L" in t for t in v.trace)


def test_without_the_search_a_false_claim_is_unknown_never_proved():
    v = sa.verify(*swapped_layers(L), search_counterexample=False)
    assert v.status == "unknown", v.explain()


def test_a_claim_false_at_one_layer_is_refuted_at_L_1():
    X, A, S = (sp.MatrixSymbol(s, n, n) for s in "XAS")
    v = sa.verify(sa.layer_stack(S * A, S, X, L, weights=[A]), sa.layer_stack(A * S, S, X, L, weights=[A]))
    assert v.status == "refuted" and v.scope.startswith("counterexample at L = 1"), v.explain()


def test_a_true_claim_whose_step_fails_is_unknown_never_proved():
    # A^L = A^L with one A shared by every layer: true for every L, but the step S A = A S for
    # every S is false, so the induction does not prove it; checks at L = 2, 3 are not a proof
    A, S = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("S", n, n)
    I = sp.Identity(n)
    v = sa.verify(sa.layer_stack(S * A, S, I, L), sa.layer_stack(A * S, S, I, L))
    assert v.status == "unknown", v.explain()
    assert any(t == "at L = 2: proved (all dimensions (n)) by rewriting (A)" for t in v.trace), v.trace


def test_two_stacks_are_equal_when_their_layers_are():
    # S_l = S_{l-1} + A_l S_{l-1} against (I + A_l) S_{l-1}: the step is the layers' own identity
    X, A, S = (sp.MatrixSymbol(s, n, n) for s in "XAS")
    left = sa.layer_stack(S + A * S, S, X, L, weights=[A])
    right = sa.layer_stack((sp.Identity(n) + A) * S, S, X, L, weights=[A])
    v = sa.verify(left, right)
    assert v.proved and v.scope == "all dimensions (n) and every L >= 1", v.explain()


def test_layers_that_commute_only_with_each_other_are_left_unknown():
    # S_l = S_{l-1} + p(A) S_{l-1} against S_{l-1} + S_{l-1} p(A), p(A) = A^2 + A, from A: true at every
    # L (every S_l is a polynomial in A), but the step for an arbitrary S_L is false: unknown, not proved
    A, S = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("S", n, n)
    left = sa.layer_stack(S + (A * A + A) * S, S, A, L)
    right = sa.layer_stack(S + S * (A + A * A), S, A, L)
    v = sa.verify(left, right)
    assert v.status == "unknown", v.explain()


def test_a_claim_that_holds_whatever_the_stacks_are():
    row, col = attention_stacks(L)
    v = sa.verify(row + row, 2 * row)
    assert v.proved and v.scope == "all dimensions (d_model, n) and every L >= 1", v.explain()
    assert any("shown for every value of them" in t for t in v.trace)


def test_a_concrete_depth_is_unfolded():
    row, col = attention_stacks(3)
    v = sa.verify(row, col.T)
    assert v.proved and "every L" not in v.scope


def test_the_kernel_refuses_an_induction_the_audit_cannot_evaluate(monkeypatch):
    row, col = attention_stacks(L)
    monkeypatch.setattr(kernel, "run_audit", lambda *a, **k: AuditRecord(0, ("no instance",), "audit: skipped"))
    v = sa.verify(row, col.T)
    assert v.status == "unknown", v.explain()
    with pytest.raises(ValueError):
        kernel.conclude_by_induction(None, v, v, [(1, row, col)], L)


def test_the_audit_at_depth_24_evaluates_every_instance():
    row, col = attention_stacks(24)
    record = run_audit(row.unfold(24), sp.Transpose(col.unfold(24)))
    assert record.passed and record.agreed >= 4, record.line


def test_the_statement_is_checked():
    X, A, S = (sp.MatrixSymbol(s, n, n) for s in "XAS")
    B = sp.MatrixSymbol("B", n, 2 * n)
    with pytest.raises(ShapeError, match="same shape"):
        sa.layer_stack(B, S, X, L)
    with pytest.raises(ClaimError, match="positive integer"):
        sa.layer_stack(A * S, S, X, sp.Symbol("k"))
    with pytest.raises(ClaimError, match="does not occur"):
        sa.layer_stack(S, S, X, L, weights=[A])
    stack = sa.layer_stack(A * S, S, X, L, weights=[A])
    with pytest.raises(ClaimError, match="outside the layer maps"):
        sa.verify(stack, A * X)
    with pytest.raises(ClaimError, match="named like the weight A"):
        sa.verify(stack, sp.MatrixSymbol("A_2", n, n) * X)
    with pytest.raises(ClaimError, match="same depth"):
        sa.verify(stack, sa.layer_stack(A * S, S, X, sa.dims("K"), weights=[A]))
    with pytest.raises(ClaimError, match="weights of both or of neither"):
        sa.verify(stack, sa.layer_stack(A * S, S, X, L))


def test_the_audit_unfolds_a_stack_on_its_own_and_finds_layers_out_of_order():
    from symattn.errors import SoundnessError

    row, col = attention_stacks(3)
    assert run_audit(row, row.unfold(3)).agreed == 4  # its own unfolding agrees with the prover's
    with pytest.raises(SoundnessError):
        run_audit(*swapped_layers(2))
