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
- ``restrict_from_visible`` (a window's lower end): Σ_{k=lo}^{hi} f(k)·exp(Visible(u, k + c)) =
  Σ_{k=u-c}^{hi} f(k) when lo <= u - c <= hi + 1 is provable, and = Σ_{k=lo}^{hi} f(k) when u - c <= lo,
  since key u is visible to k + c exactly when u <= k + c.
- ``split_into_blocks`` (division with remainder): Σ_{k=0}^{R·N-1} f(k, floor(k/R))
  = Σ_{q=1}^{N} Σ_{s=0}^{R-1} f(R(q-1) + s, q - 1) when R and N = (hi + 1)/R are provably positive
  integers: every k in 0..RN-1 is R(q-1) + s for exactly one such (q, s), and then floor(k/R) = q - 1.
  This is how an entry of a stack or concatenation over heads (block h = floor(k/R) + 1) meets a sum
  over heads.
- ``merge_blocks`` (the converse of ``split_into_blocks``): Σ_{q=lo}^{hi} Σ_{s=0}^{R-1} f(Rq + s)
  = Σ_{k=R·lo}^{R·hi+R-1} f(k) when R is a provably positive integer free of q, hi >= lo - 1 is
  provable, and the inner body depends on q and s only through Rq + s: every k of the merged range is
  Rq + s for exactly one q in lo..hi and s in 0..R-1. A sum over the m blocks of R consecutive
  positions (segment means) is the sum over all mR positions.
- ``shift_to_zero`` (translating the index): Σ_{k=lo}^{hi} f(k) = Σ_{m=0}^{hi-lo} f(m + lo) for an
  integer lo (provably), m a fresh integer index; true for every integer hi, also for SymPy's
  reversed (Karr) sums with hi < lo - 1, since it only translates the range. Applied last, to a term
  no other rule changed, and only when k occurs in no delta, mask, floor, ceiling or permutation
  index (the rules above look for k there): so Σ_{h=1}^{N} x_h and Σ_{k=0}^{N-1} x_{k+1} meet.
- short sums: a sum whose range has a concrete length <= 8 is written out.
- a Sum over several limits (SymPy merges nested sums) is the nested sums, innermost limit first.

Scalar rules applied to every node on the way (``local_rules``), each true for the values the
entries can take:

- ``cancel_permutation``: [σ(a) = σ(b)] = [a = b] for a permutation σ of {0..n-1} and a, b provably
  in {0..n-1} (σ is injective; the same holds for σ⁻¹).
- ``linearize_delta``: exp(c·[a = b]) = 1 + (exp(c) - 1)·[a = b] for a finite c (no mask, no
  infinity in it), since [a = b] is 0 or 1 (so a sum of exp of a delta meets delta elimination:
  Σ_k exp([k = j]) = e + n - 1). (SymPy itself evaluates [a = b]^p to [a = b].)
- ``absorb_mask_scale``: c·Visible(k, u) = Visible(k, u) for c provably positive, since Visible is
  0 or -oo and c·0 = 0, c·(-oo) = -oo (a mask scaled inside a Softmax is the same mask).

The interchange form (``prenex``), tried by strategy B only when the usual normal form leaves a
difference, rewrites by two more identities of finite sums:

- ``pull_sums_out``: (Σ_k a_k)·b = Σ_k a_k·b (distributivity; the bound index is first renamed to a
  fresh one, so nothing in b is captured); a sum of a sum is one sum over both indices; a sum of a
  sum of terms is the sum of the sums of each term. Sums inside a function (exp) or a denominator are
  normalized on their own, never pulled through it.
- ``order_limits``: Σ_j Σ_k f = Σ_k Σ_j f when no bound of the one depends on the other (finite sums
  commute); the limits are ordered by their ranges and by where their index occurs in the body, a
  key that does not depend on the names of the indices.

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
    return provably_nonnegative(x)


def provably_nonnegative(x) -> bool:
    """True when x >= 0 follows from the assumptions of its symbols: SymPy's own inference, or, for a
    polynomial in integer symbols each positive or nonnegative, every coefficient >= 0 once each positive
    symbol p is written 1 + p' (p' >= 0), a sufficient test (a + 2h - 1 >= 0 for positive a, h)."""
    x = sp.expand(x)
    if x.is_nonnegative is True:
        return True
    syms = sorted(x.free_symbols, key=sp.default_sort_key)
    if not syms or not all(v.is_integer and (v.is_positive or v.is_nonnegative) for v in syms):
        return False
    if not x.is_polynomial(*syms):
        return False
    fresh = {v: sp.Dummy(integer=True, nonnegative=True) for v in syms}
    y = sp.expand(x.xreplace({v: fresh[v] + 1 if v.is_positive else fresh[v] for v in syms}))
    return all(c >= 0 for c in sp.Poly(y, *fresh.values()).coeffs())


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
        shift = sp.expand(x - k)  # [k + c = y] = [k = y - c]: an index written with an offset (a 1-based h - 1)
        if x.has(k) and not shift.has(k) and not y.has(k) and in_range(y - shift, lo, hi, ranges):
            return y - shift
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


def restrict_from_visible(term, k, lo, hi, ranges):
    """Σ_{k=lo}^{hi} f(k)·exp(Visible(u, k + c)) -> (f(k), new lo), or None: the key u is visible to k + c
    exactly when k >= u - c (a window's lower end)."""
    for f in sp.Mul.make_args(term):
        if isinstance(f, sp.exp) and isinstance(f.args[0], Visible):
            u, y = f.args[0].args
            c = sp.expand(y - k)
            if u.has(k) or c.has(k) or not y.has(k):
                continue
            rest = sp.Mul(*[g for g in sp.Mul.make_args(term) if g is not f])
            b = bounds(u, ranges)
            if b is not None and _nonneg(lo - (b[1] - c)):
                return rest, lo
            if in_range(u - c, lo, hi + 1, ranges):
                return rest, sp.expand(u - c)
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


def _block_size(f, k):
    """R when the floor f is floor(k/R) for a provably positive integer R; None otherwise."""
    c = sp.expand(f.args[0] / k)
    if c.has(k) or c == 0:
        return None
    R = sp.simplify(1 / c)
    return R if (R.is_integer is True and R.is_positive is True) else None


def split_into_blocks(body, k, lo, hi):
    """Σ_{k=0}^{hi} body with floor(k/R) in body -> Σ_{q=1}^{N} Σ_{s=0}^{R-1} body(R(q-1)+s), or None."""
    if lo != 0:
        return None
    for f in sorted(body.atoms(sp.floor), key=sp.default_sort_key):
        R = _block_size(f, k)
        if R is None:
            continue
        N = sp.simplify((hi + 1) / R)
        if not (N.is_integer is True and N.is_positive is True):
            continue
        q = sp.Dummy("q", integer=True, positive=True)
        s = sp.Dummy("s", integer=True, nonnegative=True)
        inner = body.xreplace({f: q - 1}).xreplace({k: R * (q - 1) + s})
        return sp.Sum(sp.Sum(sp.expand(inner), (s, 0, R - 1)), (q, 1, N))
    return None


def merge_blocks(body, k, lo, hi):
    """Σ_{k=lo}^{hi} Σ_{s=0}^{R-1} f(Rk + s) -> Σ_{u=R lo}^{R hi + R - 1} f(u), or None (``body`` is the inner sum)."""
    if not (isinstance(body, sp.Sum) and len(body.limits) == 1):
        return None
    s, a, b = body.limits[0]
    R, lo, hi = sp.expand(b + 1), sp.sympify(lo), sp.sympify(hi)
    if a != 0 or R.has(k) or R.has(s) or R.is_integer is not True or R.is_positive is not True:
        return None
    if sp.expand(hi - lo + 1).is_nonnegative is not True or (lo.has(s) or hi.has(s)):
        return None
    u = sp.Dummy("u", integer=True)
    f = sp.expand(body.function.xreplace({s: u - R * k}))
    if f.has(k):
        return None
    return sp.Sum(f, (u, sp.expand(R * lo), sp.expand(R * hi + R - 1)))


_INDEX_SENSITIVE = (sp.KroneckerDelta, Visible, sp.floor, sp.ceiling, PermIndex)


def shift_to_zero(body, k, lo, hi):
    """Σ_{k=lo}^{hi} body -> Σ_{m=0}^{hi-lo} body(m + lo) for a provably integer lo != 0, or None.

    Not applied when k occurs inside a delta, a mask, a floor, a ceiling or a permutation index,
    where the other rules of this module look for k itself."""
    lo = sp.sympify(lo)
    if lo == 0 or lo.is_integer is not True or not body.has(k):
        return None
    if any(a.has(k) for a in body.atoms(*_INDEX_SENSITIVE)):
        return None
    m = sp.Dummy("m", integer=True)
    return sp.Sum(body.xreplace({k: m + lo}), (m, 0, sp.expand(hi - lo)))


def simplify_sum(body, k, lo, hi, ranges, recurse):
    """Σ_{k=lo}^{hi} body under the rules above; ``recurse`` re-simplifies a new expression."""
    inner = dict(ranges)
    inner[k] = (lo, hi)
    length = sp.expand(hi - lo + 1)
    if length.is_Integer and 0 < int(length) <= SHORT_SUM:
        return recurse(sp.Add(*[body.xreplace({k: lo + r}) for r in range(int(length))]), ranges)
    if body.has(sp.floor):
        split = split_into_blocks(body, k, lo, hi)
        if split is not None:
            return recurse(split, ranges)
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
        cut = restrict_from_visible(t, k, lo, hi, ranges)
        if cut is not None:
            rest, new_lo = cut
            out.append(recurse(sp.Sum(rest, (k, new_lo, hi)), ranges))
            continue
        const, dep = t.as_independent(k, as_Add=False)
        if not dep.has(k):
            out.append(const * dep * length)
            continue
        merged = merge_blocks(dep, k, lo, hi)
        if merged is not None:
            out.append(const * recurse(merged, ranges))
            continue
        moved = reindex_permutation(dep, k, lo, hi)
        if moved is not None:
            out.append(const * recurse(sp.Sum(moved, (k, lo, hi)), ranges))
            continue
        shifted = shift_to_zero(dep, k, lo, hi)
        out.append(const * (sp.Sum(dep, (k, lo, hi)) if shifted is None else shifted))
    return sp.Add(*out)


def cancel_permutation(delta, ranges):
    """[σ(a) = σ(b)] -> [a = b] when a and b are provably in σ's domain; None otherwise."""
    a, b = delta.args
    if not (isinstance(a, PermIndex) and isinstance(b, PermIndex)):
        return None
    (sa, na, ka, ia), (sb, nb, kb, ib) = _perm_parts(a), _perm_parts(b)
    if sa != sb or na != nb or ia != ib:
        return None
    if not (in_range(ka, 0, na - 1, ranges) and in_range(kb, 0, na - 1, ranges)):
        return None
    return sp.KroneckerDelta(ka, kb)


def _perm_parts(x):
    """(σ, n, k, inverse) of σ(k) or σ⁻¹(k); inverse is 0 when the node omits it."""
    args = x.args
    return (args[0], args[1], args[2], args[3] if len(args) > 3 else sp.Integer(0))


def linearize_delta(x):
    """exp(c·[a = b]) -> 1 + (exp(c) - 1)·[a = b]; None otherwise."""
    if isinstance(x, sp.exp):
        c, rest = x.args[0].as_independent(sp.KroneckerDelta, as_Add=False)
        if (isinstance(rest, sp.KroneckerDelta) and not c.has(sp.KroneckerDelta, Visible)
                and not c.has(sp.oo, -sp.oo, sp.zoo, sp.nan)):
            return 1 + (sp.exp(c) - 1) * rest
    return None


def absorb_mask_scale(x):
    """c·Visible(k, u) -> Visible(k, u) for a provably positive factor c; None otherwise."""
    if not x.is_Mul:
        return None
    masks = [f for f in x.args if isinstance(f, Visible)]
    if len(masks) != 1:
        return None
    c = sp.Mul(*[f for f in x.args if f is not masks[0]])
    if c.is_positive is True and c.is_finite is True:
        return masks[0]
    return None


def local_rules(x, ranges):
    """Apply the scalar rules above to the node ``x`` (its children are already done)."""
    if isinstance(x, sp.KroneckerDelta):
        got = cancel_permutation(x, ranges)
        return x if got is None else got
    got = linearize_delta(x)
    if got is None:
        got = absorb_mask_scale(x)
    return x if got is None else got


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
    x = x.func(*args) if args != list(x.args) else x
    return local_rules(x, ranges) if isinstance(x, sp.Basic) and not x.is_Atom else x


def _fresh_limits(x):
    """The Sum x with every index it binds renamed to a fresh Dummy (alpha-renaming)."""
    mapping = {k: sp.Dummy("k", integer=True) for k, _, _ in x.limits}
    limits = [(mapping[k], lo.xreplace(mapping), hi.xreplace(mapping)) for k, lo, hi in x.limits]
    return x.function.xreplace(mapping), limits


def pull_sums_out(x):
    """Σ inside products pulled to the front: (Σ_k a_k)·b -> Σ_k a_k·b; nested sums merged."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    if isinstance(x, sp.Sum):
        f = pull_sums_out(x.function)
        if f.is_Add:
            return sp.Add(*[pull_sums_out(sp.Sum(t, *x.limits)) for t in f.args])
        if isinstance(f, sp.Sum):
            return sp.Sum(f.function, *f.limits, *x.limits)  # the inner limits stay innermost
        return sp.Sum(f, *x.limits)
    if x.is_Pow and x.exp.is_Integer and 2 <= x.exp <= 4 and isinstance(base := pull_sums_out(x.base), sp.Sum):
        body, limits = sp.Integer(1), []  # (Σ_k a_k)² -> Σ_k Σ_l a_k·a_l: each factor with indices of its own
        for _ in range(int(x.exp)):
            f, lim = _fresh_limits(base)
            body, limits = body * f, limits + lim
        return pull_sums_out(sp.Sum(sp.expand(body), *limits))
    if x.is_Mul:
        args = [pull_sums_out(a) for a in x.args]
        sums = [a for a in args if isinstance(a, sp.Sum)]
        if not sums:
            return sp.Mul(*args)
        body, limits = sp.Mul(*[a for a in args if not isinstance(a, sp.Sum)]), []
        for one in sums:
            f, lim = _fresh_limits(one)
            body, limits = body * f, limits + lim
        return pull_sums_out(sp.Sum(sp.expand(body), *limits))
    args = [pull_sums_out(a) for a in x.args]
    return x.func(*args) if args != list(x.args) else x


def order_limits(x):
    """Sort the limits of every Sum whose bounds are independent of its own indices (bottom-up)."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    args = [order_limits(a) for a in x.args]
    x = x.func(*args) if args != list(x.args) else x
    if not isinstance(x, sp.Sum) or len(x.limits) < 2:
        return x
    bound = {k for k, _, _ in x.limits}
    if len(bound) < len(x.limits):  # one index bound twice (nested sums over k): the order matters
        return x
    if any((lo.free_symbols | hi.free_symbols) & bound for _, lo, hi in x.limits):
        return x
    mark, other = sp.Dummy("at"), sp.Dummy("other")

    def key(limit):
        k, lo, hi = limit
        body = x.function.xreplace({b: (mark if b == k else other) for b in bound})
        return (sp.sstr(lo), sp.sstr(hi), sp.sstr(body))

    return sp.Sum(x.function, *sorted(x.limits, key=key))


def prenex(x):
    """The interchange form of a scalar: sums pulled out of products, their limits ordered."""
    return order_limits(pull_sums_out(sp.expand(x)))
