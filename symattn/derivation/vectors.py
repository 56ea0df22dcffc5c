"""Vectors as papers reason with them: rows of declared matrices, feature maps, and 1 × 1 scalars.

Katharopoulos et al. (2020) write, for Q, K ∈ R^{N×D} and V ∈ R^{N×M},

    V'_i = Σ_j φ(Q_i)ᵀ φ(K_j) V_j / Σ_j φ(Q_i)ᵀ φ(K_j),

where Q_i is the i-th row of Q taken as a column vector, φ : R^D → R^C a feature map, and
φ(Q_i)ᵀ φ(K_j) a scalar. This module reads that vocabulary for :class:`~.elaborate.Scope`:

- ``\\phi : \\mathbb{R}^{D} \\to \\mathbb{R}^{C}`` declares φ (:func:`declare_feature_map`); φ(X) of a
  matrix with D columns is φ applied to every row (N × C), φ(x) of a column of D entries is a column
  of C entries (:func:`apply_feature_map`), both as :class:`~symattn.defs.feature_map.FeatureMap`;
- ``Q_i`` for a declared Q and an undeclared letter i is row i of Q as a column vector (D × 1),
  i a position 1 <= i <= N; inside ``\\sum_{j=1}^{N}``, ``K_j`` is row j of K (:func:`row_vector`);
- a 1 × 1 matrix (φ(Q_i)ᵀ φ(K_j)) times a vector, or a vector divided by a 1 × 1 matrix, is a scalar
  product or quotient (:func:`scalar_product`, :func:`divide`);
- the two sides of a step that are a column and a row of the same length are compared as vectors
  (:func:`orient_vectors`), since the paper writes the row V'_i both ways; the step says so.
"""

from __future__ import annotations

from dataclasses import fields

import sympy as sp

from ..defs.feature_map import FeatureMap
from ..defs.numeric_nodes import DivideRows, ScaleRows
from ..defs.shapes import same_dim
from ..errors import DerivationError, NotationShapeError
from . import ast, identity, row_pairs, scalar_functions
from .label_rows import labelled_whole
from .labelled_slices import labelled_row
from .lowercase_rows import capital_row
from .symbols import ONES


def declare_feature_map(scope, st: ast.FeatureDecl) -> None:
    """``phi : R^D -> R^C``: phi is a feature map from vectors of D entries to vectors of C entries."""
    name = st.name
    taken = (name in scope.features or name in scope.functions or name in scope.matrices or name in scope.dims
             or name in scope.scalars)
    if taken:
        scope.fail(st, f"{name} is declared twice", "one declaration per name")
    D, C = scope.dim(st.domain.rows), scope.dim(st.codomain.rows)
    scope.features[name] = (D, C)
    scope.notes.append(f"{name} : R^{sp.sstr(D)} -> R^{sp.sstr(C)} is a feature map, uninterpreted (a step proved "
                       f"holds for every {name}): {name}(X) of an N × {sp.sstr(D)} matrix applies it to each row "
                       f"(N × {sp.sstr(C)}), {name}(x) of a column of {sp.sstr(D)} entries is a column of "
                       f"{sp.sstr(C)} entries")


def apply_feature_map(scope, node: ast.Call, L):
    """``phi(X)`` (every row of X) or ``phi(x)`` (a column vector), for a declared feature map phi."""
    name = node.target.text()
    if len(node.args) != 1 or isinstance(node.args[0], ast.Dots):
        scope.fail(node, f"the feature map {name} takes 1 argument, got {len(node.args)}", f"{name}(x)")
    D, C = scope.features[name]
    arg = node.args[0]
    X = scope._expr(arg, L)
    if not isinstance(X, (sp.MatrixBase, sp.matrices.expressions.matexpr.MatrixExpr)):
        scope.fail(arg, f"{name} of the scalar {arg.text()}", f"a vector of {sp.sstr(D)} entries or a matrix")
    D = sp.sympify(D).xreplace(scope.subs) if scope.subs else D
    if same_dim(X.cols, D):
        return FeatureMap(name, X, C)
    if same_dim(X.rows, D) and same_dim(X.cols, 1):
        return FeatureMap(name, X.T, C).T
    scope.fail(arg, f"{name} maps R^{sp.sstr(D)} to R^{sp.sstr(C)}, and {arg.text()} is {sp.sstr(X.rows)} × "
               f"{sp.sstr(X.cols)}: neither a column of {sp.sstr(D)} entries nor a matrix whose rows have "
               f"{sp.sstr(D)} entries", f"{name} of a vector in R^{sp.sstr(D)}, or of a matrix with {sp.sstr(D)} "
               "columns", NotationShapeError)


