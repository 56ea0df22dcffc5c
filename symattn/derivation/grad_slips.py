"""The usual slips of a backward pass, named when one, corrected, makes a failing gradient step proved.

Tried in order, each decided by :func:`symattn.verify` against the expected gradient (so "corrected"
always means proved, never "agrees numerically"):

- **transpose on the wrong side**: a product of the step written in the other order (Q dSᵀ for dSᵀ Q,
  FlashAttention's erratum), or one factor transposed or not (P dO for Pᵀ dO);
- **missing scale**: the step off by the factor √d (or 1/√d) of a scaled score;
- **dropped diagonal term of the softmax Jacobian**: diag(p) − p pᵀ used without diag(p), i.e. the
  term P ∘ dP of dS = P ∘ dP − P ∘ (rowsum(dP ∘ P) 1ᵀ) left out;
- **row form in the column convention** (or the column form in the row convention): the softmax's
  Jacobian taken along the other axis than the file's softmax normalizes.
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from ..errors import SymattnError
from ..printing import text as readable
from ..proof import verify
from . import ast
from .diagnose import Diagnosis

TRANSPOSE = "transpose on the wrong side"
SCALE = "missing scale"
DIAGONAL = "dropped diagonal term of the softmax Jacobian"
AXIS = "row form in the column convention"
AXIS_COLUMN = "column form in the row convention"
MAX_SUBSTITUTIONS = 32


def _swap(node, target, new):
    """``node`` with the subtree ``target`` (by identity) replaced by ``new``."""
    if node is target:
        return new
    if isinstance(node, tuple):
        return tuple(_swap(x, target, new) for x in node)
    if not isinstance(node, ast.Node):
        return node
    from dataclasses import fields, replace

    changes = {}
    for f in fields(node):
        if f.name == "pos":
            continue
        v = getattr(node, f.name)
        w = _swap(v, target, new)
        if w is not v:
            changes[f.name] = w
    return replace(node, **changes) if changes else node


def _products(body):
    for n in ast.nodes_of(body):
        if isinstance(n, ast.Mul) and len(n.factors) >= 2:
            yield n


def _order_variants(body):
    """(the corrected body, what changed) for every product reversed or factor transposed."""
    for m in _products(body):
        scalars = [f for f in m.factors if _scalar(f)]
        mats = [f for f in m.factors if not _scalar(f)]
        rev = ast.Mul(m.pos, tuple(scalars + [_transposed(f) for f in reversed(mats)]))
        if len(mats) >= 2:
            yield _swap(body, m, ast.Mul(m.pos, tuple(scalars + mats[::-1]))), f"{m.text()} in the other order"
        yield _swap(body, m, rev), f"{m.text()} transposed as a whole"
        for f in m.factors:
            yield _swap(body, f, _transposed(f)), f"{f.text()} in place of {_transposed(f).text()}"


def _scalar(f) -> bool:
    """A factor written as a number: 2, \\sqrt{d}, \\frac{1}{\\sqrt{d}} (kept in front when a product is reversed)."""
    return isinstance(f, (ast.Num, ast.Sqrt)) or (isinstance(f, ast.Div) and isinstance(f.num, ast.Num)
                                                    and isinstance(f.den, (ast.Num, ast.Sqrt)))


def _transposed(f):
    return f.arg if isinstance(f, ast.T) else ast.T(f.pos, f)


class _Try:
    def __init__(self, scope, s, subs, budget):
        self.scope, self.s, self.subs, self.budget = scope, s, subs, budget
        self.R = self.sub(s.rhs_expr)

    def sub(self, e):
        for _ in range(MAX_SUBSTITUTIONS):
            new = e.xreplace(self.subs)
            if new == e:
                break
            e = new
        return e

    def close(self, cand):
        try:
            if cand.shape != self.R.shape:
                return False
            v = verify(self.sub(cand), self.R, budget=self.budget, search_counterexample=False)
            return v.proved
        except (SymattnError, TypeError, ValueError):
            return False


def _found(slip, detail, corrected):
    return Diagnosis(slip, detail, corrected, "proved (against the expected gradient)", True)


def name_slip(scope, graph, s, subs, budget):
    """A :class:`~symattn.derivation.diagnose.Diagnosis` for a failing gradient step, or None; ``subs``: the
    file's own gradient steps (dP -> dO Vᵀ), substituted before each comparison."""
    t = _Try(scope, s, subs, min(budget, 5.0))
    body = s.rhs_node
    for new, what in _order_variants(body):
        try:
            cand = scope.expr(new)
        except SymattnError:
            continue
        if t.close(cand):
            return _found(TRANSPOSE, what, new.text())
    cand = s.lhs_expr
    if isinstance(cand, Exception):
        return None
    dims = sorted({x for x in s.rhs_expr.free_symbols if isinstance(x, sp.Symbol) and x.is_integer}, key=str)
    for d in dims:
        for c in (1 / sp.sqrt(d), sp.sqrt(d)):
            if t.close(c * cand):
                return _found(SCALE, f"the factor {readable(c)} of the scaled scores is missing",
                              f"{readable(c)} ({body.text()})")
    for Y, local in graph.local.items():
        if not isinstance(local, D.Softmax):
            continue
        P = graph.full[Y]
        G = scope.matrices.get("d" + Y)
        if G is None:
            continue
        diag = sp.HadamardProduct(P, G)
        if t.close(cand + diag):
            return _found(DIAGONAL, f"the term {Y} ∘ d{Y} (from diag(p) in diag(p) − p pᵀ) is left out",
                          f"{body.text()} + {Y} ∘ d{Y}")
        other = D.softmax(local.arg, 1 - int(local.args[1]))
        X = local.arg
        if isinstance(X, sp.MatrixSymbol):
            from ..grad.vjp import vjp_with_rules

            R_other = vjp_with_rules(other, X, G)[0].xreplace({other: local}).xreplace(graph.back)  # the file's P
            if _same(t.sub(R_other), t.sub(cand), budget):
                slip = AXIS if int(local.args[1]) == 0 else AXIS_COLUMN
                return _found(slip, f"the Jacobian of the softmax is taken along the other axis than {Y}'s "
                              "softmax normalizes", readable(s.rhs_expr))
    return None


def _same(a, b, budget):
    try:
        return a.shape == b.shape and verify(a, b, budget=min(budget, 5.0), search_counterexample=False).proved
    except (SymattnError, TypeError, ValueError):
        return False
