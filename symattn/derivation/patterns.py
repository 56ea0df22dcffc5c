"""Ellipsis patterns: ``e_1, \\dots, e_H`` is read by anti-unifying its first and last elements into one
pattern with a placeholder index (:data:`~.symbols.HOLE`), then substituting each index into it."""

from __future__ import annotations

from dataclasses import fields

from . import ast
from .symbols import HOLE


def short_text(node) -> str:
    s = node.text()
    return s if len(s) <= 40 else s[:39] + "…"


def show_pattern(pat) -> str:
    return substitute(pat, ast.Name((0, 0), "k")).text()


def anti_unify(first, last):
    """The common pattern of ``first`` (index 1) and ``last`` (index N), and N; or (None, None)."""
    found = []

    def walk(a, b):
        if a == b:
            return a
        if isinstance(a, ast.Num) and a.value == 1 and isinstance(b, (ast.Name, ast.Num, ast.Index)):
            found.append(b)
            return ast.Name(a.pos, HOLE)
        if type(a) is not type(b) or not isinstance(a, ast.Node):
            raise ValueError
        kw = {}
        for f in fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if f.name == "pos":
                kw[f.name] = x
            elif isinstance(x, tuple) and isinstance(y, tuple):
                if len(x) != len(y):
                    raise ValueError
                kw[f.name] = tuple(walk_any(p, q) for p, q in zip(x, y))
            else:
                kw[f.name] = walk_any(x, y)
        return type(a)(**kw)

    def walk_any(x, y):
        if isinstance(x, ast.Node):
            return walk(x, y)
        if isinstance(x, tuple) and isinstance(y, tuple) and len(x) == len(y):
            return tuple(walk_any(p, q) for p, q in zip(x, y))
        if x != y:
            raise ValueError
        return x

    try:
        pat = walk(first, last)
    except ValueError:
        return None, None
    if not found or any(u != found[0] for u in found):
        return None, None
    return pat, found[0]


def substitute(node, value):
    """``node`` with the placeholder index replaced by ``value``."""
    if isinstance(node, ast.Name) and node.base == HOLE:
        return value
    if isinstance(node, tuple):
        return tuple(substitute(x, value) for x in node)
    if not isinstance(node, ast.Node):
        return node
    return type(node)(**{f.name: (getattr(node, f.name) if f.name == "pos"
                                  else substitute(getattr(node, f.name), value)) for f in fields(node)})
