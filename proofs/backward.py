"""The backward pass of attention as theorems: each claim says a formula papers write is the
vector-Jacobian product (VJP) of the forward definition, decided by :func:`symattn.verify_gradient`.

A gradient claim is proved general modulo the local VJP rules it names (each checked exactly at
every size in 1..3, see :mod:`symattn.grad.rule_check`) and passes the gradient audit (exact
differentiation of small explicit instances). Notation: G (or dO) is the cotangent of the output,
P the attention weights, dP = dO Vᵀ (row) or Vᵀ dO (column), dS the gradient of the scores, ∘ the
entrywise product, 1 a matrix of ones, rowsum(A) = A 1, colsum(A) = 1ᵀ A.

The theorems about heads are general in the head count H: the rule-based VJP differentiates a head
sum over a symbolic H (:mod:`symattn.grad.vjp`: the k-th term for a member W_k, 1 ≤ k ≤ H; the terms
of group g for GQA's W_{g(h)}; the head sum of the per-head VJPs for an input every head reads), and
the gradient audit writes the sum out at its instances.
"""

import sympy as sp

import symattn.defs as sa
from symattn.defs.numeric_nodes import Exp, Log, ShiftRows
from symattn.statements import gradient
from symattn.statements import theorem as _theorem

from ._common import d_k, d_model, d_v, m, n

Had, one = sp.HadamardProduct, sp.OneMatrix
BUDGET = 60.0  # seconds a claim may take to find its proof (about 1-5 s on an idle core; more on a busy machine)


def theorem(name, statement, **kw):
    """:func:`symattn.statements.theorem` with the backward theorems' budget."""
    return _theorem(name, statement, budget=kw.pop("budget", BUDGET), **kw)
root = sp.sqrt(d_k)


def softmax_vjp(P, dP, axis):
    """P ∘ (dP − 1 colsum(dP ∘ P)) (axis 0, columns sum to 1) or P ∘ (dP − rowsum(dP ∘ P) 1ᵀ) (axis 1)."""
    if axis == 0:
        return Had(P, dP - one(P.rows, P.rows) * Had(dP, P))
    return Had(P, dP - Had(dP, P) * one(P.cols, P.cols))


def row_symbols(nq=n, nk=m, dk=d_k, dv=d_v):
    """Q (n × d_k), K (m × d_k), V (m × d_v) and the cotangent dO (n × d_v), row convention."""
    return (sp.MatrixSymbol("Q", nq, dk), sp.MatrixSymbol("K", nk, dk), sp.MatrixSymbol("V", nk, dv),
            sp.MatrixSymbol("dO", nq, dv))


def col_symbols():
    """Q (d_k × n), K (d_k × m), V (d_v × m) and dO (d_v × n), column convention (seed 000)."""
    return (sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m),
            sp.MatrixSymbol("dO", d_v, n))


def row_backward(O, Q, K, V, G, P):
    """[dV, dQ, dK] = [Pᵀ dO, dS K/√d_k, dSᵀ Q/√d_k] as gradient claims of O (row convention)."""
    dS = softmax_vjp(P, G * V.T, 1)
    return [gradient(O, V, sp.MatMul(sp.Transpose(P), G), G),
            gradient(O, Q, dS * K / root, G),
            gradient(O, K, dS.T * Q / root, G)]


def col_backward(O, Q, K, V, G, P):
    """[dV, dQ, dK] = [dO Pᵀ, K dS/√d_k, Q dSᵀ/√d_k] as gradient claims of O (column convention)."""
    dS = softmax_vjp(P, V.T * G, 0)
    return [gradient(O, V, sp.MatMul(G, sp.Transpose(P)), G),
            gradient(O, Q, K * dS / root, G),
            gradient(O, K, Q * dS.T / root, G)]


@theorem(
    "softmax_vjp_both_axes",
    "the VJP of P = Softmax(S) at dP is dS = P ∘ (dP − 1 colsum(dP ∘ P)) (columns sum to 1) and, for "
    "P = softmax(S, rows), dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ): diag(p) − p pᵀ per column or row",
)
def _():
    S, G = sp.MatrixSymbol("S", m, n), sp.MatrixSymbol("dP", m, n)
    return [gradient(sa.softmax(S, axis), S, softmax_vjp(sa.softmax(S, axis), G, axis), G) for axis in (0, 1)]


