"""The proved statements behind each line of the NumPy backward (``backward_core``, ``backward``).

:data:`LINES` maps a line of the code to the statements that back it; :data:`STATEMENTS` holds
each statement as a claim to decide: a VJP claim (expr, wrt, candidate, cotangent) for
:func:`symattn.verify_gradient`, or an identity (lhs, rhs) for :func:`symattn.verify`. Nothing
is assumed proved here: :func:`prove` runs the prover (about 1-4 s a statement) and the tests
(``tests/test_numeric_backward.py``) assert every verdict is "proved" and general. The VJP verdicts
are general modulo the local VJP rules they name (each checked exactly at sizes 1..3 by
:mod:`symattn.grad.rule_check`), as :func:`symattn.verify_gradient` says in its scope.

Row convention, one head: S = Q Kᵀ/sqrt(d) (+ M, an additive mask: a constant, so a causal mask
is a case of it), P = softmax(S, 1), O = P V, G = dO the cotangent, dP = G Vᵀ,
D = rowsum(G ∘ O), and the P the code uses is the one recomputed from the saved log-sum-exp:
P' = exp(S − L 1ᵀ) with L = c + log rowsum exp(S − c 1ᵀ) for any shift c (the forward's).

>>> sorted(LINES)
['D', 'P', 'dK', 'dP', 'dQ', 'dS', 'dV', 'gqa', 'out', 'proj']
>>> LINES["dQ"]
('dQ_lse', 'dQ_masked')
"""

from __future__ import annotations

import functools

#: a line of the backward -> the statements (keys of STATEMENTS) that back it
LINES = {
    "P": ("lse_recompute", "lse_recompute_masked"),
    "D": ("D_identity",),
    "dV": ("dV_lse", "dV_masked"),
    "dP": ("dQ_lse",),          # dP = dO Vᵀ appears inside the dQ and dK candidates
    "dS": ("dQ_lse", "dK_lse"),  # dS = P ∘ (dP − D 1ᵀ), inside the dQ and dK candidates
    "dQ": ("dQ_lse", "dQ_masked"),
    "dK": ("dK_lse", "dK_masked"),
    "gqa": ("gqa_dV", "gqa_dK"),
    "out": ("out_dZ", "out_dW", "out_db"),
    "proj": ("proj_dX", "proj_dW", "proj_db"),
}

#: statement -> what it says, in the notation above
STATEMENTS = {
    "lse_recompute": "softmax(S, 1) = exp(S − L 1ᵀ), L = c + log(exp(S − c 1ᵀ) 1)",
    "lse_recompute_masked": "softmax(S + M, 1) = exp(S + M − L 1ᵀ), L = c + log(exp(S + M − c 1ᵀ) 1)",
    "D_identity": "rowsum(dP ∘ P) = rowsum(dO ∘ O)",
    "dV_lse": "VJP of O wrt V at G is P'ᵀ G",
    "dV_masked": "VJP of softmax(S + M, 1) V wrt V at G is P'ᵀ G",
    "dQ_lse": "VJP of O wrt Q at G is (P' ∘ (G Vᵀ − D 1ᵀ)) K / sqrt(d)",
    "dK_lse": "VJP of O wrt K at G is (P' ∘ (G Vᵀ − D 1ᵀ))ᵀ Q / sqrt(d)",
    "dQ_masked": "VJP of softmax(S + M, 1) V wrt Q is (P' ∘ (G Vᵀ − D 1ᵀ)) K / sqrt(d), P' and D with the mask",
    "dK_masked": "VJP of softmax(S + M, 1) V wrt K is (P' ∘ (G Vᵀ − D 1ᵀ))ᵀ Q / sqrt(d), P' and D with the mask",
    "gqa_dV": "two query heads sharing K, V, out = O_1 W_1 + O_2 W_2: dV = P_1ᵀ (G W_1ᵀ) + P_2ᵀ (G W_2ᵀ)",
    "gqa_dK": "the same: dK = dS_1ᵀ Q_1/sqrt(d) + dS_2ᵀ Q_2/sqrt(d), dS_h from dO_h = G W_hᵀ",
    "out_dZ": "VJP of Z W + 1 b wrt Z is G Wᵀ",
    "out_dW": "VJP of Z W + 1 b wrt W is Zᵀ G",
    "out_db": "VJP of Z W + 1 b wrt b is 1ᵀ G",
    "proj_dX": "VJP of X W + 1 b wrt X is G Wᵀ (Q: X W^Q/sqrt(d) + 1 b^Q/sqrt(d), the same with W^Q/sqrt(d))",
    "proj_dW": "VJP of X W/sqrt(d) + 1 b/sqrt(d) wrt W is Xᵀ G / sqrt(d)",
    "proj_db": "VJP of X W/sqrt(d) + 1 b/sqrt(d) wrt b is 1ᵀ G / sqrt(d)",
}


