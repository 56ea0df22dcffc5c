r"""Slips inside a mask written entry by entry (``M_{ts} = \begin{cases} 0 & s \le t \\ -\infty & s > t
\end{cases}``), for :func:`~.diagnose.diagnose_step`.

A step that uses such a mask and fails is tried again with the mask's conditions changed in one way:

- mask condition off by one: an index shifted by one written without the shift (s <= t for s <= t + 1),
  or every comparison made strict or not strict (s < t for s <= t); either moves the boundary by one
  position (the diagonal, a query and its own key, hidden or shown);
- mask direction flipped: every comparison reversed (s >= t for s <= t: the future shown instead of
  the past), or the rows 0 and -infinity swapped (s > t for s <= t).

Each candidate re-reads the step's right side with the changed mask; the mask's definition in the
scope is restored afterwards.
"""

from __future__ import annotations

from . import ast
from .symbols import key_of

STRICTER = {"<=": "<", "<": "<=", ">=": ">", ">": ">="}
NEGATED = {"<=": ">", ">": "<=", "<": ">=", ">=": "<"}


def _show(cond) -> str:
    return "otherwise" if cond is None else f"{cond[0].text()} {cond[1]} {cond[2].text()}"


def variants(cases: ast.Cases):
    """(slip, how, rows) for each single change of the mask's conditions."""
    rows = cases.rows
    if any(c is not None and not isinstance(c, tuple) for _, c in rows):
        return  # a window (.conditions.Conjunction): refused where it is used, so no variant reads either

    def each(fn):
        return tuple((v, None if c is None else fn(c)) for v, c in rows)

    if any(c is not None and (_offset(c[0]) or _offset(c[2])) for _, c in rows):
        yield ("mask condition off by one", "the boundary moves by one position",
               each(lambda c: (_unshifted(c[0]), c[1], _unshifted(c[2]))))
    yield ("mask condition off by one", "the boundary moves by one position",
           each(lambda c: (c[0], STRICTER[c[1]], c[2])))
    yield ("mask direction flipped", "the other side of the boundary is visible",
           each(lambda c: (c[2], c[1], c[0])))
    yield ("mask direction flipped", "the visible and the hidden entries are swapped",
           each(lambda c: (c[0], NEGATED[c[1]], c[2])))


def _offset(n) -> bool:
    """True for an index shifted by one, t + 1 or t - 1."""
    return isinstance(n, ast.Index) and isinstance(n.right, ast.Num) and n.right.value == 1


def _unshifted(n):
    """t for t + 1 or t - 1 (the comparison kept as written: s <= t + 1 becomes s <= t); n otherwise."""
    return n.left if _offset(n) else n


def mask_candidates(step, scope, latex: bool):
    """(slip, detail, make, corrected definition, "definition") for every mask defined by cases that the right
    side uses."""
    node = step.rhs_node
    if node is None or scope is None or not getattr(scope, "masks", None):
        return []
    used = []
    for n in ast.names_of(node):
        k = key_of(n)
        if k in scope.masks and k not in used:
            used.append(k)
    out = []
    for key in used:
        a, b, cases = scope.masks[key]
        for slip, how, rows in variants(cases):
            fixed = ast.Cases(cases.pos, rows)
            old = [_show(c) for _, c in cases.rows if c is not None]
            new = [_show(c) for _, c in rows if c is not None]
            detail = (f"the condition {' / '.join(old)} of {key}_{{{a}{b}}} should be {' / '.join(new)}: {how}")
            shown = (f"{key}_{{{a}{b}}} = {fixed.latex()}" if latex else f"{key}_{a}{b} = {fixed.text()}")
            out.append((slip, detail, _maker(step, scope, key, (a, b, fixed)), shown, "definition"))
    return out


def _maker(step, scope, key, mask):
    def make():
        old = scope.masks[key]
        scope.masks[key] = mask
        try:
            return scope.expr(step.rhs_node, dict(step.bound))
        finally:
            scope.masks[key] = old

    return make
