r"""The parallel form of retention: row n of ``(QK^\top \odot D)V`` with the decay mask D, a sum over m <= n.

Retention (Sun et al. 2023) weights the scores entrywise by a causal decay mask, ``D_{nm} = \gamma^{n-m}`` for
``n \ge m`` and 0 for ``n < m`` (``decay_masks.py``), and multiplies by the values: row n of the product is
``\sum_m (QK^\top)_{nm} D_{nm} V_m``, the terms after n zero, so

    [(A \odot D) B]_{n,:} = \sum_{m=1}^{n} \gamma^{n-m} A_{nm} B_{m,:}.

A step that compares this row with a sum written over the same positions, ``\sum_{m=1}^{n} \gamma^{n-m} Q_n
K_m^\top V_m = [(QK^\top \odot D)V]_{n,:}``, is read so and checked term by term: the m-th terms of both
sums at a symbolic m, each power ``\gamma^{n-m}`` one free value W (the same on both sides; ``index_powers.py``)
and K_m, V_m the rows of the declared matrices. Terms equal for every m, every W and every value of the
matrices make sums of the same range equal: the step is proved at every position n. Terms not proved
equal refute nothing (two sums can agree with different terms): the step is then checked at the positions
n = 1, 2, ..., each sum written out (``unrolled``), where a counterexample refutes it at that position.

The mask must be causal with its decay on the visible side (``\gamma^{n-m}`` where ``n \ge m``, 0 where
``n < m``), the product ``(A \odot D) B`` with D one factor of the entrywise product, and the other side a
sum over m from 1 to the row's position; anything else is refused where the mask is used, as before.

>>> from symattn.derivation.latex_document import check_latex
>>> doc = r'''
... %: convention: row
... $$ Q, K, V \in \mathbb{R}^{N \times d}, \quad \gamma \in \mathbb{R} $$
... $$ D_{nm} = \begin{cases} \gamma^{n-m}, & n \ge m \\ 0, & n < m \end{cases} $$
... $$ \sum_{m=1}^{n} \gamma^{n-m} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:} $$
... '''
>>> check_latex(doc, diagnose=False).steps[0].status
'proved'
"""

from __future__ import annotations

import sympy as sp

from ..defs.shapes import same_dim
from ..errors import DerivationError, NotationShapeError
from . import ast
from .decay_masks import is_decay
from .index_powers import IndexPower
from .position_induction import Induction
from .sequences import index_value, letter
from .symbols import is_matrix, key_of


def _bare(node):
    while isinstance(node, ast.Group):
        node = node.body
    return node


def _letter_of(node):
    node = _bare(node)
    if isinstance(node, ast.Name) and node.sub is None and node.sup is None and len(node.base) == 1:
        return node.base
    return None


def _causal(scope, node):
    """(a, b, the decay's value node) of the mask ``node`` when it is ``X^{a-b}`` for ``a \\ge b`` and 0 for
    ``a < b`` (either comparison written either way round, or \\text{otherwise}); else None."""
    if not isinstance(node, ast.Name) or key_of(node) not in getattr(scope, "masks", {}):
        return None
    a, b, cases = scope.masks[key_of(node)]
    if not is_decay(cases) or len(cases.rows) != 2:
        return None
    decay = [(v, c) for v, c in cases.rows if isinstance(v, IndexPower)]
    zero = [c for v, c in cases.rows if v == "0"]
    if len(decay) != 1 or len(zero) != 1:
        return None

    def side(cond):  # "visible" for a >= b, "hidden" for a < b, else None
        if cond is None or not isinstance(cond, tuple) or len(cond) != 3:
            return None
        left, rel, right = _letter_of(cond[0]), cond[1], _letter_of(cond[2])
        if (left, right) == (b, a):
            left, right, rel = a, b, {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}.get(rel)
        if (left, right) != (a, b):
            return None
        return {">=": "visible", "<": "hidden"}.get(rel)

    if side(decay[0][1]) != "visible" or (zero[0] is not None and side(zero[0]) != "hidden"):
        return None
    return a, b, decay[0][0]


