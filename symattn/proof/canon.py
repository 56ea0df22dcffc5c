"""Strategy A: rewriting matrix expressions into a canonical form.

The rules, each a true identity of matrix algebra (the trust base):

- ``push_transposes``: (AB)ᵀ = BᵀAᵀ, (A+B)ᵀ = Aᵀ+Bᵀ, (cA)ᵀ = cAᵀ, Aᵀᵀ = A,
  Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1), [e_1; ...; e_H]ᵀ = [e_1ᵀ ... e_Hᵀ], (Σ_h e_h)ᵀ = Σ_h e_hᵀ
  (SymPy's ``doit`` with the ``_eval_transpose`` of each node);
- ``distribute``: A(B+C) = AB+AC, scalars to the front, products flattened
  (associativity), like terms collected (SymPy's ``expand`` and MatAdd canonicalization);
- ``multiply_blocks``: [A B][C; D] = AC + BD when the block sizes match (``block_collapse``);
- ``push_into_head_sums``: M·Σ_h e_h = Σ_h M e_h, (Σ_h e_h)·M = Σ_h e_h M, c·Σ_h e_h = Σ_h c e_h,
  Σ_h (a_h + b_h) = Σ_h a_h + Σ_h b_h, for M and c free of h.
- ``settle_floors_over_heads``: inside a sum, stack or concatenation over h = 1..H, floor(a·h + b)
  = c when a >= 0 and c <= a + b and a·H + b < c + 1 are provable, c = floor(a + b) (the value at
  h = 1): a nondecreasing function of h stays in [c, c + 1) on the whole range. This settles the
  GQA group floor((h - 1)/(H/G)) + 1 = 1 when G = 1.

Two expressions with the same canonical form are equal for every value of the
dimension symbols. Different canonical forms prove nothing.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import HeadSum, _OverHeads

MAX_ROUNDS = 6


def _is_matrix(x) -> bool:
    return isinstance(x, (MatrixExpr, sp.MatrixBase))


def push_into_head_sums(e):
    """Distribute products and scalars into Σ_h, and split Σ_h over sums (bottom-up)."""
    if not isinstance(e, MatrixExpr) or not e.args:
        return e
    args = [push_into_head_sums(a) if isinstance(a, MatrixExpr) else a for a in e.args]
    if any(a is not b for a, b in zip(args, e.args)):
        e = e.func(*args)
    if isinstance(e, HeadSum):
        body = e.body
        if isinstance(body, sp.MatAdd):
            return sp.MatAdd(*[push_into_head_sums(HeadSum(t, e.index, e.count)) for t in body.args])
        return e
    if isinstance(e, sp.MatMul):
        factors = list(e.args)
        for k, f in enumerate(factors):
            if isinstance(f, HeadSum):
                rest_left, rest_right = factors[:k], factors[k + 1:]
                if any(e_.has(f.index) for e_ in rest_left + rest_right):
                    continue
                body = sp.MatMul(*rest_left, f.body, *rest_right).doit(deep=False)
                return push_into_head_sums(HeadSum(body, f.index, f.count))
    return e


def _settle(body, h, count):
    reps = {}
    for f in body.atoms(sp.floor):
        arg = sp.expand(f.args[0])
        a = sp.expand(sp.diff(arg, h))
        if a.has(h) or a.is_nonnegative is not True:
            continue
        c = sp.floor(arg.subs(h, 1))
        if c.has(sp.floor) or c.has(h):
            continue
        if sp.expand(arg.subs(h, count) - c - 1).is_negative is True:
            reps[f] = c
    return body.xreplace(reps) if reps else body


def settle_floors_over_heads(e):
    """floor(a·h + b) -> its value at h = 1 when it is constant on h = 1..H (see the rules above)."""
    if not isinstance(e, MatrixExpr) or not e.args:
        return e
    args = [settle_floors_over_heads(a) if isinstance(a, MatrixExpr) else a for a in e.args]
    if any(a is not b for a, b in zip(args, e.args)):
        e = e.func(*args)
    if isinstance(e, _OverHeads) and e.body.has(sp.floor):
        body = _settle(e.body, e.index, e.count)
        if body != e.body:
            return type(e)(body, e.index, e.count)
    return e


def _round(e):
    e = e.doit()
    if _is_matrix(e):
        e = e.expand()
    if e.has(sp.BlockMatrix):
        e = sp.block_collapse(e)
        if isinstance(e, sp.BlockMatrix) and e.blockshape == (1, 1):
            e = e.blocks[0, 0]
    if e.has(HeadSum):
        e = push_into_head_sums(e)
    if e.has(sp.floor):
        e = settle_floors_over_heads(e)
    return e


def canon(e):
    """The canonical form of a matrix (or scalar) expression under the rules above."""
    for _ in range(MAX_ROUNDS):
        new = _round(e)
        if new == e:
            return new
        e = new
    return e


def is_zero_matrix(e) -> bool:
    if isinstance(e, sp.ZeroMatrix):
        return True
    if isinstance(e, sp.MatrixBase):
        return all(x == 0 for x in e)
    return e == 0


def same_by_rewriting(lhs, rhs) -> tuple[bool, list[str]]:
    """Try to show lhs = rhs by rewriting both sides (and their difference) to canonical form."""
    cl, cr = canon(lhs), canon(rhs)
    trace = [f"canonical lhs: {sp.sstr(cl)}", f"canonical rhs: {sp.sstr(cr)}"]
    if cl == cr:
        trace.append("the canonical forms coincide")
        return True, trace
    diff = canon(sp.MatAdd(cl, -cr))
    if is_zero_matrix(diff):
        trace.append("lhs - rhs rewrites to the zero matrix")
        return True, trace
    trace.append(f"lhs - rhs rewrites to {sp.sstr(diff)[:300]}, not to zero")
    return False, trace
