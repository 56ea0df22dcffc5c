"""Rows of a matrix named with its label on top: ``Q^c_i`` for row i of ``Q_c``, as papers write them.

He et al. 2021 (DeBERTa) declare the content queries and keys as ``Q_c = H W_{q,c}``, ``K_c = H W_{k,c}``
and then write row i of ``Q_c`` as ``Q^c_i``: the label c moves up to make room for the row index. A name
``X^c_i`` is read as row i of the matrix ``X_c`` (:func:`labelled_whole`) only when

- nothing declares or defines ``X^c`` (a family ``W^Q_h``, or a matrix ``A^c`` of the file's own, keeps its
  reading),
- the file declares or defines the matrix ``X_c`` (a declaration, or ``X_c = ...``),
- the label is a lower-case word of one or two letters that is no head index, no dimension and no index
  bound where it is written (``A^h_i`` with h a head stays head h's),

and the subscript is then read as the row index of a declared matrix's row ``X_i`` is (a position
1 <= i <= rows, or the index of a sum over the rows).
"""

from __future__ import annotations

from . import ast
from .row_pairs import is_map_index
from .symbols import family_key, key_of


def labelled_whole(scope, node: ast.Name, L) -> ast.Name | None:
    """``X_c`` for the row ``X^c_i`` (the whole matrix whose row it is), or None where ``node`` is not that."""
    sup, sub = node.sup, node.sub
    letter = (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base.rstrip("'")) == 1
              and sub.base not in scope.counts and scope.resolve(sub.base) not in scope.dims)
    if not (letter or is_map_index(scope, sub)):  # Q^c_i, K^r_{\delta(i,j)}
        return None
    if (not isinstance(sup, str) or not sup.isalpha() or not sup.islower() or len(sup) > 2
            or sup in scope.counts or sup in L or scope.resolve(sup) in scope.dims or scope.dialect != "latex"):
        return None
    top = ast.Name(node.pos, node.base, None, sup, node.font)
    k = key_of(top)
    if (k in scope.matrices or k in scope.defs or k in scope.scalars or k in scope.partitions or k in scope.aliases
            or family_key(top) in scope.families or family_key(top) in scope.indexed
            or scope.superscript_family(top) is not None):
        return None
    whole = ast.Name(node.pos, node.base, ast.Name(node.pos, sup, None, None, None), None, node.font)
    w = scope.resolve(key_of(whole))
    d = scope.defs.get(w)
    if w in scope.matrices or (d is not None and not d.params and not d.open):
        note = (f"{node.base}^{sup}_i is row i of {whole.text()} (the label {sup} written on top, as He et al. "
                "write the rows of Q_c)")
        if note not in scope.notes:
            scope.notes.append(note)
        return whole
    return None
