"""``symattn.vjp``: the vector-Jacobian product of a matrix expression, by reverse accumulation.

For an expression E (p × q) of an input W and a cotangent G (p × q), the VJP is the matrix of W's
shape whose (k, l) entry is Σ_ij G_ij ∂E_ij/∂W_kl. :func:`vjp_with_rules` walks the expression's
DAG from the output to the inputs, applies the local rule of every node that depends on W
(:mod:`symattn.grad.rules`), sums the cotangents of a subexpression used more than once, and
records which rules it used. Nodes without a rule raise :class:`~symattn.errors.GradientError`.
"""

from __future__ import annotations

import re

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import FamilyMember, HeadSum, bind, substitute
from ..defs.shapes import as_matrix, same_dim, show_shape
from ..errors import GradientError
from ..proof import dag
from ..proof.layer_stack import stacks_of, unfold
from .coverage import CONSTANTS, INPUTS, REFUSED_WRT, refuse
from .rules import pullback
from .stacks import STACKS, stack_pullback


def check_request(expr, wrt, cotangent, op: str = "vjp(expr, wrt, cotangent)"):
    """The three operands, checked: matrices, wrt an input of expr, cotangent of expr's shape."""
    expr = as_matrix(expr, "expr", op)
    cotangent = as_matrix(cotangent, "cotangent", op)
    if not isinstance(wrt, INPUTS):
        raise GradientError(f"{op}: wrt must be a MatrixSymbol or a Family member, got "
                            f"{type(wrt).__name__}: {sp.sstr(wrt)[:80]}")
    for cls, why in REFUSED_WRT.items():
        if isinstance(wrt, cls):
            raise GradientError(f"{op}: cannot differentiate with respect to {wrt} ({type(wrt).__name__}): {why}")
    for k, what in enumerate(("rows", "columns")):
        if not same_dim(expr.shape[k], cotangent.shape[k]):
            raise GradientError(f"{op}: the cotangent must have the shape of expr ({what} differ).\n"
                                f"  expr: {show_shape(expr)}\n  cotangent: {show_shape(cotangent)}")
    return expr, wrt, cotangent


def reads(e, wrt) -> bool:
    """e holds wrt, or a member of wrt's family at a symbolic index (W_h inside a head sum, which
    is W_k in the term h = k)."""
    if e.has(wrt):
        return True
    if not isinstance(wrt, FamilyMember):
        return False
    return any(isinstance(a, FamilyMember) and a.family_name == wrt.family_name and not a.index.is_Integer
               and a.index != wrt.index for a in sp.preorder_traversal(e))


def _order(expr, depends):
    """The subexpressions that depend on wrt, children before parents (each once)."""
    seen, out, stack = set(), [], [(expr, False)]
    while stack:
        e, done = stack.pop()
        if done:
            out.append(e)
            continue
        if e in seen:
            continue
        seen.add(e)
        stack.append((e, True))
        if not isinstance(e, (HeadSum, *STACKS)):  # its body is differentiated by its own rule, not walked
            stack.extend((a, False) for a in reversed(e.args) if isinstance(a, MatrixExpr) and depends(a))
    return out


def _total(parts):
    return parts[0] if len(parts) == 1 else sp.MatAdd(*parts).doit(deep=False)


