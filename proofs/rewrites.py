"""Rewrites that make kernels faster, each proved before ``symattn.numeric`` uses it.

Row convention (the Transformer paper, seed 002): inputs are rows, X ∈ M^{n×d_model},
Y ∈ M^{m×d_model}; 1 is a column of ones, so 1 b adds the bias row b to every row.
The numeric core lowers the sides named in each docstring (see ``symattn.numeric``).
"""

import sympy as sp

import symattn.defs as sa
from symattn.defs.numeric_nodes import DivideRows, Exp, Exp2, RowOf, ScaleRows, ShiftRows, row_causal_mask
from symattn.statements import theorem

from ._common import d_k, d_model, d_v, m, n

G = sa.dims("G")
H = sp.Symbol("H", integer=True, positive=True)
X = sp.MatrixSymbol("X", n, d_model)
Y = sp.MatrixSymbol("Y", m, d_model)
ROOT = sp.sqrt(d_k)


def ones(k):
    return sp.OneMatrix(k, 1)


def projections(q_width, kv_width, v_width):
    """W^Q, W^K, W^V (d_model × width) and the bias rows b^Q, b^K, b^V."""
    W = {s: sp.MatrixSymbol(f"W^{s}", d_model, w) for s, w in (("Q", q_width), ("K", kv_width),
                                                                ("V", v_width))}
    b = {s: sp.MatrixSymbol(f"b^{s}", 1, w) for s, w in (("Q", q_width), ("K", kv_width),
                                                           ("V", v_width))}
    return W, b


# -- 1. one GEMM for Q, K and V ------------------------------------------------------------
# All heads at once: W^Q is d_model × H·d_k, W^K and W^V are d_model × G·d_k and G·d_v
# (G key/value groups: G = H is MHA, G = 1 is MQA). The scale is folded into W^Q and b^Q.
FUSED_W, FUSED_B = projections(H * d_k, G * d_k, G * d_v)


def fused_sides(bias: bool):
    W, b = FUSED_W, FUSED_B
    lhs = X * sp.BlockMatrix([[W["Q"] / ROOT, W["K"], W["V"]]])
    parts = [X * (W["Q"] / ROOT), X * W["K"], X * W["V"]]
    if bias:
        lhs = lhs + ones(n) * sp.BlockMatrix([[b["Q"] / ROOT, b["K"], b["V"]]])
        parts = [p + ones(n) * c for p, c in zip(parts, (b["Q"] / ROOT, b["K"], b["V"]))]
    return lhs, sp.BlockMatrix([parts])


@theorem(
    "fused_qkv_projection",
    "X [W^Q/sqrt(d_k)  W^K  W^V] + 1 [b^Q/sqrt(d_k)  b^K  b^V] = "
    "[X W^Q/sqrt(d_k) + 1 b^Q/sqrt(d_k)   X W^K + 1 b^K   X W^V + 1 b^V] (one GEMM for Q, K, V)",
)
def _():
    return [fused_sides(True), fused_sides(False)]


# -- 2. the scale 1/sqrt(d_k) folded into W^Q ----------------------------------------------
HEAD_W, HEAD_B = projections(d_k, d_k, d_v)
M = sp.MatrixSymbol("M", n, m)
Q = sp.MatrixSymbol("Q", n, d_k)
K = sp.MatrixSymbol("K", m, d_k)
V = sp.MatrixSymbol("V", m, d_v)


def head_inputs(bias: bool):
    """The projected query (scale folded), key and value of one head, and what they stand for."""
    W, b = HEAD_W, HEAD_B
    q = X * (W["Q"] / ROOT) + (ones(n) * (b["Q"] / ROOT) if bias else sp.ZeroMatrix(n, d_k))
    k = Y * W["K"] + (ones(m) * b["K"] if bias else sp.ZeroMatrix(m, d_k))
    v = Y * W["V"] + (ones(m) * b["V"] if bias else sp.ZeroMatrix(m, d_v))
    return q, k, v


def scale_fold_sides(mask, bias: bool):
    W, b = HEAD_W, HEAD_B
    qd = X * W["Q"] + (ones(n) * b["Q"] if bias else sp.ZeroMatrix(n, d_k))
    q, k, v = head_inputs(bias)
    extra = sp.ZeroMatrix(n, m) if mask is None else mask
    lhs = sa.softmax(qd * k.T / ROOT + extra, 1) * v
    rhs = sa.softmax(q * k.T + extra, 1) * v
    return lhs, rhs


MASKS = (None, M, row_causal_mask(n, m))


