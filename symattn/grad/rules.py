"""The local VJP rules: for each node, the cotangents of its operands given the node's cotangent G.

Each rule is an entry of :data:`RULES` (name, the node it covers, its statement in the notation of
papers, and a small instance family on which :mod:`symattn.grad.rule_check` checks it exactly by
differentiating explicit entries). :func:`pullback` applies the rule of one node. In the statements
P = Softmax(X), ``1`` is a matrix of ones, ∘ the entrywise product, G the cotangent of the node:

    C = c A_1 ⋯ A_k:     dA_i = c (A_1 ⋯ A_{i-1})ᵀ G (A_{i+1} ⋯ A_k)ᵀ
    C = A + B:           dA = G, dB = G
    C = Aᵀ:              dA = Gᵀ
    C = A ∘ B:           dA = G ∘ B
    P = Softmax(X, 0):   dX = P ∘ (G − 1 colsum(G ∘ P))     (every column sums to 1)
    P = Softmax(X, 1):   dX = P ∘ (G − rowsum(G ∘ P) 1ᵀ)    (every row sums to 1)
    Exp(X): G ∘ Exp(X);  Exp2(X): ln 2 · G ∘ Exp2(X);  Log(X): G ∘ X^∘(-1);  X^∘k: k G ∘ X^∘(k-1)
    A⁻¹:                 dA = −A⁻ᵀ G A⁻ᵀ
    ShiftRows(X, c) = X − c 1ᵀ:  dX = G, dc = −G 1
    ScaleRows(d, X) = diag(d) X:  dX = diag(d) G, dd = (G ∘ X) 1
    DivideRows(X, d) = diag(d)⁻¹ X:  dX = diag(d)⁻¹ G, dd = −diag(d)⁻² (G ∘ X) 1
    Σ_{h=1}^{H} e_h(W_h):  dW_k = vjp(e_k, W_k, G)  (1 ≤ k ≤ H shown; the other heads do not read W_k)
    Σ_{h=1}^{H} e_h(W_{g(h)}), g(h) = ⌊(h−1)/c⌋ + 1 (GQA):  dW_g = Σ_{j=1}^{c} vjp(e_{(g−1)c+j}, W_g, G)
    Σ_{h=1}^{H} e_h(X):    dX = Σ_{h=1}^{H} vjp(e_h, X, G)  (X read by every head)
    [e_1; ...; e_H] (W_h):  dW_k = vjp(e_k, W_k, G_k), G_k = G[(k−1) r : k r, :] the k-th block of rows
    [e_1; ...; e_H] (X):    dX = Σ_{h=1}^{H} vjp(e_h, X, G_h); [e_1 ... e_H] likewise with column blocks

The head-sum and head-stack rules are applied by the walk of :mod:`symattn.grad.vjp` (they recurse into the body).

A mask (CausalMask, PaddingMask) is a constant: it adds nothing, and since P is 0 where a mask is
−∞, every masked score gets the gradient 0 from the softmax rule. The attention definitions are
built from these nodes, so they are covered by expansion.

>>> import sympy as sp
>>> X, G = sp.MatrixSymbol("X", 2, 3), sp.MatrixSymbol("G", 2, 3)
>>> from symattn.defs import Exp
>>> pullback(Exp(X), G, lambda e: True)
('exp', [(X, HadamardProduct(G, Exp(X)))])
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, ScaleRows, ShiftRows
from ..defs.softmax import Softmax


@dataclass(frozen=True)
class VJPRule:
    """One local VJP rule: its name, the node it covers and its statement."""

    name: str
    node: str
    statement: str


RULES = {r.name: r for r in (
    VJPRule("matmul", "MatMul", "C = c A_1⋯A_k: dA_i = c (A_1⋯A_{i-1})ᵀ G (A_{i+1}⋯A_k)ᵀ"),
    VJPRule("matadd", "MatAdd", "C = A + B: dA = G, dB = G"),
    VJPRule("transpose", "Transpose", "C = Aᵀ: dA = Gᵀ"),
    VJPRule("hadamard", "HadamardProduct", "C = A ∘ B: dA = G ∘ B"),
    VJPRule("hadamard_power", "HadamardPower", "C = A^∘k (k constant): dA = k G ∘ A^∘(k-1)"),
    VJPRule("inverse", "Inverse", "C = A⁻¹: dA = −A⁻ᵀ G A⁻ᵀ"),
    VJPRule("softmax_columns", "Softmax(X, 0)", "P = Softmax(X): dX = P ∘ (G − 1 colsum(G ∘ P))"),
    VJPRule("softmax_rows", "Softmax(X, 1)", "P = Softmax(X, 1): dX = P ∘ (G − rowsum(G ∘ P) 1ᵀ)"),
    VJPRule("exp", "Exp", "C = Exp(X): dX = G ∘ Exp(X)"),
    VJPRule("exp2", "Exp2", "C = Exp2(X): dX = ln 2 · G ∘ Exp2(X)"),
    VJPRule("log", "Log", "C = Log(X): dX = G ∘ X^∘(-1)"),
    VJPRule("shift_rows", "ShiftRows", "C = X − c 1ᵀ: dX = G, dc = −G 1"),
    VJPRule("scale_rows", "ScaleRows", "C = diag(d) X: dX = diag(d) G, dd = (G ∘ X) 1"),
    VJPRule("divide_rows", "DivideRows", "C = diag(d)⁻¹ X: dX = diag(d)⁻¹ G, dd = −diag(d)⁻² (G ∘ X) 1"),
    VJPRule("head_sum_member", "HeadSum", "C = Σ_{h=1}^{H} e_h(W_h): dW_k = vjp(e_k, W_k, G) for 1 ≤ k ≤ H"),
    VJPRule("head_sum_group", "HeadSum", "C = Σ_{h=1}^{H} e_h(W_{g(h)}), g(h) = ⌊(h−1)/c⌋ + 1: "
            "dW_g = Σ_{j=1}^{c} vjp(e_{(g−1)c+j}, W_g, G) for 1 ≤ g ≤ H/c"),
    VJPRule("head_sum_shared", "HeadSum", "C = Σ_{h=1}^{H} e_h(X): dX = Σ_{h=1}^{H} vjp(e_h, X, G)"),
    VJPRule("head_stack_member", "HeadStack", "C = [e_1; …; e_H](W_h): dW_k = vjp(e_k, W_k, G[(k−1)r:kr, :]) "
            "for 1 ≤ k ≤ H"),
    VJPRule("head_stack_shared", "HeadStack", "C = [e_1; …; e_H](X): dX = Σ_{h=1}^{H} vjp(e_h, X, G[(h−1)r:hr, :])"),
    VJPRule("head_concat_member", "HeadConcat", "C = [e_1 … e_H](W_h): dW_k = vjp(e_k, W_k, G[:, (k−1)c:kc]) "
            "for 1 ≤ k ≤ H"),
    VJPRule("head_concat_shared", "HeadConcat", "C = [e_1 … e_H](X): dX = Σ_{h=1}^{H} vjp(e_h, X, G[:, (h−1)c:hc])"),
)}


def ones(r, c):
    return sp.OneMatrix(r, c)


def transpose(A):
    """Aᵀ, left as a transpose (Pᵀ, not Softmax(Xᵀ, 1)), with (Aᵀ)ᵀ = A and (c A B)ᵀ = c Bᵀ Aᵀ one
    level down (so dK comes out as dSᵀ Q, not (Qᵀ dS)ᵀ)."""
    if isinstance(A, sp.Transpose):
        return A.arg
    if isinstance(A, sp.MatMul):
        coeff, mats = A.as_coeff_matrices()
        t = sp.MatMul(*[transpose(f) for f in reversed(mats)]).doit(deep=False)
        return scale(coeff, t)
    return sp.Transpose(A)


def scale(c, A):
    """c A without evaluating A's transposes (SymPy's c * A would: Pᵀ -> Softmax(Xᵀ, 1))."""
    if c == 1:
        return A
    return sp.MatMul(c, A).doit(deep=False)


def _product(factors):
    if not factors:
        return None
    return factors[0] if len(factors) == 1 else sp.MatMul(*factors).doit(deep=False)


def _matmul(e, G, depends):
    coeff, mats = e.as_coeff_matrices()
    out = []
    for i, A in enumerate(mats):
        if not depends(A):
            continue
        left, right = _product(list(mats[:i])), _product(list(mats[i + 1:]))
        parts = [transpose(left)] if left is not None else []
        parts += [G] + ([transpose(right)] if right is not None else [])
        g = _product(parts)
        out.append((A, scale(coeff, g)))
    return out


def _hadamard(e, G, depends):
    out = []
    for i, A in enumerate(e.args):
        if depends(A):
            rest = [B for k, B in enumerate(e.args) if k != i]
            out.append((A, sp.HadamardProduct(G, *rest)))
    return out


def _softmax(e, G):
    X = e.arg
    GP = sp.HadamardProduct(G, e)
    if e.axis == 0:  # 1 colsum(G ∘ P)
        return [(X, sp.HadamardProduct(e, sp.MatAdd(G, scale(-1, _product([ones(X.rows, X.rows), GP])))))]
    return [(X, sp.HadamardProduct(e, sp.MatAdd(G, scale(-1, _product([GP, ones(X.cols, X.cols)])))))]


def pullback(e, G, depends):
    """(rule name, [(operand, its cotangent)]) for node ``e`` with cotangent ``G``; operands for
    which ``depends`` is False are left out. None when no rule covers ``e``."""
    if isinstance(e, sp.MatMul):
        return "matmul", _matmul(e, G, depends)
    if isinstance(e, sp.MatAdd):
        return "matadd", [(a, G) for a in e.args if depends(a)]
    if isinstance(e, sp.Transpose):
        return "transpose", [(e.arg, transpose(G))]
    if isinstance(e, sp.HadamardProduct):
        return "hadamard", _hadamard(e, G, depends)
    if isinstance(e, sp.HadamardPower) and not depends(e.exp):
        k = e.exp
        return "hadamard_power", [(e.base, scale(k, sp.HadamardProduct(G, sp.HadamardPower(e.base, k - 1))))]
    if isinstance(e, sp.Inverse):
        return "inverse", [(e.arg, scale(-1, _product([transpose(e), G, transpose(e)])))]
    if isinstance(e, Softmax):
        return ("softmax_columns" if e.axis == 0 else "softmax_rows"), _softmax(e, G)
    if isinstance(e, Exp):
        return "exp", [(e.args[0], sp.HadamardProduct(G, e))]
    if isinstance(e, Exp2):
        return "exp2", [(e.args[0], scale(sp.log(2), sp.HadamardProduct(G, e)))]
    if isinstance(e, Log):
        return "log", [(e.args[0], sp.HadamardProduct(G, sp.HadamardPower(e.args[0], -1)))]
    return _row_nodes(e, G, depends)


def _row_nodes(e, G, depends):
    if isinstance(e, ShiftRows):
        X, c = e.args
        return "shift_rows", [p for p in ((X, G), (c, scale(-1, _product([G, ones(X.cols, 1)])))) if depends(p[0])]
    if isinstance(e, ScaleRows):
        d, X = e.args
        return "scale_rows", [p for p in ((X, ScaleRows(d, G)), (d, sp.HadamardProduct(G, X) * ones(X.cols, 1)))
                              if depends(p[0])]
    if isinstance(e, DivideRows):
        X, d = e.args
        dd = scale(-1, DivideRows(DivideRows(_product([sp.HadamardProduct(G, X), ones(X.cols, 1)]), d), d))
        return "divide_rows", [p for p in ((X, DivideRows(G, d)), (d, dd)) if depends(p[0])]
    return None
