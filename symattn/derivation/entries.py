r"""Entries of matrices and of results, the trace and the Frobenius norm, as papers write them.

Lin et al. (2017) expand their penalization term
``\left\| AA^T - I \right\|_F^2 = \mathrm{tr}((AA^T - I)(AA^T - I)^T)`` and write it again as sums of
squared entries, ``\sum_{i=1}^{r} \sum_{j=1}^{r} \left(AA^T\right)_{ij}^2 - 2 \sum_{i=1}^{r}
\sum_{j=1}^{n} A_{ij}^2 + r``. Read here:

- ``(E)_{ij}`` and ``(E)_{i,j}`` after parentheses: the entry (i, j) of the result E (the subscript of two
  index letters, written together or with a comma); ``A_{ij}`` of a declared matrix A, when i and j are both
  indices of enclosing sums (a name ``A_{ij}`` that the file declares stays that name). An index bound by a
  sum must run over no more than the rows (or columns) it indexes.
- ``\mathrm{tr}(X)`` (also ``\operatorname{tr}``, ``\mathrm{Tr}``, ``\mathrm{trace}``) of a square matrix X:
  the sum of its diagonal entries, ``\sum_k X_{kk}``.
- the Frobenius inner product of two matrices, ``\langle A, B \rangle = \sum_{i,j} A_{ij} B_{ij}``, and so
  ``\|A\|_F^2``: sums of entries, the form in which the engine compares them with the sums a paper writes.

A double subscript that is not an entry, ``\mathbf{q}_{t,i}^{C}`` beside a declared ``\mathbf{q}_t^{C}`` (head
i's part of it, said in words), stays an unknown symbol, and its message says so (:func:`double_subscript_hint`).

Entries are 1 × 1 slices, read as scalars where they multiply; the sums are the reader's sums over
positions (``D.head_sum``), proved for every number of terms.

>>> from symattn.derivation import ast
>>> letter_pair(ast.Name((1, 1), "ij")).text()
'i,j'
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..defs.shapes import same_dim
from ..errors import NotationShapeError
from . import ast
from .parameter_entries import parameter_entry
from .symbols import is_matrix, key_of, shape_text

TRACE_NAMES = ("tr", "Tr", "trace")


def letter_pair(sub):
    """``{ij}``, two index letters written together, as the pair ``{i,j}``; any other subscript unchanged."""
    if (isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and len(sub.base) == 2
            and sub.base.isalpha() and sub.base.islower()):
        return ast.Labels(sub.pos, tuple(ast.Name((sub.pos[0], sub.pos[1] + k), c) for k, c in enumerate(sub.base)))
    return sub


def is_result(body) -> bool:
    """Whether ``body``, inside parentheses, is a result (a product, a sum, a call, ...), not one name."""
    return not isinstance(body, (ast.Name, ast.Num))


def unlabelled_softmax(body):
    """The first softmax inside ``body`` whose axis is not written (no ``_{row}`` / ``_{col}``), or None."""
    stack = [body]
    while stack:
        n = stack.pop()
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif isinstance(n, ast.Call) and n.target.base in ("softmax", "Softmax") and n.axis is None:
            return n
        elif isinstance(n, ast.Node):
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "pos")
    return None


def softmax_axis_refusal(body, softmax, sub):
    """The message for ``(\\mathrm{softmax}(K) \\odot V)_{t'}``: one vector of a result whose softmax names no
    axis. The subscript selects along the positions, and a paper writing so may mean its softmax over those
    same positions (Zhai et al. 2021: the weights softmax(K) over the context positions t'), where the
    convention's softmax normalizes each vector; the axis is not guessed."""
    arg = softmax.args[0].text() if softmax.args else ""
    return (f"({body.text()})_{{{sub.text()}}}: one vector of a result holding softmax({arg}), whose axis is not "
            f"written; a paper selecting vector {sub.text()} may mean the softmax over those positions, and the "
            "convention's softmax normalizes each vector: the axis is not guessed",
            f"\\mathrm{{softmax}}_{{col}}({arg}) (each column normalized, over the positions of the row "
            f"convention) or \\mathrm{{softmax}}_{{row}}({arg}) inside ({body.text()})_{{{sub.text()}}}")


def bound(L, sub):
    """The value of ``sub`` when it is an index bound by an enclosing sum, else None."""
    if isinstance(sub, ast.Name) and sub.sub is None and sub.sup is None and sub.base in L:
        k = L[sub.base]
        if isinstance(k, sp.Expr) and not is_matrix(k):
            return k
    return None


def check_bound(scope, node, sub, length, L):
    """An index ``sub`` bound by a sum of a known number of terms runs over no more than ``length``."""
    count = L.get((sub.base, "count"))
    if count is None or same_dim(count, length):
        return
    subs = getattr(scope, "subs", {})  # a length n read as t + s beside a position t
    if same_dim(sp.sympify(count).xreplace(subs), sp.sympify(length).xreplace(subs)):
        return
    if sp.expand(sp.sympify(length).xreplace(subs) - sp.sympify(count).xreplace(subs)).is_nonnegative:
        return
    scope.fail(node, f"{node.text()}: the index {sub.text()} runs to {sp.sstr(count)}, and {node.text()} has "
               f"{sp.sstr(length)} there", "a sum whose index runs over the rows (or columns) it indexes",
               NotationShapeError)


def declared_entry(scope, node, L, otherwise):
    """``A_{ij}`` (or ``A_{i,j}``) of a declared (or defined) matrix A, i and j indices of enclosing sums: the
    entry (i, j), a 1 × 1 slice; for any other name, ``otherwise(scope, node, L)``."""
    got = _entry(scope, node, L)
    if got is None:  # x_i of a function's vector parameter x (parameter_entries)
        got = parameter_entry(scope, node, L, bound, check_bound)
    return otherwise(scope, node, L) if got is None else got


def _entry(scope, node, L):
    sub = letter_pair(node.sub)
    if not (isinstance(sub, ast.Labels) and len(sub.parts) == 2):
        return None
    ks = [bound(L, p) for p in sub.parts]
    if any(k is None for k in ks):
        return None
    whole = ast.Name(node.pos, node.base, None, node.sup, node.font)
    k = key_of(whole)
    defined = k in scope.defs and not scope.defs[k].params  # A = softmax(...): the matrix the file defines
    if not (scope.is_declared_matrix(whole) or defined):
        return None
    v = scope._expr(whole, L)
    if not is_matrix(v):
        return None
    for p, length in zip(sub.parts, (v.rows, v.cols)):
        check_bound(scope, node, p, length, L)
    note = f"{whole.text()}_{{ij}} is the entry (i, j) of {whole.text()}, i and j indices of sums"
    if note not in scope.notes:
        scope.notes.append(note)
    return v[ks[0] - 1:ks[0], ks[1] - 1:ks[1]]


def trace_call(scope, node, L, otherwise):
    """``\\mathrm{tr}(X)`` of a square matrix X: the sum of its diagonal entries; for another call,
    ``otherwise(scope, node, L)``."""
    got = _trace(scope, node, L)
    return otherwise(scope, node, L) if got is None else got


def _trace(scope, node, L):
    name = node.target
    if name.base not in TRACE_NAMES or name.sub is not None or name.sup is not None:
        return None
    if name.font not in ("mathrm", "operatorname", "text", "textrm", "mathsf") and name.base == "tr":
        return None
    if f"{name.base}/1" in scope.defs or not scope.is_undefined_name(name):
        return None
    if len(node.args) != 1 or isinstance(node.args[0], ast.Dots):
        scope.fail(node, f"{name.text()} takes 1 argument, got {len(node.args)}", "\\mathrm{tr}(X)")
    X = scope._expr(node.args[0], L)
    if not is_matrix(X) or not same_dim(X.rows, X.cols):
        shape = shape_text(X) if is_matrix(X) else "a scalar"
        scope.fail(node, f"the trace of {node.args[0].text()} ({shape}): a trace is of a square matrix",
                   "\\mathrm{tr}(X) of an n × n matrix X", NotationShapeError)
    note = f"{name.text()}(X) is the sum of the diagonal entries of X"
    if note not in scope.notes:
        scope.notes.append(note)
    return D.head_sum(lambda k: X[k - 1:k, k - 1:k], X.rows)


def norm_root(square):
    """The norm from its square: the root of the one entry of a 1 × 1 product (x^T x), or the entrywise root of
    the 1 × 1 sum of entries that :func:`frobenius` builds (a sum has no entry to take)."""
    if isinstance(square, D.HeadSum):
        return sp.HadamardPower(square, sp.Rational(1, 2))
    return sp.sqrt(square[0, 0] if getattr(square, "shape", None) == (1, 1) else square)


def frobenius(a, b):
    """The Frobenius inner product of two matrices of one shape, sum_i sum_j a_ij b_ij (1 × 1)."""
    return D.head_sum(lambda i: D.head_sum(lambda j: a[i - 1:i, j - 1:j] * b[i - 1:i, j - 1:j], a.cols), a.rows)


# A member of a family indexed by two letters, \mathbf{q}_{t,i}^{C} (DeepSeek-AI 2024: head i's part of the
# query q_t^C, head i's rows W^Q_i, said in words only), is not an entry: when the file declares the member
# with one of the two letters, the unknown symbol's message says what the other letter would name.
def double_subscript_hint(scope, node) -> str:
    """The note added to 'unknown symbol' for a name with a double subscript (``q_{t,i}^C``)."""
    plain = f" (a double subscript: {node.text()} is read as a name of its own, to be declared)"
    sub = getattr(node, "sub", None)
    if not (isinstance(sub, ast.Labels) and len(sub.parts) == 2):
        return plain
    known = set(scope.known_names())
    for kept, other in (sub.parts, reversed(sub.parts)):
        relative = ast.Name(node.pos, node.base, kept, node.sup, node.font)
        if key_of(relative) in known:
            return (f" (a member of a family indexed by two letters: {node.text()} beside the declared "
                    f"{relative.text()} would be the part of {relative.text()} that {other.text()} names, such as "
                    f"head {other.text()}'s rows, which the file states only in words; declare "
                    f"{node.text()} with its shape, or define it from declared names)")
    return plain
