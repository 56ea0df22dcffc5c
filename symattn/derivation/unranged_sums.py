"""A sum with no range over the members of a sequence: ``\\sum_{s} a_t(s) \\bar{h}_s`` (Luong et al. 2015 sum
over the source states \\bar{h}_s and never say how many there are).

``\\sum_s`` (or ``\\sum_{s'}``) whose index is no head index and whose summand holds members of one declared
sequence at that index (``\\bar{h}_s`` of a declared generic member ``\\bar{h}_s \\in \\mathbb{R}^{d}``) is the sum
over every member of that sequence: it is read as ``\\sum_{s=1}^{n}`` with n a count of members the file does
not name (a symbolic dimension, the same for every such sum over that sequence), so a step proved holds for
every number of members. A summand that holds members of two sequences at the index is refused: their
numbers of members are not given, and need not be one.
"""

from __future__ import annotations

from dataclasses import fields, replace

from ..errors import DerivationError
from . import ast
from .sequences import generic_letters
from .symbols import family_key, key_of

COUNT_LETTERS = "nmlkpqruvwz"


def read_unranged_sums(scope, stmts) -> list:
    """``stmts`` with each sum of no range over the members of one declared sequence given its range."""
    sums = [n for st in stmts for n in ast.nodes_of(st) if isinstance(n, ast.Sum) and n.upper is None
            and n.lower is None and n.index not in scope.counts]
    if not sums:
        return stmts
    counts = {}  # family key -> its count letter
    ranges = {}  # id(sum) -> the count letter
    for s in sums:
        families = _families(scope, s)
        if len(families) > 1:
            a, b = sorted(families)[:2]
            raise DerivationError(
                f"the sum over {s.index} has no range, and its summand holds members of two sequences, "
                f"{families[a]} and {families[b]}, whose numbers of members the file does not give",
                s.pos[0], s.pos[1], f"\\sum_{{{s.index}=1}}^{{n}}, with n the number of members of both")
        if not families:
            continue  # the sum's own message applies (no range, and none declared)
        (fk, written), = families.items()
        if fk not in counts:
            counts[fk] = _fresh_letter(stmts, set(counts.values()))
            if counts[fk] is None:
                continue
            scope.notes.append(f"\\sum_{{{s.index}}} has no range: read as the sum over every member {written} of the "
                               f"sequence, {s.index} = 1, ..., {counts[fk]} ({counts[fk]}, the number of members, "
                               "is not given by the file: a step proved holds for every number of members)")
        ranges[id(s)] = counts[fk]
        scope.__dict__.setdefault("sequence_lengths", set()).add(fk)  # h̄_1, ..., h̄_n: the sequence's members
    if not ranges:
        return stmts
    return [_rewrite(st, ranges) for st in stmts]


def _families(scope, s) -> dict:
    """family key -> the member as written, for the members of declared sequences at the sum's index."""
    out = {}
    for n in ast.nodes_of(s.body):
        if not (isinstance(n, ast.Name) and isinstance(n.sub, ast.Name) and n.sub.base == s.index
                and n.sub.sub is None and n.sub.sup is None):
            continue
        generic = generic_letters(scope, n)
        if generic and all(table is scope.matrices for table in generic.values()):
            out.setdefault(family_key(n), n.text())
    return out


def _fresh_letter(stmts, taken):
    used = {n.base for st in stmts for n in ast.nodes_of(st) if isinstance(n, ast.Name)}
    used |= {s.index for st in stmts for s in ast.nodes_of(st) if isinstance(s, ast.Sum)}
    used |= {key_of(n) for st in stmts for n in ast.nodes_of(st) if isinstance(n, ast.Name)}
    return next((c for c in COUNT_LETTERS if c not in used and c not in taken), None)


def _rewrite(node, ranges):
    if isinstance(node, tuple):
        return tuple(_rewrite(x, ranges) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    kw = {f.name: (getattr(node, f.name) if f.name == "pos" else _rewrite(getattr(node, f.name), ranges))
          for f in fields(node)}
    out = type(node)(**kw)
    if isinstance(node, ast.Sum) and id(node) in ranges:
        out = replace(out, upper=ast.Name(node.pos, ranges[id(node)]))
    return out
