"""The numbers of the audit: exact rationals where possible, certified intervals elsewhere.

A value is one of

- an exact rational: a Python ``int`` or ``fractions.Fraction``;
- an interval of ``mpmath.iv`` (outward rounding at the working precision ``iv.prec``) that
  contains the true real value; it appears as soon as exp, 2^x (x not an integer), sqrt, cos, sin, log or π enter;
- :data:`NEG_INF` / :data:`POS_INF`: the -∞ entries of masks (exp(-∞) = 0 exactly).

Every operation returns a value of the same kinds. What cannot be decided at the working
precision (an interval denominator that contains 0, a floor whose enclosure straddles an
integer) raises :class:`Undecided`, so the caller retries at a higher precision; what has no
value at all (division by an exact 0, ∞ - ∞, a complex result) raises :class:`Unevaluable`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
from mpmath import iv, libmp


class Unevaluable(Exception):
    """The instance has no value here (a singular inverse, 0·∞, an unknown node): skip it."""


class Malformed(Unevaluable):
    """The claim's shapes disagree with its values (a side evaluates to a matrix of another shape
    than SymPy gives it, operands that do not fit): never skipped, the claim cannot be proved."""


class Undecided(Exception):
    """An interval is too wide to decide a step at this precision: retry at a higher one."""


class Inf:
    """±∞, the entries of a mask."""

    __slots__ = ("sign",)

    def __init__(self, sign: int):
        self.sign = sign

    def __repr__(self):
        return "-oo" if self.sign < 0 else "oo"


NEG_INF, POS_INF = Inf(-1), Inf(1)
INTERVAL = type(iv.mpf(1))


def is_exact(x) -> bool:
    return isinstance(x, (int, Fraction))


def to_interval(x):
    """An enclosure of ``x`` at the working precision."""
    if isinstance(x, INTERVAL):
        return x
    if isinstance(x, int):
        return iv.mpf(x)
    if isinstance(x, Fraction):
        return iv.mpf(x.numerator) / iv.mpf(x.denominator)
    raise Unevaluable(f"{x!r} has no finite enclosure")


def _endpoints(x):
    """The raw mpf ends of an interval."""
    return x._mpi_


def _finite(x) -> bool:
    lo, hi = _endpoints(x)
    return lo not in (libmp.finf, libmp.fninf, libmp.fnan) and hi not in (libmp.finf, libmp.fninf, libmp.fnan)


def sign(x) -> int:
    """-1, 0 or 1; raises Undecided for an interval that contains 0 without being {0}."""
    if isinstance(x, Inf):
        return x.sign
    if is_exact(x):
        return (x > 0) - (x < 0)
    lo, hi = _endpoints(x)
    if libmp.mpf_gt(lo, libmp.fzero):
        return 1
    if libmp.mpf_lt(hi, libmp.fzero):
        return -1
    if lo == libmp.fzero and hi == libmp.fzero:
        return 0
    raise Undecided("the sign of an interval that contains 0")


def add(a, b):
    if isinstance(a, Inf) or isinstance(b, Inf):
        if isinstance(a, Inf) and isinstance(b, Inf):
            if a.sign != b.sign:
                raise Unevaluable("∞ - ∞")
            return a
        inf, other = (a, b) if isinstance(a, Inf) else (b, a)
        if isinstance(other, INTERVAL) and not _finite(other):
            raise Undecided("an unbounded interval plus ∞")
        return inf
    if is_exact(a) and is_exact(b):
        return a + b
    return to_interval(a) + to_interval(b)


def neg(a):
    return mul(-1, a)


def sub(a, b):
    return add(a, neg(b))


def mul(a, b):
    if isinstance(a, Inf) or isinstance(b, Inf):
        s = sign(a) * sign(b)
        if s == 0:
            raise Unevaluable("0 · ∞")
        return NEG_INF if s < 0 else POS_INF
    if is_exact(a) and is_exact(b):
        return a * b
    if (is_exact(a) and a == 0) or (is_exact(b) and b == 0):
        return 0
    return to_interval(a) * to_interval(b)


def div(a, b):
    if isinstance(b, Inf):
        raise Unevaluable("division by ∞")
    if is_exact(b):
        if b == 0:
            raise Unevaluable("division by 0")
        if is_exact(a):
            return Fraction(a) / b
    elif sign(b) == 0:
        raise Unevaluable("division by 0")
    if isinstance(a, Inf):
        return mul(a, sign(b))
    if is_exact(a) and a == 0:
        return 0
    return to_interval(a) / to_interval(b)


def exp(x):
    if isinstance(x, Inf):
        if x.sign < 0:
            return 0
        raise Unevaluable("exp(∞)")
    if is_exact(x) and x == 0:
        return 1
    return _enclose_exp(to_interval(x))


#: below -EXP_FLOOR, exp(x) is enclosed by [0, exp(-EXP_FLOOR)] (about 10^-1779) instead of being
#: computed: mpmath's exp of a number of size 10^k works with ln 2 to about k extra digits, which a
#: softmax over the scores of a deep model would ask for at every entry
EXP_FLOOR = 4096


def upper_bound_exceeds(x, bound: int) -> bool:
    """True when the upper end of the enclosure of ``x`` is above ``bound``."""
    return libmp.mpf_gt(_endpoints(to_interval(x))[1], libmp.from_int(bound))


def _enclose_exp(x):
    """An enclosure of exp(x) for an interval x; Unevaluable when its exponent is too large for mpmath
    (exp(2^(2^256)), say)."""
    lo, hi = _endpoints(x)
    if libmp.mpf_lt(hi, libmp.from_int(-EXP_FLOOR)):
        return iv.mpf([0, iv.exp(iv.mpf(-EXP_FLOOR)).b])
    try:
        return iv.exp(x)
    except OverflowError:
        raise Unevaluable("exp of a number too large to enclose") from None


#: the largest |x| for which 2^x is computed as an exact rational (a number of about this many bits);
#: beyond it, an enclosure (an exact 2^(10^10) would take gigabytes)
EXACT_EXP2 = 4096


def exp2(x):
    """2^x: exact for an integer x (a rational) with |x| <= EXACT_EXP2, 0 at -∞, else an enclosure
    of exp(x ln 2)."""
    if isinstance(x, Inf):
        if x.sign < 0:
            return 0
        raise Unevaluable("2^∞")
    if is_exact(x) and Fraction(x).denominator == 1 and abs(int(x)) <= EXACT_EXP2:
        return Fraction(2) ** int(x)
    return _enclose_exp(to_interval(x) * iv.log(iv.mpf(2)))


def log(x):
    if is_exact(x) and x == 1:
        return 0
    if sign(x) <= 0:
        raise Unevaluable("log of a number <= 0")
    return iv.log(to_interval(x))


def cos(x):
    return 1 if is_exact(x) and x == 0 else iv.cos(to_interval(x))


def sin(x):
    return 0 if is_exact(x) and x == 0 else iv.sin(to_interval(x))


def _exact_root(x: Fraction, q: int):
    """The exact q-th root of a nonnegative rational, or None when it is irrational."""
    out = []
    for v in (x.numerator, x.denominator):
        r = round(v ** (1.0 / q)) if v < 2**52 else _int_root(v, q)
        hit = next((c for c in (r - 1, r, r + 1) if c >= 0 and c**q == v), None)
        if hit is None:
            return None
        out.append(hit)
    return Fraction(out[0], out[1])


def _int_root(v: int, q: int) -> int:
    lo, hi = 0, 1 << (v.bit_length() // q + 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mid**q <= v:
            lo = mid
        else:
            hi = mid - 1
    return lo


def power(base, e):
    """base ** e for an exact or interval exponent."""
    if isinstance(base, Inf) or isinstance(e, Inf):
        raise Unevaluable("a power of ∞")
    if is_exact(e) and Fraction(e).denominator == 1:
        k = int(e)
        if is_exact(base):
            if base == 0 and k < 0:
                raise Unevaluable("0 to a negative power")
            return Fraction(base) ** k
        out = to_interval(base) ** abs(k)
        return out if k >= 0 else div(1, out)
    if is_exact(e) and is_exact(base):
        e = Fraction(e)
        if base == 0:
            if e > 0:
                return 0
            raise Unevaluable("0 to a negative power")
        if base > 0:
            root = _exact_root(Fraction(base), e.denominator)
            if root is not None:
                return root**e.numerator
    if sign(base) <= 0:
        raise Unevaluable("a fractional power of a number <= 0")
    return iv.exp(to_interval(e) * iv.log(to_interval(base)))


def _to_fraction(raw) -> Fraction:
    if raw[2] > 4096:
        raise Unevaluable("a value beyond 2^4096")
    p, q = libmp.to_rational(raw)
    return Fraction(p, q)


def floor(x) -> int:
    if is_exact(x):
        return math.floor(x)
    if isinstance(x, Inf) or not _finite(x):
        raise Unevaluable("floor of ∞")
    lo, hi = (math.floor(_to_fraction(v)) for v in _endpoints(x))
    if lo != hi:
        raise Undecided("a floor whose argument's enclosure straddles an integer")
    return lo


def center(x):
    """A finite real number near the finite value ``x``: x itself when exact, else the midpoint of
    its enclosure (a point interval). Any finite number serves where it is used (a softmax shift)."""
    if is_exact(x):
        return x
    return to_interval(x).mid


def approximate(x) -> float:
    """A float near the finite value ``x`` (for choices that decide nothing, such as a shift)."""
    return float(x) if is_exact(x) else float(mpmath.mpf(to_interval(x).mid.a))


def compare(a, b) -> int:
    """-1, 0 or 1 for a < b, a = b, a > b (0 only when both are exact or both the same ∞)."""
    if isinstance(a, Inf) and isinstance(b, Inf) and a.sign == b.sign:
        return 0
    if isinstance(a, Inf):
        return a.sign
    if isinstance(b, Inf):
        return -b.sign
    if is_exact(a) and is_exact(b):
        return (a > b) - (a < b)
    return sign(sub(a, b))


def as_int(x, what: str) -> int:
    """An exact integer value (indices, dimensions), or Unevaluable."""
    if is_exact(x) and Fraction(x).denominator == 1:
        return int(x)
    raise Unevaluable(f"{what} is not an integer: {show(x)}")


def disjoint(a, b) -> bool:
    """True when a and b are certified different (exactly, or by disjoint enclosures)."""
    if isinstance(a, Inf) or isinstance(b, Inf):
        return not (isinstance(a, Inf) and isinstance(b, Inf) and a.sign == b.sign)
    if is_exact(a) and is_exact(b):
        return a != b
    x, y = to_interval(a), to_interval(b)
    (xa, xb), (ya, yb) = _endpoints(x), _endpoints(y)
    return libmp.mpf_lt(xb, ya) or libmp.mpf_lt(yb, xa)


def tight(a, b, prec: int) -> bool:
    """True when a and b are the same exact number, or their enclosures are narrow at ``prec``
    (width of the union at most 2^-(prec/2) relative): then a higher precision adds nothing."""
    if isinstance(a, Inf) or isinstance(b, Inf):
        return True
    if is_exact(a) and is_exact(b):
        return True
    x, y = to_interval(a), to_interval(b)
    if not (_finite(x) and _finite(y)):
        return False
    lo = min(_endpoints(x)[0], _endpoints(y)[0], key=_as_mpf)
    hi = max(_endpoints(x)[1], _endpoints(y)[1], key=_as_mpf)
    width = libmp.mpf_sub(hi, lo, 53, libmp.round_up)
    scale = max(libmp.fone, libmp.mpf_abs(lo), libmp.mpf_abs(hi), key=_as_mpf)
    bound = libmp.mpf_mul(scale, libmp.mpf_pow_int(libmp.ftwo, -(prec // 2), 53), 53, libmp.round_down)
    return libmp.mpf_le(width, bound)


def _as_mpf(raw):
    return mpmath.mpf(raw)


def show(x) -> str:
    """A short text for a value: the rational, or the interval's ends."""
    if isinstance(x, Inf) or is_exact(x):
        return str(x)
    lo, hi = _endpoints(x)
    return f"[{libmp.to_str(lo, 20)}, {libmp.to_str(hi, 20)}]"