def masked_row(scope, node):
    """(A, B, the mask, a, b, its decay node, the row's index node) of ``[(A \\odot D) B]_{n,:}``, or None."""
    if not isinstance(node, ast.RowOf):
        return None
    body = _bare(node.arg)
    factors = list(body.factors) if isinstance(body, ast.Mul) else [body]
    first = _bare(factors[0])
    if len(factors) < 2 or not isinstance(first, ast.Hadamard) or len(first.factors) != 2:
        return None
    masks = [f for f in first.factors if _causal(scope, f) is not None]
    if len(masks) != 1:
        return None
    mask = masks[0]
    other = next(f for f in first.factors if f is not mask)
    rest = factors[1:]
    B = rest[0] if len(rest) == 1 else ast.Mul(rest[0].pos, tuple(rest))
    a, b, decay = _causal(scope, mask)
    return other, B, mask, a, b, decay, node.index


def _sum_over_row(node, index):
    """The sum ``\\sum_{m=1}^{n}`` of ``node`` when its range is 1..n with n the row's index letter, or None."""
    node = _bare(node)
    if not isinstance(node, ast.Sum) or node.upper is None or _letter_of(node.upper) != _letter_of(index):
        return None
    if node.lower is not None and not (isinstance(_bare(node.lower), ast.Num) and _bare(node.lower).value == 1):
        return None
    return node if node.index != _letter_of(index) else None


def _term(scope, read, n, j, L):
    """The m-th term ``D_{nm} A[n, m] B[m, :]`` of the masked row, at the positions n and j (j <= n)."""
    A_node, B_node, _mask, a, b, decay, _index = read
    A, B = scope.expr(A_node, L), scope.expr(B_node, L)
    if not (is_matrix(A) and is_matrix(B)):
        scope.fail(A_node, f"{A_node.text()} in a product with the decay mask is a scalar", "matrices")
    if not (same_dim(A.rows, A.cols) and same_dim(A.cols, B.rows)):
        scope.fail(A_node, f"({A_node.text()} ∘ {read[2].text()}) {B_node.text()}: the scores are {sp.sstr(A.rows)} × "
                   f"{sp.sstr(A.cols)} and the values have {sp.sstr(B.rows)} rows", "scores of one position against "
                   "each (N × N) times values of N rows", NotationShapeError)
    weight = scope.expr(decay, {**L, a: n, b: j})
    return weight * A[n - 1:n, j - 1:j] * B[j - 1:j, :]


def unrolled(scope, node, c, q):
    """The value of ``node`` at the position ``c = q``: a sum up to the position written out term by term, the
    masked row as the sum it stands for; any other node read as it is."""
    L = {c: sp.Integer(q)}
    bare = _bare(node)
    read = masked_row(scope, bare)
    if read is not None and _letter_of(read[6]) == c:
        terms = [_term(scope, read, sp.Integer(q), sp.Integer(k), L) for k in range(1, q + 1)]
        return sum(terms[1:], terms[0])
    if isinstance(bare, ast.Sum) and bare.upper is not None:
        lo = 1 if bare.lower is None else index_value(scope, bare.lower, L, bare, strict=False)
        hi = index_value(scope, bare.upper, L, bare, strict=False)
        if lo is not None and hi is not None and sp.sympify(lo).is_Integer and sp.sympify(hi).is_Integer \
                and hi >= lo and _letter_of(bare.upper) == c:
            terms = [scope.expr(bare.body, {**L, bare.index: sp.Integer(k)}) for k in range(int(lo), int(hi) + 1)]
            return sum(terms[1:], terms[0])
    return scope.expr(node, L)


