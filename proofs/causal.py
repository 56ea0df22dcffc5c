"""Causal masks and the KV cache (seed 002's Llama code): masking with -inf is attending to the
prefix, and KV-cache decoding is the last column of full causal attention, for every t."""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._seed002 import d_k, d_v, n

t, s, L, p, c = sa.dims("t s L p c")


def _seq(length):
    return (sp.MatrixSymbol("Q", d_k, length), sp.MatrixSymbol("K", d_k, length),
            sp.MatrixSymbol("V", d_v, length))


@theorem(
    "causal_mask_attends_to_prefix",
    "column t of V Softmax(KᵀQ/√d_k + M_causal) = Attention(q_t, K_{1..t}, V_{1..t}), for every "
    "1 <= t <= n (n = t + s and n = t); row twin; padding: Softmax(… + M_pad) with valid length L "
    "= Attention(Q, K_{1..L}, V_{1..L})",
)
def _():
    claims = []
    for length in (t + s, t):
        Q, K, V = _seq(length)
        claims.append((sa.causal_attention(Q, K, V)[:, t - 1:t],
                       sa.attention(Q[:, t - 1:t], K[:, :t], V[:, :t])))
    Q, K, V = _seq(t + s)
    claims.append((sa.causal_attention(Q.T, K.T, V.T, convention="row")[t - 1:t, :],
                   sa.attention(Q[:, t - 1:t].T, K[:, :t].T, V[:, :t].T, convention="row")))
    Qn = sp.MatrixSymbol("Q", d_k, n)
    Kp, Vp = sp.MatrixSymbol("K", d_k, L + p), sp.MatrixSymbol("V", d_v, L + p)
    claims.append((sa.masked_attention(Qn, Kp, Vp, sa.PaddingMask(L + p, n, L)),
                   sa.attention(Qn, Kp[:, :L], Vp[:, :L])))
    return claims


@theorem(
    "kv_cache_decoding_is_last_causal_column",
    "KV cache of positions 1..t extended by (k_{t+1}, v_{t+1}) holds K_{1..t+1}, and decoding "
    "Attention(q_{t+1}, [K_{≤t} k_{t+1}], [V_{≤t} v_{t+1}]) = last column of causal attention over "
    "1..t+1, for every t >= 1; row twin; a chunk of c queries after the cache is the Llama mask "
    "with start_pos = t",
)
def _():
    Q, K, V = _seq(t + 1)
    cache = sa.KVCache(K[:, :t], V[:, :t])
    step = cache.extend(K[:, t:t + 1], V[:, t:t + 1])
    rows = sa.KVCache(K[:, :t].T, V[:, :t].T, convention="row")
    Qc, Kc, Vc = _seq(t + c)
    return [
        (step.keys, K),
        (step.values, V),
        (cache.decode(Q[:, t:t + 1], K[:, t:t + 1], V[:, t:t + 1]), sa.causal_attention(Q, K, V)[:, t:t + 1]),
        (rows.decode(Q[:, t:t + 1].T, K[:, t:t + 1].T, V[:, t:t + 1].T),
         sa.causal_attention(Q.T, K.T, V.T, convention="row")[t:t + 1, :]),
        (sa.causal_attention(Qc[:, t:t + c], Kc, Vc, offset=t), sa.causal_attention(Qc, Kc, Vc)[:, t:t + c]),
    ]
