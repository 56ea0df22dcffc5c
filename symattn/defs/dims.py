"""Dimension symbols: positive integers, named as the papers name them."""

from __future__ import annotations

import re

import sympy as sp

from ..errors import DimensionError


class BoundIndex(sp.Symbol):
    """Symbols bound by symattn's own nodes and rewrites (block indices, canonical summation
    indices): they print like ordinary symbols but never equal a user's symbol of the same name.

    A binder's index is ``bound_index(base, level)``: the base name (h, g, j, i) followed by one
    prime per nesting level, chosen fresh for the body it binds (see :func:`symattn.defs.heads.bind`).
    """


class HeadIndex(BoundIndex):
    """The symbol class of the head index: prints as h, but never equals a dimension named h."""


def bound_index(base: str, level: int = 0, kind: type = BoundIndex) -> BoundIndex:
    """The bound index of nesting level ``level``: ``base`` followed by ``level`` primes.

    >>> bound_index("h", 2, HeadIndex)
    h''
    """
    return kind(base + "'" * level, integer=True, positive=True)


def index_level(x) -> int:
    """The nesting level of a bound index (its number of trailing primes)."""
    return len(x.name) - len(x.name.rstrip("'"))


def index_base(x) -> str:
    return x.name.rstrip("'")


#: The head index h, bound by every sum, stack and concatenation over heads.
h = HeadIndex("h", integer=True, positive=True)


#: a dimension's name: a letter or '_', then letters, digits and '_' (d_k, d_model, n2, _b0), then primes
#: (n', n''): a Python identifier with primes
_DIM_NAME = re.compile(r"[^\W\d][\w]*'*")


def _refuse_name(word: str) -> None:
    """Raise a DimensionError saying why ``word`` is not a dimension's name and what to write."""
    if word[:1] in "+-" and _DIM_NAME.fullmatch(word[1:]):
        why = (f"a sign is not part of a name; dims makes positive symbols: write dims({word[1:]!r}) and "
               f"{word[:1]}{word[1:]} where the expression needs it")
    elif any(c in word for c in "+-*/()"):
        why = ("dims names symbols and does not read expressions; name the symbols (n, m = dims(\"n m\")) and "
               "build the expression from them (n + m)")
    elif ":" in word:
        why = "ranges such as x:3 are not read; write the names out (dims(\"x0 x1 x2\"))"
    elif word[:1].isdigit():
        why = "a name starts with a letter (n1, not 1n)"
    else:
        why = "a name is a letter or '_', then letters, digits and '_' (n, d_k, d_model, n2), then primes (n')"
    raise DimensionError(f"dims: {word!r} is not a dimension's name: {why}")


def dims(names: str) -> tuple[sp.Symbol, ...] | sp.Symbol:
    """Positive integer symbols for matrix dimensions, one per name (names separated by spaces or
    commas; a single name gives one symbol).

    >>> n, m, d_k = dims("n m d_k")
    >>> n.is_positive, n.is_integer
    (True, True)

    A word that is not a name (``-n``, ``1n``, ``n+m``) and a name given twice are refused with a
    :class:`DimensionError` that says what to write instead.
    """
    if not isinstance(names, str) or not names.strip():
        raise DimensionError(f"dims: give the names as one string, e.g. dims(\"n m d_k\"), got {names!r}")
    words = [w for w in re.split(r"[\s,]+", names.strip()) if w]
    for w in words:
        if not _DIM_NAME.fullmatch(w):
            _refuse_name(w)
    twice = sorted({w for w in words if words.count(w) > 1})
    if twice:
        raise DimensionError(f"dims: {', '.join(map(repr, twice))} given twice in {names!r}; each name makes "
                             "one symbol, so give it once")
    return sp.symbols(names, integer=True, positive=True)


def check_dimension(d, where: str = "") -> sp.Expr:
    """Return ``d`` as a SymPy expression after checking it is a positive integer.

    A concrete dimension must be an integer >= 1; a symbolic one must be declared a
    positive integer (use :func:`dims`), since an unconstrained symbol may be zero.
    """
    try:
        e = sp.sympify(d, strict=True)
    except (sp.SympifyError, TypeError) as exc:
        raise DimensionError(f"{where}dimension {d!r} is not a number or a symbol") from exc
    if e.is_Number:
        if not (e.is_Integer and e > 0):
            raise DimensionError(
                f"{where}dimension {e} must be a positive integer (matrices have at least "
                "one row and one column)"
            )
        return e
    if e.is_integer is not True or e.is_positive is not True:
        bad = [s for s in e.free_symbols if not (s.is_integer and s.is_positive)]
        names = ", ".join(sorted(map(str, bad))) or str(e)
        raise DimensionError(
            f"{where}dimension {e} is not known to be a positive integer; declare "
            f"{names} with symattn.dims(...) (positive integer symbols)"
        )
    return e