@theorem(
    "attention_backward_row",
    "row convention, O = softmax(Q Kᵀ/√d_k) V: dV = Pᵀ dO, dQ = dS K/√d_k, dK = dSᵀ Q/√d_k with "
    "dP = dO Vᵀ and dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ)",
)
def _():
    Q, K, V, G = row_symbols()
    return row_backward(sa.attention(Q, K, V, convention="row"), Q, K, V, G,
                        sa.softmax(Q * K.T / root, axis=1))


@theorem(
    "attention_backward_column",
    "column convention (seed 000), O = V Softmax(Kᵀ Q/√d_k): dV = dO Pᵀ, dQ = K dS/√d_k, "
    "dK = Q dSᵀ/√d_k with dP = Vᵀ dO and dS = P ∘ (dP − 1 colsum(dP ∘ P))",
)
def _():
    Q, K, V, G = col_symbols()
    return col_backward(sa.attention(Q, K, V), Q, K, V, G, sa.softmax(K.T * Q / root))


@theorem(
    "flashattention2_D_is_rowsum_dO_O",
    "FlashAttention-2's D = rowsum(dO ∘ O) = rowsum(P ∘ dP), dP = dO Vᵀ (row convention; column twin "
    "colsum(dO ∘ O) = colsum(P ∘ dP), dP = Vᵀ dO), an algebraic identity, and with it the softmax "
    "backward dS = P ∘ (dP − D 1ᵀ) gives dQ = dS K/√d_k",
)
def _():
    Q, K, V, G = row_symbols()
    P = sa.softmax(Q * K.T / root, axis=1)
    O = P * V
    D = Had(G, O) * one(d_v, 1)
    Qc, Kc, Vc, Gc = col_symbols()
    Pc = sa.softmax(Kc.T * Qc / root)
    dS = Had(P, G * V.T - D * one(1, m))
    return [(Had(P, G * V.T) * one(m, 1), D),
            (one(1, m) * Had(Pc, Vc.T * Gc), one(1, d_v) * Had(Gc, Vc * Pc)),
            gradient(O, Q, dS * K / root, G)]


@theorem(
    "backward_recomputes_P_from_logsumexp",
    "the backward that keeps only L = c + log rowsum exp(S − c 1ᵀ) (any shift c, the forward's running "
    "max): P = exp(S − L 1ᵀ), and dV = Pᵀ dO, dQ = dS K/√d_k, dK = dSᵀ Q/√d_k with that P and "
    "dS = P ∘ (dO Vᵀ − D 1ᵀ), D = rowsum(dO ∘ O)",
)
def _():
    Q, K, V, G = row_symbols()
    c = sp.MatrixSymbol("c", n, 1)
    S = Q * K.T / root
    O = sa.attention(Q, K, V, convention="row")
    L = c + Log(Exp(ShiftRows(S, c)) * one(m, 1))
    P = Exp(ShiftRows(S, L))
    dS = Had(P, G * V.T - Had(G, O) * one(d_v, 1) * one(1, m))
    return [(sa.softmax(S, axis=1), P),
            gradient(O, V, sp.MatMul(sp.Transpose(P), G), G),
            gradient(O, Q, dS * K / root, G),
            gradient(O, K, dS.T * Q / root, G)]


@theorem(
    "causal_backward_masked_entries_get_zero_gradient",
    "causal self-attention (row convention, the -∞ causal mask M): the gradient of the scores is "
    "dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ), an entrywise product with P, so it is 0 wherever M is -∞ "
    "(P is 0 there); dQ = dS K/√d_k, dK = dSᵀ Q/√d_k, dV = Pᵀ dO",
)
def _():
    Q, K, V, G = row_symbols(nk=n)
    M = sa.CausalMask(n, n).T
    S = sp.MatrixSymbol("S", n, n)
    P = sa.softmax(S + M, axis=1)
    dP = sp.MatrixSymbol("dP", n, n)
    Pa = sa.softmax(Q * K.T / root + M, axis=1)
    dS = softmax_vjp(P, dP, 1)
    return [gradient(P, S, dS, dP),
            *row_backward(sa.causal_attention(Q, K, V, convention="row"), Q, K, V, G, Pa)]


@theorem(
    "causal_backward_masked_scores_get_exactly_zero",
    "causal softmax at n = 4 (row convention): the VJP with respect to the scores is L ∘ dS with L "
    "the 0/1 lower-triangular visibility, so every masked score gets exactly 0; proved at n = 4 only: "
    "L is an explicit 0/1 matrix, which has no symbolic size, so n is fixed",
    only_at="n = 4",
)
def _():
    S4, dP4 = sp.MatrixSymbol("S", 4, 4), sp.MatrixSymbol("dP", 4, 4)
    P4 = sa.softmax(S4 + sa.CausalMask(4, 4).T, axis=1)
    visible = sp.ImmutableMatrix(4, 4, lambda i, j: 1 if j <= i else 0)
    return [gradient(P4, S4, Had(visible, softmax_vjp(P4, dP4, 1)), dP4)]


