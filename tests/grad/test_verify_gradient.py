"""sa.verify_gradient: proved (general modulo the VJP rules, or at dims), refuted at a named entry
with a certified counterexample, unknown otherwise; the gradient audit; renaming changes nothing."""

import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symattn as sa
from symattn.errors import SoundnessError

n, m, d = sa.dims("n m d")


def row(nq=n, nk=m, dk=d, names="QKVG"):
    Q, K, V = (sp.MatrixSymbol(names[0], nq, dk), sp.MatrixSymbol(names[1], nk, dk),
               sp.MatrixSymbol(names[2], nk, dk))
    G = sp.MatrixSymbol(names[3], nq, dk)
    P = sa.softmax(Q * K.T / sp.sqrt(dk), axis=1)
    dP = G * V.T
    dS = sp.HadamardProduct(P, dP - sp.HadamardProduct(dP, P) * sp.OneMatrix(nk, nk))
    return sa.attention(Q, K, V, convention="row"), Q, K, V, G, P, dS


def col():
    Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
    G = sp.MatrixSymbol("G", d, n)
    P = sa.softmax(K.T * Q / sp.sqrt(d))
    dP = V.T * G
    dS = sp.HadamardProduct(P, dP - sp.OneMatrix(m, m) * sp.HadamardProduct(dP, P))
    return sa.attention(Q, K, V), Q, K, V, G, P, dS


def softmax_claim(axis, names=("S", "G"), dims=(m, n)):
    S, G = sp.MatrixSymbol(names[0], *dims), sp.MatrixSymbol(names[1], *dims)
    P = sa.softmax(S, axis)
    GP = sp.HadamardProduct(G, P)
    ones = sp.OneMatrix(dims[0], dims[0]) * GP if axis == 0 else GP * sp.OneMatrix(dims[1], dims[1])
    return P, S, G, sp.HadamardProduct(P, G - ones), -sp.HadamardProduct(P, ones)


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_vjp_proved_general_and_dropped_diagonal_refuted(axis):
    P, S, G, good, no_diagonal = softmax_claim(axis)
    v = sa.verify_gradient(P, S, good, G)
    assert v.status == "proved" and v.general
    assert "modulo the VJP rules" in v.scope and f"softmax_{'columns' if axis == 0 else 'rows'}" in v.scope
    assert any("checked exactly" in str(t) for t in v.trace)
    assert any("not proved for all sizes" in str(t) for t in v.trace)
    assert v.audit.agreed >= 1 and "derivative along a random direction" in v.audit.line
    bad = sa.verify_gradient(P, S, no_diagonal, G)
    assert bad.status == "refuted" and not bad.general
    assert bad.counterexample.certificate and bad.counterexample.difference != 0
    k, l = bad.counterexample.entry
    assert f"entry ({k}, {l})" in bad.explain()


@pytest.mark.parametrize("make", [row, col], ids=["row", "column"])
def test_attention_dq_dk_dv_with_the_scale_proved(make):
    O, Q, K, V, G, P, dS = make()
    if make is row:
        grads = {V: sp.MatMul(sp.Transpose(P), G), Q: dS * K / sp.sqrt(d), K: dS.T * Q / sp.sqrt(d)}
    else:
        grads = {V: sp.MatMul(G, sp.Transpose(P)), Q: K * dS / sp.sqrt(d), K: Q * dS.T / sp.sqrt(d)}
    for wrt, candidate in grads.items():
        v = sa.verify_gradient(O, wrt, candidate, G)
        assert v.proved and v.general, (wrt, v.explain())


def test_a_missing_scale_is_refuted():
    O, Q, K, V, G, P, dS = row()
    v = sa.verify_gradient(O, Q, dS * K, G)
    assert v.status == "refuted"
    assert "differs from" in " ".join(map(str, v.trace))


