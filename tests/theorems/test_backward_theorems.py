"""The backward theorems of the library (proofs/backward.py) and the gallery of backward mistakes
(proofs/backward_mistakes.py): gradient claims "candidate = vjp(E, W, G)" decided by
sa.verify_gradient through the kernel's gradient audit, their scopes honest (general modulo the
VJP rules, or only at the head counts / sizes they fix), each mistake refuted with a certified
counterexample re-checked here by differentiating explicit matrices written independently of the
engine, and renaming the user symbols changing no verdict."""

import json

import numpy as np
import pytest
import sympy as sp
from corpus_rename import rename_claim, user_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symattn.errors import GradientError
from symattn.proof.certify import certify_nonzero
from symattn.statements import VJP, gradient, is_gradient_claim
from symattn.theorems import _decide, load_library, prove

GENERAL = [
    "softmax_vjp_both_axes",
    "attention_backward_row",
    "attention_backward_column",
    "flashattention2_D_is_rowsum_dO_O",
    "backward_recomputes_P_from_logsumexp",
    "causal_backward_masked_entries_get_zero_gradient",
    "attention_pooling_query_gradient",
    "multihead_weight_gradients",  # general in the head count H since the head-sum VJP rules
    "gqa_mqa_backward_sums_over_the_group",
    "rope_backward_is_the_transposed_rotation",  # every d = 2p: the audit writes R_a out as its p blocks
    "head_stack_gradients_take_the_head_block",  # general in H: the head-stack VJP rules
]
ONLY_AT = {
    "causal_backward_masked_scores_get_exactly_zero": "n = 4",
}
MISTAKES = {
    "mistake_flashattention_dK_as_Q_dS_transposed": "dSᵀ Q",
    "mistake_softmax_vjp_drops_the_diagonal_term": "p pᵀ",
    "mistake_softmax_vjp_keeps_only_the_outer_product": "diag(p)",
    "mistake_backward_missing_scale": "1/√d_k",
    "mistake_dV_transpose_on_the_wrong_side": "Pᵀ dO",
    "mistake_row_softmax_vjp_in_the_column_convention": "colsum",
    "mistake_gqa_dWK_from_one_head_of_the_group": "sum over those r heads",
}


def test_the_library_registers_them_and_every_claim_of_a_backward_theorem_is_stated_as_a_gradient():
    lib = load_library()
    for name in GENERAL + list(ONLY_AT):
        th = lib[name]
        assert th.expect == "proved" and th.family == "backward", name
        assert any(is_gradient_claim(*c) for c in th.claims()), name
        assert th.only_at == ONLY_AT.get(name, ""), name
        if th.only_at:  # the statement says why the value is fixed
            assert "so" in th.statement and "fixed" in th.statement, name
    for name, slip in MISTAKES.items():
        th = lib[name]
        assert th.expect == "refuted" and th.explanation.startswith("The slip:") and slip in th.explanation, name
        assert all(is_gradient_claim(*c) for c in th.claims()), name


@pytest.mark.parametrize("name", GENERAL)
def test_a_general_backward_theorem_is_proved_for_all_dimensions_modulo_the_rules(name):
    r = prove(load_library()[name], save=False)
    assert r.status == "proved" and r.general and r.ok, r.as_dict()
    assert r.scope.startswith("all dimensions (")
    grads = [v for v, c in zip(r.verdicts, r.theorem.claims()) if is_gradient_claim(*c)]
    assert grads and all("modulo the VJP rules" in v.scope for v in grads)
    assert "modulo the VJP rules" in r.scope  # the theorem's scope does not drop what the proof rests on
    for v in grads:
        assert v.audit.agreed >= 1 and "derivative along a random direction" in v.audit.line
        assert any("not proved for all sizes" in str(t) for t in v.trace)
        assert isinstance(v.rhs, VJP)  # the verdict shows the claim as stated: candidate = vjp(...)


@pytest.mark.parametrize("name", sorted(ONLY_AT))
def test_a_backward_theorem_at_fixed_values_says_so_and_is_never_general(name):
    r = prove(load_library()[name], save=False)
    assert r.status == "proved" and r.ok and not r.general, r.as_dict()
    assert r.scope.startswith(f"only at {ONLY_AT[name]}; "), r.scope
    # every other dimension is symbolic (the n = 4 claim has none left: its scope names its inputs)
    assert r.scope.startswith(f"only at {ONLY_AT[name]}; all dimensions (") or "n = 4" in ONLY_AT[name], r.scope
    assert all(v.proved and v.general for v in r.verdicts)


def _explicit(M):
    return sp.Matrix(np.asarray(M).tolist())