def _weights():
    """Q, K (d_model × n, m), V, the cotangent G (d_model × n) and the four weight families."""
    Q, K, V = (sp.MatrixSymbol(x, d_model, k) for x, k in (("Q", n), ("K", m), ("V", m)))
    G = sp.MatrixSymbol("G", d_model, n)
    F = {x: sa.Family(f"W^{x}", *shape) for x, shape in (("Q", (d_k, d_model)), ("K", (d_k, d_model)),
                                                          ("V", (d_v, d_model)), ("O", (d_model, d_v)))}
    return Q, K, V, G, F


def _head(F, Q, K, V, G, q, kv=None):
    """(Q_h, K_h, P_h, dO_h, dS_h) of the head that reads W_q^Q, W_q^O and the key/value weights kv."""
    kv = q if kv is None else kv
    Qh, Kh, Vh = F["Q"][q] * Q, F["K"][kv] * K, F["V"][kv] * V
    P = sa.softmax(Kh.T * Qh / root)
    dOh = F["O"][q].T * G
    return Qh, Kh, P, dOh, softmax_vjp(P, Vh.T * dOh, 0)


def _mha_claims(H, k):
    """The weight gradients of head k of MultiHead (column convention, sum form) over H heads:
    dW_k^O = G (V_k P_k)ᵀ, dW_k^V = dO_k P_kᵀ Vᵀ, dW_k^Q = K_k dS_k Qᵀ/√d_k, dW_k^K = Q_k dS_kᵀ Kᵀ/√d_k,
    with Q_k = W_k^Q Q, K_k = W_k^K K, V_k = W_k^V V, dO_k = W_k^Oᵀ G."""
    Q, K, V, G, F = _weights()
    out = sa.multihead(Q, K, V, F["Q"], F["K"], F["V"], F["O"], H=H, form="sum")
    Qh, Kh, P, dOh, dS = _head(F, Q, K, V, G, k)
    return [gradient(out, F["O"][k], G * sp.Transpose(F["V"][k] * V * P), G),
            gradient(out, F["V"][k], dOh * sp.Transpose(P) * V.T, G),
            gradient(out, F["Q"][k], Kh * dS * Q.T / root, G),
            gradient(out, F["K"][k], Qh * dS.T * K.T / root, G)]


def _mha_query_gradient(H):
    """dQ = Σ_h W_h^Qᵀ K_h dS_h/√d_k: the queries are read by every head."""
    Q, K, V, G, F = _weights()
    out = sa.multihead(Q, K, V, F["Q"], F["K"], F["V"], F["O"], H=H, form="sum")
    return gradient(out, Q, sa.head_sum(lambda h: F["Q"][h].T * _head(F, Q, K, V, G, h)[1]
                                        * _head(F, Q, K, V, G, h)[4] / root, H), G)


@theorem(
    "multihead_weight_gradients",
    "MultiHead(Q, K, V) = Σ_{h=1}^{H} W_h^O V_h P_h, V_h = W_h^V V, P_h = Softmax(K_hᵀ Q_h/√d_k): "
    "dW_k^O = G (V_k P_k)ᵀ, dW_k^V = (W_k^Oᵀ G) P_kᵀ Vᵀ, dW_k^Q = K_k dS_k Qᵀ/√d_k, "
    "dW_k^K = Q_k dS_kᵀ Kᵀ/√d_k, dS_k = P_k ∘ (dP_k − 1 colsum(dP_k ∘ P_k)), dP_k = V_kᵀ W_k^Oᵀ G, "
    "for every head k of every head count H (stated as head k of H = k + r heads, and head H of H), "
    "and the queries, read by every head, get dQ = Σ_h W_h^Qᵀ K_h dS_h/√d_k",
)
def _():
    k, r, H = sa.dims("k r H")
    return _mha_claims(k + r, k) + _mha_claims(H, H) + [_mha_query_gradient(H)]


