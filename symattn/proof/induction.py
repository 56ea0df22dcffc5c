"""Strategy C: induction on the head count H.

For a claim lhs(H) = rhs(H) whose head sums, stacks and concatenations run to a
symbolic H (and whose shape does not depend on H):

- base case: at H = 1 every node over heads is its single term; lhs(1) = rhs(1) is
  shown by rewriting (strategy A);
- step: for every H >= 1, peel the last head off each node at H + 1
  (Σ_{h=1}^{H+1} e_h = Σ_{h=1}^{H} e_h + e_{H+1}, [S_{H+1}] = [S_H; e_{H+1}], ...),
  multiply the blocks ([A B][C; D] = AC + BD), and show by rewriting that
  (lhs(H+1) - rhs(H+1)) - (lhs(H) - rhs(H)) = 0.

Then lhs(H) - rhs(H) = lhs(1) - rhs(1) = 0 for every H >= 1.
"""

from __future__ import annotations

import sympy as sp

from ..defs.heads import _OverHeads
from . import dag
from .canon import canon, is_zero_matrix, same_by_rewriting
from .verdict import TraceLine


def head_counts(*exprs) -> set:
    """The upper limits of all nodes over heads in ``exprs``."""
    return {node.count for node in dag.nodes(*exprs) if isinstance(node, _OverHeads)}


def induction_variable(lhs, rhs):
    """The symbol H to induct on, or None when the claim is not of that shape."""
    counts = head_counts(lhs, rhs)
    if len(counts) != 1:
        return None
    (H,) = counts
    if any(isinstance(x, _OverHeads) and x.rebinds_index() for x in dag.nodes(lhs, rhs)):
        return None  # peeling would substitute into a nested node that binds the same index
    if not (isinstance(H, sp.Symbol) and H.is_integer and H.is_positive):
        return None
    if any(H in sp.sympify(d).free_symbols for d in lhs.shape):
        return None
    return H


def peel(e):
    """Replace every node over heads by its peeled form (the node one head shorter, plus the last)."""
    return e.replace(lambda x: isinstance(x, _OverHeads), lambda x: x.peel())


def by_induction(lhs, rhs, H) -> tuple[bool, list[str]]:
    trace = [f"induction on {H}"]
    base_l, base_r = lhs.subs(H, 1), rhs.subs(H, 1)
    ok, t = same_by_rewriting(base_l, base_r)
    trace += [f"base {H} = 1: " + s for s in t]
    if not ok:
        trace.append("base case not shown")
        return False, trace
    Hp = H + 1
    step_l, step_r = peel(lhs.subs(H, Hp)), peel(rhs.subs(H, Hp))
    trace.append(TraceLine(f"step: peel head {Hp}: lhs({Hp}) = {{}}", step_l, limit=200))
    trace.append(TraceLine(f"step: peel head {Hp}: rhs({Hp}) = {{}}", step_r, limit=200))
    d_next = canon(sp.MatAdd(step_l, -step_r))
    d_here = canon(sp.MatAdd(lhs, -rhs))
    rest = canon(sp.MatAdd(d_next, -d_here))
    if is_zero_matrix(rest):
        trace.append(f"step: (lhs({Hp}) - rhs({Hp})) - (lhs({H}) - rhs({H})) rewrites to zero")
        return True, trace
    trace.append(TraceLine("step not shown: the difference rewrites to {}", rest, limit=300))
    return False, trace
