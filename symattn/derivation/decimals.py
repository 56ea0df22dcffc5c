"""A decimal number as papers write it, ``0.5 W_{att} + 0.5 I`` (Abnar & Zuidema 2020): read as the
fraction it is, ``\\frac{5}{10}``, never as the digits 0 and 5 side by side (a product, which would be 0).

The lexer hands the digits before and after the point to :func:`decimal_tokens`, which gives the tokens
of ``\\frac{int·10^k + frac}{10^k}``; the parser then reads it as any fraction.
"""

from __future__ import annotations

from .tokens import Token, number


def decimal_tokens(whole: str, part: str, line: int, col: int) -> list[Token]:
    """The tokens of ``\\frac{N}{10^k}`` for the decimal ``whole.part`` (k the digits of ``part``)."""
    scale = 10 ** len(part)
    num = int(whole) * scale + int(part)
    return [Token("cmd", "frac", line, col), Token("op", "{", line, col), number(str(num), line, col),
            Token("op", "}", line, col), Token("op", "{", line, col), number(str(scale), line, col),
            Token("op", "}", line, col)]
