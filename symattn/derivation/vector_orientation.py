"""Vectors a row-convention file writes as columns.

Under ``%: convention: row`` a vector declared bare, ``x \\in \\mathbb{R}^{d}``, is read as a row (1 × d): the
convention says how the file writes its vectors (``q_i k_j^\\top``, ``x W^Q``). Some papers keep rows for the
attention formula (Q, K ∈ R^{L×d}, softmax(QK^⊤)V) and write their other vectors as columns, as linear algebra
does: Choromanski et al. (2021) define the softmax kernel SM(x, y) = exp(x^⊤ y) for x, y ∈ R^d. Read as rows,
x^⊤ y would be the d × d outer product, which the paper never means.

:func:`written_as_columns` reads how the file writes its bare vectors, from the products it writes with
them:

- as columns: ``x^\\top y`` (a transposed vector before a vector of its length: the inner product of columns),
  ``x^\\top W`` and ``W x`` (W a declared matrix);
- as rows: ``x y^\\top``, ``x W`` and ``W x^\\top``;
- of two lengths (x ∈ R^d, v ∈ R^m), ``x^\\top v`` can only be the outer product of rows, ``x v^\\top`` that of
  columns.

The bare vectors are read as columns only when the file writes them as columns and never as rows; a file
that writes both (``x^\\top y`` beside ``x W``) keeps the row convention, as does one that writes neither.
Vectors declared with their shape (``\\mathbb{R}^{1 \\times d}``) keep that shape.
"""

from __future__ import annotations

from . import ast
from .symbols import family_key, key_of


def _strip(n):
    while isinstance(n, ast.Group):
        n = n.body
    return n


def _strip_t(n):
    n = _strip(n)
    return _strip(n.arg) if isinstance(n, ast.T) else n


def _kind(n, vectors, matrices):
    """("vector" | "matrix" | None, transposed) for one factor of a product."""
    n, top = _strip(n), False
    if isinstance(n, ast.T):
        n, top = _strip(n.arg), True
    if isinstance(n, ast.Name):
        if key_of(n) in matrices or family_key(n) in matrices:
            return "matrix", top
        if n.base in vectors:
            return "vector", top
    return None, top


def _evidence(stmts, vectors, matrices):
    """(places written as columns, places written as rows): the text of each product that shows it."""
    columns, rows = [], []
    for st in stmts:
        if isinstance(st, ast.Declare):
            continue
        for n in ast.nodes_of(st):
            if not isinstance(n, ast.Mul):
                continue
            for a, b in zip(n.factors, n.factors[1:]):
                (ka, ta), (kb, tb) = _kind(a, vectors, matrices), _kind(b, vectors, matrices)
                if ka == "vector" and kb in ("vector", "matrix"):  # x^T y, x^T W / x y^T, x W
                    if kb == "vector" and ta == tb:
                        continue  # x y or x^T y^T: no product of vectors, the reader says so
                    column = ta
                    if kb == "vector" and vectors[_strip_t(a).base] != vectors[_strip_t(b).base]:
                        column = not ta  # u^T v of two lengths is an outer product: of rows (u^T v), of columns
                    (columns if column else rows).append(f"{a.text()} {b.text()}")
                elif ka == "matrix" and kb == "vector":  # W x / W x^T
                    (rows if tb else columns).append(f"{a.text()} {b.text()}")
    return columns, rows


def written_as_columns(stmts) -> tuple[set, str]:
    """The bases of the bare vectors (declared in R^d) of a row-convention document that it writes as
    columns, and the product that shows it; (set(), "") when the file writes them as rows, or both ways, or
    neither."""
    vectors, matrices = {}, set()  # the base of each bare vector -> its length as written
    for st in stmts:
        if isinstance(st, ast.Declare) and st.shape.rows is not None:
            for n in st.names:
                if st.shape.vector:
                    vectors[n.base] = st.shape.rows.text()
                else:
                    matrices.update((key_of(n), family_key(n)))
    if not vectors:
        return set(), ""
    columns, rows = _evidence(stmts, vectors, matrices)
    if columns and not rows:
        return set(vectors), columns[0]
    return set(), ""


def orient_bare_vectors(scope, stmts) -> None:
    """Under the row convention, mark the bare vectors the file writes as columns (``scope.column_vectors``,
    read by ``declare``) and say so in the notes."""
    if scope.convention != "row":
        return
    bases, shown = written_as_columns(stmts)
    scope.column_vectors = bases
    if bases:
        names = ", ".join(sorted(bases))
        scope.notes.append(f"{names}: vectors declared in R^n are read as columns (n \u00d7 1) in this row-convention "
                           f"file: it writes {shown}, a transposed vector before a vector or matrix, as linear "
                           "algebra writes columns (x^T y the inner product), and never a vector as a row "
                           "(x W, x y^T); its matrices keep their rows")
