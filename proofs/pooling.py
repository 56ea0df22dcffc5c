"""Pooling (seed 002): mean pooling, attention pooling, query attention pooling, multi-head pooling."""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._seed002 import F_K, F_O, F_V, W_K, W_V, F_p, H, N, W_p, X, d, d_k, d_model, q_pool


@theorem(
    "mean_pool_is_constant_score_attention_pool",
    "z = Σ_i α_i x_i with constant scores s_i = a is mean pooling: Softmax(a 1_N) = (1/N) 1_N and "
    "X Softmax(a 1_N) = (1/N) X 1_N (all α_i = 1/N); query pooling with W^K = 0 mean-pools V; row twins",
)
def _():
    a = sp.Symbol("a", real=True)
    Xd = sp.MatrixSymbol("X", d, N)
    zero_K = sp.ZeroMatrix(d_k, d_model)
    return [
        (sa.softmax(a * sp.OneMatrix(N, 1), 0), sp.OneMatrix(N, 1) / N),
        (sa.attention_pool(Xd, a * sp.OneMatrix(N, 1)), sa.mean_pool(Xd)),
        (sa.attention_pool(Xd.T, a * sp.OneMatrix(1, N), "row"), sa.mean_pool(Xd.T, "row")),
        (sa.query_attention_pool(X, q_pool, W_p, zero_K, W_V), sa.mean_pool(W_V * X)),
    ]


@theorem(
    "query_pool_is_cross_attention_with_one_query",
    "QueryAttentionPool(X) = V Softmax(KᵀQ/√d_k), Q = W_p q_pool, K = W^K X, V = W^V X, "
    "is CrossAttention(q_pool, X) with n = 1 learnable query; row twin: softmax(QKᵀ/√d_k) V, Q = q_pool W_p",
)
def _():
    col = sa.query_attention_pool(X, q_pool, W_p, W_K, W_V)
    row = sa.query_attention_pool(X.T, q_pool.T, W_p.T, W_K.T, W_V.T, "row")
    return [
        (col, sa.cross_attention(q_pool, X, W_p, W_K, W_V)),
        (row, sa.cross_attention(q_pool.T, X.T, W_p.T, W_K.T, W_V.T, convention="row")),
        (row, col.T),
    ]


@theorem(
    "multihead_pool_is_concat_of_head_pools",
    "MultiHeadPool(X) = W^O [z_1; ...; z_H] = Σ_h W_h^O z_h = MultiHead(q_pool, X, X) (n = 1), "
    "z_h the pool of head h, for every H; row twin [z_1 ... z_H] W^O",
)
def _():
    args = (X, q_pool, F_p, F_K, F_V, F_O)
    rargs = (X.T, q_pool.T, F_p.T, F_K.T, F_V.T, F_O.T)
    col = sa.multihead_pool(*args, H=H)
    row = sa.multihead_pool(*rargs, H=H, convention="row")
    return [
        (col, sa.multihead_pool_sum(*args, H=H)),
        (col, sa.multihead(q_pool, X, X, F_p, F_K, F_V, F_O, H=H)),
        (row, sa.multihead_pool_sum(*rargs, H=H, convention="row")),
        (row, sa.multihead(q_pool.T, X.T, X.T, F_p.T, F_K.T, F_V.T, F_O.T, H=H, convention="row")),
        (row, col.T),
    ]
