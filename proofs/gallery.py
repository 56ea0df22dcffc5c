"""A gallery of mistakes: each is a plausible slip, refuted with a certified counterexample.

Every item is registered with ``expect="refuted"`` and an explanation for a student;
``symattn prove --gallery`` shows the mistake, its counterexample and the explanation.
(The gallery items about masks and GQA live with their definitions, in their own modules.)
"""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

from ._common import d_k, d_model, d_v, m, n

# seed 000, column convention
Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)
# the Transformer paper, row convention
Qr, Kr, Vr = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)


@theorem(
    "mistake_softmax_wrong_axis",
    "row convention: softmax(Q Kᵀ / sqrt(d_k)) V with the softmax over each column (the queries) "
    "instead of each row (the keys)",
    expect="refuted", budget=10.0,
    explanation="In the row convention each row of Q Kᵀ holds one query's scores against all keys, "
                "so the softmax must normalize each row; normalizing each column mixes different "
                "queries and the weights of one query no longer sum to 1.",
)
def _():
    return sa.attention(Qr, Kr, Vr, convention="row"), sa.softmax(Qr * Kr.T / sp.sqrt(d_k), axis=0) * Vr


@theorem(
    "mistake_softmax_transpose_same_axis",
    "Softmax(X)ᵀ = Softmax(Xᵀ), both normalizing columns",
    expect="refuted", budget=10.0,
    explanation="Transposing turns columns into rows, so the transpose of a column-wise Softmax is a "
                "row-wise softmax of Xᵀ: Softmax(X)ᵀ = softmax_row(Xᵀ); keeping the same axis "
                "normalizes the wrong direction.",
)
def _():
    X = sp.MatrixSymbol("X", m, n)
    return sa.softmax(X).T, sa.softmax(X.T)


@theorem(
    "mistake_transpose_keeps_order",
    "(A B)ᵀ = Aᵀ Bᵀ",
    expect="refuted", budget=10.0,
    explanation="The transpose of a product reverses the order, (A B)ᵀ = Bᵀ Aᵀ; with square matrices "
                "Aᵀ Bᵀ has the right shape but is a different matrix.",
)
def _():
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    return (A * B).T, A.T * B.T


@theorem(
    "mistake_forgetting_the_scale",
    "V Softmax(Kᵀ Q) = V Softmax(Kᵀ Q / sqrt(d_k)) (dropping 1/sqrt(d_k))",
    expect="refuted", budget=10.0,
    explanation="Dividing the scores by sqrt(d_k) changes the softmax whenever d_k > 1 (softmax is "
                "invariant under shifts, not under scaling); the two agree only in the special case "
                "d_k = 1.",
)
def _():
    return sa.attention(Q, K, V, score="dot"), sa.attention(Q, K, V)


# two heads, seed 000 weights
_W = {
    "Q": [sp.MatrixSymbol(f"W^Q_{i}", d_k, d_model) for i in (1, 2)],
    "K": [sp.MatrixSymbol(f"W^K_{i}", d_k, d_model) for i in (1, 2)],
    "V": [sp.MatrixSymbol(f"W^V_{i}", d_v, d_model) for i in (1, 2)],
    "O": [sp.MatrixSymbol(f"W^O_{i}", d_model, d_v) for i in (1, 2)],
}


def _stacked(W):
    return sp.BlockMatrix([[W[0]], [W[1]]])


@theorem(
    "mistake_multihead_as_one_attention",
    "two heads = one attention with stacked weights: Σ_h W_h^O Attention(W_h^Q Q, W_h^K K, W_h^V V) = "
    "[W_1^O W_2^O] Attention([W_1^Q; W_2^Q] Q, [W_1^K; W_2^K] K, [W_1^V; W_2^V] V)",
    expect="refuted", budget=10.0,
    explanation="Stacking the weights adds the two heads' scores, K_1ᵀ Q_1 + K_2ᵀ Q_2, before a single "
                "softmax, so both heads share one attention pattern; multi-head attention takes a "
                "separate softmax per head and only then combines the heads.",
)
def _():
    Qm = sp.MatrixSymbol("Q", d_model, n)
    Km, Vm = sp.MatrixSymbol("K", d_model, m), sp.MatrixSymbol("V", d_model, m)
    heads = sa.multihead(Qm, Km, Vm, _W["Q"], _W["K"], _W["V"], _W["O"], form="sum")
    one = sp.BlockMatrix([_W["O"]]) * sa.attention(_stacked(_W["Q"]) * Qm, _stacked(_W["K"]) * Km,
                                                   _stacked(_W["V"]) * Vm)
    return heads, one