@theorem(
    "scale_folds_into_query_projection",
    "softmax((X W^Q + 1 b^Q)(Y W^K + 1 b^K)ᵀ/sqrt(d_k) + M) (Y W^V + 1 b^V) = "
    "softmax((X W^Q/sqrt(d_k) + 1 b^Q/sqrt(d_k))(Y W^K + 1 b^K)ᵀ + M) (Y W^V + 1 b^V); "
    "M = 0, any mask, the causal mask; with and without biases",
    budget=60.0,
)
def _():
    return [scale_fold_sides(mask, bias) for bias in (True, False) for mask in MASKS]


# -- 3. heads side by side, then one GEMM with W^O -----------------------------------------
Z = sa.Family("Z", n, d_v)
W_O = sa.Family("W^O", d_v, d_model)
b_O = sp.MatrixSymbol("b^O", 1, d_model)
CONCAT = sa.HeadConcat(Z[sa.h], sa.h, H)
STACK_O = sa.HeadStack(W_O[sa.h], sa.h, H)


@theorem(
    "heads_concatenate_before_output_projection",
    "[head_1 ... head_H] [W_1^O; ...; W_H^O] + 1 b^O = Σ_h head_h W_h^O + 1 b^O, for every H "
    "(row convention: one GEMM with W^O after the heads are placed side by side)",
)
def _():
    total = sa.HeadSum(Z[sa.h] * W_O[sa.h], sa.h, H)
    return [(CONCAT * STACK_O + ones(n) * b_O, total + ones(n) * b_O), (CONCAT * STACK_O, total)]


# -- 4. attention pooling with a learnable query (seed 002) -------------------------------
q_pool = sp.MatrixSymbol("q", 1, d_model)
U = sp.MatrixSymbol("U", sp.Symbol("r", integer=True, positive=True), d_model)
ROW = sp.Symbol("k", integer=True, nonnegative=True)


def pooling_sides(bias: bool):
    W, b = HEAD_W, HEAD_B
    qp = q_pool * W["Q"] + (b["Q"] if bias else sp.ZeroMatrix(1, d_k))
    k = X * W["K"] + (ones(n) * b["K"] if bias else sp.ZeroMatrix(n, d_k))
    v = X * W["V"] + (ones(n) * b["V"] if bias else sp.ZeroMatrix(n, d_v))
    lhs = sa.softmax(qp * k.T / ROOT, 1) * v
    folded = (qp * W["K"].T) / ROOT  # the query folded through W^K: 1 × d_model
    rhs = (sa.softmax(folded * X.T, 1) * X) * W["V"] + (ones(1) * b["V"] if bias else sp.ZeroMatrix(1, d_v))
    return lhs, rhs


def pooling_fold(bias: bool):
    """The folded query (q W^Q + b^Q) W^Kᵀ / sqrt(d_k), a subexpression of the rhs."""
    W, b = HEAD_W, HEAD_B
    qp = q_pool * W["Q"] + (b["Q"] if bias else sp.ZeroMatrix(1, d_k))
    return (qp * W["K"].T) / ROOT


@theorem(
    "attention_pooling_folds_projections",
    "softmax((q W^Q + b^Q)(X W^K + 1 b^K)ᵀ/sqrt(d_k)) (X W^V + 1 b^V) = "
    "(softmax(((q W^Q + b^Q) W^Kᵀ/sqrt(d_k)) Xᵀ) X) W^V + b^V (K and V are never projected; "
    "b^K drops out); row k of softmax(U Xᵀ) X is softmax(u_k Xᵀ) X (heads pool in one GEMM)",
    budget=60.0,
)
def _():
    rows = (RowOf(sa.softmax(U * X.T, 1) * X, ROW), sa.softmax(RowOf(U, ROW) * X.T, 1) * X)
    return [pooling_sides(True), pooling_sides(False), rows]


@theorem(
    "mean_pool_is_uniform_attention",
    "softmax(0_{1×n}) X = (1/n) 1ᵀ X (mean pooling is attention pooling with constant scores)",
)
def _():
    return sa.softmax(sp.ZeroMatrix(1, n), 1) * X, sp.OneMatrix(1, n) * X / n


# -- 5. the KV-cache decode step ---------------------------------------------------------
q_new = sp.MatrixSymbol("q", 1, d_k)


@theorem(
    "kv_cache_step_needs_no_mask",
    "softmax(q Kᵀ + row_causal_mask(1, m)) V = softmax(q Kᵀ) V: the newest query (the last of the m "
    "cached positions) sees every cached key",
)
def _():
    return sa.softmax(q_new * K.T + row_causal_mask(1, m), 1) * V, sa.softmax(q_new * K.T, 1) * V


