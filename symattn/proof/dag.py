"""Walks over an expression's DAG: each distinct subexpression once.

A deep model shares its subexpressions: layer l + 1 uses layer l's output four times, so the
expression tree of L layers has about 4^L nodes while its DAG has about 10 L. SymPy's own walks
(``preorder_traversal``, ``has``, ``atoms``, ``free_symbols``) visit the tree; the functions here
visit the DAG, so that the engine's checks of a claim cost what the claim's DAG costs.

Distinct means "not the same object": memos are keyed by identity, never by equality, since
comparing two equal deep trees built apart walks both whole trees (exponential for a deep model).
Two equal subexpressions built apart are visited twice, which costs what building them cost.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.basic import Basic

from ..defs.shapes import Shapes as Shapes  # memoized shapes of matrix nodes, one walk per distinct node


def nodes(*exprs) -> list:
    """Every distinct subexpression of ``exprs`` (SymPy objects, arguments included), parents first."""
    seen: dict = {}  # id -> object (kept, so that an id is not reused while the walk runs)
    out: list = []
    stack = [sp.sympify(e) if not isinstance(e, Basic) else e for e in exprs]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen[id(e)] = e
        if not isinstance(e, Basic):
            continue
        out.append(e)
        stack.extend(reversed(e.args))
    return out


def has(expr, *types) -> bool:
    """True when a subexpression of ``expr`` is an instance of one of ``types`` or equals one of
    the objects among them (SymPy's ``has`` on the DAG)."""
    classes = tuple(t for t in types if isinstance(t, type))
    objects = [t for t in types if not isinstance(t, type)]
    return any((classes and isinstance(x, classes)) or any(x == o for o in objects) for x in nodes(expr))


def atoms(expr, *types) -> set:
    """The subexpressions of ``expr`` that are instances of ``types`` (SymPy's ``atoms`` on the DAG)."""
    return {x for x in nodes(expr) if isinstance(x, types)}


def free_symbols(*exprs) -> set:
    """The free symbols of ``exprs`` as SymPy defines them, computed once per distinct node.

    A node whose class keeps SymPy's default (the union over its arguments) gets the union of its
    arguments' memoized sets; a node with its own definition (a Sum binding its index, a matrix
    symbol that is its own free symbol) is asked for it."""
    memo: dict = {}
    default = Basic.free_symbols

    def of(e):
        if not isinstance(e, Basic):
            return set()
        if id(e) in memo:
            return memo[id(e)][1]
        if type(e).free_symbols is default and e.args:
            out = set().union(*(of(a) for a in e.args))
        else:
            out = e.free_symbols
        memo[id(e)] = (e, out)  # the object is kept, so that its id stays its own
        return out

    for x in postorder(*exprs):  # arguments first: ``of`` never recurses more than one level
        of(x)
    return set().union(*(of(e) for e in exprs)) if exprs else set()


def postorder(*exprs) -> list:
    """Every distinct subexpression of ``exprs`` (by identity), each after all of its arguments."""
    seen: dict = {}
    out: list = []
    stack = [(e if isinstance(e, Basic) else sp.sympify(e), False) for e in reversed(exprs)]
    while stack:
        e, expanded = stack.pop()
        if expanded:
            out.append(e)
            continue
        if id(e) in seen:
            continue
        seen[id(e)] = e
        stack.append((e, True))
        stack.extend((a, False) for a in reversed(e.args) if isinstance(a, Basic) and id(a) not in seen)
    return out
