r"""Slices of a labelled matrix: ``K_{s,1:t}``, ``V_{s,\ell_i:r_i}``.

Papers that name their matrices with a label (Longformer's ``Q_s, K_s, V_s``, the projections of the
sliding-window attention) slice them with the label first and the range of positions after a comma:
``K_{s,1:t}`` is positions 1..t of the declared matrix ``K_s`` (its rows in the row convention, its
columns in the column convention), as ``K_{1:t}`` is of ``K``. The ends of the range are index
expressions (``1``, ``t``, ``t - 1``); an end that is a name of its own (Longformer's ``\ell_i``, defined
beside the step as ``\max(1, i - \frac{w}{2})``) is refused by name: the end of a window clipped at the
ends of the sequence is not read as a position.

The slice is read only where the label names a declared matrix (``K_s``); otherwise ``A_{t,1:k}`` (row t,
columns 1..k?) is refused, naming both readings.

>>> from symattn.derivation.latex_document import check_latex
>>> text = (r"%: convention: row" "\n"
...         r"$$ Q_s, K_s, V_s \in \mathbb{R}^{n \times d}, \quad M_{ts} = \begin{cases} 0 & s \le t \\ "
...         r"-\infty & \text{otherwise} \end{cases} $$" "\n"
...         r"$$ \left[\mathrm{softmax}\left(Q_s K_s^\top + M\right) V_s\right]_{t,:} = "
...         r"\mathrm{softmax}\left([Q_s]_{t,:} K_{s,1:t}^\top\right) V_{s,1:t} $$")
>>> [s.status for s in check_latex(text).steps]
['proved']
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

from . import ast
from .maxima import is_extremum
from .symbols import key_of
from .window_bounds import is_end


@dataclass(frozen=True)
class LabelledSlice(ast.Slice):
    """The subscript ``{s,1:t}``: positions lo..hi of the matrix named with the label s."""

    label: ast.Node = None

    def text(self):
        return f"{self.label.text()},{self.lo.text()}:{self.hi.text()}"

    def latex(self):
        return f"{self.label.latex()},{self.lo.latex()}:{self.hi.latex()}"


def labelled_slice(p, parts):
    """At ``:`` after ``{s,a`` in a subscript (the parser ``p``, the parts ``[s, a]`` read so far): the slice
    ``{s,a:b}``, up to its closing brace."""
    label, lo = parts
    p.next()
    hi = p.sub_atom(True)
    while p.at_op("+", "-"):
        op = p.next()
        hi = ast.Index(hi.pos, hi, op.value, p.sub_atom(True))
    p.expect_op("}", "'}' closing the slice")
    return LabelledSlice(lo.pos, lo, hi, label)


def sliced_base(scope, node):
    """The matrix that ``node`` slices: ``K`` for ``K_{1:t}``, ``K_s`` for ``K_{s,1:t}`` (which must be declared);
    the ends of a labelled slice must be index expressions, not names of their own."""
    sub = node.sub
    if not isinstance(sub, LabelledSlice):
        return ast.Name(node.pos, node.base, None, node.sup, node.font)
    base = ast.Name(node.pos, node.base, sub.label, node.sup, node.font)
    if scope.resolve(key_of(base)) not in scope.matrices:
        scope.fail(node, f"{node.text()}: {base.text()} is not a declared matrix, so {sub.text()} is either a slice "
                   f"of {base.text()} or row {sub.label.text()} and positions {sub.lo.text()}..{sub.hi.text()} of "
                   f"{node.base}; neither is read", f"a declared matrix {base.text()}, or [{node.base}]_{{...}}")
    for end in (sub.lo, sub.hi):
        if isinstance(end, ast.Name) and end.sub is not None and not is_end(scope, end):
            scope.fail(end, f"the end {end.text()} of the slice {node.text()} is a name of its own (a window's end "
                       "clipped at the ends of the sequence, as \\ell_i = \\max(1, i - w/2)): it is not read as a "
                       "position", "ends written as index expressions, as in K_{s,1:t} or K_{s,t-1:t}")
    return base


def _nodes(node):
    """Every node under ``node`` (itself first)."""
    yield node
    for f in fields(node) if is_dataclass(node) else ():
        v = getattr(node, f.name)
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, tuple):
                for y in x:
                    if isinstance(y, ast.Node):
                        yield from _nodes(y)
            elif isinstance(x, ast.Node):
                yield from _nodes(x)


def labelled_row(scope, node, L):
    r"""``Q_{s,i}``: position i of the declared ``Q_s`` (its row i in the row convention, its column i in the column
    convention), where the same expression writes the positions of a labelled matrix after the label
    (``K_{s,\ell_i:r_i}``); None otherwise (``q_{t,i}`` stays a name of its own)."""
    sub = node.sub
    if not (isinstance(sub, ast.Labels) and len(sub.parts) == 2) or node.sup is not None:
        return None
    label, pos = sub.parts
    if not (isinstance(label, ast.Name) and label.sub is None and label.sup is None and isinstance(pos, ast.Name)
            and pos.sub is None and pos.sup is None and len(pos.base) == 1 and pos.base.isalpha()):
        return None
    if pos.base in L or pos.base in scope.counts or scope.resolve(pos.base) in scope.dims:
        return None
    whole = ast.Name(node.pos, node.base, label, None, node.font)
    top = getattr(scope, "top", None)
    if scope.resolve(key_of(whole)) not in scope.matrices or not any(
            isinstance(n, LabelledSlice) and n.label.text() == label.text() for n in _nodes(top)):
        return None
    X = scope._expr(whole, L)
    rows = scope.convention == "row"
    k = scope.position_value(pos, X.rows if rows else X.cols, L)
    scope.check_positions(node, k, k, X.rows if rows else X.cols)
    note = (f"{node.text()} is position {pos.base} of {whole.text()} (the label first, then the position, as in the "
            f"slices {node.base}_{{{label.text()},1:t}})")
    if note not in scope.notes:
        scope.notes.append(note)
    return X[k - 1:k, :] if rows else X[:, k - 1:k]


def window_end_refusal(scope, st):
    r"""Refuse a definition ``\ell_i = \max(1, i - \frac{w}{2})``: a number for each position i (the letter of
    its subscript, undeclared) through a maximum or minimum of that letter, the end of a window clipped at
    the ends of the sequence (Longformer's ``\ell_i``, ``r_i``). A position-dependent number is not read."""
    t = st.target
    if st.params or not (isinstance(t.sub, ast.Name) and t.sub.sub is None and len(t.sub.base) == 1):
        return
    letter = t.sub.base
    if scope.resolve(letter) in scope.dims or letter in scope.counts:
        return
    for n in _nodes(st.body):
        if isinstance(n, ast.Call) and is_extremum(n) and any(
                isinstance(m, ast.Name) and m.base == letter and m.sub is None for a in n.args for m in _nodes(a)):
            scope.fail(st.body, f"{t.text()} = {st.body.text()} defines a number for each position {letter} (the "
                       f"end of a window clipped at the ends of the sequence, by \\{n.target.base}): a number that "
                       "depends on a position is not read", "the ends of a slice written in the step as index "
                       "expressions, as in K_{s,t-1:t+1}, for positions where the window is not clipped")
