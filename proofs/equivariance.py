"""Permutation symmetry (seed 002): self-attention is equivariant, pooling is invariant, keys and
values permuted together change nothing, and a causal mask breaks equivariance (refuted).

P = P_σ is the permutation matrix of a symbolic permutation σ of the n tokens: (X P)_{:, j} = x_{σ(j)}.
"""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._seed002 import F_K, F_O, F_Q, F_V, W_K, W_Q, W_V, F_p, H, N, W_p, X, d_k, d_model, d_v, m, n, q_pool

P = sa.Permutation("P", N)


@theorem(
    "self_attention_is_permutation_equivariant",
    "SelfAttention(X P) = SelfAttention(X) P for every permutation matrix P (column); row twin "
    "SelfAttention(Pᵀ X) = Pᵀ SelfAttention(X); MultiHead(XP, XP, XP) = MultiHead(X, X, X) P for "
    "every H; CrossAttention(X P, Y P') = CrossAttention(X, Y) P (the context's order is irrelevant)",
)
def _():
    Y = sp.MatrixSymbol("Y", d_model, m)
    Pm = sa.Permutation("P'", m)
    return [
        (sa.self_attention(X * P, W_Q, W_K, W_V), sa.self_attention(X, W_Q, W_K, W_V) * P),
        (sa.self_attention(P.T * X.T, W_Q.T, W_K.T, W_V.T, convention="row"),
         P.T * sa.self_attention(X.T, W_Q.T, W_K.T, W_V.T, convention="row")),
        (sa.multihead(X * P, X * P, X * P, F_Q, F_K, F_V, F_O, H=H, form="sum"),
         sa.multihead(X, X, X, F_Q, F_K, F_V, F_O, H=H, form="sum") * P),
        (sa.cross_attention(X * P, Y * Pm, W_Q, W_K, W_V),
         sa.cross_attention(X, Y, W_Q, W_K, W_V) * P),
    ]


@theorem(
    "attention_pool_is_permutation_invariant",
    "QueryAttentionPool(X P) = QueryAttentionPool(X) and Σ_h W_h^O z_h(X P) = Σ_h W_h^O z_h(X), "
    "for every permutation P and every H; MeanPool(X P) = MeanPool(X)",
)
def _():
    return [
        (sa.query_attention_pool(X * P, q_pool, W_p, W_K, W_V),
         sa.query_attention_pool(X, q_pool, W_p, W_K, W_V)),
        (sa.query_attention_pool(P.T * X.T, q_pool.T, W_p.T, W_K.T, W_V.T, "row"),
         sa.query_attention_pool(X.T, q_pool.T, W_p.T, W_K.T, W_V.T, "row")),
        (sa.multihead_pool_sum(X * P, q_pool, F_p, F_K, F_V, F_O, H=H),
         sa.multihead_pool_sum(X, q_pool, F_p, F_K, F_V, F_O, H=H)),
        (sa.mean_pool(X * P), sa.mean_pool(X)),
    ]


@theorem(
    "joint_key_value_permutation_changes_nothing",
    "Attention(Q, K P, V P) = Attention(Q, K, V) for every permutation P of the m keys "
    "(scaled and unscaled dot product); row twin Attention(Q, Pᵀ K, Pᵀ V)",
)
def _():
    Pm = sa.Permutation("P", m)
    Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
    return [
        (sa.attention(Q, K * Pm, V * Pm), sa.attention(Q, K, V)),
        (sa.attention(Q, K * Pm, V * Pm, score="dot"), sa.attention(Q, K, V, score="dot")),
        (sa.attention(Q.T, Pm.T * K.T, Pm.T * V.T, convention="row"),
         sa.attention(Q.T, K.T, V.T, convention="row")),
    ]


@theorem(
    "causal_attention_is_permutation_equivariant",
    "claim: CausalSelfAttention(X P) = CausalSelfAttention(X) P for every permutation P",
    expect="refuted",
    explanation=(
        "A causal mask ties each token to its position (token j sees only tokens 1..j), so permuting "
        "the tokens changes which tokens each one may see; only unmasked self-attention is equivariant."
    ),
)
def _():
    Wq, Wk, Wv = (sp.MatrixSymbol(s, d_model, d_model) for s in ("W^Q", "W^K", "W^V"))

    def causal(Z):
        return sa.causal_attention(Wq * Z, Wk * Z, Wv * Z)

    return [(causal(X * P), causal(X) * P)]