@theorem(
    "mistake_value_permuted_without_key",
    "Attention(Q, K, V P) = Attention(Q, K, V) for the swap P of two keys (m = 2), keys not permuted",
    expect="refuted", budget=10.0,
    explanation="Each value belongs to its key: permuting keys and values together changes nothing, "
                "but permuting only the values hands every key's weight to another key's value.",
)
def _():
    K2, V2 = sp.MatrixSymbol("K", d_k, 2), sp.MatrixSymbol("V", d_v, 2)
    P = sp.ImmutableMatrix([[0, 1], [1, 0]])
    return sa.attention(Q, K2, V2 * P), sa.attention(Q, K2, V2)


@theorem(
    "mistake_mean_pooling_for_any_query",
    "attention pooling with any query q equals mean pooling: "
    "(W^V X) Softmax((W^K X)ᵀ q / sqrt(d_k)) = W^V X 1/N",
    expect="refuted", budget=10.0,
    explanation="Mean pooling gives every position the weight 1/N; attention pooling gives the "
                "weights softmax of the scores, which are all 1/N only when the scores are equal "
                "(for example q = 0), not for every query.",
)
def _():
    N, d = sa.dims("N d")
    X = sp.MatrixSymbol("X", d, N)
    q = sp.MatrixSymbol("q", d_k, 1)
    WK, WV = sp.MatrixSymbol("W^K", d_k, d), sp.MatrixSymbol("W^V", d_v, d)
    return sa.attention(q, WK * X, WV * X), WV * X * sp.OneMatrix(N, 1) / N


@theorem(
    "mistake_transformerlens_ov_without_transpose",
    "TransformerLens's W_V W_O (row convention, W_V = W^Vᵀ, W_O = W^Oᵀ) is the paper's OV circuit: "
    "W^O head = (W^Vᵀ W^Oᵀ) X Softmax((W^K X)ᵀ (W^Q X) / sqrt(d_k))",
    expect="refuted", budget=10.0,
    explanation="Row-convention weights are the transposes of column-convention ones, so "
                "W_V W_O = W^Vᵀ W^Oᵀ = (W^O W^V)ᵀ is the transpose of the paper's W_OV = W^O W^V; "
                "used without transposing it back it sends each token's vector to the wrong place.",
)
def _():
    X = sp.MatrixSymbol("X", d_model, n)
    WQ, WK = sp.MatrixSymbol("W^Q", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model)
    WV, WO = sp.MatrixSymbol("W^V", d_v, d_model), sp.MatrixSymbol("W^O", d_model, d_v)
    A = sa.softmax((WK * X).T * (WQ * X) / sp.sqrt(d_k))
    TL_V, TL_O = WV.T, WO.T
    return WO * sa.attention(WQ * X, WK * X, WV * X), (TL_V * TL_O) * X * A


@theorem(
    "mistake_qk_circuit_untransposed_in_column_scores",
    "column convention: (W^K X)ᵀ (W^Q X) = Xᵀ W_QK X with W_QK = W^Qᵀ W^K (instead of Xᵀ W_QKᵀ X)",
    expect="refuted", budget=10.0,
    explanation="In seed 000's column convention the score matrix has one row per key and one column "
                "per query, (W^K X)ᵀ (W^Q X) = Xᵀ W^Kᵀ W^Q X = Xᵀ W_QKᵀ X; the bilinear form x_qᵀ W_QK x_k "
                "of Elhage et al. puts the query on the left, so in this layout W_QK appears transposed.",
)
def _():
    X = sp.MatrixSymbol("X", d_model, n)
    WQ, WK = sp.MatrixSymbol("W^Q", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model)
    return (WK * X).T * (WQ * X), X.T * (WQ.T * WK) * X
