"""Lists of heads as papers write them, ``\\mathrm{Concat}(head_1, \\ldots, head_H)`` or ``[e_1; e_2; e_3]``:
a stack or a concatenation over heads, read by the pattern from the first element to the last.

The elaborator (:class:`symattn.derivation.elaborate.Scope`) takes :class:`HeadLists` as a mixin.
"""

from __future__ import annotations

from .. import defs as D
from . import ast
from .number_lists import number_list, scalar_items
from .patterns import anti_unify, show_pattern, substitute
from .symbols import HOLE, is_matrix


class HeadLists:
    """``Scope.sequence``: a list of elements with one ellipsis, or an explicit list."""

    def sequence(self, node, items, direction, L):
        """``e_1, e_2, ..., e_H`` with one ellipsis: a stack or concatenation over heads."""
        dots = [k for k, c in enumerate(items) if isinstance(c, ast.Dots)]
        if not dots:  # an explicit list: Concat(head_1, head_2, head_3, head_4)
            rows = tuple((c,) for c in items) if direction == "column" else (tuple(items),)
            return self._block(ast.Block(node.pos, rows), L)
        if len(dots) != 1 or dots[0] in (0, len(items) - 1):
            self.fail(node, "the list must have one ellipsis between its first and last element", "e_1, ..., e_H")
        if (vals := scalar_items(self, items, L)) is not None:  # [0, 1, \ldots, i-1]: numbers (number_lists)
            return number_list(self, node, items, direction, L, vals)
        first, last = items[0], items[-1]
        pat, upper = anti_unify(first, last)
        if pat is None:
            self.fail(last, f"cannot read the pattern from {first.text()} to {last.text()}",
                      "a first element indexed by 1 and a last one by the number of heads, "
                      "as in head_1, ..., head_H")
        for k, c in enumerate(items[1:dots[0]], start=2):
            if substitute(pat, ast.Num(c.pos, k)) != c:
                self.fail(c, f"{c.text()} does not follow the pattern {show_pattern(pat)}", f"the element at {k}")
        count = self.index_value(upper, L)

        def element(k):
            body = self._expr(pat, {**L, HOLE: k})
            if not is_matrix(body):
                self.fail(first, "the elements are scalars", "matrices")
            return body

        return (D.head_stack if direction == "column" else D.head_concat)(element, count)
