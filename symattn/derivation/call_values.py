r"""A mark after a call of the document's own function applies to the call's value.

Kobayashi et al. (2020) define ``k(x) = x W^K + b^K`` and write the score of positions i and j as
``q(x_i) k(x_j)^\top``: the transpose of the key k(x_j). The grammar cannot know which names a document
defines, so it reads ``A (B)^\top`` of a name A outside the vocabulary as the product of A and (B)^T (the
mark belongs to the parenthesis, as in ``W (x + y)^\top``). When the elaborator meets that product and A is
a function the document defines with one parameter (and no value of that name is declared or bound), the
only reading is the call: ``k(x_j)^\top`` is (k(x_j))^T, and ``f(x)^2`` is (f(x))^2.

>>> from .latex import parse_latex
>>> st = parse_latex(r"$$ y = q k(x)^\top $$")[0]
>>> st.links[0][2].text()
'q k (x)^T'
"""

from __future__ import annotations

from . import ast
from .symbols import key_of


def defined_function(elab, f, L) -> bool:
    """``f`` names a function the document defines with one parameter, and no value of that name."""
    if not isinstance(f, ast.Name) or isinstance(f, ast.Call):
        return False
    k = key_of(f)
    d = elab.defs.get(k)
    if d is None or len(d.params) != 1 or d.open:
        return False
    if f.sub is None and f.sup is None and f.base in (L or {}):
        return False  # a bound index or parameter of that letter
    return not any(k in table for table in (elab.matrices, elab.scalars, elab.dims))


def joined(target: ast.Name, g):
    """(B)^T, ((B)^T)^2 after ``target``: the same marks on the call target(B); None if g is not so written."""
    if isinstance(g, ast.T):
        inner = g.arg if isinstance(g.arg, ast.Group) else joined(target, g.arg)
        if inner is None:
            return None
        call = ast.Call(target.pos, target, (g.arg.body,)) if isinstance(g.arg, ast.Group) else inner
        return ast.T(g.pos, call)
    if isinstance(g, ast.Power):
        call = ast.Call(target.pos, target, (g.base.body,)) if isinstance(g.base, ast.Group) \
            else joined(target, g.base)
        if call is None:
            return None
        return ast.Power(g.pos, call, g.num, g.den)
    return None


def rejoin_calls(elab, node: ast.Mul, L):
    """``node`` with each ``k (B)^T`` of a defined one-parameter k read as ``(k(B))^T``; ``node`` if none."""
    out, changed, i = [], False, 0
    factors = node.factors
    while i < len(factors):
        f = factors[i]
        if i + 1 < len(factors) and defined_function(elab, f, L) and (call := joined(f, factors[i + 1])) is not None:
            out.append(call)
            changed = True
            i += 2
            continue
        out.append(f)
        i += 1
    if not changed:
        return node
    return out[0] if len(out) == 1 else ast.Mul(node.pos, tuple(out))
