"""Certify that an exact scalar is nonzero, with interval arithmetic (mpmath.iv).

The difference of two sides at a counterexample is an exact expression built from
integers, square roots and exp. Enclosing it in an interval with outward rounding
and finding zero outside the interval proves it nonzero; floating point alone
would not.
"""

from __future__ import annotations

import mpmath
import sympy as sp

iv = mpmath.iv


class Uncertifiable(Exception):
    pass


def _to_interval(e):
    if e.is_Integer:
        return iv.mpf(int(e))
    if e.is_Rational:
        return iv.mpf(int(e.p)) / iv.mpf(int(e.q))
    if e is sp.E:
        return iv.exp(iv.mpf(1))
    if e is sp.pi:
        return iv.pi
    if isinstance(e, sp.Add):
        out = iv.mpf(0)
        for a in e.args:
            out = out + _to_interval(a)
        return out
    if isinstance(e, sp.Mul):
        out = iv.mpf(1)
        for a in e.args:
            out = out * _to_interval(a)
        return out
    if isinstance(e, sp.exp):
        return iv.exp(_to_interval(e.args[0]))
    if isinstance(e, sp.cos):
        return iv.cos(_to_interval(e.args[0]))
    if isinstance(e, sp.sin):
        return iv.sin(_to_interval(e.args[0]))
    if isinstance(e, sp.log):
        return iv.log(_to_interval(e.args[0]))
    if isinstance(e, sp.tanh):  # tanh x = 1 - 2 / (exp(2x) + 1)
        return 1 - 2 / (iv.exp(2 * _to_interval(e.args[0])) + 1)
    if isinstance(e, sp.Pow):
        base, ex = _to_interval(e.base), e.exp
        if ex.is_Integer:
            k = int(ex)
            out = iv.mpf(1)
            for _ in range(abs(k)):
                out = out * base
            return out if k >= 0 else 1 / out
        if ex.is_Rational:
            return iv.exp(iv.log(base) * _to_interval(ex))
        return iv.exp(iv.log(base) * _to_interval(ex))
    raise Uncertifiable(f"cannot enclose {type(e).__name__}: {sp.sstr(e)[:80]}")


PRECISIONS = (80, 200, 600)


def certify_nonzero(value, precisions=PRECISIONS) -> str | None:
    """A certificate (text) that ``value`` is nonzero, or None if none was found.

    An exact rational is its own certificate; anything else is enclosed by interval arithmetic
    at each of ``precisions`` (bits) in turn until the enclosure excludes 0.
    """
    value = sp.sympify(value)
    if value.is_Rational:
        return f"exact rational value {value} != 0" if value != 0 else None
    saved = iv.prec
    try:
        for prec in precisions:
            iv.prec = prec
            try:
                x = _to_interval(value)
            except (Uncertifiable, ZeroDivisionError, ValueError):
                return None
            if x.a > 0 or x.b < 0:
                lo, hi = (mpmath.nstr(mpmath.mpf(v), 12) for v in x._mpi_)
                return (f"interval arithmetic at {prec} bits encloses lhs - rhs in "
                        f"[{lo}, {hi}], which excludes 0")
    finally:
        iv.prec = saved
    return None


def enclose(value, prec: int = 80):
    """An interval (mpmath.iv, outward rounding at ``prec`` bits) that contains the exact ``value``.

    Raises :class:`Uncertifiable` for a node that cannot be enclosed.
    """
    saved = iv.prec
    try:
        iv.prec = prec
        return _to_interval(sp.sympify(value))
    finally:
        iv.prec = saved


def _exp_generators(x):
    """``x`` with every exp(t) written as a product of powers of independent symbols.

    Each additive term of t is c·g with c rational; for each g, exp(c·g) = w_g^(c·L_g) with
    w_g := exp(g / L_g) and L_g the least common multiple of the denominators of the c's of g,
    so every exponent is an integer and the rewriting is an identity.
    """
    exps = set(x.atoms(sp.exp))
    if x.has(sp.E):
        exps.add(sp.E)
    split = {}
    for a in exps:
        arg = sp.Integer(1) if a is sp.E else a.args[0]
        split[a] = [t.as_coeff_Mul() for t in sp.Add.make_args(sp.expand(arg))]
    lcm = {}
    for terms in split.values():
        for c, g in terms:
            lcm[g] = sp.ilcm(lcm.get(g, 1), sp.Rational(c).q)
    w = {g: sp.Dummy("w") for g in lcm}
    table = {}
    for a, terms in split.items():
        out = sp.Integer(1)
        for c, g in terms:
            out *= w[g] ** int(sp.Rational(c) * lcm[g])
        table[a] = out
    return x.xreplace(table)


def proves_zero(value) -> bool:
    """True only when ``value`` is shown to be exactly 0.

    A value holding a Float is never shown 0 (SymPy rounds Float arithmetic); sin and cos are
    written with exp; each exp is written over independent generators (:func:`_exp_generators`)
    and the result is cancelled as a rational function. Independence can only hide a true zero,
    never make a nonzero value 0.
    """
    x = sp.sympify(value)
    if x.is_Rational:
        return x == 0
    if x.has(sp.Float):
        return False
    if x.has(sp.sin, sp.cos, sp.tan):
        x = x.rewrite(sp.exp)
    if x.has(sp.exp, sp.E):
        x = _exp_generators(x)
    return sp.cancel(sp.together(sp.expand(x))) == 0