# -- 6. online softmax: the blockwise log-sum-exp merge ------------------------------------
m_1, m_2 = sa.dims("m_1 m_2")
S = sp.MatrixSymbol("S", n, m)
S_1, S_2 = sp.MatrixSymbol("S_1", n, m_1), sp.MatrixSymbol("S_2", n, m_2)
V_1, V_2 = sp.MatrixSymbol("V_1", m_1, d_v), sp.MatrixSymbol("V_2", m_2, d_v)
c = sp.MatrixSymbol("c", n, 1)
c_1 = sp.MatrixSymbol("c_1", n, 1)
#: ln 2: exp(s) = 2^(s / ln 2), so the scores in base 2 are T = (Q / ln 2) Kᵀ = S / ln 2
LN2 = sp.log(2)


def base2_claims():
    """exp(S) = 2^(S / ln 2) entrywise, in the forms the kernels use, with S = Q Kᵀ the scores of
    one head (scale folded into Q): the whole result, the numerator, the denominator (claims 8-10
    of ``blockwise_logsumexp_merge``), the sum over key blocks of claim 7 term by term (claim 11,
    the accumulate step U = U_1 + 2^(S_2/ln 2) V_2 with U_1 = 2^(S_1/ln 2) V_1), and scores with an
    additive mask M, which is divided by ln 2 as well (claim 12; -∞ stays -∞)."""
    S_qk = Q * K.T
    T = (Q / LN2) * K.T  # the same MatMul as S_qk / ln 2: (1/ln 2) Q Kᵀ
    return [
        (sa.softmax(S_qk, 1) * V, DivideRows(Exp2(T) * V, Exp2(T) * ones(m))),
        (Exp(S_qk) * V, Exp2(T) * V),
        (Exp(S_qk) * ones(m), Exp2(T) * ones(m)),
        (Exp(S_1) * V_1 + Exp(S_2) * V_2, Exp2(S_1 / LN2) * V_1 + Exp2(S_2 / LN2) * V_2),
        (Exp(S_qk + M) * V, Exp2(T + M / LN2) * V),
    ]


def merge_claims():
    E = Exp(ShiftRows(S, c))
    block = Exp(ShiftRows(sp.BlockMatrix([[S_1, S_2]]), c))
    claims = [(sa.softmax(S, 1) * V, DivideRows(E * V, E * ones(m)))]
    for W1, W2 in ((V_1, V_2), (ones(m_1), ones(m_2))):
        claims.append((block * sp.BlockMatrix([[W1], [W2]]),
                       Exp(ShiftRows(S_1, c)) * W1 + Exp(ShiftRows(S_2, c)) * W2))
        claims.append((Exp(ShiftRows(S_1, c)) * W1 + Exp(ShiftRows(S_2, c)) * W2,
                       ScaleRows(Exp(c_1 - c), Exp(ShiftRows(S_1, c_1)) * W1) + Exp(ShiftRows(S_2, c)) * W2))
    # rows are independent, so query tiles can be computed one at a time
    claims.append((RowOf(sa.softmax(S, 1) * V, ROW), sa.softmax(RowOf(S, ROW), 1) * V))
    # the shift c = 0: no pass over the scores to subtract it (used when |scores| is provably small)
    claims.append((sa.softmax(S, 1) * V, DivideRows(Exp(S) * V, Exp(S) * ones(m))))
    # ... and over key blocks with c = 0 the merge is a plain sum
    claims.append((Exp(sp.BlockMatrix([[S_1, S_2]])) * sp.BlockMatrix([[V_1], [V_2]]),
                   Exp(S_1) * V_1 + Exp(S_2) * V_2))
    # claims 8-12: the same in base 2 (exp2 is cheaper than exp), appended so the numbers above stay
    return claims + base2_claims()


@theorem(
    "blockwise_logsumexp_merge",
    "softmax(S) V = diag(l)⁻¹ U with U = exp(S - c 1ᵀ) V, l = exp(S - c 1ᵀ) 1 for any shift c; over key "
    "blocks [S_1 S_2]: U = e^(c_1 - c) U_1 + exp(S_2 - c 1ᵀ) V_2 and "
    "l = e^(c_1 - c) l_1 + exp(S_2 - c 1ᵀ) 1; "
    "row k of softmax(S) V is softmax(row k of S) V; with c = 0, softmax(S) V = diag(exp(S) 1)⁻¹ exp(S) V "
    "and exp([S_1 S_2]) [V_1; V_2] = exp(S_1) V_1 + exp(S_2) V_2; in base 2, with S = Q Kᵀ and "
    "T = (Q/ln 2) Kᵀ: softmax(S) V = diag(2^T 1)⁻¹ 2^T V, exp(S) V = 2^T V, exp(S) 1 = 2^T 1, and "
    "exp(S_1) V_1 + exp(S_2) V_2 = 2^(S_1/ln 2) V_1 + 2^(S_2/ln 2) V_2, exp(S + M) V = 2^(T + M/ln 2) V",
    explanation="the merge rule of online softmax (m = max(m_1, m_2) is the shift c the kernel picks "
                "to stay in floating-point range; the identity holds for every c)",
)
def _():
    return merge_claims()
