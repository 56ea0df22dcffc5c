r"""Bounds stated on lengths: ``1 \le c < n`` beside a scalar derivation (Rabe & Staats 2021).

A paper that splits a sum at a position c states the position's range as an assumption: ``1 \le c < n``
(the chunk boundary c lies inside the n keys). The letters of such a chain are whole numbers, the bounds
of sums, so the chain is read as an assumption on lengths, and a step is checked only where it holds:

- ``1 \le c`` (or ``0 < c``, or no lower number): c is a length, a whole number >= 1;
- ``c < n``: n is c + g with g a whole number >= 1 (``c \le n``: n = c + g - 1); ``n > c``, ``n \ge c \ge 1``
  are the same chain written from the top.

Every letter of the chain must be used as the bound of a sum or a length of the file (otherwise it could
be a real number, and the chain is refused), each letter occurs once, and a number stands only at the
low end (``c \le 5`` is refused: an upper bound by a number is not read). Any other inequality stays
refused, as before.

>>> import sympy as sp
>>> dims = lengths(Bound(("1", "c", "n"), ("le", "lt"), (1, 1)))
>>> dims["c"], sp.simplify(dims["n"] - dims["c"]).is_positive
(c, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import ParseError

#: the comparison tokens of the scalar reader: \le, \leq, \ge, \geq, and the characters < and >
COMMANDS = {"le": "le", "leq": "le", "ge": "ge", "geq": "ge"}
CHARS = {"<": "lt", ">": "gt"}
SHOWN = {"le": "\\le", "lt": "<", "ge": "\\ge", "gt": ">"}
REFUSAL = ("an inequality", "a chain of equalities, or bounds on lengths such as 1 \\le c < n")


@dataclass(frozen=True)
class Bound:
    """``t_0 r_1 t_1 r_2 ...``, read from the low end: terms (a number or a letter) and relations
    ("le" or "lt")."""

    terms: tuple
    rels: tuple
    pos: tuple


def comparison(t) -> str | None:
    """The relation a token of the scalar reader writes ("le", "lt", "ge", "gt"), or None."""
    if t.kind == "cmp":
        return COMMANDS[t.value]
    if t.kind == "sym" and t.value in CHARS:
        return CHARS[t.value]
    return None


def refuse(t):
    what, instead = REFUSAL
    shown = f"\\{t.value}" if t.kind == "cmp" else t.value
    raise ParseError(f"{shown} is not read: {what} is not part of a scalar derivation", t.line, t.col, instead)


def statement(toks) -> Bound:
    """The chain of one statement (tokens without the commas around it); refused unless it is numbers and
    letters joined by comparisons of one direction."""
    terms, rels = [], []
    for k, t in enumerate(toks):
        want_term = k % 2 == 0
        if want_term:
            if t.kind == "num" or (t.kind == "id" and len(t.value) == 1 and t.value.isalpha()):
                terms.append(t.value)
                continue
            raise ParseError(f"found {t.show()} in a chain of bounds", t.line, t.col,
                             "numbers and letters, as in 1 \\le c < n")
        r = comparison(t)
        if r is None:
            raise ParseError(f"found {t.show()} in a chain of bounds", t.line, t.col, "\\le, <, \\ge or >")
        rels.append(r)
    if len(terms) != len(rels) + 1 or not rels:
        refuse(next(t for t in toks if comparison(t)))
    first = toks[0]
    if len({r in ("le", "lt") for r in rels}) > 1:
        raise ParseError("a chain of bounds that goes up and down", first.line, first.col,
                         "one direction, as in 1 \\le c < n")
    if rels[0] in ("ge", "gt"):
        terms, rels = terms[::-1], [{"ge": "le", "gt": "lt"}[r] for r in rels[::-1]]
    letters = [x for x in terms if not x.isdigit()]
    if len(set(letters)) != len(letters):
        raise ParseError("a letter twice in a chain of bounds", first.line, first.col, "each letter once")
    if any(x.isdigit() for x in terms[1:]):
        raise ParseError("an upper bound by a number is not read", first.line, first.col,
                         "bounds between lengths, as in 1 \\le c < n")
    if terms[0].isdigit() and int(terms[0]) + (rels[0] == "lt") > 1:
        raise ParseError(f"a lower bound above 1 ({' '.join(terms[:2])}) is not read", first.line, first.col,
                         "1 \\le c or 0 < c, lengths being >= 1 already")
    return Bound(tuple(terms), tuple(rels), (first.line, first.col))


def lengths(b: Bound) -> dict:
    """The letters of the chain as lengths: the lowest letter a positive whole number, each next one the
    one before plus a whole number gap (>= 1 after <, >= 0 after \\le), named by the two letters."""
    out, prev = {}, None
    for r, x in zip(("le",) + b.rels, b.terms):
        if x.isdigit():
            continue
        if prev is None:
            out[x] = sp.Symbol(x, integer=True, positive=True)
        else:
            # every symbol a positive whole number (as lengths are): n = c + g, or n = c + g - 1 after \le
            gap = sp.Symbol(f"({x} - {prev})" if r == "lt" else f"({x} - {prev} + 1)", integer=True, positive=True)
            out[x] = out[prev] + gap - (1 if r == "le" else 0)
        prev = x
    return out


def text(b: Bound) -> str:
    out = b.terms[0]
    for r, x in zip(b.rels, b.terms[1:]):
        out += f" {SHOWN[r]} {x}"
    return out


def used_as_lengths(stmts, S) -> set:
    """The letters the statements use as the bound of a sum or a length of a declaration."""
    out: set = set()

    def names(n):
        if n is None or not isinstance(n, S.N):
            return
        if n.kind == "name" and not n.parts[1]:
            out.add(n.parts[0])
        for p in n.parts:
            if isinstance(p, S.N):
                names(p)
            elif isinstance(p, tuple):
                for q in p:
                    names(q)

    def walk(n):
        if isinstance(n, S.N):
            if n.kind in ("sum", "maxover"):
                names(n.parts[1])
                names(n.parts[2])
            for p in n.parts:
                walk(p)
        elif isinstance(n, tuple):
            for q in n:
                walk(q)

    for st in stmts:
        if isinstance(st, S.Declare):  # x_1, \ldots, x_n \in \mathbb{R}^{d}: n and d
            names(st.power)
            for x in st.names:
                if x.kind == "sub":
                    names(x.parts[1])
        for field in ("first", "links", "body", "target", "names"):
            walk(getattr(st, field, None))
    return out
