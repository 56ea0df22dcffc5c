r"""The reader of scalar and vector derivations: the LaTeX of online softmax papers.

Milakov & Gimelshein 2018 and Dao et al. 2022 (FlashAttention, section 3.1) reason about real
numbers and vectors, not matrices. A ``.tex`` file whose formulas use ``\max``, ``\leftarrow``
or ``\gets`` is read here (:func:`is_scalar_document`); what it may contain:

- declarations: ``x_1, \ldots, x_V \in \mathbb{R}`` (a sequence of V reals),
  ``x^{(1)}, x^{(2)} \in \mathbb{R}^{B}`` (vectors of length B; a parenthesized superscript
  belongs to the name), ``x = \begin{bmatrix} x^{(1)} & x^{(2)} \end{bmatrix} \in \mathbb{R}^{2B}``
  (a block vector, its length checked);
- functions of a vector defined with ``:=``: ``m(x) := \max_i x_i``,
  ``f(x) := \begin{bmatrix} e^{x_1 - m(x)} & \ldots & e^{x_B - m(x)} \end{bmatrix}`` (the
  entries from the first to the last written, for x of any length), ``\ell(x) := \sum_i f(x)_i``,
  ``\mathrm{softmax}(x) := \frac{f(x)}{\ell(x)}``;
- running sequences: ``m_j \leftarrow \max(m_{j-1}, x_j)`` (also ``\gets``) with initial values
  ``m_0 = -\infty``, ``d_0 = 0``;
- chains ``a = b = c`` (in ``align*``, a row starting with ``&=`` continues the chain).

Expressions: numbers, names with subscripts (``x_i``, ``m_{j-1}``, ``f(x)_i``), calls,
``+ - \times \cdot``, juxtaposition, ``\frac``, ``e^{...}``, ``\exp``, ``\max(a, b)``,
``\max_i e``, ``\sum_i e``, ``\sum_{k=1}^{j} e`` (the body is the product that follows),
``-\infty``, parentheses with ``\left( \right)``, and a one-row ``bmatrix``. Anything else is
refused with a :class:`~symattn.errors.ParseError` naming it.

>>> [type(s).__name__ for s in parse_scalar_document(r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad m_0 = -\infty $$")]
['Declare', 'Chain']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParseError
from . import scalar_bounds as B
from .tokens import MAX_DEPTH, MAX_TOKENS, check_size

TRIGGERS = re.compile(r"\\(max|leftarrow|gets)(?![A-Za-z])|\\(operatorname|mathrm)\s*\{\s*max\s*\}")
MATH_ENVS = ("align*", "align", "aligned", "equation", "equation*", "gather", "gather*", "split")
WORDS = ("mathrm", "operatorname", "text", "textrm", "mathit", "mathbf", "boldsymbol")
SKIP = ("quad", "qquad", ",", ";", ":", "!", " ", "left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big",
        "displaystyle", "notag", "nonumber", "limits")
SKIP_WITH_ARG = ("tag", "label")
DOTS = ("ldots", "dots", "cdots", "dotsc")
SYMBOLS = {"ell": "\\ell", "infty": "infty"}  # \ell and \mathrm{ell} are different names
KNOWN = ("max", "sum", "exp", "frac", "times", "cdot", "in", "mathbb", "leftarrow", "gets", "coloneqq")
REFUSED = {  # command: (what it writes, what to write instead)
    "min": ("a minimum", "the step with \\max"),
    "prod": ("a product over an index", "the product written out"),
    "log": ("a logarithm", "exponentials e^{...}"),
    "approx": ("an approximation", "a chain of equalities"),
}


COMPARISONS = ("le", "leq", "ge", "geq")


def is_scalar_document(text: str) -> bool:
    """True for a LaTeX file this reader takes: its formulas (comments left out) use ``\\max``
    (or ``\\operatorname{max}``), ``\\leftarrow`` or ``\\gets``."""
    return bool(TRIGGERS.search("\n".join(line.split("%", 1)[0] for line in text.split("\n"))))


def declares_matrix(text: str) -> bool:
    """True when the formulas (comments left out) declare a matrix (``\\mathbb{R}^{N \\times D}``): such a
    file is one of matrices, read by the matrix reader even where a side definition uses ``\\max``."""
    return bool(MATRIX.search("\n".join(line.split("%", 1)[0] for line in text.split("\n"))))


# --- syntax -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class N:
    """An expression node: ``kind`` and its parts (see :func:`latex` for the kinds)."""

    kind: str
    parts: tuple = ()
    pos: tuple = field(default=(0, 0), compare=False)
    ops: tuple = field(default=(), compare=False)  # a product's signs between factors as written


@dataclass(frozen=True)
class Declare:
    names: tuple  # name nodes, or N("dots")
    power: N | None  # None: \mathbb{R} (scalars); else the length of each vector
    pos: tuple = (0, 0)


@dataclass(frozen=True)
class Define:
    target: N  # a name
    params: tuple  # names
    body: N
    power: N | None = None  # x = [..] \in \mathbb{R}^{2B}: the declared length
    pos: tuple = (0, 0)


@dataclass(frozen=True)
class Recur:
    target: N  # N("sub", (name, index))
    body: N
    pos: tuple = (0, 0)


@dataclass(frozen=True)
class Chain:
    first: N
    links: tuple  # ((pos, node), ...)
    pos: tuple = (0, 0)


def name_text(n: N) -> str:
    base, sup = n.parts
    return base + (f"^{{{sup}}}" if sup else "")


def latex(n: N) -> str:
    """The node in LaTeX, as a paper would write it."""
    k, p = n.kind, n.parts
    if k == "num":
        return str(p[0])
    if k == "name":
        base = p[0]
        word = base if len(base.rstrip("'")) == 1 or base == "\\ell" else f"\\mathrm{{{base}}}"
        return word + (f"^{{{p[1]}}}" if p[1] else "")
    if k == "inf":
        return "\\infty"
    if k == "dots":
        return "\\ldots"
    if k == "sub":
        return f"{latex(p[0])}_{{{latex(p[1])}}}"
    if k == "call":
        return f"{latex(p[0])}({', '.join(latex(a) for a in p[1])})"
    if k == "exp":
        return f"e^{{{latex(p[0])}}}"
    if k == "neg":
        inner = latex(p[0])
        return f"-{inner}" if p[0].kind not in ("add",) else f"-({inner})"
    if k == "add":
        out = latex(p[0])
        for t in p[1:]:
            out += f" - {latex(t.parts[0])}" if t.kind == "neg" else f" + {latex(t)}"
        return out
    if k == "mul":
        ops = n.ops if len(n.ops) == len(p) - 1 else ("",) * (len(p) - 1)
        out = ""
        for t, f in enumerate(p):
            text = f"({latex(f)})" if f.kind in ("add", "neg") else latex(f)
            out += text if t == 0 else (f" {ops[t - 1]} {text}" if ops[t - 1] else f" {text}")
        return out
    if k == "div":
        return f"\\frac{{{latex(p[0])}}}{{{latex(p[1])}}}"
    if k == "max":
        return f"\\max({', '.join(latex(a) for a in p)})"
    if k in ("maxover", "sum"):
        cmd = "\\max" if k == "maxover" else "\\sum"
        index, lo, hi, body = p
        lim = f"_{{{index}={latex(lo)}}}^{{{latex(hi)}}}" if lo is not None else f"_{index}"
        return f"{cmd}{lim} {latex(body)}"
    if k == "vec":
        return "\\begin{bmatrix} " + " & ".join(latex(c) for c in p) + " \\end{bmatrix}"
    raise ValueError(f"no LaTeX for a {k} node")


# --- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    kind: str  # cmd, id, num, sym, begin, end, row, amp, open, close (of a formula)
    value: str
    line: int
    col: int

    def show(self) -> str:
        if self.kind == "cmd":
            return f"\\{self.value}"
        if self.kind in ("begin", "end"):
            return f"\\{self.kind}{{{self.value}}}"
        if self.kind == "row":
            return "\\\\"
        return repr(self.value) if self.value else self.kind


def tokenize(text: str) -> list[Tok]:
    """Tokens of the formulas of ``text``: comments and prose between formulas are skipped."""
    check_size(text, "the LaTeX file")
    out: list[Tok] = []
    i, line, col0, n = 0, 1, 0, len(text)
    math = None  # what closes the current formula

    def emit(kind, value, at):
        out.append(Tok(kind, value, line, at - col0 + 1))
        if len(out) > MAX_TOKENS:
            raise ParseError(f"more than {MAX_TOKENS} tokens", line, 1, "a shorter file")

    def braced(j):
        """(text inside {...} at j, index after it)."""
        if j >= n or text[j] != "{":
            raise ParseError("a command without its braced argument", line, j - col0 + 1, "'{'")
        depth = 0
        for t in range(j, n):
            if text[t] == "{":
                depth += 1
            elif text[t] == "}":
                depth -= 1
                if depth == 0:
                    return text[j + 1:t], t + 1
            elif text[t] == "\n":
                break
        raise ParseError("a '{' that is not closed on its line", line, j - col0 + 1, "'}'")

    while i < n:
        c = text[i]
        if c == "\n":
            line, col0, i = line + 1, i + 1, i + 1
            continue
        if c == "%":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "$":
            two = text.startswith("$$", i)
            if math is None:
                math = "$$" if two else "$"
                emit("open", math, i)
            elif math in ("$$", "$"):
                emit("close", math, i)
                math = None
            else:
                raise ParseError("a '$' inside an environment", line, i - col0 + 1, "\\end{...}")
            i += 2 if two else 1
            continue
        if c == "\\" and text.startswith("\\begin", i):
            env, j = braced(i + 6)
            if math is None and env in MATH_ENVS:
                math = env
                emit("open", env, i)
            elif math is not None:
                emit("begin", env, i)
            i = j
            continue
        if c == "\\" and text.startswith("\\end", i):
            env, j = braced(i + 4)
            if math == env:
                emit("close", env, i)
                math = None
            elif math is not None:
                emit("end", env, i)
            i = j
            continue
        if math is None:
            if text.startswith("\\[", i):
                math = "\\]"
                emit("open", "\\[", i)
                i += 2
            else:
                i += 1  # prose between formulas
            continue
        if text.startswith("\\]", i) and math == "\\]":
            emit("close", "\\]", i)
            math, i = None, i + 2
            continue
        if c in " \t\r~":
            i += 1
        elif c == "\\":
            if i + 1 < n and text[i + 1] == "\\":
                emit("row", "\\\\", i)
                i += 2
                continue
            m = re.match(r"\\([A-Za-z]+|.)", text[i:])
            name = m.group(1)
            j = i + len(m.group(0))
            if name in SKIP:
                i = j
            elif name in SKIP_WITH_ARG:
                _, i = braced(j)
            elif name in WORDS:
                word, i = braced(j)
                word = word.replace("\\_", "_").strip()
                if not re.fullmatch(r"[A-Za-z]+", word):
                    raise ParseError(f"\\{name}{{{word}}} is not a name", line, j - col0 + 1, "a word of letters")
                if word == "max" and name in ("operatorname", "mathrm"):  # \operatorname{max} is \max
                    emit("cmd", word, j)
                else:
                    emit("id", word, j)
            elif name == "mathbb":
                word, i = braced(j)
                if word.strip() != "R":
                    raise ParseError(f"\\mathbb{{{word}}} is not read", line, j - col0 + 1, "\\mathbb{R}")
                emit("id", "\\R", j)
            elif name in DOTS:
                emit("sym", "...", i)
                i = j
            elif name in SYMBOLS:
                emit("id" if name == "ell" else "cmd", SYMBOLS[name], i)
                i = j
            elif name in KNOWN:
                emit("cmd", name, i)
                i = j
            elif name in ("{", "}"):
                emit("sym", name, i)
                i = j
            elif name in COMPARISONS:  # read only as a chain of bounds (scalar_bounds)
                emit("cmp", name, i)
                i = j
            elif name in REFUSED:
                what, instead = REFUSED[name]
                raise ParseError(f"\\{name} is not read: {what} is not part of a scalar derivation", line,
                                 i - col0 + 1, instead)
            else:
                raise ParseError(f"\\{name} is not read by the scalar reader", line, i - col0 + 1,
                                 "numbers, names, +, -, \\times, \\frac, e^{...}, \\max, \\sum, bmatrix")
        elif c == "&":
            emit("amp", "&", i)
            i += 1
        elif c.isdigit():
            j = i
            while j < n and text[j].isdigit():
                j += 1
            if j - i > 6:
                raise ParseError("a number with more than 6 digits", line, i - col0 + 1, "a small integer")
            emit("num", text[i:j], i)
            i = j
        elif c.isascii() and c.isalpha():
            emit("id", c, i)
            i += 1
        elif c == "'" and out and out[-1].kind == "id" and out[-1].value != "\\R":
            out[-1] = Tok("id", out[-1].value + "'", out[-1].line, out[-1].col)  # s'_i: the prime is the name's
            i += 1
        elif c == ":" and text.startswith(":=", i):
            emit("sym", ":=", i)
            i += 2
        elif c in "+-=()[]{}_^,./'|<>":
            emit("sym", c, i)
            i += 1
        else:
            raise ParseError(f"the character {c!r} is not read", line, i - col0 + 1, "LaTeX math")
    if math is not None:
        raise ParseError(f"the formula opened with {math} is never closed", line, 1, "its end")
    out.append(Tok("eof", "", line, 1))
    return out


# --- parser -----------------------------------------------------------------------------------


class Parser:
    """Recursive descent over the tokens of one statement (a list ending in an ``eof``)."""

    def __init__(self, toks: list[Tok]):
        self.t, self.k, self.depth = list(toks), 0, 0
        self.split = ""  # the number a \\frac argument was split from (see one_digit)

    def peek(self, d: int = 0) -> Tok:
        return self.t[min(self.k + d, len(self.t) - 1)]

    def at(self, kind, value=None) -> bool:
        t = self.peek()
        return t.kind == kind and (value is None or t.value == value)

    def take(self) -> Tok:
        t = self.peek()
        self.k += 1
        return t

    def one_digit(self):
        """An unbraced argument of \\frac that is a number is one digit, as in TeX (\\frac12 is 1/2):
        a number token of several digits is split after its first digit."""
        self.split = ""
        t = self.peek()
        if t.kind == "num" and len(t.value) > 1:
            self.split = t.value
            self.t[self.k:self.k + 1] = [Tok("num", t.value[0], t.line, t.col),
                                         Tok("num", t.value[1:], t.line, t.col + 1)]

    def fail(self, message, expected):
        t = self.peek()
        raise ParseError(message, t.line, t.col, expected)

    def expect(self, kind, value=None, expected=None) -> Tok:
        if not self.at(kind, value):
            self.fail(f"found {self.peek().show()}", expected or repr(value or kind))
        return self.take()

    def group(self) -> N:
        """``{expr}`` or a single token."""
        if self.at("sym", "{"):
            self.take()
            e = self.expr()
            self.expect("sym", "}", "'}'")
            return e
        return self.atom(simple=True)

    # expr := ['-'] term (('+' | '-') term)*
    def expr(self) -> N:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail("the expression is nested too deeply", "a flatter expression")
        pos = (self.peek().line, self.peek().col)
        neg = self.at("sym", "-") and bool(self.take())
        terms = [self.term()]
        if neg:
            terms[0] = N("neg", (terms[0],), pos)
        while self.at("sym", "+") or self.at("sym", "-"):
            sign = self.take().value
            t = self.term()
            terms.append(t if sign == "+" else N("neg", (t,), t.pos))
        self.depth -= 1
        return terms[0] if len(terms) == 1 else N("add", tuple(terms), pos)

    def starts_factor(self) -> bool:
        t = self.peek()
        return (t.kind in ("id", "num") or (t.kind == "cmd" and t.value in ("max", "sum", "exp", "frac", "infty"))
                or (t.kind == "sym" and t.value in ("(", "{")) or (t.kind == "begin" and t.value == "bmatrix"))

    def term(self) -> N:
        first = self.factor()
        factors, ops = [first], []
        while True:
            if self.at("cmd", "times") or self.at("cmd", "cdot"):
                ops.append("\\" + self.take().value)
                factors.append(self.factor())
            elif self.at("sym", "/"):
                self.take()
                left = N("mul", tuple(factors), first.pos, tuple(ops)) if len(factors) > 1 else factors[0]
                factors, ops = [N("div", (left, self.factor()), first.pos)], []
            elif self.starts_factor():
                ops.append("")
                factors.append(self.factor())
            else:
                break
        return factors[0] if len(factors) == 1 else N("mul", tuple(factors), first.pos, tuple(ops))

    def factor(self) -> N:
        if self.at("sym", "-"):
            t = self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self.fail("the expression is nested too deeply", "a flatter expression")
            inner = self.factor()
            self.depth -= 1
            return N("neg", (inner,), (t.line, t.col))
        return self.postfix(self.atom())

    def postfix(self, e: N) -> N:
        while True:
            if self.at("sym", "_") and e.kind in ("name", "call", "sub"):
                self.take()
                e = N("sub", (e, self.group()), e.pos)
            elif self.at("sym", "(") and e.kind == "name":
                self.take()
                args = [self.expr()]
                while self.at("sym", ","):
                    self.take()
                    args.append(self.expr())
                self.expect("sym", ")", "')' closing the arguments")
                e = N("call", (e, tuple(args)), e.pos)
            elif self.at("sym", "^") and e.kind == "name" and e.parts[0] == "e" and not e.parts[1]:
                self.take()
                e = N("exp", (self.group(),), e.pos)
            elif self.at("sym", "^"):
                self.fail(f"a power of {latex(e)} is not read", "e^{...} for the exponential")
            else:
                return e

    def name(self, t: Tok) -> N:
        pos = (t.line, t.col)
        if t.value == "\\R":
            raise ParseError("\\mathbb{R} outside a declaration", t.line, t.col, "x \\in \\mathbb{R}^{n}")
        sup = ""
        if self.at("sym", "^") and self.peek(1).kind == "sym" and self.peek(1).value == "{" and \
                self.peek(2).kind == "sym" and self.peek(2).value == "(":
            # x^{(1)}: a parenthesized superscript belongs to the name
            self.take(), self.take(), self.take()
            inner = ""
            while not self.at("sym", ")"):
                if self.at("eof"):
                    self.fail("x^{( is not closed", "')}'")
                inner += self.take().value
            self.take()
            self.expect("sym", "}", "'}' after x^{(...)")
            sup = f"({inner})"
        return N("name", (t.value, sup), pos)

    def bounds(self, what: str = "max"):
        """``_i`` or ``_{k=1}^{n}`` after \\max or \\sum (``what``): (index, lo, hi)."""
        self.expect("sym", "_", "'_' and the index")
        if self.at("id"):
            return self.take().value, None, None
        self.expect("sym", "{", "'{'")
        index = self.expect("id", expected="an index").value
        if self.at("sym", "}"):
            self.take()
            return index, None, None
        if self.at("cmd", "in"):
            self.fail(f"\\{what}_{{{index} \\in ...}}: a set of indices after \\in is not read",
                      f"\\{what}_{index} x_{index} over a declared vector x, or \\{what}_{{{index}=1}}^{{n}}")
        self.expect("sym", "=", "'=' and the first value")
        lo = self.expr()
        self.expect("sym", "}", "'}'")
        self.expect("sym", "^", "'^' and the last value")
        return index, lo, self.group()

    def atom(self, simple: bool = False) -> N:
        t = self.take()
        pos = (t.line, t.col)
        if t.kind == "num":
            return N("num", (int(t.value),), pos)
        if t.kind == "id":
            return self.name(t)
        if B.comparison(t):
            B.refuse(t)
        if simple:
            raise ParseError(f"found {t.show()}", t.line, t.col, "a name, a number or {...}")
        if t.kind == "cmd" and t.value == "infty":
            return N("inf", (), pos)
        if t.kind == "sym" and t.value in ("(", "{"):
            e = self.expr()
            self.expect("sym", ")" if t.value == "(" else "}", "a closing bracket")
            return e
        if t.kind == "cmd" and t.value == "frac":
            self.one_digit()
            a = self.group()
            self.one_digit()
            b = self.group()
            if self.split and self.at("num"):  # \frac123: TeX sets 1/2 and then a 3
                self.fail(f"TeX reads the digits after \\frac as \\frac{{{latex(a)}}}{{{latex(b)}}} followed by "
                          f"{self.peek().value}", "braces: \\frac{1}{23}, or \\frac{1}{2} \\cdot 3")
            return N("div", (a, b), pos)
        if t.kind == "cmd" and t.value == "exp":
            if self.at("sym", "(") or self.at("sym", "{"):
                return N("exp", (self.atom(),), pos)
            self.fail("\\exp without its argument", "\\exp(...)")
        if t.kind == "cmd" and t.value == "max":
            if self.at("sym", "(") or self.at("sym", "{"):  # \max(a, b), or \max\{a, b\} (a set of values)
                close = ")" if self.take().value == "(" else "}"
                args = [self.expr()]
                while self.at("sym", ","):
                    self.take()
                    args.append(self.expr())
                self.expect("sym", close, f"'{close}' closing \\max" + ("(...)" if close == ")" else "\\{...\\}"))
                if len(args) < 2:
                    self.fail("\\max of one argument", "\\max(a, b) or \\max_i x_i")
                return N("max", tuple(args), pos)
            index, lo, hi = self.bounds()
            return N("maxover", (index, lo, hi, self.postfix(self.atom())), pos)
        if t.kind == "cmd" and t.value == "sum":
            index, lo, hi = self.bounds("sum")
            return N("sum", (index, lo, hi, self.term()), pos)
        if t.kind == "begin" and t.value == "bmatrix":
            cells = []
            while True:
                if self.at("sym", "..."):
                    d = self.take()
                    cells.append(N("dots", (), (d.line, d.col)))
                else:
                    cells.append(self.expr())
                if self.at("amp"):
                    self.take()
                    continue
                if self.at("row"):
                    self.fail("a bmatrix with more than one row", "a row vector [a & b & ...]")
                self.expect("end", "bmatrix", "'&' or \\end{bmatrix}")
                return N("vec", tuple(cells), pos)
        raise ParseError(f"found {t.show()}", t.line, t.col, "an expression")


# --- statements -------------------------------------------------------------------------------


def _split(toks: list[Tok], sep) -> list[list[Tok]]:
    """Split at the separators (a predicate) outside brackets and environments."""
    out, cur, depth = [], [], 0
    for t in toks:
        if t.kind == "sym" and t.value in "([{":
            depth += 1
        elif t.kind == "sym" and t.value in ")]}":
            depth -= 1
        elif t.kind == "begin":
            depth += 1
        elif t.kind == "end":
            depth -= 1
        if depth == 0 and sep(t):
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    out.append(cur)
    return out


def _eof(toks: list[Tok]) -> list[Tok]:
    last = toks[-1]
    return toks + [Tok("eof", "", last.line, last.col + len(last.value))]


def _relation(toks) -> str | None:
    """The statement's relation at the top level: \\in, :=, \\leftarrow, \\gets or =, in that order."""
    for kind, value in (("cmd", "in"), ("sym", ":="), ("cmd", "coloneqq"), ("cmd", "leftarrow"),
                        ("cmd", "gets"), ("sym", "=")):
        if _top_level(toks, kind, value):
            return value
    return None


