"""No identity by name: two different objects of a claim that print alike are refused.

SymPy identifies a MatrixSymbol by its name, and symattn's evaluation gives each input matrix,
permutation and score function its values by the printed name. So two different objects that print
alike (a MatrixSymbol ``W^Q_2`` beside the member 2 of ``Family("W^Q", ...)``, a Permutation and a
MatrixSymbol both named P, a dimension n and a plain scalar symbol n) would be silently merged or
silently kept apart in a way the reader cannot see. :func:`check_distinct_names` refuses them, and
it is run on the claim as given and again after every substitution of concrete dimensions.

The engine's own symbols (bound indices, exp atoms, entry symbols) are of classes of their own or
Dummies, so they can never equal a user's symbol; they are not named objects of the claim.
"""

from __future__ import annotations

import re

import sympy as sp

from ..defs.dims import BoundIndex
from ..defs.heads import FamilyMember
from ..defs.permutation import Permutation, PermutationSymbol
from ..defs.score import Score
from ..defs.shapes import show_shape
from ..errors import ClaimError
from . import dag


def named_objects(*exprs) -> dict:
    """printed name -> {(kind, object)} for every object of the claims that is known by its name."""
    out: dict = {}

    def add(name, kind, obj):
        out.setdefault(name, set()).add((kind, obj))

    for x in dag.nodes(*exprs):
        if isinstance(x, sp.MatrixSymbol):
            add(x.name, "matrix", x)
        elif isinstance(x, FamilyMember):
            add(x.name, "family member", x)
        elif isinstance(x, Permutation):
            add(x.name, "permutation", x)
        elif isinstance(x, Score):
            add(str(x.function), "score function", x.function)
    for s in dag.free_symbols(*exprs):
        if isinstance(s, sp.Symbol) and not isinstance(s, (BoundIndex, PermutationSymbol)):
            add(sp.sstr(s), "scalar", s)
    return out


def _show(kind, obj) -> str:
    if kind in ("matrix", "family member", "permutation"):
        return f"the {kind} {sp.sstr(obj)} ({show_shape(obj)})"
    if kind == "scalar":
        facts = ", ".join(sorted(k for k, v in obj.assumptions0.items() if v and k in ("integer", "positive")))
        return f"the scalar {sp.sstr(obj)}" + (f" ({facts})" if facts else " (no assumptions)")
    return f"the {kind} {obj}"


def check_distinct_names(*exprs, where: str = "verify") -> None:
    """Raise :class:`ClaimError` when two different objects of ``exprs`` print alike, or when a
    matrix is named like a member of a head-indexed family of the claim (``W^Q_2`` beside ``W^Q_h``),
    which the two would become once the head count is concrete."""
    named = named_objects(*exprs)
    for name, objs in named.items():
        objects = {o for _, o in objs}
        if len(objects) > 1:
            shown = "; ".join(sorted(_show(k, o) for k, o in objs))
            raise ClaimError(f"{where}: two different objects are both named {name}: {shown}; rename one")
    families = {x.family_name for _, objs in named.items() for k, x in objs
                if k == "family member" and not x.index.is_Integer}
    for fam in families:
        pattern = re.compile(re.escape(fam) + r"_(\d+|\(.*\))$")
        for name, objs in named.items():
            for kind, obj in objs:
                if kind != "family member" and pattern.match(name):
                    raise ClaimError(
                        f"{where}: {_show(kind, obj)} is named like a member of the family {fam} "
                        f"({fam}_h for h = 1..H), which it would be confused with once H is concrete; "
                        "rename it")
