r"""Rows of a declared matrix written with its lower-case letter: ``q_i`` for row i of ``Q``.

Papers that declare ``Q \in \mathbb{R}^{n \times d}`` in the row convention write its rows with the
lower-case letter: Xiong et al. (2021, Nyströmformer) average ``q_i`` over a segment of positions, and
``q_i`` is row i of Q, as ``Q_i`` is. A name ``x_i`` is read as row i of the declared matrix ``X`` (then
as :func:`.vectors.row_vector` reads ``X_i``: the index of a sum over the rows, or a position
1 <= i <= rows) only when

- the file is in the row convention (a column-convention file's ``q_i`` would be a column of Q),
- the letter is one lower-case letter (a decoration such as ``\tilde{q}`` carried over to ``\tilde{Q}``),
  its subscript one letter, with nothing on top,
- the file declares the matrix ``X`` (a declaration, or a definition ``X = ...``),
- the file declares and defines nothing under the lower-case letter itself (no ``x``, ``x_j``, ``x_1``,
  no family ``x_h``): a name of the file's own keeps its reading.

>>> from symattn.derivation.latex_document import check_latex
>>> text = (r"%: convention: row" "\n" r"$$ Q \in \mathbb{R}^{n \times d} $$" "\n"
...         r"$$ \sum_{i=1}^{n} q_i = \sum_{i=1}^{n} Q_i $$")
>>> [s.status for s in check_latex(text).steps]
['proved']
"""

from __future__ import annotations

import unicodedata

from . import ast
from .symbols import key_of


def _letter(base: str) -> bool:
    """One lower-case letter, possibly with combining decorations (q, q̃, q̂)."""
    return (len(base) >= 1 and base[0].isalpha() and base[0].islower() and base[0].isascii()
            and all(unicodedata.combining(ch) for ch in base[1:]))


def _head(key: str) -> str:
    return key.split("_", 1)[0].split("^", 1)[0].split("/", 1)[0]


def _names_the_letter(scope, base: str) -> bool:
    """True when the file declares or defines any name under the letter ``base`` (x, x_j, x_1, x_h, x^T)."""
    tables = (scope.matrices, scope.defs, scope.scalars, scope.families, scope.indexed, scope.dims,
              scope.functions, scope.features, getattr(scope, "partitions", {}))
    return any(_head(k) == base for table in tables for k in table)


def capital_row(scope, node):
    """``X_i`` for the row ``x_i`` of the declared matrix X (see above), or None."""
    sub = node.sub
    if (getattr(scope, "dialect", None) != "latex" or getattr(scope, "convention", None) != "row"
            or not isinstance(node, ast.Name) or node.sup is not None or not _letter(node.base)
            or not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None
                    and len(sub.base.rstrip("'")) == 1)):
        return None
    capital = node.base[0].upper() + node.base[1:]
    whole = ast.Name(node.pos, capital, None, None, node.font)
    k = scope.resolve(key_of(whole))
    d = scope.defs.get(k)
    if not (k in scope.matrices or (d is not None and not d.params and not d.open)):
        return None
    if _names_the_letter(scope, node.base):
        return None
    note = (f"{node.base}_{sub.base} is row {sub.base} of {capital} (the rows of a declared matrix written with its "
            "lower-case letter)")
    if note not in scope.notes:
        scope.notes.append(note)
    return ast.Name(node.pos, capital, sub, None, node.font)
