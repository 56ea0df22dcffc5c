r"""Sums over an index range from any start: ``\sum_{s=0}^{2} w_s \odot q_{i-s}``, ``\sum_{i=t-1}^{t}``.

A sum from 1 is read by :meth:`~.elaborate.Scope._sum` (over heads, rows, or a declared range). A sum
whose lower limit is anything else (a number, or an expression of position letters) is read here when
its number of terms, upper - lower + 1, is a given number: it is the sum of its terms, the index
taking each value from the lower limit to the upper one (``w_s \odot q_{i-s}`` at s = 0, 1, 2 is
``w_0 \odot q_i + w_1 \odot q_{i-1} + w_2 \odot q_{i-2}``; the members are read by
:mod:`.sequences`). A range whose number of terms is symbolic (``\sum_{j=0}^{k}``) is refused with a
message, and so is a range that reaches a head below 1 (heads are numbered from 1).

>>> from symattn.derivation.latex import parse_latex
>>> [type(s).__name__ for s in parse_latex(r"$$ \sum_{s=0}^{2} w_s = w_0 + w_1 + w_2 $$")]
['Chain']
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..errors import NotationShapeError
from . import ast, block_sums, sequences
from .symbols import family_key, is_matrix

MAX_TERMS = 64  # terms of a sum over a given range


def limit_value(scope, node, L, sum_node):
    """A limit as an expression of numbers, position letters, dimensions, + - and products and quotients."""
    if isinstance(node, ast.Name) and node.sub is None and node.sup is None and node.base not in L \
            and scope.resolve(node.base) in scope.dims:
        return scope.dims[scope.resolve(node.base)]
    if isinstance(node, ast.Name) and node.sub is None and node.sup is None and node.base in L \
            and not is_matrix(L[node.base]):
        return sp.sympify(L[node.base])  # the index of an enclosing sum or definition
    if isinstance(node, (ast.Arith, ast.Group)):
        return limit_value(scope, node.body, L, sum_node)
    if isinstance(node, ast.Add):
        parts = [limit_value(scope, t, L, sum_node) for _, t in node.terms]
        return None if None in parts else sp.Add(*(s * v for (s, _), v in zip(node.terms, parts)))
    if isinstance(node, ast.Mul):
        parts = [limit_value(scope, f, L, sum_node) for f in node.factors]
        return None if None in parts else sp.Mul(*parts)
    if isinstance(node, ast.Div):
        a, b = limit_value(scope, node.num, L, sum_node), limit_value(scope, node.den, L, sum_node)
        return None if a is None or b is None else a / b
    if isinstance(node, ast.Index):
        a, b = limit_value(scope, node.left, L, sum_node), limit_value(scope, node.right, L, sum_node)
        return None if a is None or b is None else (a + b if node.op == "+" else a - b)
    return sequences.index_value(scope, node, L, sum_node, strict=False)


def limit(scope, node, L, sum_node):
    v = limit_value(scope, node, L, sum_node)
    if v is None:
        scope.fail(node, f"the limit {node.text()} of the sum over {sum_node.index} is not an index",
                   "a number, a position letter or a dimension, with + and -")
    return sp.expand(v)


class Ranges:
    """The reading of :class:`~.ast.RangeSum` for :class:`~.elaborate.Scope` (a mixin)."""

    def _rangesum(self, node, L):
        return shifted_sum(self, node, L)

    def _prod(self, node, L):
        return range_product(self, node, L)


def range_values(scope, node, L, what="\\sum"):
    """The values lower, ..., upper of the index of a sum or product over a given number of terms."""
    j = node.index
    if node.upper is None:
        scope.fail(node, f"{what}_{j} without its range", f"{what}_{{{j}=1}}^{{3}}, over a given range")
    lower = node.lower if node.lower is not None else ast.Num(node.pos, 1)
    lo, hi = limit(scope, lower, L, node), limit(scope, node.upper, L, node)
    count = sp.expand(hi - lo + 1)
    rng = f"{what}_{{{j}={lower.text()}}}^{{{node.upper.text()}}}"
    if not count.is_Integer and what == "\\prod":
        scope.fail(node, f"{rng} has {sp.sstr(count)} terms, a number that is not given: a product over an index is "
                   "read when its number of terms is a number (\\prod_{j=1}^{3})", "the product at a given "
                   "position, or its factors written out", NotationShapeError)
    if not count.is_Integer and block_sums.is_block_count(count):
        block_sums.refuse_block_sum(scope, node, rng, count)  # \sum_{i=(j-1)n/m+1}^{jn/m} (block_sums)
    if not count.is_Integer:
        scope.fail(node, f"{rng} has {sp.sstr(count)} terms, a number that is not given: a sum from a start other "
                   "than 1 is read when its number of terms is a number (\\sum_{s=0}^{2}, \\sum_{i=t-1}^{t})",
                   f"the sum from 1 with the index shifted (\\sum_{{{j}=0}}^{{n-1}} a_{j} is "
                   f"\\sum_{{{j}=1}}^{{n}} a_{{{j}-1}}), or its terms written out", NotationShapeError)
    if count < 1 or count > MAX_TERMS:
        scope.fail(node, f"{rng} has {count} terms", f"a range of 1 to {MAX_TERMS} terms", NotationShapeError)
    return rng, [lo + k for k in range(int(count))]


def shifted_sum(scope, node, L):
    """The value of the sum ``node`` whose lower limit is not 1 (its ``lower`` is set)."""
    j = node.index
    if (block := block_sums.block_sum(scope, node, L, limit)) is not None:
        return block  # \sum_{i=(j-1)n/m+1}^{jn/m}: a block of n/m positions, where m divides n (block_sums)
    rng, values = range_values(scope, node, L)
    heads = [n for n in ast.nodes_of(node.body) if isinstance(n, ast.Name) and n.sub is not None
             and family_key(n) in scope.families
             and any(isinstance(x, ast.Name) and x.base == j for x in ast.nodes_of(n.sub))]
    low = [v for v in values if not (v.is_Integer and v >= 1)]
    if heads and low:
        scope.fail(heads[0], f"{rng} reaches {heads[0].text()} at {j} = {sp.sstr(low[0])}: the heads of "
                   f"{heads[0].base} are numbered from 1", "a range of heads from 1", NotationShapeError)
    terms = [scope._expr(node.body, {**L, j: v}) for v in values]
    if all(is_matrix(t) for t in terms):
        return D.head_sum(lambda k: terms[int(k) - 1], len(terms))
    if any(is_matrix(t) for t in terms):
        scope.fail(node.body, "the terms of the sum are matrices for some values of the index and scalars for "
                   "others", "terms of one shape")
    return sp.Add(*terms)


def range_product(scope, node, L):
    """``\\prod_{j=1}^{3} a_j``: the product of the terms over a given range; scalars multiply, vectors of one
    shape multiply entry by entry (the cumulative gates of Yang et al. 2024); matrices are refused, since the
    order of their product is not written."""
    rng, values = range_values(scope, node, L, "\\prod")
    terms = [scope._expr(node.body, {**L, node.index: v}) for v in values]
    if not any(is_matrix(t) for t in terms):
        return sp.Mul(*terms)
    shapes = {t.shape for t in terms if is_matrix(t)}
    if len(shapes) != 1 or len(terms) != sum(is_matrix(t) for t in terms) or 1 not in next(iter(shapes)):
        scope.fail(node, f"{rng}: a product over an index of matrices (or of values of different shapes) is not "
                   "read, as the order of a matrix product is not written", "the product written out",
                   NotationShapeError)
    return sp.HadamardProduct(*terms) if len(terms) > 1 else terms[0]