def _top_level(toks, kind, value) -> bool:
    return len(_split(toks, lambda t: t.kind == kind and t.value == value)) > 1


def _statement(toks: list[Tok], names_before: list) -> list:
    """One statement: a declaration, a definition, a recurrence or a chain."""
    while toks and toks[-1].kind == "sym" and toks[-1].value == ".":
        toks = toks[:-1]  # the full stop that ends a displayed formula
    for t in toks:
        if B.comparison(t):  # an inequality beside a relation, or inside an expression
            B.refuse(t)
    rel = _relation(toks)
    pos = (toks[0].line, toks[0].col)
    if rel == "in":
        left, right = _split(toks, lambda t: t.kind == "cmd" and t.value == "in")[:2]
        p = Parser(_eof(right))
        space = p.take()
        if space.value != "\\R":
            raise ParseError(f"found {space.show()} after \\in", space.line, space.col,
                             "\\mathbb{R} or \\mathbb{R}^{n}")
        power = None
        if p.at("sym", "^"):
            p.take()
            power = p.group()
        p.expect("eof", expected="the end of the declaration")
        if _top_level(left, "sym", "="):  # x = [..] \in R^{2B}
            return [_definition(left, "=", power)]
        names = []
        for part in [*names_before, left]:
            q = Parser(_eof(part))
            if q.at("sym", "..."):
                d = q.take()
                names.append(N("dots", (), (d.line, d.col)))
            else:
                names.append(q.postfix(q.atom()))
            q.expect("eof", expected="',' between the declared names")
        return [Declare(tuple(names), power, pos)]
    if names_before:
        t = names_before[0][0]
        raise ParseError("a list of names that is not declared", t.line, t.col, "a, b \\in \\mathbb{R}")
    if rel in (":=", "coloneqq"):
        return [_definition(toks, rel, None)]
    if rel in ("leftarrow", "gets"):
        left, right = _split(toks, lambda t: t.kind == "cmd" and t.value == rel)[:2]
        target = Parser(_eof(left))
        tgt = target.postfix(target.atom())
        target.expect("eof", expected="\\leftarrow after the running name")
        if tgt.kind != "sub" or tgt.parts[0].kind != "name" or tgt.parts[1].kind != "name":
            raise ParseError(f"{latex(tgt)} \\leftarrow ...: the left side must be a name with a running index",
                             pos[0], pos[1], "m_j \\leftarrow ...")
        p = Parser(_eof(right))
        body = p.expr()
        p.expect("eof", expected="the end of the assignment")
        return [Recur(tgt, body, pos)]
    parts = _split(toks, lambda t: t.kind == "sym" and t.value == "=")
    nodes = []
    for part in parts:
        if not part:
            raise ParseError("an empty side of '='", pos[0], pos[1], "an expression")
        p = Parser(_eof(part))
        nodes.append(p.expr())
        p.expect("eof", expected="'=' or the end of the statement")
    if len(nodes) < 2:
        raise ParseError("a formula that is neither a declaration, a definition nor a chain", pos[0], pos[1],
                         "a = b, f(x) := ..., m_j \\leftarrow ... or x \\in \\mathbb{R}")
    return [Chain(nodes[0], tuple((n.pos, n) for n in nodes[1:]), pos)]