def _rows(S):
    E = S.applyfunc(sp.exp)
    return sp.Matrix(E.rows, E.cols, lambda i, j: E[i, j] / sum(E[i, k] for k in range(E.cols)))


def _forward(name, x, d):
    """(E as a function of the input W, W's name, the cotangent's name), written out here."""
    if name in ("mistake_softmax_vjp_drops_the_diagonal_term", "mistake_softmax_vjp_keeps_only_the_outer_product"):
        return _rows, "S", "dP"
    if name == "mistake_row_softmax_vjp_in_the_column_convention":
        return (lambda Q: x["V"] * _rows((x["K"].T * Q / sp.sqrt(d["d_k"])).T).T), "Q", "dO"
    dk = d.get("d_k", d.get("n"))
    if name == "mistake_flashattention_dK_as_Q_dS_transposed":
        return (lambda K: _rows(x["Q"] * K.T / sp.sqrt(dk)) * x["V"]), "K", "dO"
    if name == "mistake_backward_missing_scale":
        return (lambda Q: _rows(Q * x["K"].T / sp.sqrt(dk)) * x["V"]), "Q", "dO"
    if name == "mistake_dV_transpose_on_the_wrong_side":
        return (lambda V: _rows(x["Q"] * x["K"].T / sp.sqrt(dk)) * V), "V", "dO"
    if name == "mistake_gqa_dWK_from_one_head_of_the_group":
        return _gqa_forward(x, d), f"W^K_{d['n_g']}", "G"
    raise AssertionError(name)


def _gqa_forward(x, d):
    """GQA written out head by head: Σ_h W_h^O (W_{g(h)}^V V) colsoftmax((W_{g(h)}^K K)ᵀ W_h^Q Q/√d_k),
    g(h) = ⌊(h − 1)/r⌋ + 1, as a function of the last group's W^K."""
    groups, r = d["n_g"], d["r"]

    def f(WK_last):
        out = sp.zeros(d["d_model"], d["n"])
        for h in range(1, groups * r + 1):
            g = (h - 1) // r + 1
            WK = WK_last if g == groups else x[f"W^K_{g}"]
            S = (WK * x["K"]).T * (x[f"W^Q_{h}"] * x["Q"]) / sp.sqrt(d["d_k"])
            out += x[f"W^O_{h}"] * (x[f"W^V_{g}"] * x["V"]) * _rows(S.T).T
        return out
    return f


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_a_backward_mistake_is_refuted_and_its_counterexample_rechecked_by_explicit_differentiation(name):
    r = prove(load_library()[name], save=False)
    assert r.status == "refuted" and r.ok and not r.general, r.as_dict()
    cex = r.verdicts[0].counterexample
    assert cex.certificate and cex.difference != 0
    x = {k: _explicit(v) for k, v in cex.values.items()}
    f, w, g = _forward(name, x, cex.dims)
    W0 = x[w]
    T = sp.Matrix(W0.rows, W0.cols, lambda i, j: sp.Symbol(f"t_{i}_{j}"))
    E = f(W0 + T)
    G = x[g]
    total = sum(G[i, j] * E[i, j] for i in range(E.rows) for j in range(E.cols))
    k, l = cex.entry
    derivative = sp.diff(total, T[k, l]).subs({t: 0 for t in T})
    # the engine's derivative agrees with the one recomputed here, exactly; the candidate does not
    # (lhs is the candidate, rhs the derivative, as the claim candidate = vjp(E, W, G) reads)
    assert sp.simplify(derivative - cex.rhs_exact[k, l]) == 0
    assert certify_nonzero(sp.nsimplify(0) + derivative - cex.lhs_exact[k, l]) is not None
    assert sp.simplify(cex.lhs_exact[k, l] - cex.rhs_exact[k, l] - cex.difference) == 0
    assert f"entry ({k}, {l})" in r.verdicts[0].explain()


CHEAP = [("softmax_vjp_both_axes", 1), ("attention_backward_column", 0),
         ("mistake_softmax_vjp_drops_the_diagonal_term", 0), ("mistake_dV_transpose_on_the_wrong_side", 0)]
NAMES = st.lists(st.sampled_from(["A", "B", "X", "Y", "W", "Z0", "q", "k_1", "Vv", "G_2", "u", "v", "r", "s"]),
                 min_size=12, max_size=12, unique=True)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NAMES)
def test_renaming_the_user_symbols_of_a_gradient_claim_changes_no_verdict(pool):
    lib = load_library()
    for name, k in CHEAP:
        th = lib[name]
        lhs, rhs = th.claims()[k]
        before = _decide(th, lhs, rhs)
        old = user_names(lhs, rhs)
        new_lhs, new_rhs, _ = rename_claim(lhs, rhs, {}, dict(zip(old, pool)))
        assert is_gradient_claim(new_lhs, new_rhs) and new_rhs != rhs
        after = _decide(th, new_lhs, new_rhs)
        assert (after.status, after.general) == (before.status, before.general), (name, pool)


