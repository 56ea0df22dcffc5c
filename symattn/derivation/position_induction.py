r"""A recurrence unrolled into a sum over the positions up to t, proved by an induction on t.

Papers write a recurrence with its initial condition, ``S_t = S_{t-1} + k_t v_t^\top`` with ``S_0 = 0``,
and then claim its closed form, ``S_t = \sum_{i=1}^{t} k_i v_i^\top``: a claim about every position t.
It is read here as an induction on t, in the one shape where both parts are checked by the ordinary
engine:

- the claim is the recurrent member at the recurrence's own position letter, ``S_t``, equal to a sum over
  j from the position after the initial condition to t, whose summand does not depend on t (the letter t
  appears nowhere in it);
- the base, t at the initial condition, holds because the initial condition is 0 and the sum is empty;
- the step substitutes the hypothesis ``S_{t-1} = \sum_{j}^{t-1} F(j)`` for the previous member, as a free
  matrix P of the sequence's shape (the sum of t - 1 terms, whatever it is), and checks the recurrence's
  body at t, with S_{t-1} = P, against ``P + F(t)``, the sum up to t with its last term apart.

A step proved so (for every P) proves the claim at every position t. A step that is not proved refutes
nothing (P need not be a reachable value): the claim is then checked at given positions, unrolled from
the initial condition, and a counterexample there refutes it at that position; when every given position
agrees the claim is left unknown, named as holding at those positions only.
"""

from __future__ import annotations

import dataclasses

import sympy as sp

from ..errors import DerivationError
from . import ast
from .recurrence_step import previous_members
from .sequences import index_value, initial_index, letter, recurrence_of, sequence_shape
from .symbols import key_of

POSITIONS = 4  # given positions the claim is checked at when the induction step is not proved


@dataclasses.dataclass
class Induction:
    letter: str
    first: int
    hypothesis: str
    lhs_node: object
    rhs_node: object
    written = "unrolled from the initial condition"  # how a side is read at a given position

    def conclude(self, scope, s, verify) -> None:
        """Turn the verdict on the induction step into the step's verdict on the claim (see the module)."""
        c = self.letter
        if s.status == "proved":
            s.scope = (f"every position {c} by induction on {c}: base {c} = {self.first} (the initial condition 0, "
                       f"the sum empty), step with the hypothesis {self.hypothesis} substituted, proved for "
                       + s.scope)
            s.method = f"induction on {c}, {s.method}"
            return
        self.at_positions(scope, s, verify, f"the induction step (the hypothesis {self.hypothesis} substituted) is "
                          f"{s.status}")

    def value_at(self, scope, node, q):
        """The value of the side ``node`` at the position q (the claim's letter bound to q)."""
        return scope.expr(node, {self.letter: sp.Integer(q)})

    def at_positions(self, scope, s, verify, why) -> None:
        """The claim checked at the positions after the initial condition: refuted at the first that refutes
        it, else unknown, naming the positions that agree (``why``: the part that was not proved)."""
        c, q = self.letter, self.first + POSITIONS  # q: the last of the positions that agree, one after another
        for p in range(self.first + 1, self.first + 1 + POSITIONS):
            try:
                at = {scope.positions[c][0]: p} if c in getattr(scope, "positions", {}) else {}  # n is p here
                L = sp.sympify(self.value_at(scope, self.lhs_node, p)).xreplace(at)
                R = sp.sympify(self.value_at(scope, self.rhs_node, p)).xreplace(at)
                v = verify(s, L, R)
            except DerivationError:
                q = min(q, p - 1)
                break
            if v.status == "refuted":
                v = _length_at(scope, c, p, v) if at else v
                s.lhs_expr, s.rhs_expr = L, R
                s.verdict, s.status, s.general, s.method, s.seconds = v, v.status, False, v.method, v.seconds
                s.scope = f"at the position {c} = {p}, {self.written}: {v.scope}"
                s.error = ""
                return
            if v.status != "proved":  # undecided here: a later position may still refute the claim
                q = min(q, p - 1)
        s.status, s.general, s.verdict = "unknown", False, None
        s.scope = f"agrees at the positions {c} = {self.first + 1}, ..., {q} only" if q > self.first else ""
        s.error = (f"{why}, which refutes nothing: the claim about every position {c} is neither proved nor refuted"
                   + (f"; it holds at the positions {c} = {self.first + 1}, ..., {q}, which is no proof for every "
                      f"{c}" if q > self.first else ""))