def _definition(toks, rel, power) -> Define:
    sep = (lambda t: t.kind == "sym" and t.value == rel) if rel in (":=", "=") else (
        lambda t: t.kind == "cmd" and t.value == rel)
    left, right = _split(toks, sep)[:2]
    p = Parser(_eof(left))
    target = p.postfix(p.atom())
    p.expect("eof", expected=f"'{rel}' after the defined name")
    params = ()
    if target.kind == "call":
        target, params = target.parts
        if not all(a.kind == "name" for a in params):
            raise ParseError(f"the parameters of {latex(target)} must be names", target.pos[0], target.pos[1],
                             "f(x) := ...")
    if target.kind != "name":
        raise ParseError(f"cannot define {latex(target)}", target.pos[0], target.pos[1], "a name or f(x)")
    q = Parser(_eof(right))
    body = q.expr()
    q.expect("eof", expected="the end of the definition")
    return Define(target, tuple(params), body, power, target.pos)


def _alignment_dropped(row: list[Tok]) -> list[Tok]:
    """The row without the alignment marks ``&`` of align* (those inside a bmatrix stay)."""
    out, depth = [], 0
    for t in row:
        depth += (t.kind == "begin") - (t.kind == "end")
        if not (t.kind == "amp" and depth == 0):
            out.append(t)
    return out


