r"""A step about every position that uses closed forms the file proved before: RWKV's
``wkv_t = \frac{a_{t-1} + e^{u+k_t} \odot v_t}{b_{t-1} + e^{u+k_t}}`` after ``a_{t-1} = \sum_{i=1}^{t-1} ...``.

Papers prove the closed form of a recurrence, then use it: the member at a symbolic position is replaced by
its sum, and the sum is compared with the same sum written in a definition (``wkv_t`` of Peng et al. 2023
defined with ``\sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} \odot v_i``). The step is read so when each recurrent member
at a symbolic position that it holds has a closed form claimed by an earlier step (``decay_induction.py``,
``position_induction.py``), a definition at the position letter is read through its body, and every sum of
symbolically many terms is one free value per sum as written (the same sum, written the same way, is the same
value; the summand's shape is its shape). A step proved so holds for every value of those sums, hence for
theirs, at every position, provided each closed form it uses was proved: the step says which it used, and is
proved only when they are. Anything else refutes nothing (the free sums are not independent values): the
claim is then checked at given positions, unrolled, as an induction's claim is.
"""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from . import ast
from .position_induction import Induction
from .recurrence_step import previous_members
from .sequences import index_value, letter, recurrence_of
from .symbols import is_matrix, key_of


class Lemmas(Induction):
    """The use of earlier closed forms: ``steps`` are the steps that claimed them."""

    def __init__(self, c, first, lhs_node, rhs_node, steps):
        uses = ", ".join(f"line {s.pos[0]}" for s in steps)
        super().__init__(c, first, f"the closed forms of {uses}", lhs_node, rhs_node)
        self.steps = steps

    def conclude(self, scope, s, verify) -> None:
        unproved = [p for p in self.steps if p.status != "proved"]
        if s.status == "proved" and not unproved:
            uses = ", ".join(f"{p.lhs} at line {p.pos[0]}" for p in self.steps)
            s.scope = (f"every position {self.letter}, with the closed forms proved for {uses} substituted and each "
                       f"sum of symbolically many terms any value, for " + s.scope)
            s.method = f"closed forms, {s.method}"
            return
        if s.status == "proved":
            s.status = "not proved (it uses a closed form that is not proved)"
        elif s.status == "refuted":
            s.status = "refuted with the sums as free values, which refutes nothing"
        super().conclude(scope, s, verify)


def register(scope, st, step) -> None:
    """Remember the closed form ``x = \\sum ...`` of the step ``step`` (read as an induction) for later steps."""
    if isinstance(st.first, ast.Name):  # S_t q_t = \sum ... closes no member on its own
        scope.__dict__.setdefault("closed_forms", {})[key_of(st.first)] = (st.links[0][2], step)


def opaque_sum(scope, node, L):
    """The sum ``node`` of symbolically many terms as one free value, while a step is read with closed forms;
    None otherwise (the sum is read as before)."""
    if not getattr(scope, "opaque_sums", False) or node.upper is None:
        return None
    up = index_value(scope, node.upper, L, node, strict=False)
    if up is None or sp.expand(up).is_Integer:
        return None
    names = {n.base for n in ast.nodes_of(node) if isinstance(n, ast.Name)}
    if names & (set(L) - {node.index}):
        return None  # a letter of the sum bound outside it: its text would not say its value
    free = {n.base: letter(n.base) for n in ast.nodes_of(node.upper) if isinstance(n, ast.Name) and n.base not in L}
    body = scope.expr(node.body, {**L, **free, node.index: letter(node.index)})  # t of (t - 1 - i) w: a number
    if not is_matrix(body):
        return None
    return sp.MatrixSymbol(f"Σ[{node.text()}]", *body.shape)


def _symbolic_members(scope, node):
    out = []
    for n in ast.nodes_of(node):
        if isinstance(n, ast.Name) and n.sub is not None and recurrence_of(scope, n) is not None:
            v = index_value(scope, n.sub, {}, n, strict=False)
            if v is not None and not sp.expand(v).is_Integer:
                out.append(n)
    return out


def read(scope, st):
    """The step's two sides with the closed forms substituted, and its :class:`Lemmas`, or None."""
    forms = scope.__dict__.get("closed_forms", {})
    if not forms or not (isinstance(st, ast.Chain) and len(st.links) == 1 and st.links[0][0] == "="):
        return None
    lhs, rhs = st.first, st.links[0][2]
    sides, letters, used = [], set(), []
    for side in (lhs, rhs):
        rec = recurrence_of(scope, side) if isinstance(side, ast.Name) else None
        if rec is not None and not previous_members(rec[1], rec[0]) and isinstance(side.sub, ast.Name) \
                and side.sub.base == rec[0]:
            letters.add(rec[0])
            side = rec[1].body  # wkv_t: its definition at t
        sides.append(side)
    members = _symbolic_members(scope, sides[0]) + _symbolic_members(scope, sides[1])
    if not members or any(key_of(m) not in forms for m in members):
        return None
    for m in members:
        letters.add(recurrence_of(scope, m)[0])
        if forms[key_of(m)][1] not in used:
            used.append(forms[key_of(m)][1])
    if len(letters) != 1:
        return None
    (c,) = letters
    firsts = [getattr(p.induction, "first", None) for p in used]
    if any(f is None for f in firsts):
        return None
    scope.opaque_sums = True
    saved = {}
    try:
        for m in members:
            k = key_of(m)
            if k not in saved:
                saved[k] = scope.expr(forms[k][0], {})
        scope.matrices.update(saved)
        L, R = scope.expr(sides[0], {}), scope.expr(sides[1], {})
    except DerivationError:
        return None
    finally:
        scope.opaque_sums = False
        for k in saved:
            scope.matrices.pop(k, None)
    return L, R, Lemmas(c, max(firsts), lhs, rhs, used)
