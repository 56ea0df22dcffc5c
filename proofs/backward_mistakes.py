"""The gallery of backward mistakes: plausible slips in the backward pass of attention, each a
gradient claim refuted with a certified counterexample (an input, a cotangent, and the entry
where the formula differs from the derivative) and its slip named in the explanation.
"""

import sympy as sp

import symattn.defs as sa
from symattn.statements import gradient, theorem

from ._common import d_k, d_v, m, n
from .backward import _head, _weights, col_symbols, root, row_symbols, softmax_vjp

Had, one = sp.HadamardProduct, sp.OneMatrix


def _row(nq=n, nk=m, dk=d_k, dv=d_v):
    Q, K, V, G = row_symbols(nq, nk, dk, dv)
    P = sa.softmax(Q * K.T / sp.sqrt(dk), axis=1)
    return sa.attention(Q, K, V, convention="row"), Q, K, V, G, P, softmax_vjp(P, G * V.T, 1)


@theorem(
    "mistake_flashattention_dK_as_Q_dS_transposed",
    "FlashAttention's erratum: dK = Q dSᵀ/√d (for dSᵀ Q/√d), row convention, self-attention with "
    "n = m = d so that both have dK's shape",
    expect="refuted", budget=10.0,
    explanation="The slip: the factors of dK are in the wrong order. S = Q Kᵀ/√d, so ∂L/∂K = dSᵀ Q/√d "
                "(dS is n × m, its transpose m × n, times Q, n × d); Q dSᵀ multiplies on the wrong side "
                "and only has the right shape when n = m = d, where it is still a different matrix.",
)
def _():
    O, Q, K, V, G, P, dS = _row(n, n, n, n)
    return gradient(O, K, Q * dS.T / sp.sqrt(n), G)


@theorem(
    "mistake_softmax_vjp_drops_the_diagonal_term",
    "the softmax VJP without the subtracted term: dS = P ∘ dP (row softmax), i.e. the Jacobian "
    "diag(p) − p pᵀ taken as diag(p)",
    expect="refuted", budget=10.0,
    explanation="The slip: the Jacobian of p = softmax(s) is diag(p) − p pᵀ; dropping p pᵀ keeps only "
                "the diagonal, dS = P ∘ dP, and forgets that raising one score lowers every other "
                "weight of its row (the row sums of dS must be 0, those of P ∘ dP are not).",
)
def _():
    S, G = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("dP", m, n)
    P = sa.softmax(S, axis=1)
    return gradient(P, S, Had(P, G), G)


@theorem(
    "mistake_softmax_vjp_keeps_only_the_outer_product",
    "the softmax VJP with only the −p pᵀ part: dS = −P ∘ (rowsum(dP ∘ P) 1ᵀ) (row softmax)",
    expect="refuted", budget=10.0,
    explanation="The slip: the diagonal term diag(p) of the Jacobian diag(p) − p pᵀ is dropped; "
                "dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ) needs both, and −P ∘ rowsum(dP ∘ P) 1ᵀ alone "
                "ignores how a weight responds to its own score.",
)
def _():
    S, G = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("dP", m, n)
    P = sa.softmax(S, axis=1)
    return gradient(P, S, -Had(P, Had(G, P) * one(n, n)), G)


@theorem(
    "mistake_backward_missing_scale",
    "dQ = dS K (row convention), the 1/√d_k of the scores forgotten in the backward",
    expect="refuted", budget=10.0,
    explanation="The slip: S = Q Kᵀ/√d_k, so the chain rule carries the factor 1/√d_k into both dQ = "
                "dS K/√d_k and dK = dSᵀ Q/√d_k; without it the gradient is √d_k times too large "
                "(they agree only when d_k = 1).",
)
def _():
    O, Q, K, V, G, P, dS = _row()
    return gradient(O, Q, dS * K, G)


@theorem(
    "mistake_dV_transpose_on_the_wrong_side",
    "dV = P dO (for Pᵀ dO), row convention, self-attention with n = m so that both have dV's shape",
    expect="refuted", budget=10.0,
    explanation="The slip: O = P V, so dV = Pᵀ dO: the transpose belongs on P (the weight of query i "
                "for key j flows back to value j); P dO has the right shape only when n = m and sends "
                "each query's gradient to the wrong value.",
)
def _():
    O, Q, K, V, G, P, dS = _row(n, n)
    return gradient(O, V, P * G, G)


@theorem(
    "mistake_row_softmax_vjp_in_the_column_convention",
    "column convention (seed 000), O = V Softmax(Kᵀ Q/√d_k): dQ = K dS/√d_k with the row form "
    "dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ), dP = Vᵀ dO",
    expect="refuted", budget=10.0,
    explanation="The slip: in the column convention each column of P sums to 1 (one column per query), "
                "so the softmax backward subtracts the column sums, dS = P ∘ (dP − 1 colsum(dP ∘ P)); "
                "the row form subtracts the sums over queries instead, the wrong normalization.",
)
def _():
    Q, K, V, G = col_symbols()
    P = sa.softmax(K.T * Q / root)
    dS = softmax_vjp(P, V.T * G, 1)
    return gradient(sa.attention(Q, K, V), Q, K * dS / root, G)


@theorem(
    "mistake_gqa_dWK_from_one_head_of_the_group",
    "GQA (column convention, n_g groups of r query heads): the gradient of group n_g's W^K taken from "
    "the first head of the group only, dW^K = Q_h dS_hᵀ Kᵀ/√d_k with h = (n_g − 1) r + 1",
    expect="refuted", budget=30.0,
    explanation="The slip: in GQA a key/value weight is read by every query head of its group, so its "
                "gradient is the sum over those r heads, dW_g^K = Σ_j Q_h dS_hᵀ Kᵀ/√d_k with "
                "h = (g − 1) r + j; the gradient of one head is the whole answer only for r = 1 (MHA).",
)
def _():
    Q, K, V, G, F = _weights()
    n_g, r = sa.dims("n_g r")
    out = sa.gqa(Q, K, V, F["Q"], F["K"], F["V"], F["O"], H=n_g * r, G=n_g, form="sum")
    Qh, Kh, P, dOh, dS = _head(F, Q, K, V, G, (n_g - 1) * r + 1, n_g)
    return gradient(out, F["K"][n_g], Qh * dS.T * K.T / root, G)
