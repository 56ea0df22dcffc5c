r"""Division of vectors entry by entry, where the divisor is positive: RWKV's ``wkv_t = \frac{\sum_i e^{...} \odot
v_i + e^{u+k_t} \odot v_t}{\sum_i e^{...} + e^{u+k_t}}`` (Peng et al. 2023, "all operations channel-wise").

A fraction of two matrices of one shape has one meaning, the quotient entry by entry, and it exists only where
no entry of the divisor is 0. It is read where the divisor is positive by its form, so that it exists for
every value of the names: ``e^{x}`` is positive; a sum with a positive term and no negative one is positive;
an entrywise product of positive factors is positive; a sum over positions of positive terms is at least 0
(it may be empty); a member of a recurrence whose initial condition is 0 and whose body is positive when the
previous member is at least 0 (``b_t = e^{-w} \odot b_{t-1} + e^{k_t}``) is at least 0, by induction. Any
other divisor is refused, as division by a matrix is.
"""

from __future__ import annotations

import sympy as sp

from . import ast
from .sequences import initial_index, recurrence_of
from .symbols import key_of

POSITIVE, NONNEGATIVE = 2, 1


def _is_exp(node) -> bool:
    return isinstance(node, ast.Call) and node.target.base == "exp" and len(node.args) == 1


def sign(scope, node, seen=()) -> int:
    """POSITIVE, NONNEGATIVE or 0 (unknown) for the entries of ``node``, by its form."""
    if isinstance(node, ast.Group):
        return sign(scope, node.body, seen)
    if _is_exp(node):
        return POSITIVE
    if isinstance(node, ast.Add):
        if any(s < 0 for s, _ in node.terms):
            return 0
        signs = [sign(scope, t, seen) for _, t in node.terms]
        return 0 if 0 in signs else POSITIVE if POSITIVE in signs else NONNEGATIVE
    if isinstance(node, ast.Hadamard):
        signs = [sign(scope, f, seen) for f in node.factors]
        return 0 if 0 in signs else min(signs)
    if isinstance(node, ast.Sum):
        return NONNEGATIVE if sign(scope, node.body, seen) else 0
    if isinstance(node, ast.Name) and node.sub is not None:
        return _member_sign(scope, node, seen)
    return 0


def _member_sign(scope, node, seen) -> int:
    rec = recurrence_of(scope, node)
    if rec is None or key_of(node) in seen:
        return NONNEGATIVE if key_of(node) in seen else 0  # the previous member, by the induction's hypothesis
    c, d = rec
    first = initial_index(scope, node)
    initial = None if first is None else scope.defs.get(
        key_of(ast.Name(node.pos, node.base, ast.Num(node.pos, first), node.sup, node.font)))
    body = None if initial is None else (initial.body.body if isinstance(initial.body, ast.Group) else initial.body)
    if not (isinstance(body, ast.Num) and body.value == 0):
        return 0
    prev = {key_of(n) for n in ast.nodes_of(d.body) if isinstance(n, ast.Name) and (n.base, n.sup) == (node.base,
                                                                                                       node.sup)}
    return NONNEGATIVE if sign(scope, d.body, tuple(seen) + tuple(prev)) else 0


def quotient(scope, node, num, den):
    """``num / den`` entry by entry for matrices of one shape with ``den`` positive by its form; refused else."""
    if not (getattr(num, "shape", None) == den.shape and sign(scope, node.den) == POSITIVE):
        scope.fail(node.den, f"division by the matrix {node.den.text()}", "a scalar divisor such as sqrt(d_k), or "
                   "a vector positive by its form (a sum of exponentials) dividing one of its shape entry by entry")
    note = f"{node.text()} is the quotient entry by entry, its divisor {node.den.text()} positive by its form"
    if note not in scope.notes:
        scope.notes.append(note)
    return sp.HadamardProduct(num, sp.HadamardPower(den, -1))