def rewrite_feature_calls(node, names):
    """``node`` with each product ``phi (x)`` of a declared feature map phi read as the call phi(x): the
    parser reads ``\\phi\\left(Q_i\\right)^T`` as phi times (Q_i)^T, as it reads A (B)^T, since it cannot
    know that phi is a function; so ``phi (x)^T`` becomes phi(x)^T."""
    if isinstance(node, tuple):
        return tuple(rewrite_feature_calls(x, names) for x in node)
    if not isinstance(node, ast.Node) or isinstance(node, ast.Given):
        return node
    kw = {f.name: (getattr(node, f.name) if f.name == "pos" else rewrite_feature_calls(getattr(node, f.name), names))
          for f in fields(node)}
    node = type(node)(**kw)
    if not isinstance(node, ast.Mul):
        return node
    out, fs, k = [], list(node.factors), 0
    while k < len(fs):
        f = fs[k]
        if (k + 1 < len(fs) and isinstance(f, ast.Name) and f.sub is None and f.sup is None and f.text() in names):
            arg, marks = fs[k + 1], []
            while isinstance(arg, ast.T):
                marks.append(arg.pos)
                arg = arg.arg
            if isinstance(arg, ast.Group):
                call = ast.Call(f.pos, f, (arg.body,))
                for p in reversed(marks):
                    call = ast.T(p, call)
                out.append(call)
                k += 2
                continue
        out.append(f)
        k += 1
    return out[0] if len(out) == 1 else ast.Mul(node.pos, tuple(out))


