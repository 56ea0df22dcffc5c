r"""The reader of complex-number derivations: RoPE's complex form as its papers typeset it.

Su et al. 2021 (RoFormer, eqs. (11)-(13)) and Chen et al. 2023 (position interpolation) write a query
as a complex number, ``(W_q x_m) e^{i m\theta}`` or ``(x_0 + i x_1) e^{i m \theta_0}``, and the score
as ``\mathrm{Re}[f_q f_k^*]`` or ``\mathrm{Re}[f(q, m)\overline{f(k, n)}]``. A ``.tex`` file whose
formulas use ``\mathrm{Re}`` or ``\mathrm{Im}`` (also ``\operatorname{Re}``, ``\Re``, ``\Im``) is read
here (:func:`is_complex_document`); :mod:`.complex_values` gives the meaning, :mod:`.complex_check`
checks the steps. What is read:

- declarations ``\mathbf{q}, \mathbf{k} \in \mathbb{R}^{2}``, ``\theta, L' \in \mathbb{R}``,
  ``W_q \in \mathbb{R}^{2 \times 2}``, ``z \in \mathbb{C}``;
- definitions ``f(\mathbf{x}, m) = (x_0 + ix_1)e^{im\theta_0}`` (a name not defined before, applied to
  names), and chains ``a = b = c`` (in ``align*``, a row starting with ``&=`` continues the chain);
- expressions: numbers, names (bold or not: ``\mathbf{x}`` and ``x`` are one name; ``x_0`` and
  ``x_m^{(1)}`` are components of the vectors x and x_m), ``i`` (the imaginary unit), ``+ - \cdot
  \times /``, juxtaposition, ``\frac``, ``e^{...}``, ``\exp``, ``\cos``, ``\sin``, powers,
  ``\pi``, ``\mathrm{Re}``, ``\mathrm{Im}``, ``\overline{z}``, ``\bar{z}``, ``z^{*}``, ``|z|``,
  ``\langle a, b \rangle``, ``pmatrix`` of 2 × 2 or 2 × 1, and the subscript ``\{q,k\}`` (a statement
  about each of q and k).

Anything else is refused with a :class:`~symattn.errors.ParseError` naming it.

>>> [type(s).__name__ for s in parse_complex_document(r"$$ z \in \mathbb{C} $$ $$ \mathrm{Re}[z] = \mathrm{Re}[z] $$")]
['Declare', 'Chain']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParseError
from .tokens import MAX_DEPTH, MAX_TOKENS, check_size

TRIGGER = re.compile(r"\\(mathrm|operatorname)\s*\{\s*(Re|Im)\s*\}|\\(Re|Im)(?![A-Za-z])")
MATH_ENVS = ("align*", "align", "aligned", "equation", "equation*", "gather", "gather*", "split")
BOLD = ("mathbf", "boldsymbol", "bm", "mathit", "vec")
SKIP = ("quad", "qquad", ",", ";", ":", "!", " ", "left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big",
        "displaystyle", "notag", "nonumber")
GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
         "kappa", "lambda", "mu", "nu", "xi", "rho", "sigma", "tau", "phi", "varphi", "chi", "psi", "omega",
         "Theta", "Phi", "Psi", "Omega", "Gamma", "Delta", "Lambda", "Sigma")
KNOWN = ("frac", "exp", "cos", "sin", "overline", "bar", "langle", "rangle", "in", "cdot", "times", "ast",
         "mathbb", "lvert", "rvert", "vert")
WHAT_INSTEAD = "numbers, names, i, +, -, \\cdot, \\frac, e^{...}, \\cos, \\sin, \\mathrm{Re}, \\overline{z}, z^{*}"


def _formulas(text: str) -> str:
    return "\n".join(line.split("%", 1)[0] for line in text.split("\n"))


def is_complex_document(text: str) -> bool:
    """True for a LaTeX file this reader takes: its formulas (comments left out) take a real or an
    imaginary part (``\\mathrm{Re}``, ``\\mathrm{Im}``, ``\\operatorname{Re}``, ``\\Re``, ``\\Im``)."""
    return bool(TRIGGER.search(_formulas(text)))


# --- tokens -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tok:
    kind: str  # id, num, sym, cmd, begin, end, row, amp, open, close
    value: str
    line: int
    col: int
    at: int = 0  # the offset in the text
    bold: bool = False
    end: int = 0  # the offset after it
    spaced: bool = False  # a thin space (\\, \\; \\quad) before it: it ends an unbraced argument of \\cos

    def show(self) -> str:
        if self.kind == "cmd":
            return f"\\{self.value}"
        if self.kind in ("begin", "end"):
            return f"\\{self.kind}{{{self.value}}}"
        return "\\\\" if self.kind == "row" else (repr(self.value) if self.value else self.kind)


def tokenize(text: str) -> list[Tok]:
    """Tokens of the formulas of ``text``: comments and prose between formulas are skipped."""
    check_size(text, "the LaTeX file")
    out: list[Tok] = []
    i, line, col0, n = 0, 1, 0, len(text)
    math = None
    spaced = False

    def emit(kind, value, at, bold=False, end=None):
        nonlocal spaced
        out.append(Tok(kind, value, line, at - col0 + 1, at, bold, end if end is not None else at + max(len(value), 1),
                       spaced))
        spaced = False
        if len(out) > MAX_TOKENS:
            raise ParseError(f"more than {MAX_TOKENS} tokens", line, 1, "a shorter file")

    def braced(j):
        while j < n and text[j] == " ":
            j += 1
        if j >= n or text[j] != "{":
            if j < n and (text[j].isalnum()):  # \mathbf x: one letter
                return text[j], j + 1
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
            i += 2 if two else 1
            continue
        if text.startswith("\\begin", i) or text.startswith("\\end", i):
            word = "begin" if text.startswith("\\begin", i) else "end"
            env, j = braced(i + len(word) + 1)
            if math is None and word == "begin" and env in MATH_ENVS:
                math = env
                emit("open", env, i)
            elif math == env and word == "end":
                emit("close", env, i)
                math = None
            elif math is not None:
                emit(word, env, i, end=j)
            i = j
            continue
        if math is None:
            if text.startswith("\\[", i):
                math = "\\]"
                emit("open", "\\[", i)
                i += 2
            else:
                i += 1
            continue
        if text.startswith("\\]", i) and math == "\\]":
            emit("close", "\\]", i)
            math, i = None, i + 2
        elif c in " \t\r~":
            i += 1
        elif c == "\\":
            if text.startswith("\\\\", i):
                emit("row", "\\\\", i)
                i += 2
                continue
            m = re.match(r"\\([A-Za-z]+|.)", text[i:])
            name, j = m.group(1), i + len(m.group(0))
            if name in SKIP:
                spaced = spaced or name in ("quad", "qquad", ",", ";", ":", " ")
                i = j
            elif name in BOLD:
                i0 = i
                word, i = braced(j)
                word = word.strip()
                if len(word) == 1 and word.isalpha():
                    emit("id", word, i0, bold=True, end=i)
                elif word.startswith("\\") and word[1:] in GREEK:
                    emit("id", word[1:], i0, bold=True, end=i)
                else:
                    raise ParseError(f"\\{name}{{{word}}} is not read: a bold name is one letter", line,
                                     j - col0 + 1, "\\mathbf{x}")
            elif name in ("mathrm", "operatorname", "text"):
                i0 = i
                word, i = braced(j)
                word = word.strip()
                if word in ("Re", "Im"):
                    emit("cmd", word, i0, end=i)
                elif word == "i":
                    emit("cmd", "imag", i0, end=i)
                else:
                    raise ParseError(f"\\{name}{{{word}}} is not read by the complex reader", line, j - col0 + 1,
                                     "\\mathrm{Re}, \\mathrm{Im} or \\mathrm{i}")
            elif name in ("Re", "Im"):
                emit("cmd", name, i, end=j)
                i = j
            elif name == "pi":
                emit("cmd", "pi", i, end=j)
                i = j
            elif name == "imath":
                emit("cmd", "imag", i, end=j)
                i = j
            elif name == "mathbb":
                word, i = braced(j)
                if word.strip() not in ("R", "C"):
                    raise ParseError(f"\\mathbb{{{word}}} is not read", line, j - col0 + 1,
                                     "\\mathbb{R} or \\mathbb{C}")
                emit("id", "\\" + word.strip(), j)
            elif name in GREEK:
                emit("id", name, i, end=j)
                i = j
            elif name in ("ast", "lvert", "rvert", "vert"):
                emit("sym", "*" if name == "ast" else "|", i, end=j)
                i = j
            elif name in KNOWN:
                emit("cmd", name, i, end=j)
                i = j
            elif name in ("{", "}"):
                emit("sym", "\\" + name, i, end=j)
                i = j
            else:
                raise ParseError(f"\\{name} is not read by the complex reader", line, i - col0 + 1, WHAT_INSTEAD)
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
        elif c in "()[]{},+-=/^_'*|":
            emit("sym", c, i)
            i += 1
        else:
            raise ParseError(f"{c!r} is not read by the complex reader", line, i - col0 + 1, WHAT_INSTEAD)
    if math is not None:
        raise ParseError(f"a formula opened with {math} is not closed", line, 1, "its closing")
    return out


# --- syntax -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Name:
    """A name as written: its letter (``x``, ``theta``), subscript and superscript text, primes."""

    base: str
    sub: str = ""
    sup: str = ""
    primes: str = ""
    bold: bool = False

    @property
    def key(self) -> str:
        out = self.base + self.primes
        if self.sub:
            out += f"_{{{self.sub}}}" if len(self.sub) > 1 else f"_{self.sub}"
        if self.sup:
            out += f"^{{{self.sup}}}"
        return out

    def text(self) -> str:
        base = f"\\{self.base}" if len(self.base) > 1 else self.base
        return (base + self.primes + (f"_{{{self.sub}}}" if self.sub else "")
                + (f"^{{{self.sup}}}" if self.sup else ""))


@dataclass(frozen=True)
class N:
    """An expression node: ``kind`` and its parts; ``pos`` (line, column), ``span`` (offsets)."""

    kind: str  # num, name, unit, add, neg, mul, div, pow, exp, app, conj, re, im, inner, abs, cos, sin, mat
    parts: tuple = ()
    pos: tuple = field(default=(0, 0), compare=False)
    span: tuple = field(default=(0, 0), compare=False)


@dataclass(frozen=True)
class Declare:
    names: tuple  # Name
    space: tuple  # ("R",), ("C",), ("R", n) or ("R", r, c)
    pos: tuple = (0, 0)


@dataclass(frozen=True)
class Chain:
    first: N
    links: tuple  # ((pos, node), ...)
    pos: tuple = (0, 0)


FAMILY = re.compile(r"\\\{([A-Za-z])(?:,([A-Za-z]))+\\\}")


class Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.k = 0
        self.depth = 0
        self.in_abs = 0

    # tokens
    def peek(self, ahead: int = 0) -> Tok | None:
        t = self.k + ahead
        return self.toks[t] if t < len(self.toks) else None

    def at(self, kind: str, value: str | None = None, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t is not None and t.kind == kind and (value is None or t.value == value)

    def take(self) -> Tok:
        t = self.peek()
        if t is None:
            raise ParseError("the file ends inside a formula", 0, 0, "the rest of the formula")
        self.k += 1
        return t

    def expect(self, kind: str, value: str, what: str) -> Tok:
        t = self.peek()
        if t is None or t.kind != kind or t.value != value:
            self.fail(t, f"expected {what}", what)
        return self.take()

    def fail(self, t, msg: str, instead: str = WHAT_INSTEAD):
        line, col = (t.line, t.col) if t is not None else (0, 0)
        found = f", found {t.show()}" if t is not None and "expected" in msg else ""
        raise ParseError(msg + found, line, col, instead)

    def end_at(self) -> int:
        return self.toks[self.k - 1].end

    # statements
    def document(self) -> list:
        stmts = []
        while self.peek() is not None:
            self.expect("open", self.peek().value, "a formula") if self.at("open") else self.fail(
                self.peek(), "expected a formula", "$$ ... $$")
            stmts += self.formula()
        return stmts

    def formula(self) -> list:
        stmts, pending = [], []
        while True:
            while self.at("amp") or self.at("row"):
                self.take()
            if self.at("close"):
                self.take()
                break
            e = self.expr()
            if self.at("cmd", "in"):
                self.take()
                stmts.append(Declare(tuple(self.as_name(x) for x in pending + [e]), self.space(), pending[0].pos
                                     if pending else e.pos))
                pending = []
            elif self.at("sym", "=") or (self.at("amp") and self.at("sym", "=", 1)):
                if pending:
                    self.fail(self.peek(), "a list of expressions before '=' is not read", "one statement at a time")
                stmts.append(self.chain(e))
            else:
                pending.append(e)
            if self.at("sym", ","):
                self.take()
            elif not (self.at("close") or self.at("row") or self.at("amp")):
                self.fail(self.peek(), "expected ',', '=', \\in or the end of the formula", "one statement")
        if pending:
            raise ParseError("an expression without '=' or \\in is not a statement", *pending[0].pos,
                             "a = b, or names \\in \\mathbb{R}")
        return stmts

    def as_name(self, e: N) -> Name:
        if e.kind != "name":
            raise ParseError("only names are declared", *e.pos, "x, y \\in \\mathbb{R}")
        return e.parts[0]

    def space(self):
        t = self.take()
        if t.kind != "id" or t.value not in ("\\R", "\\C"):
            self.fail(t, "expected \\mathbb{R} or \\mathbb{C} after \\in", "\\mathbb{R}^{2}")
        field_ = t.value[1:]
        if not self.at("sym", "^"):
            return (field_,)
        self.take()
        toks = self.group_tokens()
        sizes = [x.value for x in toks if x.kind == "num"]
        if field_ != "R" or not sizes or len(toks) != 2 * len(sizes) - 1 or any(
                x.kind != "cmd" or x.value != "times" for x in toks[1::2]):
            self.fail(t, "a space of vectors or matrices is read with numeric sizes, \\mathbb{R}^{2} or "
                      "\\mathbb{R}^{2 \\times 2}", "\\mathbb{R}^{2}")
        return ("R", *(int(s) for s in sizes))

    def group_tokens(self) -> list:
        if not self.at("sym", "{"):
            return [self.take()]
        self.take()
        out, depth = [], 0
        while True:
            t = self.take()
            if t.kind == "sym" and t.value == "{":
                depth += 1
            elif t.kind == "sym" and t.value == "}":
                if depth == 0:
                    return out
                depth -= 1
            out.append(t)

    def chain(self, first: N) -> Chain:
        links = []
        while True:
            if self.at("row") and (self.at("sym", "=", 1) or (self.at("amp", None, 1) and self.at("sym", "=", 2))):
                self.take()
            if self.at("amp"):
                if not self.at("sym", "=", 1):
                    break
                self.take()
            if not self.at("sym", "="):
                break
            t = self.take()
            links.append(((t.line, t.col), self.expr()))
        return Chain(first, tuple(links), first.pos)

    # expressions
    def node(self, kind, parts, t, start) -> N:
        return N(kind, tuple(parts), (t.line, t.col), (start, self.end_at()))

    def expr(self) -> N:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(self.peek(), f"nesting deeper than {MAX_DEPTH}", "a flatter expression")
        try:
            t0 = self.peek()
            terms = []
            sign = None
            if self.at("sym", "-") or self.at("sym", "+"):
                sign = self.take().value
            term = self.term()
            terms.append(self.node("neg", [term], t0, t0.at) if sign == "-" else term)
            while self.at("sym", "+") or self.at("sym", "-"):
                op = self.take()
                term = self.term()
                terms.append(self.node("neg", [term], op, op.at) if op.value == "-" else term)
            return terms[0] if len(terms) == 1 else self.node("add", terms, t0, t0.at)
        finally:
            self.depth -= 1

    def starts_factor(self) -> bool:
        t = self.peek()
        if t is None:
            return False
        if t.kind in ("id", "num"):
            return t.value not in ("\\R", "\\C")
        if t.kind == "sym":
            return t.value in ("(", "[") or (t.value == "|" and not self.in_abs)
        if t.kind == "begin":
            return t.value in ("pmatrix", "bmatrix")
        return t.kind == "cmd" and t.value in ("frac", "exp", "cos", "sin", "overline", "bar", "langle", "Re", "Im",
                                               "imag", "pi")

    def term(self, stop_at_trig: bool = False) -> N:
        t0 = self.peek()
        factors = [self.factor()]
        while True:
            if self.at("cmd", "cdot") or self.at("cmd", "times"):
                self.take()
                factors.append(self.factor())
            elif self.at("sym", "/"):
                op = self.take()
                num = factors[0] if len(factors) == 1 else self.node("mul", factors, t0, t0.at)
                den = self.factor()
                factors = [N("div", (num, den), (op.line, op.col), (t0.at, self.end_at()))]
                if self.starts_factor():
                    self.fail(self.peek(), "a factor after a/b is ambiguous (a/(b c) or (a/b) c)",
                              "\\frac{a}{b c} or \\frac{a}{b} c")
            elif self.starts_factor():
                if stop_at_trig and (self.peek().spaced or self.peek().kind == "cmd"
                                     and self.peek().value in ("cos", "sin", "exp")):
                    break
                factors.append(self.factor())
            else:
                break
        return factors[0] if len(factors) == 1 else self.node("mul", factors, t0, t0.at)

    def factor(self) -> N:
        t0 = self.peek()
        base = self.atom()
        while True:
            if self.at("sym", "^"):
                self.take()
                if self.at("sym", "*") or (self.at("sym", "{") and self.at("sym", "*", 1) and self.at("sym", "}", 2)):
                    for _ in range(3 if self.at("sym", "{") else 1):
                        self.take()
                    base = self.node("conj", [base], t0, t0.at)
                    continue
                ex = self.braced_expr()
                if base.kind == "name" and base.parts[0].base == "e" and not base.parts[0].sub:
                    base = self.node("exp", [ex], t0, t0.at)
                else:
                    base = self.node("pow", [base, ex], t0, t0.at)
            else:
                return base

    def braced_expr(self) -> N:
        if self.at("sym", "{"):
            self.take()
            e = self.expr()
            self.expect("sym", "}", "'}'")
            return e
        t = self.take()
        if t.kind == "num":
            if len(t.value) > 1:  # TeX sets e^23 as e^2 followed by 3
                self.fail(t, "an unbraced superscript of several digits", "{...}")
            return N("num", (int(t.value),), (t.line, t.col), (t.at, t.end))
        if t.kind == "id":
            return N("name", (Name(t.value, bold=t.bold),), (t.line, t.col), (t.at, t.end))
        self.fail(t, "expected a braced superscript", "{...}")

    def atom(self) -> N:
        t = self.peek()
        if t is None:
            self.fail(t, "the formula ends where an expression was expected")
        start = t.at
        if t.kind == "num":
            self.take()
            return N("num", (int(t.value),), (t.line, t.col), (t.at, t.end))
        if t.kind == "sym" and t.value in ("(", "["):
            self.take()
            e = self.expr()
            self.expect("sym", ")" if t.value == "(" else "]", "')'" if t.value == "(" else "']'")
            return N(e.kind, e.parts, e.pos, (start, self.end_at()))
        if t.kind == "sym" and t.value == "|":
            self.take()
            self.in_abs += 1
            e = self.expr()
            self.in_abs -= 1
            self.expect("sym", "|", "'|'")
            return self.node("abs", [e], t, start)
        if t.kind == "begin" and t.value in ("pmatrix", "bmatrix"):
            return self.matrix()
        if t.kind == "id" and t.value not in ("\\R", "\\C"):
            return self.name_or_call()
        if t.kind == "cmd":
            self.take()
            v = t.value
            if v == "imag":
                return self.node("unit", [], t, start)
            if v == "pi":
                return self.node("pi", [], t, start)
            if v == "frac":
                a = self.braced_expr()
                b = self.braced_expr()
                return self.node("div", [a, b], t, start)
            if v in ("overline", "bar"):
                return self.node("conj", [self.braced_expr()], t, start)
            if v in ("Re", "Im"):
                if not (self.at("sym", "(") or self.at("sym", "[")):
                    self.fail(self.peek(), f"expected a bracket after \\mathrm{{{v}}}", f"\\mathrm{{{v}}}[z]")
                return self.node(v.lower(), [self.atom()], t, start)
            if v == "exp":
                if not self.at("sym", "("):
                    self.fail(self.peek(), "expected '(' after \\exp", "\\exp(x)")
                return self.node("exp", [self.atom()], t, start)
            if v in ("cos", "sin"):
                arg = self.atom() if self.at("sym", "(") else self.term(stop_at_trig=True)
                return self.node(v, [arg], t, start)
            if v == "langle":
                a = self.expr()
                self.expect("sym", ",", "','")
                b = self.expr()
                self.expect("cmd", "rangle", "\\rangle")
                return self.node("inner", [a, b], t, start)
        self.fail(t, f"{t.show()} is not read by the complex reader here")

    def matrix(self) -> N:
        t = self.take()
        rows, row = [], [self.expr()]
        while True:
            if self.at("amp"):
                self.take()
                row.append(self.expr())
            elif self.at("row"):
                self.take()
                rows.append(tuple(row))
                row = [self.expr()]
            elif self.at("end", t.value):
                self.take()
                rows.append(tuple(row))
                break
            else:
                self.fail(self.peek(), "expected &, \\\\ or the end of the matrix", f"\\end{{{t.value}}}")
        return self.node("mat", rows, t, t.at)

    def script(self) -> tuple[str, bool]:
        """The text of a sub- or superscript (one token or a braced group)."""
        toks = self.group_tokens()
        parts = []
        for x in toks:
            if x.kind == "id" and len(x.value) > 1 and not x.value.startswith("\\"):
                parts.append("\\" + x.value + " ")
            else:
                parts.append(x.value)
        return "".join(parts).strip(), bool(toks) and toks[0].bold

    def label_ahead(self) -> bool:
        """After '^': a parenthesized label ``{(1)}``, ``{(11)}``, ``{(q)}`` (no operator inside)."""
        if not (self.at("sym", "{", 1) and self.at("sym", "(", 2)):
            return False
        t = 3
        while self.at("num", None, t) or self.at("id", None, t):
            t += 1
        return t > 3 and self.at("sym", ")", t) and self.at("sym", "}", t + 1)

    def name_or_call(self) -> N:
        t = self.take()
        sub = sup = primes = ""
        while True:
            if self.at("sym", "'"):
                self.take()
                primes += "'"
            elif self.at("sym", "_") and not sub:
                self.take()
                sub = self.script()[0]
            elif self.at("sym", "^") and not sup and t.value != "e" and self.label_ahead():
                self.take()
                sup = self.script()[0]  # x^{(1)}: a parenthesized superscript belongs to the name
            else:
                break
        nm = N("name", (Name(t.value, sub, sup, primes, t.bold),), (t.line, t.col), (t.at, self.end_at()))
        if self.at("sym", "(") and not (t.value in ("i", "e") and not (sub or sup or primes)):
            save = self.k
            self.take()
            args = [self.expr()]
            while self.at("sym", ","):
                self.take()
                args.append(self.expr())
            if not self.at("sym", ")"):
                self.k = save
                return nm
            self.take()
            return N("app", (nm, tuple(args)), (t.line, t.col), (t.at, self.end_at()))
        return nm


def parse_complex_document(text: str) -> list:
    """The statements (:class:`Declare`, :class:`Chain`) of a complex-number derivation."""
    return Parser(text).document()


def source_text(text: str, node: N) -> str:
    """The LaTeX of ``node`` as the file writes it (one line, spaces collapsed)."""
    a, b = node.span
    return " ".join(text[a:b].split()) if b > a else "?"
