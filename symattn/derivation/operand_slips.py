r"""Slips that put one declared matrix where another of the same shape belongs, for
:func:`~.diagnose.diagnose_step`.

- queries and keys swapped (two matrices swapped): every Q and every K of the right side exchanged,
  as in Katharopoulos et al.'s φ(Q)(φ(K)ᵀV) written φ(K)(φ(Q)ᵀV); any two declared matrices of one
  shape that the right side uses are tried;
- wrong matrix (wrong denominator, inside the denominator of a fraction): one name, or one row of it,
  replaced by another declared matrix of the same shape, as ∑_j φ(Q_j) written for ∑_j φ(K_j).

Each candidate is a syntax tree, read again by the scope like the other slips of the catalogue.
"""

from __future__ import annotations

from dataclasses import fields

from . import ast
from .symbols import key_of


def _whole(n: ast.Name) -> ast.Name:
    return ast.Name(n.pos, n.base, None, n.sup, n.font)


def _declared(scope) -> dict:
    """Declared matrix name (as a key) -> its shape, for the matrices the file declares whole."""
    return {k: (m.rows, m.cols) for k, m in getattr(scope, "matrices", {}).items()}


def _names_in(node, out, in_den=False):
    """(name node, inside a denominator) for every name under ``node``, in reading order."""
    if isinstance(node, tuple):
        for x in node:
            _names_in(x, out, in_den)
        return out
    if not isinstance(node, ast.Node):
        return out
    if isinstance(node, ast.Name):
        out.append((node, in_den))
        return out
    for f in fields(node):
        if f.name == "pos" or (isinstance(node, ast.Call) and f.name == "target"):
            continue
        _names_in(getattr(node, f.name), out, in_den or (isinstance(node, ast.Div) and f.name == "den"))
    return out


def _map_names(node, fn):
    """``node`` with every name n replaced by fn(n) (the function target of a call kept)."""
    if isinstance(node, tuple):
        return tuple(_map_names(x, fn) for x in node)
    if not isinstance(node, ast.Node):
        return node
    if isinstance(node, ast.Name):
        return fn(node)
    return type(node)(**{f.name: getattr(node, f.name) if f.name == "pos" or (
        isinstance(node, ast.Call) and f.name == "target") else _map_names(getattr(node, f.name), fn)
        for f in fields(node)})


def _renamed(n: ast.Name, base_key: str, by: ast.Name) -> ast.Name:
    return ast.Name(n.pos, by.base, n.sub, by.sup, by.font) if key_of(_whole(n)) == base_key else n


def operand_candidates(node, scope):
    """(slip, detail, node') for each swap of two declared matrices of one shape, then each single
    replacement of one by another, in the right side ``node``."""
    if node is None or scope is None:
        return []
    shapes = _declared(scope)
    found = _names_in(node, [])
    used = {}
    for n, _ in found:
        k = key_of(_whole(n))
        if k in shapes and k not in used:
            used[k] = _whole(n)
    out = []
    keys = list(used)
    for a in range(len(keys)):
        for b in range(a + 1, len(keys)):
            A, B = keys[a], keys[b]
            if shapes[A] != shapes[B]:
                continue
            na, nb = used[A], used[B]

            def swap(n, A=A, B=B, na=na, nb=nb):
                k = key_of(_whole(n))
                return _renamed(n, A, nb) if k == A else _renamed(n, B, na) if k == B else n

            slip = "queries and keys swapped" if {na.text(), nb.text()} == {"Q", "K"} else "two matrices swapped"
            out.append((slip, f"{na.text()} and {nb.text()} are exchanged: {_map_names(node, swap).text()} "
                        f"was meant", _map_names(node, swap)))
    for k, (n, in_den) in enumerate(found):
        A = key_of(_whole(n))
        if A not in shapes:
            continue
        for B, other in used.items():
            if B == A or shapes[B] != shapes[A]:
                continue
            fixed = _renamed(n, A, other)
            count = iter(range(len(found)))

            def one(m, k=k, fixed=fixed, count=count):
                return fixed if next(count) == k else m

            slip = "wrong denominator" if in_den else "wrong matrix"
            where = " in the denominator" if in_den else ""
            out.append((slip, f"{n.text()} should be {fixed.text()}{where}", _map_names(node, one)))
    return out