def _gqa_claims(groups, g, r):
    """GQA with `groups` key/value groups of r query heads each (H = groups · r), column convention:
    group g's W^K and W^V get sums over its heads h = (g − 1) r + j, j = 1..r,
    dW_g^K = Σ_j Q_h dS_hᵀ Kᵀ/√d_k and dW_g^V = Σ_j (W_h^Oᵀ G) P_hᵀ Vᵀ."""
    Q, K, V, G, F = _weights()
    out = sa.gqa(Q, K, V, F["Q"], F["K"], F["V"], F["O"], H=groups * r, G=groups, form="sum")
    head = lambda j: _head(F, Q, K, V, G, (g - 1) * r + j, g)  # noqa: E731
    dWK = sa.head_sum(lambda j: head(j)[0] * head(j)[4].T * K.T / root, r)
    dWV = sa.head_sum(lambda j: head(j)[3] * sp.Transpose(head(j)[2]) * V.T, r)
    return [gradient(out, F["K"][g], dWK, G), gradient(out, F["V"][g], dWV, G)]


def _mqa_claims(H):
    """MQA: one W^K, W^V read by all H heads: dW^K = Σ_h Q_h dS_hᵀ Kᵀ/√d_k, dW^V = Σ_h dO_h P_hᵀ Vᵀ."""
    Q, K, V, G, F = _weights()
    WK, WV = sp.MatrixSymbol("W^K", d_k, d_model), sp.MatrixSymbol("W^V", d_v, d_model)
    out = sa.mqa(Q, K, V, F["Q"], WK, WV, F["O"], H=H, form="sum")

    def head(h):
        Qh, Kh = F["Q"][h] * Q, WK * K
        P = sa.softmax(Kh.T * Qh / root)
        dOh = F["O"][h].T * G
        return Qh, P, dOh, softmax_vjp(P, (WV * V).T * dOh, 0)
    return [gradient(out, WK, sa.head_sum(lambda h: head(h)[0] * head(h)[3].T * K.T / root, H), G),
            gradient(out, WV, sa.head_sum(lambda h: head(h)[2] * sp.Transpose(head(h)[1]) * V.T, H), G)]


@theorem(
    "gqa_mqa_backward_sums_over_the_group",
    "GQA and MQA: the key/value weights of a group get the sum over the query heads that read it, "
    "dW_g^K = Σ_{h in g} Q_h dS_hᵀ Kᵀ/√d_k and dW_g^V = Σ_{h in g} (W_h^Oᵀ G) P_hᵀ Vᵀ, the heads of "
    "group g being h = (g − 1) r + j, j = 1..r; for every group g of every G and every group size r "
    "(stated as group g of g + s groups, and group G of G), and for MQA's shared W^K, W^V, summed over "
    "all H heads, for every H",
)
def _():
    g, s, r, n_g, H = sa.dims("g s r n_g H")  # n_g groups (G is the cotangent's name here)
    return _gqa_claims(g + s, g, r) + _gqa_claims(n_g, n_g, r) + _mqa_claims(H)


def block(M, k, rows=None, cols=None):
    """The k-th block of M: rows (k − 1) rows .. k rows − 1 (a stack's head k), or columns likewise."""
    if rows is not None:
        return sp.MatrixSlice(M, ((k - 1) * rows, k * rows, 1), (0, M.cols, 1))
    return sp.MatrixSlice(M, (0, M.rows, 1), ((k - 1) * cols, k * cols, 1))


def _stack_claims(H, k):
    """[W_1 X; …; W_H X] and [W_1 X … W_H X]: head k's W_k gets its block of G times Xᵀ; X, read by
    every head, gets Σ_h W_hᵀ G_h (stack)."""
    W, X = sa.Family("W", d_k, d_model), sp.MatrixSymbol("X", d_model, n)
    Gs, Gc = sp.MatrixSymbol("G", H * d_k, n), sp.MatrixSymbol("G", d_k, H * n)
    S, C = sa.head_stack(lambda h: W[h] * X, H), sa.head_concat(lambda h: W[h] * X, H)
    return [gradient(S, W[k], block(Gs, k, rows=d_k) * X.T, Gs),
            gradient(C, W[k], block(Gc, k, cols=n) * X.T, Gc),
            gradient(S, X, sa.head_sum(lambda h: W[h].T * block(Gs, h, rows=d_k), H), Gs)]


def _mha_block_claims(H, k):
    """MultiHead in the block form W^O [head_1; …; head_H], W^O one d_model × H d_v matrix: head k's
    weights get the k-th block dO_k = (W^Oᵀ G)_k of the stack's cotangent."""
    Q, K, V, G, F = _weights()
    WO = sp.MatrixSymbol("W^O", d_model, H * d_v)
    out = sa.multihead(Q, K, V, F["Q"], F["K"], F["V"], WO, H=H)
    dOk = block(WO.T * G, k, rows=d_v)
    Qk, Kk, Vk = F["Q"][k] * Q, F["K"][k] * K, F["V"][k] * V
    P = sa.softmax(Kk.T * Qk / root)
    dS = softmax_vjp(P, Vk.T * dOk, 0)
    return [gradient(out, F["V"][k], dOk * sp.Transpose(P) * V.T, G),
            gradient(out, F["Q"][k], Kk * dS * Q.T / root, G),
            gradient(out, F["K"][k], Qk * dS.T * K.T / root, G)]