def row_vector(scope, node: ast.Name, L):
    """``Q_i``: row i of the declared (or defined) matrix Q as a column vector, or as a row under the row
    convention, or None when ``node`` is not such a row.

    The subscript is a letter: an index bound by a sum over the rows of Q (``\\sum_{j=1}^{N} K_j``), or
    an undeclared letter, read as a position 1 <= i <= N (see ``Scope.position_value``)."""
    if (row := labelled_row(scope, node, L)) is not None:  # Q_{s,i}: position i of Q_s (labelled_slices)
        return row
    node = capital_row(scope, node) or node  # q_i: row i of the declared Q (lowercase_rows)
    sub = node.sub
    if row_pairs.is_map_index(scope, sub):  # P_{\delta(i,j)}: a row picked by an index map (row_pairs)
        whole = labelled_whole(scope, node, L) or ast.Name(node.pos, node.base, None, node.sup, node.font)
        key = scope.resolve(whole.text())
        if scope.dialect != "latex" or not (key in scope.matrices or defined_matrix(scope, key)):
            return None
        row = row_pairs.free_row(scope, node, scope._expr(whole, L), sub)
        scope.rows_read += 1
        return row if scope.convention == "row" else row.T
    if not (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base.rstrip("'")) == 1):
        return None  # a letter, primed or not (K_{m'} in a sum over m')
    whole = labelled_whole(scope, node, L) or ast.Name(node.pos, node.base, None, node.sup, node.font)
    key = scope.resolve(whole.text())  # Q^c_i: row i of Q_c (label_rows)
    if (not (key in scope.matrices or defined_matrix(scope, key)) or sub.base in scope.counts
            or scope.resolve(sub.base) in scope.dims
            or sub.base in scope.family_letters.values() or scope.dialect != "latex"):
        return None  # a head index, a dimension, or the plain notation (which names rows Q_{t,:})
    X = scope._expr(whole, L)
    if sub.base in L:
        k, count = scalar_functions.value_of(L[sub.base]), L.get((sub.base, "count"))  # a_t(s) at the sum's s
        if isinstance(k, sp.MatrixBase) or getattr(k, "is_Matrix", False):
            return None
        if count is None and not getattr(scope, "decay_rows", False):
            return None  # K_m at a symbolic position is row m only in a decay's induction (decay_induction)
        n, rows = (sp.sympify(x).xreplace(scope.subs) for x in (count if count is not None else X.rows, X.rows))
        if not same_dim(n, rows):
            scope.fail(node, f"{node.text()} is row {sub.base} of {whole.text()}, which has {sp.sstr(rows)} rows, and "
                       f"the sum over {sub.base} runs to {sp.sstr(n)}", f"a sum over the {sp.sstr(rows)} rows of "
                       f"{whole.text()}", NotationShapeError)
    elif row_pairs.second_position(scope, sub, L):  # H_j beside H_i (row_pairs)
        row = row_pairs.free_row(scope, node, X, sub)
        scope.rows_read += 1
        return row if scope.convention == "row" else row.T
    else:
        k = scope.position_value(sub, X.rows, L)
        scope.check_positions(node, k, k, X.rows)
    scope.rows_read += 1
    if scope.convention == "row":  # vectors are rows: Q_n K_m^T (Jaegle et al.) multiplies two rows' entries
        note = f"{node.base}_{sub.base} and the like are rows of the matrices, read as rows (the row convention)"
        if note not in scope.notes and not any(n.endswith("read as rows (the row convention)") for n in scope.notes):
            scope.notes.append(note)
        return X[k - 1:k, :]
    note = (f"{node.base}_{sub.base} and the like are rows of the declared matrices, each read as a column vector "
            f"(row {sub.base} of {whole.text()}, transposed), as Katharopoulos et al. write them")
    if note not in scope.notes and not any(n.endswith("as Katharopoulos et al. write them") for n in scope.notes):
        scope.notes.append(note)
    scope.row_vectors = True
    return X[k - 1:k, :].T


def defined_matrix(scope, key: str) -> bool:
    """True when ``key`` is a matrix the file defines by an expression (``Q = L W_Q``), not a function of
    parameters nor a "where" clause: its rows ``Q_n`` are read as a declared matrix's are."""
    d = scope.defs.get(key)
    return d is not None and not d.params and not d.open


def _one_by_one(x) -> bool:
    return x.rows == 1 and x.cols == 1


def times_scalar(A, s):
    """A times the scalar of the 1 × 1 matrix s: A s for a column, s A for a row, else diag(s 1) A."""
    if A.cols == 1:
        return A * s
    if A.rows == 1:
        return s * A
    return ScaleRows(sp.OneMatrix(A.rows, 1) * s, A)


def scalar_product(a, b, scope=None, nodes=(None, None)):
    """The product of a 1 × 1 matrix (a scalar, as φ(Q_i)ᵀ φ(K_j)) and a matrix whose shape does not
    fit it, as the scalar times the matrix; None when neither is 1 × 1. With ``scope``, the notes say
    which factor (of ``nodes``, the two factors as written) is read as a scalar."""
    for k, (s, other) in enumerate(((a, b), (b, a))):
        if _one_by_one(s):
            if scope is not None and nodes[k] is not None:
                note = f"{nodes[k].text()} is 1 × 1, read as a scalar"
                if note not in scope.notes:
                    scope.notes.append(note)
            return times_scalar(other, s)
    return None


def inner(a, b):
    """The inner product of two columns (aᵀ b) or two rows (a bᵀ) of one shape, a 1 × 1 matrix; None for any
    other pair of shapes (two matrices: the Frobenius product, :func:`.entries.frobenius`)."""
    if not (same_dim(a.rows, b.rows) and same_dim(a.cols, b.cols)):
        return None
    if same_dim(a.cols, 1):
        return a.T * b
    return a * b.T if same_dim(a.rows, 1) else None