def _formula(toks: list[Tok], env: str) -> list:
    """The statements of one formula: rows (``\\\\``), a row starting with ``&=`` continuing the
    chain of the row before, statements in a row separated by commas."""
    out: list = []
    rows = _split(toks, lambda t: t.kind == "row")
    for row in rows:
        row = _alignment_dropped(row)
        if not row:
            continue
        if row[0].kind == "sym" and row[0].value == "=":
            if not out or not isinstance(out[-1], Chain):
                raise ParseError("a row that continues a chain, after no chain", row[0].line, row[0].col,
                                 "a chain a = b before the row '&= c'")
            for t in row:
                if B.comparison(t):
                    B.refuse(t)
            p = Parser(_eof(row[1:]))
            node = p.expr()
            if p.at("sym", ","):
                p.take()
            p.expect("eof", expected="one expression in a row that continues a chain")
            last = out.pop()
            out.append(Chain(last.first, last.links + ((node.pos, node),), last.pos))
            continue
        pending: list = []
        for part in _split(row, lambda t: t.kind == "sym" and t.value == ","):
            if not part:
                continue
            if _relation(part) is None and any(B.comparison(t) for t in part):
                out.append(B.statement(part))  # 1 \le c < n: bounds on lengths
                continue
            if _relation(part) is None:
                pending.append(part)  # a name of a list: a, b \in ...
                continue
            out.extend(_statement(part, pending))
            pending = []
        if pending:
            t = pending[0][0]
            raise ParseError("an expression that is not part of a statement", t.line, t.col,
                             "a declaration, a definition, an assignment or a chain")
    return out


