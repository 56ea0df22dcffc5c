"""More entries of the adversarial corpus (registered into ``corpus.CORPUS``): the classes that were
still unknown after the first rules for an outside set's findings, each with a false neighbour.

- RoPE: R_{2a} = R_a R_a (SymPy folds the product into a power), the rotation read from the key side;
- repeat_kv as a matrix: RᵀR = n_rep I (and R Rᵀ is not);
- online softmax: merging two key blocks that carry their own shifts, the merge of two normalized
  outputs by their row sums and by their log-sum-exps, a row softmax of side-by-side blocks with one
  shared denominator;
- the KV cache: a cache extended twice, two decoding steps against the causal columns, key blocks
  swapped together with their value blocks (and swapped alone), chunked prefill at offset t, one
  decoding step as attention with a full-length padding mask (and the new key hidden by it);
- inverses SymPy folds while the claim is built.
"""

from __future__ import annotations

import sympy as sp
from corpus import a, b, claim, d, d_k, d_v, n, p, qkv, t

import symattn as sa
from symattn.defs.gqa import repeat_kv_matrix
from symattn.defs.mask import PaddingMask
from symattn.defs.numeric_nodes import DivideRows, Exp, Log, ScaleRows, ShiftRows
from symattn.defs.rope import rope

m_1, m_2, c_len = sa.dims("m_1 m_2 c")
S_1, S_2 = sp.MatrixSymbol("S_1", n, m_1), sp.MatrixSymbol("S_2", n, m_2)
V_1, V_2 = sp.MatrixSymbol("V_1", m_1, d_v), sp.MatrixSymbol("V_2", m_2, d_v)
c_0, c_1, c_2 = (sp.MatrixSymbol(s, n, 1) for s in ("c_0", "c_1", "c_2"))
#: seconds for the claims whose entries are fractions of sums over two blocks (the merges) or whose
#: canonical forms hold shared denominators of slices: about 1.5 s on a loaded machine, above the
#: corpus's 4 s budget's shares for strategies A and (A, B)
HEAVY = 12.0


def _rope_vectors():
    return sp.MatrixSymbol("q", 2 * p, 1), sp.MatrixSymbol("k", 2 * p, 1)


# ----------------------------------------------------------------------------- RoPE
@claim("rope_double_angle_is_the_square", True, "rope")
def _():
    return rope(2 * a, p), rope(a, p) * rope(a, p)


@claim("rope_double_angle_is_not_the_rotation_times_its_transpose", False, "rope")
def _():
    return rope(2 * a, p), rope(a, p) * rope(a, p).T


@claim("rope_read_from_the_key_side", True, "rope")
def _():
    q, k = _rope_vectors()
    return (rope(a, p) * q).T * (rope(b, p) * k), q.T * (rope(b - a, p) * k)


@claim("rope_read_from_the_key_side_with_the_wrong_sign", False, "rope")
def _():
    q, k = _rope_vectors()
    return (rope(a, p) * q).T * (rope(b, p) * k), q.T * (rope(a - b, p) * k)


# ----------------------------------------------------------------------------- repeat_kv
@claim("repeat_kv_matrix_RtR_is_n_rep_times_identity", True, "gqa")
def _():
    R = repeat_kv_matrix(2, 3, d)
    return R.T * R, 3 * sp.Identity(2 * d)


@claim("repeat_kv_matrix_RRt_is_not_n_rep_times_identity", False, "gqa")
def _():
    R = repeat_kv_matrix(2, 3, d)
    return R * R.T, 3 * sp.Identity(6 * d)


# ----------------------------------------------------------------------------- online softmax
def _blocks():
    return sp.BlockMatrix([[S_1, S_2]]), sp.BlockMatrix([[V_1], [V_2]])


def _own_shift(S, c, W):
    return Exp(ShiftRows(S, c)) * W


@claim("online_merge_of_two_blocks_with_their_own_shifts", True, "online softmax", budget=HEAVY)
def _():
    S, V = _blocks()
    return (Exp(ShiftRows(S, c_0)) * V,
            ScaleRows(Exp(c_1 - c_0), _own_shift(S_1, c_1, V_1)) + ScaleRows(Exp(c_2 - c_0), _own_shift(S_2, c_2, V_2)))


@claim("online_merge_with_the_correction_inverted", False, "online softmax")
def _():
    S, V = _blocks()
    return (Exp(ShiftRows(S, c_0)) * V,
            ScaleRows(Exp(c_0 - c_1), _own_shift(S_1, c_1, V_1)) + ScaleRows(Exp(c_2 - c_0), _own_shift(S_2, c_2, V_2)))


