"""GQA / MQA and Llama's repeat_kv (seed 002): which key/value group each query head reads."""

import sympy as sp

import symattn.defs as sa
from symattn.defs.gqa import gqa, group_of, mqa, repeat_kv, repeat_kv_heads, repeat_kv_matrix
from symattn.statements import theorem

from ._seed002 import F_K, F_O, F_Q, F_V, H, d_k, d_model, m, n

G, r = sa.dims("G r")
Q, K, V = sp.MatrixSymbol("Q", d_model, n), sp.MatrixSymbol("K", d_model, m), sp.MatrixSymbol("V", d_model, m)
ARGS = (Q, K, V, F_Q, F_K, F_V, F_O)
PAIRS = ((4, 2), (6, 2), (6, 3), (8, 2))


@theorem(
    "gqa_with_G_equal_H_is_multihead",
    "G = H: GQA(Q, K, V) = MultiHead(Q, K, V) (block and sum forms), for every H",
)
def _():
    return [(gqa(*ARGS, H=H, G=H, form=form), sa.multihead(*ARGS, H=H, form=form))
            for form in ("sum", "block")]


@theorem(
    "gqa_with_one_group_is_mqa",
    "G = 1: GQA(Q, K, V) = MQA(Q, K, V) = Σ_h W_h^O Attention(W_h^Q Q, W^K K, W^V V) with W^K = W_1^K, "
    "W^V = W_1^V shared by all heads, for every H",
)
def _():
    return [(gqa(*ARGS, H=H, G=1, form=form), mqa(Q, K, V, F_Q, F_K[1], F_V[1], F_O, H=H, form=form))
            for form in ("sum", "block")]


@theorem(
    "repeat_kv_head_h_reads_group_floor",
    "Llama's repeat_kv (expand n_rep = H/G copies, reshape row-major) of the stacked key heads "
    "[W_1^K K; ...; W_G^K K] is [W_{g(1)}^K K; ...; W_{g(H)}^K K], g(h) = floor((h-1)/(H/G)) + 1: "
    "query head h reads group floor(h/(H/G)) (0-based); same for values; row twin (heads side by side)",
)
def _():
    claims = []
    for F, X in ((F_K, K), (F_V, V)):
        claims.append((repeat_kv_heads(lambda g, F=F, X=X: F[g] * X, G, r),
                       sa.head_stack(lambda k, F=F, X=X: F[group_of(k, G * r, G)] * X, G * r)))
    claims.append((repeat_kv_heads(lambda g: K.T * F_K[g].T, G, r, "row"),
                   sa.head_concat(lambda k: K.T * F_K[group_of(k, G * r, G)].T, G * r)))
    return claims


@theorem(
    "gqa_row_convention_is_the_transpose",
    "GQA_row(Qᵀ, Kᵀ, Vᵀ; W_hᵀ) = GQA(Q, K, V; W_h)ᵀ (block and sum forms), for every G and group "
    "size r = H/G",
)
def _():
    return [(gqa(Q.T, K.T, V.T, F_Q.T, F_K.T, F_V.T, F_O.T, H=G * r, G=G, form=form, convention="row"),
             gqa(*ARGS, H=G * r, G=G, form=form).T) for form in ("sum", "block")]


@theorem(
    "repeat_kv_equals_sharing",
    "at (H, G) = (4, 2), (6, 2), (6, 3), (8, 2): MultiHead with Llama's repeat_kv(W^K, H/G), "
    "repeat_kv(W^V, H/G) = GQA, whose head h reads group floor(h/(H/G)) (0-based); "
    "R [W_1^K; ...; W_G^K] = [W_{g(1)}^K; ...; W_{g(H)}^K] with R = I_G ⊗ 1_{H/G} ⊗ I_{d_k}",
    only_at="(H, G) = " + ", ".join(map(str, PAIRS)),
)
def _():
    claims = []
    for HH, GG in PAIRS:
        rep = HH // GG
        wq, wo = [F_Q[k] for k in range(1, HH + 1)], [F_O[k] for k in range(1, HH + 1)]
        wk, wv = [F_K[g] for g in range(1, GG + 1)], [F_V[g] for g in range(1, GG + 1)]
        llama = sa.multihead(Q, K, V, wq, repeat_kv(wk, rep), repeat_kv(wv, rep), wo)
        claims.append((llama, gqa(Q, K, V, wq, wk, wv, wo, H=HH, G=GG)))
        stacked = sp.BlockMatrix([[w] for w in wk])
        claims.append((repeat_kv_matrix(GG, rep, d_k) * stacked,
                       sa.head_stack(lambda k, HH=HH, GG=GG: F_K[group_of(k, HH, GG)], HH)))
    return claims


@theorem(
    "gqa_head_reads_group_h_mod_G",
    "claim: in GQA, query head h reads key/value group h mod G (0-based), i.e. GQA = "
    "Σ_h W_h^O Attention(W_h^Q Q, W_{(h-1) mod G + 1}^K K, W_{(h-1) mod G + 1}^V V)",
    expect="refuted",
    explanation=(
        "repeat_kv repeats each key/value head in place ([k_1, k_1, k_2, k_2] for H = 4, G = 2), so "
        "consecutive query heads share a group: head h reads group floor(h/(H/G)); h mod G would "
        "interleave the groups ([k_1, k_2, k_1, k_2]) and pair heads with the wrong keys."
    ),
)
def _():
    def by_mod(W):
        return lambda k: W[sp.Mod(k - 1, G) + 1]

    wrong = sa.multihead(Q, K, V, F_Q, by_mod(F_K), by_mod(F_V), F_O, H=G * r, form="sum")
    return [(gqa(*ARGS, H=G * r, G=G, form="sum"), wrong)]