MATRIX = re.compile(r"\\mathbb\s*\{\s*R\s*\}\s*\^\s*\{[^{}]*\\(times|cdot)")


def parse_scalar_document(text: str) -> list:
    """The statements of a scalar document, in the order written. A document that declares a
    matrix (\\mathbb{R}^{N \\times D}) is refused: this reader reads numbers and vectors only."""
    formulas = "\n".join(line.split("%", 1)[0] for line in text.split("\n"))
    found = MATRIX.search(formulas)
    if found:
        line = formulas.count("\n", 0, found.start()) + 1
        col = found.start() - (formulas.rfind("\n", 0, found.start()) + 1) + 1
        raise ParseError("the file uses \\max or \\leftarrow, so it is read as a scalar derivation (numbers and "
                         "vectors of any length), where a matrix such as \\mathbb{R}^{N \\times D} is not read", line,
                         col, "a matrix derivation without \\max, or the scalar steps in a file of their own")
    toks = tokenize(text)
    out, k = [], 0
    while toks[k].kind != "eof":
        t = toks[k]
        if t.kind != "open":
            raise ParseError(f"found {t.show()} outside a formula", t.line, t.col, "a formula")
        j = k + 1
        while toks[j].kind != "close":
            j += 1
        if j > k + 1:
            out.extend(_formula(toks[k + 1:j], t.value))
        k = j + 1
    return out
