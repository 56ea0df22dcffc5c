"""Scalar claims with maxima, minima, absolute values, floors and ceilings, proved by cases.

A difference d of the two sides that holds Max, Min, Abs, floor or ceiling is split into cases
that together cover every value of its symbols:

- the order of its real symbols without a sign (and of 0): for every ordering s_1 >= s_2 >= ... of
  them and 0, each symbol is written as a sum of nonnegative gaps t_i (above 0) or minus such a sum
  (below 0), ties included (a gap may be 0); the orderings together cover every real assignment;
- the residue of each integer symbol a that a floor or ceiling divides by q (lcm Q of the
  divisors, Q <= 12): a = Q j + r for r = 0..Q-1 and an integer j.

In each case a maximum (minimum) is replaced by the argument that is provably at least (at most)
every other one (a difference shown nonnegative by SymPy, or exp / log of arguments so compared,
since both are increasing), |x| by x or -x when the sign of x is known, and floors of an integer plus
a constant by their value; d must then simplify to 0 exactly. Proved when every case does: a claim
for all values, audited like every other. A case that leaves a maximum it cannot resolve makes the
strategy fail (nothing is assumed).
"""

from __future__ import annotations

import itertools
import math

import sympy as sp

from . import dag

#: the largest number of real symbols put in order ((k + 1)! orderings) and of residues
MAX_SYMBOLS = 3
MAX_MODULUS = 12
_NODES = (sp.Max, sp.Min, sp.Abs, sp.floor, sp.ceiling)


def _ge(x, y) -> bool:
    """x >= y is provable: the difference is nonnegative, or both are exp (log) of comparable arguments."""
    if (x - y).is_nonnegative:
        return True
    if isinstance(x, sp.exp) and isinstance(y, sp.exp):
        return _ge(x.args[0], y.args[0])
    if isinstance(x, sp.log) and isinstance(y, sp.log) and x.args[0].is_positive and y.args[0].is_positive:
        return _ge(x.args[0], y.args[0])
    return False


def _resolve(e):
    """Max, Min and Abs replaced where the case decides them (innermost first)."""

    def one(x):
        if isinstance(x, (sp.Max, sp.Min)):
            pick = [a for a in x.args if all(_ge(a, b) if isinstance(x, sp.Max) else _ge(b, a)
                                             for b in x.args if b is not a)]
            return pick[0] if pick else x
        if isinstance(x, sp.Abs):
            a = x.args[0]
            if a.is_nonnegative:
                return a
            if a.is_nonpositive:
                return -a
        return x

    return sp.sympify(e).replace(lambda x: isinstance(x, (sp.Max, sp.Min, sp.Abs)), one)


def _orderings(symbols):
    """Substitutions, one per ordering of ``symbols`` and 0, writing each symbol with gaps >= 0."""
    items = list(symbols) + [None]  # None stands for 0
    for order in itertools.permutations(items):
        gaps = [sp.Dummy(f"t{i}", nonnegative=True) for i in range(len(order) - 1)]
        zero = order.index(None)
        subs = {}
        for i, s in enumerate(order):
            if s is None:
                continue
            if i < zero:
                subs[s] = sp.Add(*gaps[i:zero])
            else:
                subs[s] = -sp.Add(*gaps[zero:i])
        desc = " >= ".join("0" if s is None else str(s) for s in order)
        yield subs, desc


def _divisors(d, integers):
    """The lcm of the denominators q of a/q (a an integer symbol) inside floors and ceilings."""
    Q = 1
    for f in dag.nodes(d):
        if isinstance(f, (sp.floor, sp.ceiling)):
            arg = f.args[0]
            for a in integers:
                coeff = sp.expand(arg).coeff(a)
                if coeff.is_Rational and coeff != 0:
                    Q = math.lcm(Q, int(coeff.q))
    return Q


def _residues(integers, Q):
    if Q == 1 or not integers:
        yield {}, ""
        return
    js = {a: sp.Dummy(f"j_{a}", integer=True) for a in integers}
    for rs in itertools.product(range(Q), repeat=len(integers)):
        yield ({a: Q * js[a] + r for a, r in zip(integers, rs)},
               ", ".join(f"{a} = {Q}·j + {r}" for a, r in zip(integers, rs)))


def by_cases(d, zero) -> tuple[bool, list[str], str]:
    """(proved?, trace, method) for the claim d = 0; ``zero(e)``: True when e is exactly 0."""
    if not dag.has(d, *_NODES):
        return False, [], ""
    free = sorted(d.free_symbols, key=str)
    reals = [s for s in free if isinstance(s, sp.Symbol) and s.is_real and not s.is_integer
             and s.is_positive is None and s.is_negative is None and s.is_nonnegative is None
             and s.is_nonpositive is None]
    integers = [s for s in free if isinstance(s, sp.Symbol) and s.is_integer]
    if any(isinstance(s, sp.Symbol) and s.is_real is not True for s in free):
        return False, ["cases: a symbol that is not known to be real"], ""
    Q = _divisors(d, integers)
    if len(reals) > MAX_SYMBOLS or Q > MAX_MODULUS:
        return False, [f"cases: too many ({len(reals)} real symbols, modulus {Q})"], ""
    trace, count = [], 0
    for subs_o, desc_o in _orderings(reals):
        for subs_r, desc_r in _residues(integers, Q):
            e = _resolve(sp.sympify(d).xreplace({**subs_o, **subs_r}))
            where = "; ".join(x for x in (desc_o, desc_r) if x)
            if dag.has(e, sp.Max, sp.Min, sp.Abs):
                return False, trace + [f"cases: at {where} a maximum, minimum or |·| stays unresolved"], ""
            if not zero(e):
                return False, trace + [f"cases: at {where} the difference does not simplify to 0"], ""
            count += 1
    what = []
    if reals:
        what.append(f"the order of {', '.join(map(str, reals))} and 0")
    if Q > 1:
        what.append(f"the residues of {', '.join(map(str, integers))} mod {Q}")
    trace.append(f"cases: lhs - rhs simplifies to 0 in each of the {count} cases of {' and '.join(what) or 'one case'}")
    return True, trace, f"case split on {' and '.join(what)} (S)"