def unfold_stacks(expr, wrt, op: str = "vjp"):
    """``expr`` with each stack of layers at a concrete depth written out layer by layer (layer l's
    weight W is W_l); a stack of a symbolic depth L, or a wrt that is a weight of a stack (each layer
    has its own), is refused with a GradientError that says what to ask instead."""
    stacks = stacks_of(expr)
    names = {x.name for x in dag.atoms(expr, sp.MatrixSymbol)} if stacks else set()
    for s in stacks:
        clash = sorted(x for W in s.weights for x in names if re.fullmatch(rf"{re.escape(W.name)}_[1-9]\d*", x))
        if clash:  # unfolded, layer 1's weight A_1 would be the user's A_1
            raise GradientError(f"{op}: the matrix {clash[0]} is named like a weight of a layer of the stack "
                                f"{sp.sstr(s)[:80]} (W_1, W_2, ... once unfolded); rename it")
        if wrt in s.weights:
            raise GradientError(f"{op}: {wrt} is a weight of the stack {sp.sstr(s)[:80]}: each layer has its own "
                                f"({wrt.name}_1, ..., {wrt.name}_L, as LayerStack.unfold names them); differentiate "
                                f"with respect to one of them, sp.MatrixSymbol({(wrt.name + '_1')!r}, "
                                f"{sp.sstr(wrt.rows)}, {sp.sstr(wrt.cols)})")
        if not s.depth.is_Integer and (reads(s, wrt) or _layer_weight(s, wrt)):
            raise GradientError(f"{op}: the stack {sp.sstr(s)[:80]} has a symbolic number of layers {s.depth}; "
                                "its backward is a loop over the layers in reverse, with no closed matrix "
                                "expression. Give the depth as a number (sa.layer_stack(..., depth=3, ...))")
    return unfold(expr, 1, [s for s in stacks if s.depth.is_Integer]) if stacks else expr


def _layer_weight(stack, wrt) -> bool:
    """wrt is W_l, the weight W of one layer l of the stack (as :meth:`LayerStack.unfold` names it)."""
    return isinstance(wrt, sp.MatrixSymbol) and any(
        re.fullmatch(rf"{re.escape(W.name)}_[1-9]\d*", wrt.name) and wrt.shape == W.shape for W in stack.weights)


def vjp_with_rules(expr, wrt, cotangent):
    """(the VJP of expr with respect to wrt at cotangent, the names of the rules used)."""
    expr, wrt, cotangent = check_request(expr, wrt, cotangent)
    expr = unfold_stacks(expr, wrt)
    memo: dict = {}

    def depends(e):
        if e not in memo:
            memo[e] = bool(getattr(e, "has", None)) and reads(e, wrt)
        return memo[e]

    if not depends(expr):
        return sp.ZeroMatrix(*wrt.shape), []
    grads, used = {expr: [cotangent]}, []
    for e in reversed(_order(expr, depends)):
        if e == wrt:
            continue
        G = _total(grads.pop(e))
        if isinstance(e, INPUTS + CONSTANTS):
            continue
        if isinstance(e, (HeadSum, *STACKS)):
            child, g, names = (_head_sum if isinstance(e, HeadSum) else _stack)(e, wrt, G)
            used.extend(x for x in names if x not in used)
            grads.setdefault(child, []).append(g)
            continue
        found = pullback(e, G, depends)
        if found is None:
            raise refuse(e)
        name, parts = found
        if name == "matmul" and e.as_coeff_matrices()[0].has(wrt):
            raise refuse(e, "a scalar coefficient that depends on wrt")
        if name not in used:
            used.append(name)
        for child, g in parts:
            grads.setdefault(child, []).append(g)
    return _total(grads[wrt]) if wrt in grads else sp.ZeroMatrix(*wrt.shape), used


def _stack(e, wrt, G):
    return stack_pullback(e, wrt, G, vjp_with_rules)


def _members(body, family: str) -> set:
    return {a for a in sp.preorder_traversal(body) if isinstance(a, FamilyMember) and a.family_name == family}