@functools.lru_cache(maxsize=1)
def claims() -> dict:
    """statement -> ("vjp", expr, wrt, candidate, cotangent) or ("identity", lhs, rhs), as SymPy."""
    import sympy as sp

    import symattn as sa
    from symattn.defs.numeric_nodes import Exp, Log, ShiftRows

    n, m, d, e, k = sa.dims("n m d e k")
    Q, K, V = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", m, d), sp.MatrixSymbol("V", m, e)
    M, G, c = sp.MatrixSymbol("M", n, m), sp.MatrixSymbol("G", n, e), sp.MatrixSymbol("c", n, 1)
    root = sp.sqrt(d)

    def one(r, s):
        return sp.OneMatrix(r, s)

    def head(S):
        """P (the softmax), P' (recomputed from the log-sum-exp), O, D and dS for scores S."""
        P = sa.softmax(S, axis=1)
        L = c + Log(Exp(ShiftRows(S, c)) * one(m, 1))
        P_lse = Exp(ShiftRows(S, L))
        O = P * V
        D = sp.HadamardProduct(G, O) * one(e, 1)
        dS = sp.HadamardProduct(P_lse, G * V.T - D * one(1, m))
        return P, P_lse, O, dS

    S = Q * K.T / root
    P, P_lse, O, dS = head(S)
    Pm, Pm_lse, Om, dSm = head(S + M)
    out = {
        "lse_recompute": ("identity", P, P_lse),
        "lse_recompute_masked": ("identity", Pm, Pm_lse),
        "D_identity": ("identity", sp.HadamardProduct(G * V.T, P) * one(m, 1), sp.HadamardProduct(G, O) * one(e, 1)),
        "dV_lse": ("vjp", O, V, P_lse.T * G, G),
        "dV_masked": ("vjp", Om, V, Pm_lse.T * G, G),
        "dQ_lse": ("vjp", O, Q, dS * K / root, G),
        "dK_lse": ("vjp", O, K, dS.T * Q / root, G),
        "dQ_masked": ("vjp", Om, Q, dSm * K / root, G),
        "dK_masked": ("vjp", Om, K, dSm.T * Q / root, G),
    }
    # GQA: two query heads reading one K, V; the heads' outputs enter the result through W^O's
    # blocks (out = Σ_h O_h W_h^O, the concatenation before W^O), so dO_h = G_out W_hᵀ
    f = sp.Symbol("f", positive=True, integer=True)
    Q1, Q2 = sp.MatrixSymbol("Q_1", n, d), sp.MatrixSymbol("Q_2", n, d)
    W1, W2, Go = sp.MatrixSymbol("W_1", e, f), sp.MatrixSymbol("W_2", e, f), sp.MatrixSymbol("G_o", n, f)
    P1, P2 = sa.softmax(Q1 * K.T / root, axis=1), sa.softmax(Q2 * K.T / root, axis=1)
    O1, O2 = P1 * V, P2 * V
    mixed = O1 * W1 + O2 * W2

    def dS_of(P_h, O_h, G_h):
        return sp.HadamardProduct(P_h, G_h * V.T - sp.HadamardProduct(G_h, O_h) * one(e, 1) * one(1, m))

    G1, G2 = Go * W1.T, Go * W2.T
    out["gqa_dV"] = ("vjp", mixed, V, P1.T * G1 + P2.T * G2, Go)
    out["gqa_dK"] = ("vjp", mixed, K, dS_of(P1, O1, G1).T * Q1 / root + dS_of(P2, O2, G2).T * Q2 / root, Go)
    # the projections: the output projection Z W + 1 b, the query projection with the scale folded in
    Z, Wz, bz, Gz = (sp.MatrixSymbol("Z", n, e), sp.MatrixSymbol("W", e, k), sp.MatrixSymbol("b", 1, k),
                     sp.MatrixSymbol("G_z", n, k))
    Y = Z * Wz + one(n, 1) * bz
    out["out_dZ"] = ("vjp", Y, Z, Gz * Wz.T, Gz)
    out["out_dW"] = ("vjp", Y, Wz, Z.T * Gz, Gz)
    out["out_db"] = ("vjp", Y, bz, one(1, n) * Gz, Gz)
    X, Wx, bx, Gx = (sp.MatrixSymbol("X", n, k), sp.MatrixSymbol("W", k, d), sp.MatrixSymbol("b", 1, d),
                     sp.MatrixSymbol("G_x", n, d))
    Yq = X * Wx / root + one(n, 1) * bx / root
    out["proj_dX"] = ("vjp", Yq, X, Gx * Wx.T / root, Gx)
    out["proj_dW"] = ("vjp", Yq, Wx, X.T * Gx / root, Gx)
    out["proj_db"] = ("vjp", Yq, bx, one(1, n) * Gx / root, Gx)
    return out


def prove(name: str, budget: float = 30.0):
    """The verdict of statement ``name``, from the prover (never assumed)."""
    import symattn as sa

    claim = claims()[name]
    if claim[0] == "identity":
        return sa.verify(claim[1], claim[2], budget=budget)
    return sa.verify_gradient(*claim[1:], budget=budget)