class TermwiseSums(Induction):
    """The masked row against a sum over the same positions, compared term by term (see the module)."""

    written = "each sum written out"

    def __init__(self, c, lhs_node, rhs_node, mask, index, unread=""):
        super().__init__(c, 0, "", lhs_node, rhs_node)
        self.mask, self.index, self.unread = mask, index, unread

    def value_at(self, scope, node, q):
        return unrolled(scope, node, self.letter, q)

    def conclude(self, scope, s, verify) -> None:
        c, m = self.letter, self.index
        if self.unread:
            s.status = f"not read ({self.unread})"
        if s.status == "proved":
            s.scope = (f"every position {c}: row {c} of the product with the decay mask {self.mask} (0 after {c}) is "
                       f"the sum over {m} = 1, ..., {c}, and the two sums agree term by term, proved for " + s.scope)
            s.method = f"term by term, {s.method}"
            return
        scope.decay_rows = True
        try:
            self.at_positions(scope, s, verify, f"the comparison term by term is {s.status}")
        finally:
            scope.decay_rows = False


def read(scope, lhs_node, rhs_node):
    """The m-th terms of both sides and the :class:`TermwiseSums`, for a step between a masked row and a sum
    over the same positions; None otherwise (the step is read, or refused, as before)."""
    for flip, (row, other) in enumerate(((rhs_node, lhs_node), (lhs_node, rhs_node))):
        found = masked_row(scope, _bare(row))
        if found is None:
            continue
        total = _sum_over_row(other, found[6])
        c = _letter_of(found[6])
        if total is None or c is None:
            return None
        n, j = letter(c), letter(total.index)
        scope.decay_rows, scope.power_gap = True, n - j
        try:
            here = scope.expr(total.body, {total.index: j})
            term = _term(scope, found, n, j, {total.index: j})
        except DerivationError as exc:  # a term not read at a symbolic m (\gamma^{m-n}): at given positions only
            return _at_first(scope, lhs_node, rhs_node, c, found[2].text(), total.index, exc.detail)
        finally:
            scope.decay_rows, scope.power_gap = False, None
        if c in scope.positions:  # Q_n read at the position n of the rows: the same n throughout
            same = {n: scope.positions[c][0]}
            here, term = here.xreplace(same), term.xreplace(same)
        if not (is_matrix(here) and is_matrix(term)) or tuple(here.shape) != tuple(term.shape):
            return None
        note = (f"{row.text()} is read as the sum over {total.index} = 1, ..., {c} of {found[5].text()} times entry "
                f"({c}, {total.index}) of {found[0].text()} times row {total.index} of {found[1].text()} (the decay "
                f"mask {found[2].text()} is 0 after {c}), compared with the other side term by term")
        if note not in scope.notes:
            scope.notes.append(note)
        sides = (term, here) if flip else (here, term)
        return sides[0], sides[1], TermwiseSums(c, lhs_node, rhs_node, found[2].text(), total.index)
    return None


def _at_first(scope, lhs_node, rhs_node, c, mask, index, why):
    """The step's sides at the position 1 and a :class:`TermwiseSums` that checks it at the given positions
    (its terms are not read at a symbolic position: ``why``); None when they cannot be read there either."""
    claim = TermwiseSums(c, lhs_node, rhs_node, mask, index, unread=why)
    scope.decay_rows = True
    try:
        L, R = claim.value_at(scope, lhs_node, 1), claim.value_at(scope, rhs_node, 1)
    except DerivationError:
        return None
    finally:
        scope.decay_rows = False
    if not (is_matrix(L) and is_matrix(R)) or tuple(L.shape) != tuple(R.shape):
        return None
    return L, R, claim


def attach(scope, st, steps) -> None:
    """Give each step of the chain ``st`` between a masked row and a sum its terms to compare (see the module)."""
    if not isinstance(st, ast.Chain):
        return
    for s in steps:
        if s.relation != "=" or s.lhs_node is None or s.rhs_node is None:
            continue
        found = read(scope, s.lhs_node, s.rhs_node)
        if found is not None:
            s.lhs_expr, s.rhs_expr, s.induction = found
