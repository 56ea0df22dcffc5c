"""Strategy B: compare the (i, j) entries of both sides with symbolic indices.

Entries of products become sums over fresh Dummy indices (never a fixed name, which
could be captured), entries of Softmax become exp(x_ij) / Σ_k exp(x_kj). Both sides
are then normalized by true scalar identities: expansion (with exp(a + b) =
exp(a) exp(b)), splitting sums over +, pulling factors free of the summation index
out of sums, renaming bound indices canonically, and cancelling.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement

from ..defs.heads import FamilyMember, HeadSum
from ..defs.softmax import Softmax


class NoEntryRule(Exception):
    pass


def _fresh():
    return sp.Dummy("k", integer=True)


def entry(e, i, j):
    """The (i, j) entry of a matrix expression, as a scalar SymPy expression."""
    if isinstance(e, (sp.MatrixSymbol, FamilyMember)):
        # a single row (column) has only index 0 there
        return MatrixElement(e, 0 if e.rows == 1 else i, 0 if e.cols == 1 else j)
    if isinstance(e, sp.MatMul):
        coeff, mats = e.as_coeff_matrices()
        return coeff * _product_entry(mats, i, j)
    if isinstance(e, sp.MatAdd):
        return sp.Add(*[entry(a, i, j) for a in e.args])
    if isinstance(e, sp.Transpose):
        return entry(e.arg, j, i)
    if isinstance(e, Softmax):
        X, k = e.arg, _fresh()
        if e.axis == 0:
            return sp.exp(entry(X, i, j)) / sp.Sum(sp.exp(entry(X, k, j)), (k, 0, X.rows - 1))
        return sp.exp(entry(X, i, j)) / sp.Sum(sp.exp(entry(X, i, k)), (k, 0, X.cols - 1))
    if isinstance(e, sp.Identity):
        return sp.KroneckerDelta(i, j)
    if isinstance(e, sp.ZeroMatrix):
        return sp.Integer(0)
    if isinstance(e, sp.OneMatrix):
        return sp.Integer(1)
    if isinstance(e, sp.HadamardProduct):
        return sp.Mul(*[entry(a, i, j) for a in e.args])
    if isinstance(e, HeadSum):
        k = sp.Dummy("h", integer=True, positive=True)
        return sp.Sum(entry(e.term(k), i, j), (k, 1, e.count))
    if isinstance(e, sp.MatrixBase):
        if i.is_Integer and j.is_Integer:
            return e[i, j]
        raise NoEntryRule("an explicit matrix indexed symbolically")
    if hasattr(e, "entry_rule"):  # nodes that state their own entries (defs/numeric_nodes.py)
        return e.entry_rule(i, j, entry)
    if hasattr(e, "_entry") and getattr(e, "entry_is_opaque", False):
        return MatrixElement(e, i, j)
    raise NoEntryRule(f"no entry rule for {type(e).__name__}")


def _product_entry(mats, i, j):
    """(A_1 A_2 ... A_r)_ij = Σ_k (A_1)_ik (A_2 ... A_r)_kj, with a fresh k each time."""
    if len(mats) == 1:
        return entry(mats[0], i, j)
    first, k = mats[0], _fresh()
    return sp.Sum(entry(first, i, k) * _product_entry(mats[1:], k, j), (k, 0, first.cols - 1))


def pull_constants(x):
    """Σ_k c·a_k = c·Σ_k a_k for c free of k (bottom-up), splitting sums over +."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    args = [pull_constants(a) for a in x.args]
    if isinstance(x, sp.Sum):
        body, limits = args[0], x.limits
        (k, lo, hi), = limits
        if lo == hi:  # a sum over a single index value
            return pull_constants(sp.expand(body.xreplace({k: lo})))
        body = sp.expand(body)
        terms = []
        for t in sp.Add.make_args(body):
            const, dep = t.as_independent(k, as_Add=False)
            terms.append(const * (sp.Sum(dep, (k, lo, hi)) if dep.has(k) else dep * (hi - lo + 1)))
        return sp.Add(*terms)
    return x.func(*args) if args != list(x.args) else x


def rename_bound(x, depth: int = 0, fresh: bool = True):
    """Rename each bound index by its nesting depth (_b0, _b1, ...), so that alpha-equivalent
    sums become identical. Indices are first made fresh Dummies, so no renaming can capture."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    if isinstance(x, (sp.Sum, sp.Product)):
        (k, lo, hi), = x.limits
        new = sp.Dummy("b") if fresh else sp.Symbol(f"_b{depth}", integer=True)
        body = rename_bound(x.function.xreplace({k: new}), depth + 1, fresh)
        return x.func(body, (new, rename_bound(lo, depth, fresh), rename_bound(hi, depth, fresh)))
    args = [rename_bound(a, depth, fresh) for a in x.args]
    return x.func(*args) if args != list(x.args) else x


def normalize(x):
    x = sp.expand(x, power_exp=True)
    x = pull_constants(x)
    x = sp.expand(x, power_exp=True)
    x = rename_bound(rename_bound(x), fresh=False)
    return sp.cancel(sp.together(x))


def same_entrywise(lhs, rhs, budget) -> tuple[bool, list[str]]:
    i, j = sp.Dummy("i", integer=True), sp.Dummy("j", integer=True)
    try:
        a, b = entry(lhs, i, j), entry(rhs, i, j)
    except NoEntryRule as exc:
        return False, [f"entrywise: {exc}"]
    trace = [f"entry (i, j) of lhs: {sp.sstr(a)[:200]}", f"entry (i, j) of rhs: {sp.sstr(b)[:200]}"]
    with budget.limit(what="entrywise normalization"):
        d = normalize(a - b)
    if d == 0:
        trace.append("lhs_ij - rhs_ij normalizes to 0 for symbolic i, j")
        return True, trace
    trace.append(f"lhs_ij - rhs_ij normalizes to {sp.sstr(d)[:200]}, not 0")
    return False, trace
