"""Decimal numbers as papers write coefficients: ``0.5 W_{att} + 0.5 I`` (Abnar & Zuidema 2020).

A decimal is its exact rational value, written as the fraction it is: ``0.5`` is ``\\frac{1}{2}``,
``0.25`` is ``\\frac{1}{4}``, ``1.5`` is ``\\frac{3}{2}``, ``2.0`` is ``2``. (Read digit by digit, ``0.5``
would be the product ``0 \\cdot 5``, which is zero: every step with it would be misread.) The lexer
hands the parser the tokens of that fraction, so a decimal stands wherever a number or a fraction
does, a coefficient or an exponent.
"""

from __future__ import annotations

from fractions import Fraction

from .tokens import Token, number


def decimal_at(s: str, j: int) -> int:
    """The end of the decimal part of a number whose digits end at ``j`` in ``s`` (``j`` itself when
    no '.' followed by a digit is there: a full stop after a number is punctuation)."""
    if j + 1 < len(s) and s[j] == "." and s[j + 1].isdigit():
        k = j + 1
        while k < len(s) and s[k].isdigit():
            k += 1
        return k
    return j


def decimal_tokens(text: str, line: int, col: int) -> list[Token]:
    """The tokens of the exact value of the decimal ``text`` (``0.25``): a whole number, or
    ``\\frac{p}{q}`` in lowest terms."""
    whole, _, frac = text.partition(".")
    number(whole + frac, line, col)  # the digit limit of every number
    value = Fraction(int(whole + frac), 10 ** len(frac))
    if value.denominator == 1:
        return [number(str(value.numerator), line, col)]
    out = [Token("cmd", "frac", line, col)]
    for part in (value.numerator, value.denominator):
        out += [Token("op", "{", line, col), number(str(part), line, col), Token("op", "}", line, col)]
    return out
