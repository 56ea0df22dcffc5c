"""Rule ``join_sums``: two sums of one body over adjacent ranges are one sum over their union.

Σ_{k=a}^{b} g(k) + Σ_{k=b+1}^{e} g(k) = Σ_{k=a}^{e} g(k) when both ranges are ranges, possibly empty
(b >= a - 1 and e >= b, each provable from the symbols' assumptions): a sum split at a position c,
``\\sum_{i=1}^{c} + \\sum_{i=c+1}^{n}`` under ``1 \\le c < n``, is the whole sum. The two sums must carry
the same coefficient; a range whose ends are not provably ordered is left as it is.

>>> import sympy as sp
>>> c, g = sp.Symbol("c", integer=True, positive=True), sp.Symbol("g", integer=True, positive=True)
>>> k, x = sp.Dummy("k", integer=True), sp.IndexedBase("x")
>>> join_sums(sp.Sum(x[k], (k, 1, c)) + sp.Sum(x[k], (k, c + 1, c + g))) == sp.Sum(x[k], (k, 1, c + g))
True
"""

from __future__ import annotations

import sympy as sp

MAX_JOINS = 16


def single_sum(term):
    """(coefficient, the one single-limit sum of the term, whose index the coefficient does not hold) or None."""
    coeff, sums = sp.Integer(1), []
    for f in sp.Mul.make_args(term):
        if isinstance(f, sp.Sum) and len(f.limits) == 1:
            sums.append(f)
        else:
            coeff = coeff * f
    if len(sums) != 1 or coeff.has(sums[0].limits[0][0]):
        return None
    return coeff, sums[0]


def _joined(s, t):
    """The sum over the union of the ranges of ``s`` then ``t`` (t starts where s ends), or None."""
    (k, a, b), (h, b1, e) = s.limits[0], t.limits[0]
    if sp.expand(b1 - b - 1) != 0 or sp.expand(s.function - t.function.xreplace({h: k})) != 0:
        return None
    if sp.expand(b - a + 1).is_nonnegative is not True or sp.expand(e - b).is_nonnegative is not True:
        return None
    return sp.Sum(s.function, (k, a, e))


def join_sums(e):
    """``e`` (a sum of terms) with every pair of adjacent sums of one body and one coefficient joined."""
    terms = list(sp.Add.make_args(sp.sympify(e)))
    for _ in range(MAX_JOINS):
        found = False
        for i, u in enumerate(terms):
            pu = single_sum(u)
            for j, w in enumerate(terms):
                pw = single_sum(w) if i != j else None
                if pu is None or pw is None or sp.expand(pu[0] - pw[0]) != 0:
                    continue
                one = _joined(pu[1], pw[1])
                if one is not None:
                    terms = [x for t, x in enumerate(terms) if t not in (i, j)] + [pu[0] * one]
                    found = True
                    break
            if found:
                break
        if not found:
            break
    return sp.Add(*terms)
