r"""One step of a recurrence at a symbolic position, when the paper declares the previous member.

Papers state an update rule as a relation between two consecutive members and declare the previous one
as any value of its shape, ``W^{(i-1)} \in \mathbb{R}^{d_v \times d_k}`` with
``W^{(i)} = W^{(i-1)} + \beta^{(i)} (v^{(i)} - \bar{v}^{(i)}) \otimes \phi(k^{(i)})``, and then regroup the
update. Such a step is about W^{(i)} as a function of the declared W^{(i-1)}: the member at the position
letter i is read as the recurrence's body at i, once, with every earlier member the body uses read as
the declared value of its shape. A step proved so holds for every value of W^{(i-1)}, hence at every
position i (no induction is needed: nothing is unrolled); a counterexample is a value of the declared
previous member, as the paper declared it.

Only the member at the position letter itself is read so, and only when each earlier member the body
uses is a name the file declares: ``x_k`` of ``x_k = A x_{k-1} + B u_k`` with ``x_{k-1}`` undeclared,
or ``W^{(i+1)}``, is still refused (a claim about every position there needs an induction).
"""

from __future__ import annotations

from . import ast
from .symbols import key_of


def previous_members(d, c):
    """The members of the recurrence's own sequence its body ``d`` uses at a position other than c."""
    return [n for n in ast.nodes_of(d.body) if isinstance(n, ast.Name) and n.base == d.target.base
            and n.sup == d.target.sup and n.sub is not None
            and not (isinstance(n.sub, ast.Name) and n.sub.base == c)]


def declared_previous(scope, d, c) -> bool:
    """True when every earlier member the body uses is declared with its shape by the file."""
    prev = previous_members(d, c)
    return bool(prev) and all(key_of(n) in scope.matrices or key_of(n) in scope.scalars for n in prev)


def one_step(scope, node, rec, v, position):
    """The member ``node`` at the symbolic position v read as the body once, or None when this reading does not
    apply (the caller refuses); ``position`` is the value of the recurrence's own position letter."""
    c, d = rec
    if v != position or not declared_previous(scope, d, c):
        return None
    notes = scope.notes
    msg = (f"{node.text()} is read as one step of its recurrence, {d.target.text()} = {d.body.text()}, with the "
           f"declared previous member{'s' if len(previous_members(d, c)) > 1 else ''} "
           f"({', '.join(sorted({n.text() for n in previous_members(d, c)}))}) any value of its shape: a step so "
           f"proved holds at every position {c}")
    if msg not in notes:
        notes.append(msg)
    return scope.expr(d.body, {})