def test_a_gradient_claim_is_checked_when_it_is_made():
    n = sp.Symbol("n", integer=True, positive=True)
    X, G = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("G", n, 2)
    with pytest.raises(GradientError, match="cotangent must have the shape of expr"):
        gradient(X.T, X, G, G)
    with pytest.raises(GradientError, match="wrt must be a matrix"):
        VJP(X, sp.Symbol("x"), X)
    assert str(VJP(X.T, X, X)) == "vjp(X.T, X, X)"


def test_prove_shows_gradient_theorems_in_the_table_and_json(capsys):
    from symattn.cli import main

    assert main(["prove", "softmax_vjp_both_axes", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["status"] == "proved" and row["general"] and "modulo the VJP rules" in row["scope"]
    assert main(["prove", "--gallery", "mistake_softmax_vjp_drops_the_diagonal_term"]) == 0
    out = capsys.readouterr().out
    assert "refuted" in out and "1 of 1 as expected" in out and "The slip:" in out


def test_a_proved_gradient_claim_is_kept_in_the_verdict_cache_and_read_back(tmp_path, monkeypatch):
    from symattn import theorems
    from symattn.proof import verdict_cache

    monkeypatch.setenv("SYMATTN_CACHE_DIR", str(tmp_path / "user"))
    monkeypatch.delenv("SYMATTN_VERDICT_CACHE", raising=False)
    monkeypatch.setattr(verdict_cache, "SHIPPED", tmp_path / "shipped.json")
    verdict_cache.forget()
    try:
        th = load_library()["softmax_vjp_both_axes"]
        v = theorems.claim_verdict(th, 0)
        assert v.proved and not isinstance(v, verdict_cache.CachedVerdict)
        verdict_cache.forget()  # read from the file, as a new process would
        again = theorems.claim_verdict(th, 0)
        assert isinstance(again, verdict_cache.CachedVerdict) and again.scope == v.scope
        assert isinstance(again.rhs, VJP) and again.rhs == th.claims()[0][1]
        # the key reads the whole claim: another cotangent is another claim
        lhs, rhs = th.claims()[0]
        other = sp.MatrixSymbol("G_other", *rhs.cotangent.shape)
        changed = [(lhs.xreplace({rhs.cotangent: other}), rhs.xreplace({rhs.cotangent: other}))]
        assert theorems.claim_key(th, 0, changed) != theorems.claim_key(th, 0)
    finally:
        verdict_cache.forget()


def test_lowering_a_gradient_theorem_lowers_its_proved_formula_and_refuses_the_vjp_side():
    from symattn.errors import LoweringError
    from symattn.lowering.codegen import matrix_sides
    from symattn.lowering.lower import lower_theorem

    with pytest.raises(LoweringError, match="gradient claim.*lower side='lhs'"):
        lower_theorem("softmax_vjp_both_axes", 0, "rhs")
    k = lower_theorem("softmax_vjp_both_axes", 0, "lhs")
    assert k.provenance.status == "proved" and tuple(k.arg_names) == ("S", "dP")
    # codegen's sides of the library (each lowered and compared with the other side) leave gradient claims
    # out; the identities among the backward theorems (FlashAttention-2's D, P from the log-sum-exp) stay
    lib = load_library()
    sides = [(name, k) for name, k, _ in matrix_sides() if lib[name].family == "backward"]
    assert ("flashattention2_D_is_rowsum_dO_O", 0) in sides and ("backward_recomputes_P_from_logsumexp", 0) in sides
    assert not any(is_gradient_claim(*lib[name].claims()[k]) for name, k in sides)


def test_a_masked_score_gets_exactly_zero_gradient_and_a_nonzero_one_is_refuted():
    import symattn as sa

    th = load_library()["causal_backward_masked_scores_get_exactly_zero"]
    lhs, rhs = th.claims()[0]  # at n = 4: vjp = L ∘ dS, L the 0/1 visibility
    assert rhs.shape == (4, 4) and _decide(th, lhs, rhs).proved
    masked = sp.ImmutableMatrix(4, 4, lambda i, j: 1 if j > i else 0)
    wrong = sa.verify_gradient(rhs.expr, rhs.wrt, lhs + masked, rhs.cotangent)
    assert wrong.status == "refuted"
    i, j = wrong.counterexample.entry
    assert j > i  # the certified entry is a masked one
