"""One vector of a result, ``[\\mathrm{softmax}(QK^\\top / \\sqrt{d}) V]_n``, as papers write it.

A bracket followed by one index, ``[E]_n``, names the n-th vector of the matrix E: its row n under the
row convention (vectors are rows; Jaegle et al. 2021 write ``[\\mathrm{softmax}(QK^T/\\sqrt{F}) V]_n`` for
the output of latent n), its column n under the column convention. The index is a position 1 <= n <= the
number of vectors (checked for n below the last and at the last, as ``[\\cdot]_{t,:}`` is). An entry of a
single vector (``[x W]_i`` with x W one row) or of a matrix (``[A]_{ij}``) is not read: it is refused by
name, never taken for a row.

The node :class:`PartOf` is built by the LaTeX parser; :class:`ResultParts` is the elaboration, a mixin
of :class:`~.elaborate.Scope`.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import ast, entries
from .symbols import is_matrix, shape_text


@dataclass(frozen=True)
class PartOf(ast.Node):
    """``[E]_n``: the n-th vector of the result E (row n, row convention; column n, column convention)."""

    arg: ast.Node
    index: ast.Node

    def text(self):
        return f"[{self.arg.text()}]_{self.index.text()}"

    def latex(self):
        return f"\\left[{self.arg.latex()}\\right]_{{{self.index.latex()}}}"


def is_plain_index(sub) -> bool:
    """A subscript that names one vector: a letter (n, t, t'), a number, or t - 1 (no pair i,j)."""
    if isinstance(sub, ast.Num):
        return True
    if isinstance(sub, ast.Index):
        return is_plain_index(sub.left) and is_plain_index(sub.right)
    return isinstance(sub, ast.Name) and sub.sub is None and len(sub.base) == 1


@dataclass(frozen=True)
class EntryOf(ast.Node):
    """``(P_l)_{h,h'}``: the entry (row, column) of a matrix the file declares (Shazeer et al. 2020 write
    the mixing weights of talking-heads attention so): the 1 × 1 slice, a scalar where it multiplies."""

    matrix: ast.Node
    row: ast.Node
    col: ast.Node

    def text(self):
        return f"({self.matrix.text()})_{{{self.row.text()},{self.col.text()}}}"

    def latex(self):
        return f"({self.matrix.latex()})_{{{self.row.latex()},{self.col.latex()}}}"


def _index_letter(sub) -> bool:
    """One index of an entry: a number, a letter (primed or not: h, h'), or such an index plus or minus one."""
    if isinstance(sub, ast.Num):
        return True
    if isinstance(sub, ast.Index):
        return _index_letter(sub.left) and _index_letter(sub.right)
    return (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base.rstrip("'")) == 1
            and sub.base[0].isalpha())


def entry_of(group, sub, refuse):
    """The node for ``(X)_{sub}`` after parentheses: an entry (X)_{i,j} of a named matrix X, or ``refuse()``."""
    body = group.body
    if isinstance(sub, ast.ParamIndex):  # {H,h'}: a capital first index is parsed as a label
        sub = ast.Labels(sub.pos, (sub.label, sub.index))
    if entries.is_result(body) and _index_letter(sub):  # (A B)_n: one vector of a result, as [A B]_n
        if (softmax := entries.unlabelled_softmax(body)) is not None:
            return refuse(*entries.softmax_axis_refusal(body, softmax, sub))
        return PartOf(group.pos, body, sub)
    sub = entries.letter_pair(sub)  # (A A^T)_{ij}: two index letters written together (entries)
    if (isinstance(sub, ast.Labels) and len(sub.parts) == 2 and all(_index_letter(p) for p in sub.parts)
            and (isinstance(body, ast.Name) or entries.is_result(body))):
        return EntryOf(group.pos, body, *sub.parts)
    return refuse()


class ResultParts:
    """The elaboration of :class:`PartOf` for :class:`~.elaborate.Scope`."""

    def _partof(self, node, L):
        v = self._expr(node.arg, L)
        rows = self.convention == "row"
        what = "row" if rows else "column"
        if not is_matrix(v):
            self.fail(node, f"{node.text()} takes a {what} of the scalar {node.arg.text()}", "a matrix")
        length, across = (v.rows, v.cols) if rows else (v.cols, v.rows)
        if length == 1 and across != 1:
            self.fail(node, f"{node.text()} would be an entry of the {shape_text(v)} vector {node.arg.text()}; "
                      "entries of a vector are not read", f"the whole vector {node.arg.text()}, or a {what} "
                      "[\\cdot]_n of a matrix with several")
        k = entries.bound(L, node.index)  # \sum_{t'} (A B)_{t'}: an index of the sum (entries)
        if k is None:
            k = self.position_value(node.index, length, L)
            self.check_positions(node, k, k, length)
        else:
            entries.check_bound(self, node, node.index, length, L)
        note = (f"{node.text()} is {what} {node.index.text()} of {node.arg.text()} (the {what}s are its vectors "
                f"under the {self.convention} convention)")
        if note not in self.notes:
            self.notes.append(note)
        return v[k - 1:k, :] if rows else v[:, k - 1:k]


    def _entryof(self, node, L):
        """``(P_l)_{h,h'}``: entry (h, h') of the declared matrix P_l, h bound by a sum over the heads (or a
        number), h' a free position 1 <= h' <= the rows (or columns) it indexes."""
        if isinstance(node.matrix, ast.Name) and not self.is_declared_matrix(node.matrix):
            self.fail(node, f"{node.text()} is an entry of {node.matrix.text()}, which the file does not declare as "
                      "a matrix", "an entry (A)_{i,j} of a declared matrix A")
        v = self._expr(node.matrix, L)
        ks = []
        for sub, length in ((node.row, v.rows), (node.col, v.cols)):
            if isinstance(sub, ast.Name) and sub.base in L:
                k = L[sub.base]
                if not isinstance(k, sp.Expr):
                    self.fail(sub, f"{sub.text()} in {node.text()} is not an index", "an index bound by a sum")
                entries.check_bound(self, node, sub, length, L)
            else:
                k = self.position_value(sub, length, L)
                self.check_positions(node, k, k, length)
            ks.append(k)
        if not is_matrix(v):
            self.fail(node, f"{node.text()} is an entry of the scalar {node.matrix.text()}", "an entry of a matrix")
        what = "the declared" if isinstance(node.matrix, ast.Name) else "the result"
        note = f"({node.matrix.text()})_{{i,j}} is the entry (i, j) of {what} {node.matrix.text()}, a scalar"
        if note not in self.notes:
            self.notes.append(note)
        return v[ks[0] - 1:ks[0], ks[1] - 1:ks[1]]  # 1 × 1, read as a scalar where it multiplies


def entry_refusal(node) -> str:
    """The message for ``[E]_{ij}`` and other subscripts after a bracket that are not one index."""
    return (f"a subscript after [{node.text()}]: only one vector of a result is read, [\\cdot]_n (row n, "
            "row convention; column n, column convention) or [\\cdot]_{t,:}")




# (P_l)_{h,h'}, (\mathrm{softmax}(K) \odot V)_{t'}: a subscript after parentheses is not read, since it is an
# entry of a matrix as often as one vector of a result, and the axis of a softmax inside it (over the positions
# t' that the subscript names, or the row convention's) is what the reader cannot tell.
PAREN_SUBSCRIPT = ("a subscript after parentheses, (\\cdot)_{i} or (\\cdot)_{i,j}, is not read: it may be an entry "
                   "of a matrix or one vector of a result",
                   "[\\cdot]_n for one vector of a result (row n, row convention; column n, column convention), or "
                   "the whole matrix")
