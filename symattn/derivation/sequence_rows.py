r"""A sequence summed over symbolically many of its members, read as the rows of one matrix.

Papers declare a sequence of vectors, ``x_1, \ldots, x_n \in \mathbb{R}^{d}`` or by its generic member
``x_i \in \mathbb{R}^{d_x}``, and then sum over its members: Kobayashi et al. (2020) write
``y_i = \sum_{j=1}^{n} \alpha_{i,j} f(x_j)``, Shaw et al. (2018) normalize with ``\sum_{k=1}^{n} \exp e_{ik}``.
A sequence of n vectors of d entries is an n × d matrix: its members are the rows (each read in the
declared orientation: a column vector stays a column). So where a file sums over its members with a
symbolic number of terms, every member of the sequence is a row of that one matrix:

- ``x_j`` with j the index of the sum is row j, as for the rows of a declared matrix;
- ``x_i`` at a free letter is row i, a position 1 <= i <= n, and a member at a second free letter is a
  free row, checked again at the first position (:mod:`.row_pairs`);
- ``x_2`` is row 2 of the n rows.

The upper limit of the sum is the length of the sequence: the declared length n of ``x_1, \ldots, x_n``,
or, when the letter is named nowhere else, a dimension. A member written by index arithmetic
(``x_{i-1}``) beside such a sum is refused by name.
"""

from __future__ import annotations

import sympy as sp

from . import ast
from .symbols import dimension_symbol, family_key, is_matrix, key_of

#: the base under which the matrix of the rows of a sequence is kept (no LaTeX name writes it)
HIDDEN = "\u27e8{}\u27e9"


def _letter(n) -> str | None:
    if isinstance(n, ast.Name) and n.sub is None and n.sup is None and len(n.base) == 1 and n.base.isalpha() \
            and n.base.islower():
        return n.base
    return None


def _sums(scope, stmts):
    for st in stmts:
        for n in ast.nodes_of(st):
            up = n.upper if isinstance(n, ast.Sum) and getattr(n, "lower", None) is None else None
            if _letter(up) is not None or (isinstance(up, ast.Name) and up.sub is None and up.sup is None
                                           and len(up.base) == 1 and up.base in scope.dims):
                yield n


def note_row_sequences(scope, stmts, generic_letters):
    """Find the sequences of vectors that a sum of symbolically many terms runs over (a member at the sum's
    index letter anywhere in the file) and keep each as the rows of one matrix (see the module's text)."""
    rows = scope.__dict__.setdefault("row_sequences", {})
    sums = [s for s in _sums(scope, stmts) if s.upper.base not in scope.counts and s.index not in scope.counts]
    if not sums:
        return
    names = [n for st in stmts for n in ast.nodes_of(st) if isinstance(n, ast.Name) and _letter(n.sub)]
    lengths = scope.__dict__.get("sequence_lengths", set())
    for s in sums:
        _pairs(scope, s, stmts, rows)
        for n in names:
            fk = family_key(n)
            if n.sub.base != s.index or fk in rows or fk in scope.families or fk in scope.indexed:
                continue
            generic = generic_letters(scope, n)
            if not generic or any(table is not scope.matrices for table in generic.values()):
                continue
            c = next(iter(generic))
            if c == s.index and fk not in lengths:
                continue  # the declared generic member itself summed over: its own reading applies
            value = scope.matrices[f"{n.base}_{c}" + (f"^{n.sup}" if n.sup else "")]
            if not (is_matrix(value) and 1 in value.shape):
                continue
            n_rows = _length(scope, s, generic)
            if n_rows is None:
                continue
            up = s.upper.base
            column = value.shape[1] == 1 and value.shape[0] != 1
            d = value.shape[0] if column else value.shape[1]
            label = f"{n.base}_{{1..{up}}}" + (f"^{n.sup}" if n.sup else "")
            rows[fk] = (sp.MatrixSymbol(label, n_rows, d), column)
            scope.notes.append(f"the members of {n.base}{'^' + n.sup if n.sup else ''} are summed over in "
                               f"\\sum_{{{s.index}=1}}^{{{up}}}: the sequence is read as the {up} rows of one "
                               f"{up} × {sp.sstr(d)} matrix, {n.base}_{s.index} its row {s.index}"
                               + (" (a column vector)" if column else ""))


def _length(scope, s, generic=()) -> sp.Expr | None:
    """The number of rows of a sequence the sum ``s`` runs over: its upper limit, a dimension."""
    up = s.upper.base
    if up not in scope.dims:
        if any(up in t for t in (scope.matrices, scope.scalars, scope.defs)) or up in generic:
            return None
        scope.dims[up] = dimension_symbol(up)
    return scope.dims[up]


