"""sa.vjp: the rules per node, the forms papers write, masks, coverage of every node class of
symattn.defs, refusals that name the node, sympy.diff, and a cross-check against torch autograd."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.defs.heads import Binder, _OverHeads
from symattn.defs.numeric_nodes import DivideRows, RowOf, ScaleRows, ShiftRows, _Entrywise, _Node
from symattn.grad.coverage import CONSTANTS, INPUTS, REFUSED, REFUSED_WRT, RULE_NODES, UNFOLDED
from symattn.grad.explicit import at_dims, derivative, explicit, inputs_of, is_zero, symbols_for
from symattn.grad.rule_check import FAMILIES, check_rule
from symattn.grad.rules import RULES
from symattn.grad.sympy_diff import node_classes

n, m, d = sa.dims("n m d")
ABSTRACT = {Binder, _OverHeads, _Entrywise, _Node}


def row_attention():
    Q, K, V = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", m, d), sp.MatrixSymbol("V", m, d)
    G = sp.MatrixSymbol("G", n, d)
    P = sa.softmax(Q * K.T / sp.sqrt(d), axis=1)
    return Q, K, V, G, P


def col_attention():
    Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
    G = sp.MatrixSymbol("G", d, n)
    P = sa.softmax(K.T * Q / sp.sqrt(d))
    return Q, K, V, G, P


def exactly_the_derivative(expr, wrt, G, got, dims):
    """got equals Σ_ij G_ij ∂expr_ij/∂wrt_kl at these dims (symbolic entries, sympy.diff)."""
    e, w, g, c = (at_dims(x, dims) for x in (expr, wrt, G, got))
    env = {x: symbols_for(x, x.name) for x in inputs_of(e, g, c)}
    want = derivative(explicit(e, env), env[g], env[w])
    have = explicit(c, env)
    return all(is_zero(want[i] - have[i]) for i in range(len(want)))


# --- the forms papers write ----------------------------------------------------------------------

def test_row_attention_in_paper_form():
    Q, K, V, G, P = row_attention()
    O = sa.attention(Q, K, V, convention="row")
    dP = G * V.T
    dS = sp.HadamardProduct(P, dP - sp.HadamardProduct(dP, P) * sp.OneMatrix(m, m))
    assert sa.vjp(O, V, G) == sp.MatMul(sp.Transpose(P), G)                      # dV = Pᵀ dO
    assert sa.verify(sa.vjp(O, Q, G), dS * K / sp.sqrt(d)).proved       # dQ = dS K / √d
    assert sa.verify(sa.vjp(O, K, G), dS.T * Q / sp.sqrt(d)).proved     # dK = dSᵀ Q / √d
    assert isinstance(sa.vjp(O, K, G).args[-1], sp.MatrixSymbol)        # written dSᵀ Q, not (Qᵀ dS)ᵀ


def test_column_attention_in_paper_form():
    Q, K, V, G, P = col_attention()
    O = sa.attention(Q, K, V)
    dP = V.T * G
    dS = sp.HadamardProduct(P, dP - sp.OneMatrix(m, m) * sp.HadamardProduct(dP, P))
    assert sa.vjp(O, V, G) == sp.MatMul(G, sp.Transpose(P))                      # dV = dO Pᵀ
    assert sa.verify(sa.vjp(O, Q, G), K * dS / sp.sqrt(d)).proved
    assert sa.verify(sa.vjp(O, K, G), Q * dS.T / sp.sqrt(d)).proved


@pytest.mark.parametrize("axis", [0, 1])
def test_softmax_vjp_both_axes_is_the_derivative(axis):
    S, G = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("G", m, n)
    P = sa.softmax(S, axis)
    got = sa.vjp(P, S, G)
    assert exactly_the_derivative(P, S, G, got, {m: 3, n: 2})
    assert exactly_the_derivative(P, S, G, got, {m: 2, n: 3})


@pytest.mark.parametrize("convention", ["column", "row"])
@pytest.mark.parametrize("which", [0, 1, 2])
def test_attention_vjp_is_the_derivative_at_dims(convention, which):
    Q, K, V, G, _ = row_attention() if convention == "row" else col_attention()
    O = sa.attention(Q, K, V, convention=convention)
    wrt = (Q, K, V)[which]
    assert exactly_the_derivative(O, wrt, G, sa.vjp(O, wrt, G), {n: 2, m: 2, d: 2})


def test_masked_entries_get_zero_gradient():
    S, G = sp.MatrixSymbol("S", n, n), sp.MatrixSymbol("G", n, n)
    P = sa.softmax(S + sa.CausalMask(n))
    dS = at_dims(sa.vjp(P, S, G), {n: 3})
    env = {x: symbols_for(x, x.name) for x in inputs_of(dS)}
    value = explicit(dS, env)
    assert all(value[k, j] == 0 for k in range(3) for j in range(3) if k > j)  # key k after query j
    assert all(value[k, j] != 0 for k in range(3) for j in range(3) if k <= j and j > 0)
    assert exactly_the_derivative(P, S, G, sa.vjp(P, S, G), {n: 3})


def test_entrywise_and_row_nodes():
    X, G = sp.MatrixSymbol("X", 2, 3), sp.MatrixSymbol("G", 2, 3)
    c = sp.MatrixSymbol("c", 2, 1)
    for e, w in ((sa.Exp(X), X), (sa.Exp2(X), X), (sa.Log(X), X), (ShiftRows(X, c), c), (ScaleRows(c, X), c),
                 (DivideRows(X, c), c), (sp.HadamardProduct(X, sa.Exp(X)), X), (sa.Exp(2 * X).T * c, c)):
        Gw = G if e.shape == (2, 3) else sp.MatrixSymbol("G", *e.shape)
        assert exactly_the_derivative(e, w, Gw, sa.vjp(e, w, Gw), {}), e


def test_a_shared_subexpression_gets_the_sum_of_its_cotangents():
    X, G = sp.MatrixSymbol("X", 2, 2), sp.MatrixSymbol("G", 2, 2)
    P = sa.softmax(X)
    e = sp.HadamardProduct(P, P) + X * P
    assert exactly_the_derivative(e, X, G, sa.vjp(e, X, G), {})


def test_an_expression_without_wrt_has_zero_gradient():
    X, Y, G = sp.MatrixSymbol("X", n, n), sp.MatrixSymbol("Y", n, n), sp.MatrixSymbol("G", n, n)
    assert sa.vjp(sa.softmax(Y), X, G) == sp.ZeroMatrix(n, n)


# --- the rules are checked -------------------------------------------------------------------------

def test_every_rule_has_a_family_and_passes_its_check():
    assert set(RULES) == set(FAMILIES)
    for name in RULES:
        assert check_rule(name).ok, check_rule(name).line()


def test_a_wrong_rule_fails_its_check(monkeypatch):
    from symattn.grad import rule_check, rules

    real = rules._softmax

    def no_diagonal(e, G):  # the classic slip: the diagonal term of the Jacobian dropped
        (X, g), = real(e, G)
        return [(X, g - sp.HadamardProduct(e, G))]

    monkeypatch.setattr(rules, "_softmax", no_diagonal)
    rule_check.check_rule.cache_clear()
    try:
        assert not rule_check.check_rule("softmax_columns").ok
    finally:
        monkeypatch.undo()
        rule_check.check_rule.cache_clear()


# --- coverage and refusals ---------------------------------------------------------------------------

def test_every_node_class_of_defs_is_covered_or_refused():
    known = (set(RULE_NODES) | set(INPUTS) | set(CONSTANTS) | set(REFUSED) | set(REFUSED_WRT) | set(UNFOLDED)
             | ABSTRACT)
    exported = [c for c in vars(sa).values() if isinstance(c, type) and issubclass(c, sp.matrices.MatrixExpr)
                and c.__module__.startswith("symattn.")]  # sa.LayerStack lives beside the prover, not in defs
    missing = [c for c in {*node_classes(), *exported}
               if c not in known and not any(issubclass(c, k) for k in INPUTS)]
    assert not missing, f"node classes with neither a VJP rule nor a refusal: {missing}"


def _refused_instances():
    X, Q, K = sp.MatrixSymbol("X", 2, 3), sp.MatrixSymbol("Q", 2, 3), sp.MatrixSymbol("K", 2, 3)
    f = sa.ScoreFunction("f")
    H = sa.dims("H")
    B = sp.MatrixSymbol("B", 2, 2)
    return {
        "Score": (f(Q, K), Q),
        "FeatureMap": (sa.feature_map("phi", sp.MatrixSymbol("Y", n, 2), m), sp.MatrixSymbol("Y", n, 2)),
        "BlockDiag": (sa.BlockDiag(sa.FamilyMember("R", sa.h, 2, 2) * B, sa.h, H), B),
        "RowOf": (RowOf(X, sp.Symbol("k", integer=True)), X),
    }


@pytest.mark.parametrize("name", sorted(_refused_instances()))
def test_a_refused_node_raises_a_clear_error_naming_it(name):
    expr, wrt = _refused_instances()[name]
    assert name in {c.__name__ for c in REFUSED}
    G = sp.MatrixSymbol("G", *expr.shape)
    with pytest.raises(sa.GradientError) as err:
        sa.vjp(sa.Exp(expr), wrt, G)
    text = str(err.value)
    assert f"no rule for the node {name}" in text and "covered: MatMul" in text and "Softmax" in text


def test_bad_requests_are_refused():
    X = sp.MatrixSymbol("X", n, m)
    with pytest.raises(sa.GradientError, match="shape of expr"):
        sa.vjp(sa.softmax(X), X, sp.MatrixSymbol("G", m, n))
    with pytest.raises(sa.GradientError, match="MatrixSymbol or a Family member"):
        sa.vjp(sa.softmax(X), X.T, sp.MatrixSymbol("G", n, m))
    S = sa.Symmetric("S", n)
    with pytest.raises(sa.GradientError, match="symmetric"):
        sa.vjp(sa.softmax(S), S, sp.MatrixSymbol("G", n, n))
    with pytest.raises(sa.GradientError, match="scalar coefficient"):
        sa.vjp(X[0, 0] * X, X, sp.MatrixSymbol("G", n, m))


# --- sympy.diff ------------------------------------------------------------------------------------

def test_sympy_diff_of_a_symattn_node_points_to_vjp_never_recursion():
    S, V, x = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("V", 3, m), sp.Symbol("x")
    for e, w in ((sa.softmax(S), S), (sa.Exp(S), S), (V * sa.softmax(S), S), (sa.softmax(x * S), x),
                 (sp.Trace(sa.softmax(S * S.T)), S)):
        with pytest.raises(sa.GradientError, match=r"use symattn\.vjp"):
            sp.diff(e, w)


def test_sympy_diff_through_a_constant_symattn_node_works():
    S, V = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("V", 3, m)
    out = sp.diff(V * sa.softmax(S), V)
    assert "Softmax(S)" in str(out)


# --- torch -------------------------------------------------------------------------------------------

def _numeric(e, env):
    return np.array(explicit(e, env).evalf(30).tolist(), dtype=float)


@pytest.mark.parametrize("convention", ["column", "row"])
def test_vjp_matches_torch_autograd(convention):
    torch = pytest.importorskip("torch")
    Q, K, V, G, _ = row_attention() if convention == "row" else col_attention()
    dims = {n: 3, m: 4, d: 2}
    O = sa.attention(Q, K, V, convention=convention)
    rng = np.random.default_rng(0)
    leaves = [at_dims(x, dims) for x in (Q, K, V, G)]
    arrays = [rng.integers(-20, 21, size=tuple(int(s) for s in x.shape)) / 10 for x in leaves]
    env = {x: sp.ImmutableMatrix(sp.Matrix(a.shape[0], a.shape[1],
                                           [sp.Rational(int(round(v * 10)), 10) for v in a.ravel()]))
           for x, a in zip(leaves, arrays)}
    q, k, v, g = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays)
    if convention == "row":
        out = torch.softmax(q @ k.T / np.sqrt(2), dim=1) @ v
    else:
        out = v @ torch.softmax(k.T @ q / np.sqrt(2), dim=0)
    out.backward(g.detach())
    for sym, t in zip((Q, K, V), (q, k, v)):
        got = _numeric(at_dims(sa.vjp(O, sym, G), dims), env)
        assert np.allclose(got, t.grad.numpy(), rtol=0, atol=1e-10), sym