@claim("online_merge_of_the_row_sums_with_their_own_shifts", True, "online softmax", budget=HEAVY)
def _():
    S, _ = _blocks()
    one = sp.OneMatrix
    return (Exp(ShiftRows(S, c_0)) * one(m_1 + m_2, 1),
            ScaleRows(Exp(c_1 - c_0), _own_shift(S_1, c_1, one(m_1, 1)))
            + ScaleRows(Exp(c_2 - c_0), _own_shift(S_2, c_2, one(m_2, 1))))


def _normalized_halves():
    O_1, O_2 = sa.softmax(S_1, 1) * V_1, sa.softmax(S_2, 1) * V_2
    l_1, l_2 = Exp(S_1) * sp.OneMatrix(m_1, 1), Exp(S_2) * sp.OneMatrix(m_2, 1)
    return O_1, O_2, l_1, l_2


@claim("merge_of_two_normalized_outputs_by_their_row_sums", True, "online softmax", budget=HEAVY)
def _():
    S, V = _blocks()
    O_1, O_2, l_1, l_2 = _normalized_halves()
    return sa.softmax(S, 1) * V, DivideRows(ScaleRows(l_1, O_1) + ScaleRows(l_2, O_2), l_1 + l_2)


@claim("merge_of_two_normalized_outputs_by_their_log_sum_exps", True, "online softmax", budget=HEAVY)
def _():
    S, V = _blocks()
    O_1, O_2, l_1, l_2 = _normalized_halves()
    lse_1, lse_2 = Log(l_1), Log(l_2)
    lse = Log(Exp(lse_1) + Exp(lse_2))
    return sa.softmax(S, 1) * V, ScaleRows(Exp(lse_1 - lse), O_1) + ScaleRows(Exp(lse_2 - lse), O_2)


@claim("merge_of_two_normalized_outputs_is_not_their_sum", False, "online softmax")
def _():
    S, V = _blocks()
    O_1, O_2, _, _ = _normalized_halves()
    return sa.softmax(S, 1) * V, O_1 + O_2


@claim("merge_by_log_sum_exps_with_one_weight_dropped", False, "online softmax")
def _():
    S, V = _blocks()
    O_1, O_2, l_1, l_2 = _normalized_halves()
    lse = Log(l_1 + l_2)
    return sa.softmax(S, 1) * V, ScaleRows(Exp(Log(l_1) - lse), O_1) + O_2


@claim("row_softmax_of_side_by_side_blocks_over_one_denominator", True, "online softmax")
def _():
    S, _ = _blocks()
    l = Exp(S_1) * sp.OneMatrix(m_1, 1) + Exp(S_2) * sp.OneMatrix(m_2, 1)
    return sa.softmax(S, 1), sp.BlockMatrix([[DivideRows(Exp(S_1), l), DivideRows(Exp(S_2), l)]])


@claim("row_softmax_of_side_by_side_blocks_is_not_the_blocks_softmaxes", False, "online softmax")
def _():
    S, _ = _blocks()
    return sa.softmax(S, 1), sp.BlockMatrix([[sa.softmax(S_1, 1), sa.softmax(S_2, 1)]])


# ----------------------------------------------------------------------------- the KV cache
def _cache_two_steps():
    Q, K, V = qkv(d_k, t + 2, t + 2, d_v)
    cache = sa.KVCache(K[:, :t], V[:, :t]).extend(K[:, t:t + 1], V[:, t:t + 1]).extend(K[:, t + 1:t + 2],
                                                                                       V[:, t + 1:t + 2])
    return Q, K, V, cache


@claim("kv_cache_extended_twice_holds_all_keys", True, "kv cache")
def _():
    _, K, _, cache = _cache_two_steps()
    return cache.keys, K


@claim("kv_cache_extended_twice_then_decoded_is_the_last_causal_column", True, "kv cache")
def _():
    Q, K, V, cache = _cache_two_steps()
    return sa.attention(Q[:, t + 1:t + 2], cache.keys, cache.values), sa.causal_attention(Q, K, V)[:, t + 1:t + 2]


@claim("kv_cache_extended_twice_decoded_is_not_the_column_before", False, "kv cache")
def _():
    Q, K, V, cache = _cache_two_steps()
    return sa.attention(Q[:, t + 1:t + 2], cache.keys, cache.values), sa.causal_attention(Q, K, V)[:, t:t + 1]


