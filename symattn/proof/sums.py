"""Rules for finite sums Σ_{k=lo}^{hi} that strategy B (entrywise) applies; the trust base.

Every rule is a true identity for integer indices in their ranges and finite real entries:

- ``simplify_sum`` (pulling constants): Σ_k (a_k + b_k) = Σ_k a_k + Σ_k b_k;
  Σ_k c·a_k = c·Σ_k a_k for c free of k; Σ_{k=lo}^{hi} c = (hi - lo + 1)·c.
- ``eliminate_delta``: Σ_{k=lo}^{hi} [k = u]·f(k) = f(u) when lo <= u <= hi is provable
  (KroneckerDelta, the entries of Identity and of permutation matrices);
  [σ(k) = u] = [k = σ⁻¹(u)] for a permutation σ of {0..n-1} and u in {0..n-1}.
- ``reindex_permutation``: Σ_{k=0}^{n-1} f(σ(k)) = Σ_{k=0}^{n-1} f(k) when k occurs only as σ(k),
  σ a permutation of {0..n-1} (a bijection merely reorders the terms of a finite sum).
- ``restrict_to_visible``: Σ_{k=lo}^{hi} f(k)·exp(Visible(k, u)) = Σ_{k=lo}^{u} f(k) when
  lo <= u <= hi is provable, and = Σ_{k=lo}^{hi} f(k) when u >= hi, since exp(Visible(k, u))
  is exp(0) = 1 for k <= u and exp(-oo) = 0 for k > u (the -inf mask), and f is finite.
- short sums: a sum whose range has a concrete length <= 8 is written out.
- a Sum over several limits (SymPy merges nested sums) is the nested sums, innermost limit first.

Index ranges: the free indices i, j of an entry range over the rows and columns of the matrix;
a bound index over its limits; σ(k) over {0..n-1}. "Provable" means SymPy's assumptions on the
positive integer dimension symbols decide the inequality; otherwise the rule does not fire.
"""

from __future__ import annotations

import sympy as sp

from ..defs.mask import Visible
from ..defs.permutation import PermIndex

SHORT_SUM = 8


def _nonneg(x) -> bool:
    return sp.expand(x).is_nonnegative is True


def bounds(u, ranges: dict):
    """(lower, upper) with lower <= u <= upper, from the ranges of the indices in u; or None."""
    if isinstance(u, PermIndex):
        return sp.Integer(0), u.args[1] - 1
    for v, (a, b) in ranges.items():
        if v.is_Symbol and u.has(v):
            c = sp.expand(u - v)
            if c.has(v) or any(c.has(w) for w in ranges):
                return None
            return a + c, b + c
    return u, u


def in_range(u, lo, hi, ranges: dict) -> bool:
    """True when lo <= u <= hi is provable from the known index ranges and the assumptions."""
    b = bounds(u, ranges)
    return b is not None and _nonneg(b[0] - lo) and _nonneg(hi - b[1])


def _delta_target(delta, k, lo, hi, ranges):
    """For a factor [a = b] of a term summed over k: the value u with [a = b] = [k = u], or None."""
    a, b = delta.args
    for x, y in ((a, b), (b, a)):
        if x == k and not y.has(k) and in_range(y, lo, hi, ranges):
            return y
        if (isinstance(x, PermIndex) and x.args[2] == k and not y.has(k)
                and in_range(y, 0, x.args[1] - 1, ranges)):
            u = PermIndex(x.args[0], x.args[1], y, 1 - x.args[3])
            if in_range(u, lo, hi, ranges):
                return u
    return None


def eliminate_delta(term, k, lo, hi, ranges):
    """Σ_k [k = u]·f(k) -> f(u), or None when no delta factor of the term qualifies."""
    for f in sp.Mul.make_args(term):
        if isinstance(f, sp.KroneckerDelta):
            u = _delta_target(f, k, lo, hi, ranges)
            if u is not None:
                rest = sp.Mul(*[g for g in sp.Mul.make_args(term) if g is not f])
                return rest.xreplace({k: u})
    return None


def restrict_to_visible(term, k, lo, hi, ranges):
    """Σ_{k=lo}^{hi} f(k)·exp(Visible(k, u)) -> (f(k), new hi), or None."""
    for f in sp.Mul.make_args(term):
        if isinstance(f, sp.exp) and isinstance(f.args[0], Visible):
            key, u = f.args[0].args
            if key != k or u.has(k):
                continue
            rest = sp.Mul(*[g for g in sp.Mul.make_args(term) if g is not f])
            b = bounds(u, ranges)
            if b is not None and _nonneg(b[0] - hi):
                return rest, hi
            if in_range(u, lo, hi, ranges):
                return rest, u
    return None


def reindex_permutation(body, k, lo, hi):
    """Σ_{k=0}^{n-1} f(σ(k)) -> Σ_k f(k) when k occurs only as σ(k), or None."""
    if lo != 0:
        return None
    for p in body.atoms(PermIndex):
        if p.args[2] == k and sp.expand(hi - (p.args[1] - 1)) == 0:
            hole = sp.Dummy("hole")
            if not body.xreplace({p: hole}).has(k):
                return body.xreplace({p: k})
    return None


def simplify_sum(body, k, lo, hi, ranges, recurse):
    """Σ_{k=lo}^{hi} body under the rules above; ``recurse`` re-simplifies a new expression."""
    inner = dict(ranges)
    inner[k] = (lo, hi)
    length = sp.expand(hi - lo + 1)
    if length.is_Integer and 0 < int(length) <= SHORT_SUM:
        return recurse(sp.Add(*[body.xreplace({k: lo + r}) for r in range(int(length))]), ranges)
    out = []
    for t in sp.Add.make_args(sp.expand(body)):
        got = eliminate_delta(t, k, lo, hi, inner)
        if got is not None:
            out.append(recurse(got, ranges))
            continue
        cut = restrict_to_visible(t, k, lo, hi, ranges)
        if cut is not None:
            rest, new_hi = cut
            out.append(recurse(sp.Sum(rest, (k, lo, new_hi)), ranges))
            continue
        const, dep = t.as_independent(k, as_Add=False)
        if not dep.has(k):
            out.append(const * dep * length)
            continue
        moved = reindex_permutation(dep, k, lo, hi)
        if moved is not None:
            out.append(const * recurse(sp.Sum(moved, (k, lo, hi)), ranges))
            continue
        out.append(const * sp.Sum(dep, (k, lo, hi)))
    return sp.Add(*out)


def simplify_sums(x, ranges: dict | None = None):
    """Apply the sum rules bottom-up to every Sum in ``x``."""
    ranges = ranges or {}
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    if isinstance(x, sp.Sum):
        # SymPy merges nested sums into one Sum whose limits run innermost first
        limits = list(x.limits)
        scope = dict(ranges)
        scope.update({k: (lo, hi) for k, lo, hi in limits})
        body = simplify_sums(x.function, scope)
        for idx, (k, lo, hi) in enumerate(limits):
            outer = dict(ranges)
            outer.update({k2: (lo2, hi2) for k2, lo2, hi2 in limits[idx + 1:]})
            body = simplify_sum(body, k, lo, hi, outer, simplify_sums)
        return body
    args = [simplify_sums(a, ranges) for a in x.args]
    return x.func(*args) if args != list(x.args) else x
