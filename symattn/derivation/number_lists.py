r"""Lists of numbers with an ellipsis, as papers write a bias or a position vector: ``[0, 1, \ldots, i-1]``,
``[-(i-1), \ldots, -2, -1, 0]`` (ALiBi's linear biases, Press et al. 2022).

The entries written beside the ellipsis fix a constant step (1 in both examples: 0, 1 and -2, -1, 0), and
the first and the last entry fix the length, (last - first) / step + 1 (here i, a declared dimension).
The list is then the vector of that length whose entry k is first + (k - 1) step, a row ``[...]`` in a row
and a column ``[...;...]`` in a column, for every length. A list whose written entries disagree on the step,
whose step is 0 or not a number, or whose length is not a whole number is refused by name; a list of
matrices (``[head_1, \ldots, head_H]``) is a list of heads (:mod:`.head_lists`).
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..errors import DerivationError, HeadError, NotAMatrixError, ShapeError
from . import ast
from .symbols import is_matrix

USAGE = "entries with one step, as in [0, 1, \\ldots, n-1], and a length that is a whole number"


def scalar_items(scope, items, L):
    """The values of the written entries (None at the ellipsis) when the first and the last are numbers,
    else None (a list of matrices or of heads)."""
    try:
        ends = [scope._expr(items[0], L), scope._expr(items[-1], L)]
    except (DerivationError, HeadError, NotAMatrixError, ShapeError):
        return None
    if any(is_matrix(v) for v in ends):
        return None
    return [None if isinstance(c, ast.Dots) else scope._expr(c, L) for c in items]


def number_list(scope, node, items, direction, L, vals):
    """The vector ``[a, b, \\ldots, c]`` of :func:`scalar_items`' values ``vals`` (see the module's docstring)."""
    d = next(k for k, c in enumerate(items) if isinstance(c, ast.Dots))
    before, after = vals[:d], vals[d + 1:]
    if any(is_matrix(v) for v in before + after):
        scope.fail(node, f"{node.text()} mixes numbers and matrices", USAGE)
    steps = [sp.simplify(b - a) for run in (before, after) for a, b in zip(run, run[1:])]
    if not steps:
        scope.fail(node, f"the step of {node.text()} is not written: one entry on each side of the ellipsis",
                   USAGE + " (two entries side by side say the step)")
    step = steps[0]
    if not step.is_number or step == 0 or any(sp.simplify(s - step) != 0 for s in steps):
        scope.fail(node, f"the entries of {node.text()} do not follow one nonzero step "
                   f"({', '.join(sp.sstr(s) for s in steps)})", USAGE)
    first, last = before[0], after[-1]
    count = sp.simplify((last - first) / step + 1)
    if not count.is_integer or count.is_positive is not True or (count.is_number and count < len(items) - 1):
        scope.fail(node, f"{node.text()} has {sp.sstr(count)} entries from {items[0].text()} to {items[-1].text()} "
                   f"by the step {sp.sstr(step)}, which is not known to be a positive whole number of at least the "
                   "entries written", USAGE)
    for k, v in enumerate(after):  # the entries written after the ellipsis, counted from the last
        want = last - (len(after) - 1 - k) * step
        if sp.simplify(v - want) != 0:
            scope.fail(items[d + 1 + k], f"{items[d + 1 + k].text()} does not follow the step {sp.sstr(step)}", USAGE)
    note = (f"{node.text()}: the {sp.sstr(count)} numbers {sp.sstr(first)} + (k - 1)·{sp.sstr(step)}, k = 1, ..., "
            f"{sp.sstr(count)} (a {'row' if direction == 'row' else 'column'})")
    if note not in scope.notes:
        scope.notes.append(note)

    def element(k):
        return sp.ImmutableMatrix([[first + (k - 1) * step]])

    return (D.head_concat if direction == "row" else D.head_stack)(element, count)
