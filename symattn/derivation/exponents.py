r"""Powers as papers write them, read at ``^`` by the parser.

- number powers: ``x^2``, ``d^{-1/2}``, ``d_k^{-\frac{1}{2}}`` (a numerator and a denominator);
  ``W^{1,l}`` is a label, not a power;
- letters in an exponent, on a number or a parenthesized scalar: ``2^{-8h/n}``, ``\left(2^{-8/n}\right)^{h}``
  (ALiBi's head slopes, Press et al. 2022) are the real powers b^e, read where the base is a positive number
  (b^e of a base that may be negative or 0 is not a real number for every real e) and the exponent a
  scalar. A single letter of the exponent that the file never declares (the head h of n heads) is a positive
  whole number, as a dimension is (:func:`exponent_counts`). ``(\cdot)^{T}`` stays a transpose, and a letter
  exponent on a matrix is refused.

>>> from symattn.derivation.latex import parse_latex
>>> parse_latex(r"$$ 2^{-8h/n} = (2^{-8/n})^{h} $$")[0].links[0][2].text()
'(2^{- (8) / (n)})^{h}'
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import sympy as sp

from . import ast
from .symbols import is_matrix

#: the tokens an exponent with letters may hold besides letters and numbers
EXPONENT_OPS = ("+", "-", "/", "*", "(", ")", "{", "}")


@dataclass(frozen=True)
class LetterPower(ast.PowerText, ast.Node):
    """``2^{-8h/n}``: a base (a number, or a parenthesized scalar) to an exponent that holds letters."""

    base: ast.Node
    exponent: ast.Node


def letter_power_ahead(p, node) -> bool:
    """At ``^`` after ``node``: an exponent that holds a letter (``^{-8h/n}``, ``^h``) on a number or a
    parenthesized expression, in LaTeX; ``^T`` and ``^{T}`` stay transposes."""
    if p.dialect != "latex" or not isinstance(node, (ast.Num, ast.Group)):
        return False
    if p.at("ident", None, 1):
        return len(p.peek(1).value) == 1 and p.peek(1).value.isalpha() and p.peek(1).value != "T"
    if not p.at("op", "{", 1):
        return False
    k, depth, letters = 2, 0, []
    while k < 64:
        t = p.peek(k)
        if t.kind == "op" and t.value == "}" and depth == 0:
            break
        if t.kind == "op" and t.value in ("{", "}"):
            depth += 1 if t.value == "{" else -1
        elif t.kind == "ident" and t.value.isalpha():
            letters.append(t.value)
        elif not (t.kind == "num" or (t.kind == "op" and t.value in EXPONENT_OPS)
                  or (t.kind == "cmd" and t.value in ("frac", "cdot"))):
            return False
        k += 1
    return bool(letters) and letters != ["T"] and p.at("op", "}", k)


def read_letter_power(p, node):
    """``^{-8h/n}`` or ``^h`` after ``node`` (see :func:`letter_power_ahead`): a :class:`LetterPower`."""
    p.next()
    if p.at_op("{"):
        exponent = p.braced_expr("the exponent")
    else:
        t = p.next()
        exponent = ast.Name((t.line, t.col), t.value, None, None, t.font)
    return LetterPower(getattr(node, "pos", (0, 0)), node, exponent)


def letter_power(scope, node, L):
    """The value of a :class:`LetterPower`: the real power b^e of a positive number b by a scalar e."""
    counts = exponent_counts(scope, node.exponent, L)
    if counts:
        note = (f"{', '.join(counts)} in the exponent of {node.text()}: not declared by the file, read as positive "
                "whole numbers (a head, a count, as papers write them in an exponent)")
        if note not in scope.notes:
            scope.notes.append(note)
    base, exponent = scope._expr(node.base, L), scope._expr(node.exponent, L)
    if is_matrix(base) or is_matrix(exponent):
        what = node.base.text() if is_matrix(base) else node.exponent.text()
        scope.fail(node, f"the power {node.text()}: {what} is a matrix, and an exponent with letters is read only "
                   "as a power of numbers", "a positive number to a scalar power, as in 2^{-8h/n}")
    if not sp.sympify(base).is_positive:
        scope.fail(node, f"the power {node.text()}: its base {node.base.text()} is not known to be positive, so "
                   "the power is not a real number for every exponent", "a positive base, as in 2^{-8h/n}")
    base = sp.sympify(base)
    if base.is_Rational:  # 4^h as 2^{2h}: powers of numbers over their primes, so that (2^h)^2 = 4^h is seen
        primes = {**sp.factorint(base.p), **{q: -k for q, k in sp.factorint(base.q).items()}}
        return sp.Mul(*(sp.Pow(q, k * exponent) for q, k in primes.items() if q != 1))
    return sp.Pow(base, exponent)


def power_ahead(p) -> bool:
    """At ``^``: a number follows (``^2``, ``^{-1/2}``, ``^{-\\frac{1}{2}}``), in LaTeX."""
    if p.dialect != "latex":
        return False
    k = 1
    if p.at("op", "{", k):
        k += 1
        if p.at("op", "-", k):
            k += 1
        if p.at("num", None, k) and p.at("op", ",", k + 1):  # W^{1,l}: a label, not a power
            return False
        return p.at("num", None, k) or p.at("cmd", "frac", k)
    return p.at("num", None, k)


def read_power(p):
    """``^2``, ``^{3}``, ``^{-1}``, ``^{-1/2}``, ``^{\\frac{1}{2}}``: (numerator, denominator)."""
    p.next()
    if not p.at_op("{"):
        return int(p.next().value), 1
    p.next()
    sign = -1 if p.at_op("-") and p.next() else 1
    if p.at("cmd", "frac"):
        p.next()
        parts = []
        for _ in range(2):
            p.expect_op("{", "'{' and a number")
            t = p.next()
            if t.kind != "num":
                p.fail(f"found {t.show()} in a power", "a number, as in ^{-\\frac{1}{2}}", t)
            parts.append(int(t.value))
            p.expect_op("}", "'}'")
        num, den = parts
    else:
        num, den = int(p.next().value), 1
        if p.at_op("/"):
            p.next()
            t = p.next()
            if t.kind != "num":
                p.fail(f"found {t.show()} in a power", "a number, as in ^{-1/2}", t)
            den = int(t.value)
    p.expect_op("}", "'}' closing the power")
    if den == 0:
        p.fail("a power with the denominator 0", "a power such as ^{-1/2}")
    return sign * num, den


def exponent_counts(scope, exponent, L) -> list[str]:
    """The single letters of ``exponent`` that the file never declares (h and n in ``2^{-8h/n}``, ALiBi's head h of
    n): read as positive whole numbers, as dimensions are, so that a step proved holds for every such value."""
    found, stack = [], [exponent]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
        elif isinstance(n, ast.Name):
            if (n.sub is None and n.sup is None and len(n.base) == 1 and n.base.isalpha() and n.base not in L
                    and n.base not in scope.dims and scope.is_undefined_name(n)):
                scope.dims[n.base] = sp.Symbol(n.base, integer=True, positive=True)
                found.append(n.base)
        elif isinstance(n, ast.Node):
            stack.extend(getattr(n, f.name) for f in fields(n) if f.name != "pos")
    return sorted(found)
