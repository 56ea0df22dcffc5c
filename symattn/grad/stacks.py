"""The VJP of a head stack or concatenation over a symbolic head count H.

A stack S = [e_1; ...; e_H] (each e_h r × c, S is H r × c) passes to head h the h-th block of rows of
its cotangent G, G[(h − 1) r : h r, :]; a concatenation [e_1 ... e_H] the h-th block of columns,
G[:, (h − 1) c : h c]. So, as for a head sum (:mod:`symattn.grad.vjp`):

    W_k read by the body as W_h:  dW_k = vjp(e_k, W_k, block_k(G))       (1 ≤ k ≤ H shown)
    X read by every head:         dX = Σ_{h=1}^{H} vjp(e_h, X, block_h(G))

:func:`head_block` writes the block as a :class:`sympy.MatrixSlice` with symbolic bounds, which a
candidate can write too (``G[(k - 1) * r:k * r, :]``). The walk of :mod:`symattn.grad.vjp` calls
:func:`stack_pullback` with itself, so this module imports nothing of it.

>>> import sympy as sp, symattn as sa
>>> k, r, d, n = sa.dims("k r d n")
>>> W = sa.Family("W", d, d)
>>> X, G = sp.MatrixSymbol("X", d, n), sp.MatrixSymbol("G", (k + r) * d, n)
>>> S = sa.head_stack(W[sa.h] * X, k + r)
>>> sa.vjp(S, W[k], G)
G[d*(k - 1):d*k, :]*X.T
"""

from __future__ import annotations

import sympy as sp

from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from .coverage import refuse


def head_block(e, G, h):
    """The block of the cotangent G of the stack or concatenation ``e`` that its head h receives."""
    r, c = e.body.shape
    if isinstance(e, HeadStack):
        return sp.MatrixSlice(G, ((h - 1) * r, h * r, 1), (0, G.cols, 1))
    return sp.MatrixSlice(G, (0, G.rows, 1), ((h - 1) * c, h * c, 1))


def _members(body, family: str) -> set:
    return {a for a in sp.preorder_traversal(body) if isinstance(a, FamilyMember) and a.family_name == family}


def stack_pullback(e, wrt, G, vjp_with_rules):
    """(wrt, its cotangent from the stack or concatenation e, the rules used); raises GradientError
    (via :func:`refuse`) where the head that reads wrt is not shown to be one of e's."""
    body, h, H = e.body, e.index, e.count
    kind = "head_stack" if isinstance(e, HeadStack) else "head_concat"
    members = _members(body, wrt.family_name) if isinstance(wrt, FamilyMember) else set()
    at_h = {x for x in members if x.index.has(h)}
    if at_h:
        if members != {wrt.func(wrt.args[0], h, *wrt.shape)}:
            bad = sorted(map(str, members - at_h)) or sorted(str(x) for x in at_h if x.index != h)
            raise refuse(e, f"the body reads the family {wrt.family_name} as {bad[0]}, not only at the head "
                            f"index {h}, so the head that reads {wrt} is not one block")
        k = wrt.index
        if not (k.is_integer and k.is_positive and (H - k).is_nonnegative):
            raise refuse(e, f"1 ≤ {k} ≤ {H} is not shown (write the head count as {k} + r, or take k = H), "
                            f"so the block {k} may not be one of the {kind.split('_')[1]}'s")
        g, names = vjp_with_rules(e.term(k), wrt, head_block(e, G, k))
        return wrt, g, [f"{kind}_member"] + names
    if G.has(h):
        raise refuse(e, f"the cotangent holds the head index {h}")
    g, names = vjp_with_rules(body, wrt, head_block(e, G, h))
    return wrt, HeadSum(g, h, H), [f"{kind}_shared"] + names


STACKS = (HeadStack, HeadConcat)
