"""Tokens, input limits, and the tokenizer of the plain-text notation.

A token is (kind, value, line, column). Kinds:

- ``ident``: a name (``Q``, ``head``, ``d``); in LaTeX one letter or one ``\\mathbf{..}`` word
- ``num``: a non-negative integer of at most :data:`MAX_DIGITS` digits
- ``op``: one of ``( ) [ ] { } , ; + - * / = := : ^ _ & \\\\``
- ``dots``: an ellipsis; ``top``: a transpose mark (``\\top``, ``\\mathsf{T}``)
- ``cmd``: a LaTeX command the grammar knows (``\\frac``, ``\\sum``, ``\\begin``, ...)
- ``nl``: the end of a line (plain notation only); ``eof``

Limits keep hostile input cheap: a file larger than :data:`MAX_CHARS`, a line longer
than :data:`MAX_LINE`, more than :data:`MAX_TOKENS` tokens or a longer number is
rejected before any parsing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParseError

MAX_CHARS = 200_000
MAX_LINE = 4_000
MAX_TOKENS = 50_000
MAX_DIGITS = 6
MAX_DEPTH = 48

OPS2 = (":=", "\\\\")
OPS1 = "()[]{},;+-*/=:^_&'"


@dataclass(frozen=True)
class Token:
    kind: str
    value: str
    line: int
    col: int
    font: str = ""  # the LaTeX command a name was written in (mathbf, mathrm, ...), for renderings

    def show(self) -> str:
        if self.kind == "eof":
            return f"the end of the {self.value or 'input'}"
        if self.kind == "nl":
            return "the end of the line"
        return repr(self.value)


def check_size(text: str, what: str) -> None:
    """Reject oversized input before tokenizing (files, lines)."""
    if not isinstance(text, str):
        raise ParseError(f"{what} must be text, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise ParseError(f"{what} is {len(text)} characters long; the limit is {MAX_CHARS}", 1, 1,
                         "a shorter derivation (split it into several files)")
    start, line = 0, 1
    while True:
        end = text.find("\n", start)
        stop = len(text) if end < 0 else end
        if stop - start > MAX_LINE:
            raise ParseError(f"line {line} is {stop - start} characters long; the limit is {MAX_LINE}",
                             line, MAX_LINE + 1, "a line break")
        if end < 0:
            return
        start, line = end + 1, line + 1


def number(text: str, line: int, col: int) -> Token:
    if len(text) > MAX_DIGITS:
        raise ParseError(f"the number {text[:12]}{'…' if len(text) > 12 else ''} has {len(text)} digits; "
                         f"at most {MAX_DIGITS} are allowed", line, col, "a small integer (a head index)")
    return Token("num", text, line, col)


def tokenize_plain(text: str) -> list[Token]:
    """Tokens of the plain notation; ``#`` starts a comment, newlines are kept as ``nl``.

    >>> [t.value for t in tokenize_plain("W_h^Q: d_k x d_model")]
    ['W', '_', 'h', '^', 'Q', ':', 'd', '_', 'k', 'x', 'd', '_', 'model', '', '']
    """
    check_size(text, "the derivation")
    out: list[Token] = []
    i, line, col0 = 0, 1, 0
    n = len(text)
    while i < n:
        c = text[i]
        col = i - col0 + 1
        if c == "\n":
            out.append(Token("nl", "", line, col))
            i, line, col0 = i + 1, line + 1, i + 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c.isascii() and c.isalpha():
            j = i + 1
            while j < n and text[j].isascii() and text[j].isalnum():
                j += 1
            out.append(Token("ident", text[i:j], line, col))
            i = j
        elif c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            out.append(number(text[i:j], line, col))
            i = j
        elif text.startswith("...", i):
            out.append(Token("dots", "...", line, col))
            i += 3
        elif text.startswith("..", i):
            out.append(Token("op", "..", line, col))
            i += 2
        elif text.startswith(":=", i):
            out.append(Token("op", ":=", line, col))
            i += 2
        elif c in "×":
            out.append(Token("ident", "x", line, col))
            i += 1
        elif c in OPS1 and c not in "&'":
            out.append(Token("op", c, line, col))
            i += 1
        else:
            raise ParseError(f"unexpected character {c!r}", line, col,
                             "a name, a number, an operator (+ - * / = := ^ _ , ;) or brackets")
        if len(out) > MAX_TOKENS:
            raise ParseError(f"more than {MAX_TOKENS} tokens", line, col, "a shorter derivation")
    out.append(Token("nl", "", line, n - col0 + 1))
    out.append(Token("eof", "", line, n - col0 + 1))
    return out

PINV = "pinv"  # A^{+}: the Moore-Penrose pseudo-inverse, read as an uninterpreted map of A
