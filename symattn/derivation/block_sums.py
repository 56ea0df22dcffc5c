r"""Sums over a block of positions whose limits divide by a dimension: segment means, where m divides n.

Papers average segments of a sequence, as Nyströmformer's landmarks:
``\tilde{q}_j = \sum_{i=(j-1) n/m + 1}^{(j-1) n/m + n/m} \frac{q_i}{n/m}``, j = 1, ..., m: the mean of
the j-th of m blocks of n/m consecutive rows. The sum has n/m terms, a whole number only where m
divides n, which the paper presumes (Xiong et al. state it in words). It is read under that assumption,
stated: n is read as m c with c = n/m a positive whole number (a symbol named ``n/m``), so that the block
is the c positions (j - 1) c + 1, ..., j c, a sum of c terms; every step is then checked for every m, c
(every n that m divides), and its scope says so. The reader checks that the block lies in the positions
1..n for every j of its range. A sum over the m blocks is the sum over all n positions by the engine's
``merge_blocks`` rule.

Refused with a message naming the construct: a number of terms that is not n/m of two dimensions
(2n/m, n/(m+1)), a dimension already read otherwise (n = t + s for a position t, d = 2p for a
rotation), a block that leaves the positions, and a product over a block.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from .. import defs as D
from ..errors import NotationShapeError
from . import ast
from .symbols import is_matrix


def is_block_count(count) -> bool:
    """True when the number of terms of a range is a quotient by a dimension (n/m, or 2n/m)."""
    _, den = sp.fraction(sp.together(count))
    return bool(den.free_symbols)


def refuse_block_sum(scope, node, rng: str, count) -> None:
    """Refuse the block sum ``node`` (its range written ``rng``, with ``count`` terms)."""
    _, den = sp.fraction(sp.together(count))
    divisor = sp.sstr(den)
    scope.fail(node, f"{rng} is a sum over a block of positions: it has {sp.sstr(count)} terms, a whole number only "
               f"where {divisor} divides the positions, and sums over blocks of positions (segment means) are not "
               "read, whether or not the file states the divisibility",
               "the block's terms written out at given sizes, or a sum from 1 over a number of terms that is a "
               "dimension or a number (\\sum_{i=1}^{n} q_i)", NotationShapeError)


def _dimension(scope, x):
    """True when ``x`` is the symbol of a declared dimension."""
    return isinstance(x, sp.Symbol) and x in scope.dims.values()


def block_sum(scope, node, L, limit):
    """The value of the block sum ``node`` (its limits read by ``limit``), or None where ``node`` is no block sum."""
    lower = node.lower if node.lower is not None else ast.Num(node.pos, 1)
    if node.upper is None:
        return None
    lo, hi = limit(scope, lower, L, node), limit(scope, node.upper, L, node)
    count = sp.expand(hi - lo + 1)
    if count.is_Integer or not is_block_count(count):
        return None
    rng = f"\\sum_{{{node.index}={lower.text()}}}^{{{node.upper.text()}}}"
    num, den = sp.fraction(sp.together(count))
    if not (_dimension(scope, num) and _dimension(scope, den) and num != den):
        refuse_block_sum(scope, node, rng, count)
    n, m = num, den
    whole = scope.subs.get(n)
    size = sp.expand(whole / m) if whole is not None else None
    if whole is None:
        size = sp.Dummy(f"{n}/{m}", integer=True, positive=True)
        whole = scope.subs[n] = m * size
        scope.notes.append(f"{rng} is a sum over a block of {n}/{m} positions: read where {m} divides {n} (as the "
                           f"paper presumes), {n} = {m} · ({n}/{m}), each step checked for every {m} and every "
                           f"whole {n}/{m} >= 1")
    elif not (isinstance(size, sp.Dummy) and size.name == f"{n}/{m}"):
        scope.fail(node, f"{rng} is a sum over a block of {n}/{m} positions, and {n} is already read as "
                   f"{sp.sstr(whole)}: the block is not read", "the block's terms written out at given sizes",
                   NotationShapeError)
    lo_c, hi_c = sp.expand(lo.xreplace({n: whole})), sp.expand(hi.xreplace({n: whole}))
    _check_inside(scope, node, rng, L, lo_c, hi_c, whole, n)
    j = node.index

    def term(k):
        return scope._expr(node.body, {**L, j: lo_c + k - 1, (j, "count"): whole})

    first = term(sp.Integer(1))
    if not is_matrix(first):
        scope.fail(node.body, f"the summand of the block sum {rng} is a scalar", "a row of a declared matrix, "
                   "as in q_i")
    return D.head_sum(term, size)


def _check_inside(scope, node, rng, L, lo, hi, whole, n):
    """The block lo..hi lies in the positions 1..n for every value of the indices it depends on (checked at
    the ends of their ranges, the limits being linear in them)."""
    ends = [{}]
    for letter, v in L.items():
        if not isinstance(letter, str) or not isinstance(v, sp.Symbol) or not (lo.has(v) or hi.has(v)):
            continue
        top = L.get((letter, "count"), scope.counts.get(letter))
        if top is None or sp.degree(lo, v) > 1 or sp.degree(hi, v) > 1:
            scope.fail(node, f"{rng}: the block's limits depend on {letter}, whose range is not declared",
                       f"a range {letter} = 1, \\cdots, m", NotationShapeError)
        top = sp.sympify(top).xreplace(scope.subs)
        ends = [{**e, v: x} for e in ends for x in (sp.Integer(1), top)]
    for e in ends:
        a, b = sp.expand(lo.xreplace(e)), sp.expand(hi.xreplace(e))
        for bad, what in ((a - 1, "starts before the first position"), (whole - b, f"ends after the last ({n})"),
                          (b - a + 1, "is empty")):
            if not nonnegative(bad):
                scope.fail(node, f"{rng} is a block of positions that {what} for some values of its indices",
                           "a block (j - 1) n/m + 1, ..., j n/m for j = 1, ..., m", NotationShapeError)


def nonnegative(x) -> bool:
    """True when ``x``, a polynomial in positive whole numbers, is provably >= 0: after writing each such
    symbol s as 1 + s' (s' >= 0), every coefficient is >= 0 (a sufficient test)."""
    x = sp.expand(x)
    if x.is_nonnegative:
        return True
    syms = sorted(x.free_symbols, key=sp.default_sort_key)
    if not all(v.is_integer and v.is_positive for v in syms):
        return False
    shifted = {v: sp.Dummy(integer=True, nonnegative=True) + 1 for v in syms}
    poly = sp.Poly(sp.expand(x.xreplace(shifted)), *[shifted[v] - 1 for v in syms]) if syms else None
    return poly is not None and all(c >= 0 for c in poly.coeffs())


def _blocks(scope):
    """(n, m, c) for each dimension n that a block sum reads as m · c, c the symbol named n/m."""
    out = []
    for n, w in (getattr(scope, "subs", None) or {}).items():
        for c in (a for a in sp.Mul.make_args(w) if isinstance(a, sp.Dummy)):
            m = sp.expand(w / c)
            if c.name == f"{n}/{m}":
                out.append((n, m, c))
    return out


def blocks_as_written(scope, v):
    """The verdict ``v`` with each n read as m · (n/m) (a block sum) named as the file writes it: the scope says
    that m divides n, and a counterexample gives n = m · (n/m), never n/m."""
    text, cex = v.scope, v.counterexample
    for n, m, c in _blocks(scope):
        key = next((k for k in (str(c), c.name) if cex is not None and k in cex.dims), None)
        if key is not None and str(m) in cex.dims:
            dims = {(str(n) if k == key else k): (x * cex.dims[str(m)] if k == key else x)
                    for k, x in cex.dims.items()}
            cex = replace(cex, dims=dims)
            text = "counterexample at " + ", ".join(f"{k}={x}" for k, x in dims.items())
        elif str(c) in text or c.name in text:
            text = f"{text.replace(str(c), c.name)}; where {m} divides {n} ({n} = {m} · {n}/{m})"
    return v if (text, cex) == (v.scope, v.counterexample) else replace(v, scope=text, counterexample=cex)
