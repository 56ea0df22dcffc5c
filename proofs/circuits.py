"""The circuits decomposition of one attention layer (Elhage et al. 2021), in both conventions.

Column convention (seed 000; tokens are the columns of X ∈ M^{d_model×n}). Head h adds

    W_h^O head_h = W_h^O (W_h^V X) Softmax[(W_h^K X)ᵀ (W_h^Q X) / sqrt(d_k)]
                 = W_OV,h X A_h,    A_h = Softmax[Xᵀ W_QK,hᵀ X / sqrt(d_k)],

with the OV circuit W_OV,h = W_h^O W_h^V and the QK circuit W_QK,h = W_h^Qᵀ W_h^K, both
d_model × d_model. Mind the transpose: the score of key i for query j is x_iᵀ W_h^Kᵀ W_h^Q x_j
= x_jᵀ W_QK,h x_i, so the m × n score matrix (keys are rows) is Xᵀ W_QK,hᵀ X, not Xᵀ W_QK,h X.
The contribution depends on W^V and W^O only through W_OV and on W^Q and W^K only through
W_QK: replacing (W^O, W^V, W^Q, W^K) by (W^O M, M⁻¹ W^V, N W^Q, N⁻ᵀ W^K) changes nothing.

Row convention (the Transformer paper, TransformerLens; tokens are the rows of X ∈ M^{n×d_model},
W^Q, W^K ∈ M^{d_model×d_k}, W^V ∈ M^{d_model×d_v}, W^O ∈ M^{d_v×d_model}):

    head_h W_h^O = softmax_row(X W_QK,h^row Xᵀ / sqrt(d_k)) X W_OV,h^row,
    W_QK,h^row = W_h^Q W_h^Kᵀ,   W_OV,h^row = W_h^V W_h^O.

When the row weights are the transposes of the column weights, W_QK^row = W_QK (the same
matrix) but W_OV^row = W_OVᵀ: reading TransformerLens's W_V W_O as the paper's W_OV without the
transpose is a mistake (see the gallery).
"""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._common import W_K, W_O, W_Q, W_V, H, X, d_k, d_model, d_v, h, n


def circuit(W_OV, W_QK, X, d_k):
    """W_OV X Softmax(Xᵀ W_QKᵀ X / sqrt(d_k)): one head's contribution from its two circuits."""
    return W_OV * X * sa.softmax(X.T * W_QK.T * X / sp.sqrt(d_k))


def circuit_row(W_OV, W_QK, X, d_k):
    """softmax_row(X W_QK Xᵀ / sqrt(d_k)) X W_OV: the row-convention twin."""
    return sa.softmax(X * W_QK * X.T / sp.sqrt(d_k), axis=1) * X * W_OV


def qk_row(WQ, WK):
    """W_QK^row = W^Q W^Kᵀ for row-convention weights (TransformerLens's ``W_Q @ W_K.T``)."""
    return WQ * WK.T


def ov_row(WV, WO):
    """W_OV^row = W^V W^O for row-convention weights (TransformerLens's ``W_V @ W_O``)."""
    return WV * WO


def head_contribution(X, WQ, WK, WV, WO):
    """W^O Attention(W^Q X, W^K X, W^V X) (seed 000, column convention)."""
    return WO * sa.attention(WQ * X, WK * X, WV * X)


@theorem(
    "circuits_decomposition",
    "W_h^O head_h = W_OV,h X Softmax(Xᵀ W_QK,hᵀ X / sqrt(d_k)) with W_OV,h = W_h^O W_h^V, "
    "W_QK,h = W_h^Qᵀ W_h^K; so MultiHead(X, X, X) = Σ_h of these for every H, and "
    "(W^O M, M⁻¹ W^V, N W^Q, N⁻ᵀ W^K) gives the same head for invertible M, N (column convention)",
)
def _():
    WQ, WK, WV, WO = W_Q[h], W_K[h], W_V[h], W_O[h]
    claims = [(head_contribution(X, WQ, WK, WV, WO), circuit(WO * WV, WQ.T * WK, X, d_k))]
    for form in ("sum", "block"):
        claims.append((sa.multihead(X, X, X, W_Q, W_K, W_V, W_O, H=H, form=form),
                       sa.head_sum(lambda k: circuit(W_O[k] * W_V[k], W_Q[k].T * W_K[k], X, d_k), H)))
    M, N = sp.MatrixSymbol("M", d_v, d_v), sp.MatrixSymbol("N", d_k, d_k)
    claims.append((head_contribution(X, N * WQ, sp.Inverse(N).T * WK, sp.Inverse(M) * WV, WO * M),
                   head_contribution(X, WQ, WK, WV, WO)))
    return claims


# row-convention weights (TransformerLens shapes)
Xr = sp.MatrixSymbol("X", n, d_model)
R_Q, R_K = sa.Family("W^Q", d_model, d_k), sa.Family("W^K", d_model, d_k)
R_V, R_O = sa.Family("W^V", d_model, d_v), sa.Family("W^O", d_v, d_model)


@theorem(
    "circuits_decomposition_row",
    "row convention: head_h W_h^O = softmax_row(X W_QK,h^row Xᵀ / sqrt(d_k)) X W_OV,h^row with "
    "W_QK^row = W_h^Q W_h^Kᵀ, W_OV^row = W_h^V W_h^O, summed over every H; with row weights = "
    "column weightsᵀ, W_QK^row = W_QK and W_OV^row = W_OVᵀ",
)
def _():
    RQ, RK, RV, RO = R_Q[h], R_K[h], R_V[h], R_O[h]
    head_row = sa.attention(Xr * RQ, Xr * RK, Xr * RV, convention="row") * RO
    claims = [(head_row, circuit_row(ov_row(RV, RO), qk_row(RQ, RK), Xr, d_k))]
    claims.append((sa.multihead(Xr, Xr, Xr, R_Q, R_K, R_V, R_O, H=H, form="sum", convention="row"),
                   sa.head_sum(lambda k: circuit_row(ov_row(R_V[k], R_O[k]), qk_row(R_Q[k], R_K[k]), Xr, d_k),
                               H)))
    WQ, WK, WV, WO = W_Q[h], W_K[h], W_V[h], W_O[h]
    claims += [
        (qk_row(WQ.T, WK.T), WQ.T * WK),            # with W^row = Wᵀ: W_QK^row is W_QK itself
        (ov_row(WV.T, WO.T), (WO * WV).T),          # ... but W_OV^row is W_OVᵀ
        (circuit_row(ov_row(WV.T, WO.T), qk_row(WQ.T, WK.T), X.T, d_k),
         circuit(WO * WV, WQ.T * WK, X, d_k).T),
    ]
    return claims