def _length_at(scope, c, p, v):
    """The counterexample ``v`` found with the position c equal to p: the sequence's length is p plus the slack
    the counterexample gives for it (p itself when it gives none, the position the last one)."""
    n = str(scope.positions[c][1])
    cex = v.counterexample
    if cex is None:
        return v
    dims = dict(cex.dims)
    dims[n] = dims.get(n, 0) + p
    shown = ", ".join(f"{k}={x}" for k, x in dims.items())
    cex = dataclasses.replace(cex, dims=dims)
    return dataclasses.replace(v, counterexample=cex, scope=f"counterexample at {shown}")


def _zero(node) -> bool:
    node = node.body if isinstance(node, ast.Group) else node
    return isinstance(node, ast.Num) and node.value == 0


def _members(node):
    return [n for n in ast.nodes_of(node) if isinstance(n, ast.Name) and n.sub is not None]


def _families(node):
    return {(n.base, n.sup) for n in ast.nodes_of(node) if isinstance(n, ast.Name)}


def _at(n, c) -> bool:
    return isinstance(n.sub, ast.Name) and n.sub.base == c and n.sub.sub is None and n.sub.sup is None


def _recurrent_member(scope, lhs):
    """The one recurrent member of the claim's left side (S_t of S_t, or of phi(q_t)^T S_t), or None."""
    found = [n for n in ast.nodes_of(lhs) if isinstance(n, ast.Name) and recurrence_of(scope, n) is not None]
    return found[0] if len(found) == 1 else None


def _independent(scope, lhs, summand, index, x, c, body) -> bool:
    """True when t enters the claim only through the recurrent member and through members at t of sequences
    the recurrence does not use and the claim uses at no other position (q_t of S_t q_t): such a member is
    any value z, the same at t and in the hypothesis at t - 1, and the claim is proved for every z. Other
    members are the summand's at its index (k_i, v_i) or at given positions (k_1, the same at every t)."""
    inputs = _families(body)
    members = [n for n in _members(lhs) + _members(summand) if (n.base, n.sup) != (x.base, x.sup)]
    free = {(n.base, n.sup) for n in members if _at(n, c)}
    if free & inputs:
        return False
    for n in members:
        if (n.base, n.sup) in free:
            continue  # at t, checked below to be at t everywhere
        if isinstance(n.sub, ast.Name) and n.sub.base == index and n.sub.sub is None and n.sub.sup is None:
            continue
        v = index_value(scope, n.sub, {}, n, strict=False)
        if v is None or not v.is_Integer:
            return False
    if any((n.base, n.sup) in free and not _at(n, c) for n in members):
        return False
    return not (_free_letters(lhs) & {c, index}) and c not in _free_letters(summand)


def _free_letters(node):
    """The plain letters of ``node`` outside the subscripts of its members (t of gamma^t, not of q_t)."""
    inner = {id(m) for n in _members(node) for m in ast.nodes_of(n.sub)}
    return {n.base for n in ast.nodes_of(node)
            if isinstance(n, ast.Name) and n.sub is None and n.sup is None and id(n) not in inner}