def dot_product(scope, a, b, left, right):
    """``a \\cdot b`` of two columns (or two rows) of one length, whose matrix product is not defined: their
    :func:`inner` product, as papers write q_i · k_j; None for any other pair of shapes (then the product is
    the matrix product, as written)."""
    if _one_by_one(a) or _one_by_one(b) or (value := inner(a, b)) is None:
        return None
    column = same_dim(a.cols, 1)
    note = (f"{left.text()} \\cdot {right.text()}: two {'columns' if column else 'rows'} of "
            f"{sp.sstr(a.rows if column else a.cols)} entries, read as their inner product (a 1 × 1 value)")
    if note not in scope.notes:
        scope.notes.append(note)
    return value


def divide(A, s):
    """A divided by the scalar of the 1 × 1 matrix s (every entry of A)."""
    if A.rows == 1:
        return DivideRows(A, s)
    if A.cols == 1:
        return DivideRows(A.T, s).T
    return DivideRows(A, sp.OneMatrix(A.rows, 1) * s)


def division_note(scope, den_node) -> None:
    note = (f"{den_node.text()} is 1 × 1, read as a scalar: a step that divides by it holds where it is nonzero")
    if note not in scope.notes:
        scope.notes.append(note)


def orient_vectors(scope, nodes, vals, rows=None):
    """Where a chain goes from a column of n entries to a row of n entries (or back) in a derivation
    that reads rows as vectors, the row is compared as the column it writes (its transpose); ``rows``
    (per expression: True when it read a row Q_i of a declared matrix) limits that to the links one of
    whose sides read such a row, so that elsewhere a row against a column stays a shape error. Returns
    the values to compare and, per link, the orientation that says so ("column = row, compared as
    vectors") or None."""
    out, said = list(vals), [None] * len(vals)
    if not getattr(scope, "row_vectors", False):
        return out, said
    for k in range(1, len(out)):
        if rows is not None and not (rows[k - 1] or rows[k]):
            continue
        a, b = out[k - 1], out[k]
        if not all(isinstance(x, sp.matrices.expressions.matexpr.MatrixExpr) for x in (a, b)):
            continue
        column_row = same_dim(a.cols, 1) and same_dim(b.rows, 1) and same_dim(a.rows, b.cols)
        row_column = same_dim(a.rows, 1) and same_dim(b.cols, 1) and same_dim(a.cols, b.rows)
        if (column_row or row_column) and not same_dim(a.rows, a.cols):
            n = a.rows if column_row else a.cols
            out[k] = b.T
            said[k] = (f"{'column = row' if column_row else 'row = column'}, compared as vectors "
                       f"({sp.sstr(n)} entries)")
    return out, said


def has_bare_ones(node) -> bool:
    """True when ``node`` holds the vector of ones written without its length (``\\mathbf{1}``)."""
    return any(isinstance(n, ast.Name) and n.base == ONES and n.sub is None and n.sup is None
               for n in ast.nodes_of(node))


def sized_by_itself(scope, term, L):
    """The value of ``term`` when every vector of ones in it is sized inside it (by an inner sum, as in
    ``P (\\mathbf{1} x^T + R) W``), else None."""
    if not any(isinstance(n, ast.Add) for n in ast.nodes_of(term)):
        return None
    try:
        return scope._expr(term, L)
    except DerivationError:
        return None


