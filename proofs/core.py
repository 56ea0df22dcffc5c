"""The four identities symattn is built around (seed 000)."""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._common import W_K, W_O, W_Q, W_V, H, K, Q, V, X, d_k, d_model, d_v, f, m, n


@theorem(
    "multihead_block_equals_head_sum",
    "W^O [head_1; ...; head_H] = Σ_{h=1}^{H} W_h^O head_h, for every H (scaled dot product and any f)",
)
def _():
    claims = []
    for score in (None, f):
        block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form="block", score=score)
        total = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form="sum", score=score)
        claims.append((block, total))
    return claims


@theorem(
    "column_row_transpose",
    "Attention_row(Qᵀ, Kᵀ, Vᵀ) = Attention(Q, K, V)ᵀ and "
    "MultiHead_row(Qᵀ, Kᵀ, Vᵀ; W_hᵀ) = MultiHead(Q, K, V; W_h)ᵀ, for every H",
)
def _():
    Qk, Kk, Vv = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    claims = []
    for score in (None, f):
        claims.append((sa.attention(Qk.T, Kk.T, Vv.T, score=score, convention="row"),
                       sa.attention(Qk, Kk, Vv, score=score).T))
        for form in ("block", "sum"):
            row = sa.multihead(Q.T, K.T, V.T, W_Q.T, W_K.T, W_V.T, W_O.T, H=H, form=form, score=score,
                               convention="row")
            col = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form=form, score=score)
            claims.append((row, col.T))
    return claims


@theorem(
    "single_head_reduces_to_attention",
    "H = 1: MultiHead(Q, K, V) = W^O Attention(W^Q Q, W^K K, W^V V); "
    "with identity projections, MultiHead(Q, K, V) = Attention(Q, K, V)",
)
def _():
    claims = []
    for form in ("block", "sum"):
        general = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H, form=form)
        claims.append((general.subs(H, 1),
                       W_O[1] * sa.attention(W_Q[1] * Q, W_K[1] * K, W_V[1] * V)))
    Qd, Kd, Vd = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_k, m)
    eye = sp.Identity(d_k)
    for form in ("block", "sum"):
        claims.append((sa.multihead(Qd, Kd, Vd, [eye], [eye], [eye], [eye], form=form),
                       sa.attention(Qd, Kd, Vd)))
    return claims


@theorem(
    "projection_composition_collapses",
    "W^X (W^{QX} X) = (W^X W^{QX}) X; X + MultiHead(X, X, X) = "
    "X + Σ_h (W_h^O W_h^V X) Softmax[(W_h^K X)ᵀ (W_h^Q X / sqrt(d_k))] (the math papers' form)",
)
def _():
    W_X = sp.MatrixSymbol("W^X", d_k, d_k)
    W_QX = sp.MatrixSymbol("W^{QX}", d_k, d_model)
    W_KX = sp.MatrixSymbol("W^{KX}", d_k, d_model)
    W_VX = sp.MatrixSymbol("W^{VX}", d_v, d_model)
    W_Kp = sp.MatrixSymbol("W^K", d_k, d_k)
    W_Vp = sp.MatrixSymbol("W^V", d_v, d_v)
    claims = [
        (W_X * (W_QX * X), (W_X * W_QX) * X),
        (sa.attention(W_X * (W_QX * X), W_Kp * (W_KX * X), W_Vp * (W_VX * X)),
         sa.attention((W_X * W_QX) * X, (W_Kp * W_KX) * X, (W_Vp * W_VX) * X)),
    ]
    paper = sa.paper_self_attention(
        X, lambda k: W_Q[k] / sp.sqrt(d_k), W_K, lambda k: W_O[k] * W_V[k], H=H)
    for form in ("sum", "block"):
        standard = X + sa.multihead(X, X, X, W_Q, W_K, W_V, W_O, H=H, form=form)
        claims.append((standard, paper))
    bilinear = X + sa.head_sum(
        lambda k: (W_O[k] * W_V[k]) * X * sa.softmax(X.T * (W_K[k].T * W_Q[k] / sp.sqrt(d_k)) * X), H)
    claims.append((paper, bilinear))
    return claims