def recurrent_claim(scope, st):
    """(the left side as written, the left side with a defined name put in, the sum on the right, the
    recurrent member, its position letter, its recurrence) of ``E(S_t) = \\sum_{j=a}^{...} F(j)``, or None."""
    if not (isinstance(st, ast.Chain) and len(st.links) == 1 and st.links[0][0] == "="):
        return None
    lhs, rhs = st.first, st.links[0][2]
    shown = lhs
    defined = recurrence_of(scope, lhs) if isinstance(lhs, ast.Name) else None
    if defined is not None and not previous_members(defined[1], defined[0]) and _at(lhs, defined[0]):
        lhs = defined[1].body  # o_t of o_t = S_t q_t: its definition at t
    x = _recurrent_member(scope, lhs)
    if x is None or not isinstance(rhs, ast.Sum) or rhs.upper is None:
        return None
    c, d = recurrence_of(scope, x)
    return shown, lhs, rhs, x, c, d


def read(scope, st):
    """The induction step's two sides and its :class:`Induction`, for a claim ``E(S_t) = \\sum_{j=a}^{t} F(j)``
    of the shape the module reads; None otherwise (the claim is read, or refused, as before)."""
    claim = recurrent_claim(scope, st)
    if claim is None:
        return None
    shown, lhs, rhs, x, c, d = claim
    rec = (c, d)
    if not _at(x, c) or not (isinstance(rhs.upper, ast.Name) and rhs.upper.base == c and rhs.upper.sub is None
                             and rhs.upper.sup is None) or rhs.index == c:
        return None
    if any(recurrence_of(scope, n) is not None for n in ast.nodes_of(rhs.body) if isinstance(n, ast.Name)):
        return None
    if not _independent(scope, lhs, rhs.body, rhs.index, x, c, d.body):
        return None  # the summand or the left side depends on t otherwise: not this induction
    first = initial_index(scope, x)
    prev = previous_members(d, c)
    if first is None or not prev:
        return None
    initial = scope.defs.get(key_of(ast.Name(x.pos, x.base, ast.Num(x.pos, first), x.sup, x.font)))
    if initial is None or not _zero(initial.body):
        return None
    low = sp.Integer(1) if rhs.lower is None else index_value(scope, rhs.lower, {}, rhs, strict=False)
    if low is None or low != first + 1:
        return None
    keys = {key_of(n) for n in prev}
    if len(keys) != 1 or any(index_value(scope, n.sub, {}, n, strict=False) != letter(c) - 1 for n in prev):
        return None  # a recurrence of one previous member, at t - 1
    (key,) = keys
    own = key_of(x)
    if {key, own} & (set(scope.matrices) | set(scope.scalars)):
        return None  # a declared member: one step of the recurrence (recurrence_step.py)

    def with_value(k, value, node):
        scope.matrices[k] = value
        try:
            return scope.expr(node, {})
        finally:
            del scope.matrices[k]

    try:
        shape = sequence_shape(scope, x, rec)
        P = sp.MatrixSymbol(key, *shape)
        body = with_value(key, P, d.body)
        step_lhs = with_value(own, body, lhs)
        base = with_value(own, sp.ZeroMatrix(*shape), lhs)
        step_rhs = with_value(own, P, lhs) + scope.expr(rhs.body, {rhs.index: letter(c)})
    except DerivationError:
        return None
    if not isinstance(base, sp.MatrixExpr) or not base.doit().is_ZeroMatrix:
        return None  # the base: the left side at the zero initial condition must be 0, as the empty sum is
    hyp = f"{lhs.text().replace(x.text(), prev[0].text())} = sum_{{{rhs.index}={low}}}^{{{c}-1}} {rhs.body.text()}"
    note = (f"{shown.text()} = {rhs.text()} is read as an induction on {c}: base at the initial condition, step with "
            f"the hypothesis {hyp} substituted")
    if note not in scope.notes:
        scope.notes.append(note)
    return step_lhs, step_rhs, Induction(c, first, hyp, shown, rhs)


def attach(scope, st, steps) -> None:
    """Give the claim's step the induction step's sides to check, when the claim is read as an induction."""
    if len(steps) != 1 or not (isinstance(steps[0].lhs_expr, Exception) or isinstance(steps[0].rhs_expr, Exception)):
        return
    found = read(scope, st)
    if found is not None:
        steps[0].lhs_expr, steps[0].rhs_expr, steps[0].induction = found