def _head_sum(e, wrt, G):
    """(wrt, its cotangent from e = Σ_{h=1}^{H} body_h, the rules used).

    wrt = W_k, a member of a family that the body reads as W_h: only the term h = k depends on it,
    so dW_k = vjp(body_k, W_k, G), provided 1 ≤ k ≤ H is shown (k a positive integer, H - k ≥ 0).
    Otherwise wrt is read by every head alike (Q, K, V, X, MQA's shared W^K): dW = Σ_h vjp(body_h, W, G).
    """
    body, h, H = e.body, e.index, e.count
    members = {x for x in _members(body, wrt.family_name) if x.index.has(h)} if isinstance(wrt, FamilyMember) else set()
    if members:  # the body reads wrt's family at an index of h (W_h, W_{g(h)}, ...)
        other = _members(body, wrt.family_name) - members
        if other:  # W_k itself, or W_{h'} of a sum nested in the body, read by every head
            raise refuse(e, f"the body reads the family {wrt.family_name} at the head index {h} and also as "
                            f"{sorted(map(str, other))[0]}, which every head reads")
        group = _group_size(members, h)
        if group is not None:
            return _head_group(e, wrt, G, members, group)
        if any(x.index != h for x in members):
            bad = next(x for x in members if x.index != h)
            raise refuse(e, f"the body reads the family {wrt.family_name} as {bad}, not at the head index "
                            f"{h}, so the heads that read {wrt} are not one term")
        k = wrt.index
        if not (k.is_integer and k.is_positive and (H - k).is_nonnegative):
            raise refuse(e, f"1 ≤ {k} ≤ {H} is not shown (write the head count as {k} + r, or take k = H), "
                            f"so the term h = {k} may not be one of the sum")
        g, names = vjp_with_rules(e.term(k), wrt, G)
        return wrt, g, ["head_sum_member"] + names
    if G.has(h):
        raise refuse(e, f"the cotangent holds the head index {h}")
    g, names = vjp_with_rules(body, wrt, G)
    return wrt, HeadSum(g, h, H), ["head_sum_shared"] + names


def _group_size(members, h):
    """c when every member is read at the group index g(h) = floor((h - 1)/c) + 1 (GQA), else None."""
    sizes = set()
    for x in members:
        inner = x.index - 1
        if not isinstance(inner, sp.floor):
            return None
        c = sp.simplify((h - 1) / inner.args[0])
        if c.has(h) or not (c.is_integer and c.is_positive):
            return None
        sizes.add(c)
    return sizes.pop() if len(sizes) == 1 else None


def _head_group(e, wrt, G, members, c):
    """e = Σ_{h=1}^{H} body_h reading W_{g(h)}, g(h) = floor((h - 1)/c) + 1: the heads that read
    W_g are h = (g - 1) c + j, j = 1..c, so dW_g = Σ_{j=1}^{c} vjp(body_{(g-1)c+j}, W_g, G),
    provided 1 ≤ g ≤ H/c is shown."""
    body, h, H = e.body, e.index, e.count
    g = wrt.index
    if not (g.is_integer and g.is_positive and (H / c - g).is_nonnegative):
        raise refuse(e, f"1 ≤ {g} ≤ {H}/({c}) is not shown, so the group {g} may not be one of the sum's")
    body = body.xreplace({x: FamilyMember(x.family_name, g, *x.shape) for x in members})
    names: list = []

    def term(j):
        grad, used = vjp_with_rules(substitute(body, {h: (g - 1) * c + j}), wrt, G)
        names.extend(x for x in used if x not in names)
        return grad

    return wrt, bind(HeadSum, term, c), ["head_sum_group"] + names


def vjp(expr, wrt, cotangent):
    """Σ_ij cotangent_ij ∂expr_ij/∂wrt_kl as a matrix expression of wrt's shape, in the forms
    papers write (dV = G Pᵀ, dS = P ∘ (dP − 1 colsum(dP ∘ P)), ...).

    >>> import sympy as sp, symattn as sa
    >>> n, m, d = sa.dims("n m d")
    >>> Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
    >>> G = sp.MatrixSymbol("G", d, n)
    >>> sa.vjp(sa.attention(Q, K, V), V, G)
    G*Softmax(1/sqrt(d)*K.T*Q).T
    """
    return vjp_with_rules(expr, wrt, cotangent)[0]