def _two_blocks(same: bool):
    q = sp.MatrixSymbol("q", d_k, 1)
    m2 = m_1 if same else m_2
    K_1, K_2 = sp.MatrixSymbol("K_1", d_k, m_1), sp.MatrixSymbol("K_2", d_k, m2)
    W_1, W_2 = sp.MatrixSymbol("V_1", d_v, m_1), sp.MatrixSymbol("V_2", d_v, m2)
    return q, K_1, K_2, W_1, W_2


@claim("key_blocks_swapped_with_their_value_blocks", True, "kv cache")
def _():
    q, K_1, K_2, W_1, W_2 = _two_blocks(False)
    return (sa.attention(q, sp.BlockMatrix([[K_1, K_2]]), sp.BlockMatrix([[W_1, W_2]])),
            sa.attention(q, sp.BlockMatrix([[K_2, K_1]]), sp.BlockMatrix([[W_2, W_1]])))


@claim("key_blocks_swapped_without_their_value_blocks", False, "kv cache")
def _():
    q, K_1, K_2, W_1, W_2 = _two_blocks(True)
    return (sa.attention(q, sp.BlockMatrix([[K_1, K_2]]), sp.BlockMatrix([[W_1, W_2]])),
            sa.attention(q, sp.BlockMatrix([[K_2, K_1]]), sp.BlockMatrix([[W_1, W_2]])))


@claim("kv_cache_new_key_placed_first", True, "kv cache", budget=HEAVY)
def _():
    Q, K, V = qkv(d_k, t + 1, t + 1, d_v)
    old, new = (K[:, :t], V[:, :t]), (K[:, t:t + 1], V[:, t:t + 1])
    q = Q[:, t:t + 1]
    return (sa.attention(q, sp.BlockMatrix([[new[0], old[0]]]), sp.BlockMatrix([[new[1], old[1]]])),
            sa.attention(q, sp.BlockMatrix([[old[0], new[0]]]), sp.BlockMatrix([[old[1], new[1]]])))


@claim("chunked_prefill_at_offset_t", True, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + c_len, t + c_len, d_v)
    return sa.causal_attention(Q[:, t:t + c_len], K, V, offset=t), sa.causal_attention(Q, K, V)[:, t:t + c_len]


@claim("chunked_prefill_at_offset_t_minus_1", False, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + c_len, t + c_len, d_v)
    return sa.causal_attention(Q[:, t:t + c_len], K, V, offset=t - 1), sa.causal_attention(Q, K, V)[:, t:t + c_len]


@claim("decode_step_is_attention_with_a_full_length_padding_mask", True, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + 1, t + 1, d_v)
    cache = sa.KVCache(K[:, :t], V[:, :t])
    return (cache.decode(Q[:, t:t + 1], K[:, t:t + 1], V[:, t:t + 1]),
            sa.masked_attention(Q[:, t:t + 1], K, V, PaddingMask(t + 1, 1, t + 1)))


@claim("padding_mask_hiding_the_new_key_is_the_old_cache", True, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + 1, t + 1, d_v)
    return sa.attention(Q[:, t:t + 1], K[:, :t], V[:, :t]), sa.masked_attention(Q[:, t:t + 1], K, V,
                                                                                  PaddingMask(t + 1, 1, t))


@claim("decode_step_is_not_attention_with_the_new_key_padded_away", False, "kv cache")
def _():
    Q, K, V = qkv(d_k, t + 1, t + 1, d_v)
    cache = sa.KVCache(K[:, :t], V[:, :t])
    return (cache.decode(Q[:, t:t + 1], K[:, t:t + 1], V[:, t:t + 1]),
            sa.masked_attention(Q[:, t:t + 1], K, V, PaddingMask(t + 1, 1, t)))


# ----------------------------------------------------------------------------- folded inverses
@claim("inverse_times_itself_as_sympy_folds_it", True, "inverses",
       note="under sympy.evaluate(False) Inverse(A)·A is built as A**(-1 + 1); proved where A is invertible")
def _():
    A = sp.MatrixSymbol("A", n, n)
    with sp.evaluate(False):
        folded = sp.Inverse(A) * A
    return folded, sp.Identity(n)


@claim("inverse_times_itself_is_not_twice_the_identity", False, "inverses")
def _():
    A = sp.MatrixSymbol("A", n, n)
    return sp.MatMul(sp.Inverse(A), A, evaluate=False), 2 * sp.Identity(n)