def _pairs(scope, s, stmts, rows):
    """``a^V_{ij}`` declared as one vector with the subscript ij, where a sum over j of symbolically many terms
    uses it (Shaw et al. 2018): one vector for every pair, the members a_{i1}, ..., a_{in} at the first letter i
    the rows of one matrix."""
    for st in stmts:
        for n in ast.nodes_of(st):
            sub = n.sub if isinstance(n, ast.Name) else None
            if not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 2
                    and sub.base.isalpha() and sub.base.islower() and sub.base[1] == s.index
                    and sub.base[0] != s.index):
                continue
            fk = family_key(n)
            value = scope.matrices.get(key_of(n))
            if fk in rows or value is None or not (is_matrix(value) and 1 in value.shape):
                continue
            n_rows = _length(scope, s)
            if n_rows is None:
                continue
            column = value.shape[1] == 1 and value.shape[0] != 1
            d = value.shape[0] if column else value.shape[1]
            first = sub.base[0]
            label = f"{n.base}_{{{first},1..{s.upper.base}}}" + (f"^{n.sup}" if n.sup else "")
            rows[fk] = (sp.MatrixSymbol(label, n_rows, d), column, first)
            scope.notes.append(f"{n.text()}, one vector for each pair {first}, {s.index}, is summed over {s.index} in "
                               f"\\sum_{{{s.index}=1}}^{{{s.upper.base}}}: its members at {first} are read as the "
                               f"{s.upper.base} rows of one matrix, {n.text()} its row {s.index}")


def member_row(scope, node, L, row_vector):
    """The member ``node`` of a sequence read as rows (:func:`note_row_sequences`), or None."""
    rows = scope.__dict__.get("row_sequences")
    if not rows or not isinstance(node, ast.Name) or node.sub is None or family_key(node) not in rows:
        return None
    X, column, *pair = rows[family_key(node)]
    sub = node.sub
    if pair:  # a_{ik}: row k of the matrix of the members at the first letter i
        if not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 2
                and sub.base[0] == pair[0]):
            scope.fail(node, f"{node.text()}: the members of {family_key(node)} summed over are read at the first "
                       f"letter {pair[0]} of their subscript only", f"{node.base}_{{{pair[0]}j}}")
        sub = ast.Name(sub.pos, sub.base[1], None, None, "")
    hidden = HIDDEN.format(family_key(node))
    scope.matrices.setdefault(hidden, X)
    last = isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and sub.base not in L \
        and scope.resolve(sub.base) in scope.dims
    if isinstance(sub, ast.Num):
        k = sub.value
        scope.check_positions(node, k, k, X.rows)
        row = X[k - 1:k, :]
    elif last and scope.dims[scope.resolve(sub.base)] == X.rows:  # x_n: the last member, row n
        row = X[X.rows - 1:X.rows, :]
    elif last:
        scope.fail(node, f"{node.text()}: the member at the dimension {sub.base} of the sequence {node.base}, whose "
                   f"members are the {sp.sstr(X.rows)} rows of one matrix, is not read",
                   f"the member at a position letter ({node.base}_j), at a number, or the last, "
                   f"{node.base}_{sp.sstr(X.rows)}")
    elif _letter(sub) is not None or (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None
                                      and len(sub.base.rstrip("'")) == 1):
        conv, before = scope.convention, len(scope.notes)
        scope.convention = "row"  # the matrix holds the members as its rows, whatever the orientation
        try:
            row = row_vector(scope, ast.Name(node.pos, hidden, sub, None, ""), L)
        finally:
            scope.convention = conv
            _own_words(scope, before, hidden, node)
        if row is None:
            return None
    else:
        scope.fail(node, f"{node.text()}, a member by index arithmetic of the sequence {node.base} whose members a "
                   "sum of symbolically many terms runs over, is not read",
                   f"the member at a letter ({node.base}_j) or at a number ({node.base}_1)")
    return row.T if column else row


def _own_words(scope, before, hidden, node):
    """The notes the rows of the hidden matrix added, in the sequence's own names."""
    fk = family_key(node)
    for k in range(before, len(scope.notes)):
        note = scope.notes[k].replace(hidden, fk)
        if note.endswith("read as rows (the row convention)"):
            note = f"{fk}_j and the like are the rows of the matrix of the sequence {fk}, each a member as declared"
        scope.notes[k] = note
    scope.notes[before:] = [n for k, n in enumerate(scope.notes[before:]) if n not in scope.notes[:before + k]]