@theorem(
    "head_stack_gradients_take_the_head_block",
    "the VJP of a stack [e_1; …; e_H] with respect to head k's weight W_k is the VJP of e_k at the k-th "
    "block of rows G_k of the cotangent (a concatenation: of columns): for [W_1 X; …; W_H X], dW_k = G_k Xᵀ "
    "and dX = Σ_h W_hᵀ G_h; and MultiHead in the block form W^O [head_1; …; head_H] gives head k "
    "dW_k^V = dO_k P_kᵀ Vᵀ, dW_k^Q = K_k dS_k Qᵀ/√d_k, dW_k^K = Q_k dS_kᵀ Kᵀ/√d_k with dO_k = (W^Oᵀ G)_k "
    "and dP_k = V_kᵀ dO_k; for every head k of every head count H (stated as head k of H = k + r "
    "heads, and head H of H for the stacks)",
)
def _():
    k, r, H = sa.dims("k r H")
    return _stack_claims(k + r, k) + _stack_claims(H, H)[:2] + _mha_block_claims(k + r, k)


@theorem(
    "rope_backward_is_the_transposed_rotation",
    "RoPE's backward is the transposed rotation: the VJP of R_a x (column) is R_aᵀ G and of x R_aᵀ (row) "
    "is G R_a; with RoPE on queries and keys, dQ = R_aᵀ (K_b dS/√d) and dK = R_bᵀ (Q_a dSᵀ/√d), "
    "Q_a = R_a Q, K_b = R_b K (column convention, Llama's frequencies), for every head dimension "
    "d = 2p and positions a, b (the gradient audit writes R_a out as its p blocks at each instance)",
)
def _():
    p = sa.dims("p")
    a, b = sp.symbols("a b", integer=True)
    x, G = sp.MatrixSymbol("x", 2 * p, n), sp.MatrixSymbol("G", 2 * p, n)
    y, Gy = sp.MatrixSymbol("y", n, 2 * p), sp.MatrixSymbol("G", n, 2 * p)
    Ra, Rb = sa.rope(a, p), sa.rope(b, p)
    Q, K = sp.MatrixSymbol("Q", 2 * p, n), sp.MatrixSymbol("K", 2 * p, m)
    V, dO = sp.MatrixSymbol("V", d_v, m), sp.MatrixSymbol("dO", d_v, n)
    Qa, Kb, r = Ra * Q, Rb * K, sp.sqrt(2 * p)
    dS = softmax_vjp(sa.softmax(Kb.T * Qa / r), V.T * dO, 0)
    O = sa.attention(Qa, Kb, V)
    return [gradient(Ra * x, x, Ra.T * G, G), gradient(y * Ra.T, y, Gy * Ra, Gy),
            gradient(O, Q, Ra.T * (Kb * dS / r), dO), gradient(O, K, Rb.T * (Qa * dS.T / r), dO)]


@theorem(
    "attention_pooling_query_gradient",
    "attention pooling z = V α, α = Softmax(Kᵀ W_p q_pool/√d_k), K = W^K X, V = W^V X: the gradient of "
    "the learnable query is dq_pool = W_pᵀ K dα_s/√d_k with dα_s = α ∘ (Vᵀ G − 1 colsum(Vᵀ G ∘ α)), "
    "and dW_p = K dα_s q_poolᵀ/√d_k",
)
def _():
    N = sa.dims("N")
    X = sp.MatrixSymbol("X", d_model, N)
    q = sp.MatrixSymbol("q_pool", d_model, 1)
    Wp, WK = sp.MatrixSymbol("W_p", d_k, d_model), sp.MatrixSymbol("W^K", d_k, d_model)
    WV = sp.MatrixSymbol("W^V", d_v, d_model)
    G = sp.MatrixSymbol("G", d_v, 1)
    z = sa.query_attention_pool(X, q, Wp, WK, WV)
    K, V = WK * X, WV * X
    alpha = sa.softmax(K.T * (Wp * q) / root)
    ds = softmax_vjp(alpha, V.T * G, 0)
    return [gradient(z, q, Wp.T * K * ds / root, G), gradient(z, Wp, K * ds * q.T / root, G)]