def one_argument(scope, node) -> bool:
    r"""True for ``f(X)``, a function the file does not define applied to one argument (an uninterpreted map
    of X); a call of such a function on several arguments (``\mathrm{MultiHeadAtt}(x, [x_1, \cdots, x_n])``,
    Xiong et al. 2020) is refused by name: the shape of its value is not read from the file."""
    if len(node.args) == 1 and not isinstance(node.args[0], ast.Dots):
        return True
    f = node.target.text()
    scope.fail(node, f"{f} is not defined by the file and is applied to {len(node.args)} arguments: a function "
               "the file does not define is read only as a map of one matrix or vector, of its argument's shape",
               f"a definition of {f} ({f}(X, Y) := ..., or {f}(x_i, y_j) = ... at declared arguments), or {f} of one "
               "argument")


def needs_size(scope, term) -> bool:
    """True when the sum's term ``term`` holds a 1 (no ones declared) or an identity I written without size."""
    return (scope.ones is None and has_bare_ones(term)) or identity.has_bare_identity(scope, term)


def sized_ones_term(scope, term, L, terms):
    """``dP - D \\mathbf{1}^\\top`` with D of N × 1 and dP of N × N: the ones vector of the term has the
    length that makes the term the shape of the sum's other terms (here N). Refused when no other term
    fixes it, or when the length is not a side of the term (1^T X: the product alone does not say)."""
    if not (scope.ones is None and has_bare_ones(term)):
        return identity.sized_identity_term(scope, term, L, terms)
    usage = "\\mathbf{1}_N (N entries), or a term beside it whose shape fixes the length"
    alone = sized_by_itself(scope, term, L)
    if alone is not None:  # P (1 x^T + R) W: the ones sized inside the term, by the inner sum's R
        return alone
    others = [u for u in terms if u is not term and (not has_bare_ones(u) or sized_by_itself(scope, u, L) is not None)]
    ref = scope._expr(others[0], L) if others else None
    if not (ref is not None and getattr(ref, "is_Matrix", False)):
        scope.fail(term, f"the vector of ones without its length in {term.text()}, and no other term of the "
                   "sum fixes it", usage)
    n = sp.Dummy("n_ones", integer=True, positive=True)
    scope.free_ones = n
    try:
        v = scope._expr(term, L)
    except DerivationError as e:
        if str(n) not in str(e) and "n_ones" not in str(e):
            raise
        v = None
    finally:
        scope.free_ones = None
    found = None
    if v is not None and getattr(v, "is_Matrix", False):
        for have, want in ((v.rows, ref.rows), (v.cols, ref.cols)):
            if have == n:
                found = want
    if found is None or (v.rows != n and not same_dim(v.rows, ref.rows)) or (
            v.cols != n and not same_dim(v.cols, ref.cols)):
        scope.fail(term, f"the vector of ones without its length in {term.text()}: the other terms "
                   f"({others[0].text()}, {sp.sstr(ref.rows)} \u00d7 {sp.sstr(ref.cols)}) do not fix it", usage)
    scope.notes.append(f"\U0001d7cf in {term.text()} has {sp.sstr(found)} entries: the length that gives the term "
                       f"the shape of {others[0].text()} ({sp.sstr(ref.rows)} \u00d7 {sp.sstr(ref.cols)})")
    return v.xreplace({n: found})


def pseudo_inverse(scope, node, L):
    """``A^{+}`` of a square A: the Moore-Penrose pseudo-inverse, read as an uninterpreted map of A's shape;
    a step proved holds for every such map (the pseudo-inverse among them), and a step that depends on
    what A^{+} is (A A^{+} A = A) is not proved. A non-square A (its A^{+} is the transposed shape) is refused."""
    arg = scope._expr(node.args[0], L)
    if not (getattr(arg, "is_Matrix", False) and same_dim(arg.rows, arg.cols)):
        shape = f"{sp.sstr(arg.rows)} \u00d7 {sp.sstr(arg.cols)}" if getattr(arg, "is_Matrix", False) else "a scalar"
        scope.fail(node, f"the pseudo-inverse {node.args[0].text()}^+ of {shape}: only the pseudo-inverse of a "
                   "square matrix is read (as a map of its shape)", "A^{+} with A square, or a name declared with "
                   "the shape of the pseudo-inverse")
    return scope.uninterpreted(node, L)