def test_the_flashattention_errata_is_refuted_with_the_entry_named():
    # self-attention with square blocks, so that the erratum Q dSᵀ has dK's shape (row convention)
    O, Q, K, V, G, P, dS = row(n, n, n)
    right = sa.verify_gradient(O, K, dS.T * Q / sp.sqrt(n), G)
    assert right.proved and right.general
    v = sa.verify_gradient(O, K, Q * dS.T / sp.sqrt(n), G)
    assert v.status == "refuted"
    cex = v.counterexample
    assert set(cex.values) == {"Q", "K", "V", "G"} and cex.dims
    assert f"entry {tuple(cex.entry)}" in repr(cex)
    assert cex.lhs_exact[cex.entry] - cex.rhs_exact[cex.entry] == cex.difference


def test_proved_at_dims_says_at_which_dims():
    P, S, G, good, no_diagonal = softmax_claim(0)
    v = sa.verify_gradient(P, S, good, G, at=[{m: 2, n: 2}, {m: 3, n: 1}], general=False)
    assert v.status == "proved" and not v.general
    assert v.scope == "at m=2, n=2; m=3, n=1" and v.method == "explicit derivative at dims (D)"
    assert v.audit.agreed >= 1
    assert sa.verify_gradient(P, S, no_diagonal, G, at={m: 2, n: 2}, general=False).status == "refuted"
    assert sa.verify_gradient(P, S, good, G, general=False).status == "unknown"


def test_a_claim_at_concrete_sizes_is_proved_as_stated():
    X, G = sp.MatrixSymbol("X", 2, 3), sp.MatrixSymbol("G", 2, 3)
    e = sa.Exp(sa.softmax(X, 1))
    v = sa.verify_gradient(e, X, sa.vjp(e, X, G), G, general=False)
    assert v.proved and v.scope == "as stated (sizes given)"


def test_masked_attention_gradient_proved():
    Q, K, V, G = (sp.MatrixSymbol(s, d, n) for s in "QKVG")
    O = sa.causal_attention(Q, K, V)
    v = sa.verify_gradient(O, K, sa.vjp(O, K, G), G)
    assert v.proved and v.general


def test_the_audit_catches_a_wrong_rule_that_slipped_past_its_check(monkeypatch):
    from symattn.grad import rules, verify

    real = rules._softmax

    def no_diagonal(e, G):
        (X, g), = real(e, G)
        return [(X, g - sp.HadamardProduct(e, G))]

    monkeypatch.setattr(rules, "_softmax", no_diagonal)
    monkeypatch.setattr(verify, "check_rule", lambda name: type("Ok", (), {"ok": True, "line": lambda s: name})())
    P, S, G, good, _ = softmax_claim(0)
    wrong = sa.vjp(P, S, G)
    with pytest.raises(SoundnessError, match="proved a gradient that is false"):
        sa.verify_gradient(P, S, wrong, G)


def test_bad_requests():
    P, S, G, good, _ = softmax_claim(0)
    with pytest.raises(sa.GradientError, match="shape of wrt"):
        sa.verify_gradient(P, S, good.T, G)
    with pytest.raises(sa.GradientError, match="not an input"):
        sa.verify_gradient(P, sp.MatrixSymbol("Z", m, n), good, G)
    with pytest.raises(sa.GradientError, match="no value for"):
        sa.verify_gradient(P, S, good, G, at={m: 2}, general=False)


NAMES = st.lists(st.sampled_from(["A", "B", "X", "Y", "W", "Z0", "q", "k_1", "Vv", "dO"]), min_size=4,
                 max_size=4, unique=True)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(NAMES, st.sampled_from(["a b", "u v", "m n", "n_q n_k"]))
def test_renaming_the_symbols_changes_no_verdict(names, dim_names):
    r, c = sa.dims(dim_names)
    P, S, G, good, no_diagonal = softmax_claim(1, names[:2], (r, c))
    assert sa.verify_gradient(P, S, good, G).status == "proved"
    assert sa.verify_gradient(P, S, no_diagonal, G).status == "refuted"
    O, Q, K, V, Go, Pr, dS = row(r, c, 2, names)
    assert sa.verify_gradient(O, V, sp.MatMul(sp.Transpose(Pr), Go), Go).status == "proved"
    assert sa.verify_gradient(O, Q, dS * K, Go).status == "refuted"
