r"""The LaTeX front end: the subset of LaTeX that papers use for attention.

A file is a sequence of formulas (``$$ ... $$``, ``\[ ... \]``, ``$ ... $`` or a bare
``\begin{align*} ... \end{align*}``) with comments (``%``) between them; any other text
outside a formula is an error. A comment line ``%: ...`` holds one statement of the
plain notation (``%: convention: row``). Inside a formula, statements are separated
by commas, and in ``align*`` by ``\\`` unless the next row continues the chain (``&=``):

- ``\mathbf{Q} \in M^{d_{\text{model}} \times n}`` declares a matrix (also ``\mathbb{R}^{..}``);
- ``h = 1, \cdots, H`` declares the head index h and the number of heads H, and then
  ``\mathbf{W}_{h}^{Q} \in M^{d_{k} \times d_{\text{model}}}`` declares a family;
- ``f : M^{..} \times M^{..} \to M^{..}`` declares an uninterpreted score function;
- ``\operatorname{head}_{h} := ...`` defines a name; ``a = b = c`` is a chain of steps.

Understood: ``\mathbf``, ``\boldsymbol``, ``\operatorname``, ``\mathrm``, ``\text``, ``^{\mathsf{T}}``,
``^\top``, ``^T``, ``\frac``, ``\sqrt``, ``\sum_{h=1}^{H}``, ``\left( \right)``, ``\cdot``,
``bmatrix`` with ``\vdots``/``\cdots``, ``align*`` with ``&=`` and ``\\``, ``:=``; ``\tag``,
``\label``, ``\notag`` and spacing (``\quad``, ``\,``) are ignored.

>>> [type(s).__name__ for s in parse_latex(r"$$ \mathbf{Q} \in M^{d_{k} \times n} $$")]
['Declare']
"""

from __future__ import annotations

from ..errors import ParseError
from . import ast
from .grammar import Parser, chain_or_definition
from .notation import NotationParser
from .tokens import MAX_DEPTH, MAX_TOKENS, Token, check_size, number, tokenize_plain

WORD_COMMANDS = ("mathbf", "boldsymbol", "bm", "mathit", "mathbfit", "operatorname", "mathrm", "text",
                 "textrm", "mathsf", "mathbb", "mathcal", "textbf", "textit")
SKIP = ("quad", "qquad", ",", ";", ":", "!", " ", "displaystyle", "limits", "notag", "nonumber",
        "left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big", "biggl", "biggr", "middle")
SKIP_WITH_ARG = ("tag", "label")
GRAMMAR = ("frac", "sqrt", "sum", "cdot", "times", "in", "to", "mapsto")
DOTS = ("cdots", "dots", "ldots", "vdots", "ddots")
TOP = ("top", "intercal", "mathsf{T}")
GREEK = ("alpha beta gamma delta epsilon theta lambda mu nu pi rho sigma tau phi psi omega "
         "Alpha Beta Gamma Delta Theta Lambda Pi Sigma Phi Psi Omega").split()
ENVS = ("align*", "align", "aligned", "equation", "equation*", "gather*", "bmatrix", "pmatrix", "matrix")
MATRIX_ENVS = ("bmatrix", "pmatrix", "matrix")


class Lexer:
    def __init__(self, text: str):
        check_size(text, "the LaTeX file")
        self.s, self.i, self.line, self.col0 = text, 0, 1, 0
        self.out: list[Token] = []

    def col(self, i=None):
        return (self.i if i is None else i) - self.col0 + 1

    def fail(self, message, expected="", i=None):
        raise ParseError(message, self.line, self.col(i), expected)

    def emit(self, kind, value, i):
        self.out.append(Token(kind, value, self.line, self.col(i)))
        if len(self.out) > MAX_TOKENS:
            self.fail(f"more than {MAX_TOKENS} tokens", "a shorter file")

    def braced(self, what: str) -> str:
        """The text of ``{...}`` right after a command (no nesting beyond MAX_DEPTH)."""
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t":
            i += 1
        if i >= len(s) or s[i] != "{":
            self.fail(f"\\{what} without its argument", "'{' after \\" + what, i)
        depth, j = 0, i
        while j < len(s):
            c = s[j]
            if c == "{":
                depth += 1
                if depth > MAX_DEPTH:
                    self.fail("braces nested too deeply", "a flatter expression", j)
            elif c == "}":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return s[i + 1:j]
            elif c == "\n":
                self.fail(f"the '{{' of \\{what} is not closed on its line", "'}'", i)
            j += 1
        self.fail(f"the '{{' of \\{what} is never closed", "'}'", i)

    def run(self) -> list[Token]:
        s = self.s
        n = len(s)
        while self.i < n:
            i, c = self.i, s[self.i]
            if c == "\n":
                self.line, self.col0, self.i = self.line + 1, i + 1, i + 1
            elif c in " \t\r~":
                self.i += 1
            elif c == "%":
                j = s.find("\n", i)
                j = n if j < 0 else j
                if s.startswith("%:", i):
                    self.emit("directive", s[i + 2:j], i + 2)
                self.i = j
            elif c == "$":
                two = s.startswith("$$", i)
                self.emit("math", "$$" if two else "$", i)
                self.i += 2 if two else 1
            elif c == "\\":
                self.command(i)
            elif c.isascii() and c.isalpha():
                self.emit("ident", c, i)
                self.i += 1
            elif c.isdigit():
                j = i
                while j < n and s[j].isdigit():
                    j += 1
                self.out.append(number(s[i:j], self.line, self.col(i)))
                self.i = j
            elif s.startswith(":=", i):
                self.emit("op", ":=", i)
                self.i += 2
            elif c in "[]":
                self.emit("op", "(" if c == "[" else ")", i)  # brackets group, as parentheses do
                self.i += 1
            elif c in "(){},;+-*/=:^_&|":
                self.emit("op", c, i)
                self.i += 1
            elif c == ".":
                self.i += 1  # punctuation at the end of a formula
            else:
                self.fail(f"unexpected character {c!r}", "LaTeX math: letters, digits, \\commands, "
                          "+ - = ^ _ { } ( ) , &")
        self.emit("eof", "", self.i)
        return self.out

    def command(self, i):
        s = self.s
        if s.startswith("\\\\", i):
            self.emit("op", "\\\\", i)
            self.i = i + 2
            return
        j = i + 1
        while j < len(s) and s[j].isascii() and s[j].isalpha():
            j += 1
        name = s[i + 1:j]
        if not name:  # \, \; \[ \] \{ \}
            ch = s[i + 1:i + 2]
            self.i = i + 2
            if ch in "[]":
                self.emit("math", "\\" + ch, i)
            elif ch in ",;:! ":
                pass
            else:
                self.fail(f"unsupported LaTeX command \\{ch}", "a command of the supported subset", i)
            return
        self.i = j
        if name in SKIP:
            return
        if name in SKIP_WITH_ARG:
            self.braced(name)
            return
        if name in ("begin", "end"):
            env = self.braced(name).strip()
            if env not in ENVS:
                self.fail(f"unsupported environment {env}",
                          "align*, aligned, equation, bmatrix or pmatrix", i)
            self.emit(name, env, i)
            return
        if name in WORD_COMMANDS:
            word = self.braced(name).strip()
            if name == "mathsf" and word == "T":
                self.emit("top", "\\mathsf{T}", i)
                return
            if not word.replace(" ", "").isalnum() or not word.isascii():
                self.fail(f"\\{name}{{{word[:30]}}} is not a name", "letters, as in \\mathbf{W}", i)
            self.emit("ident", " ".join(word.split()), i)
            return
        if name in TOP:
            self.emit("top", "\\" + name, i)
        elif name in GRAMMAR:
            self.emit("cmd", name, i)
        elif name in DOTS:
            self.emit("dots", "\\" + name, i)
        elif name in GREEK:
            self.emit("ident", name, i)
        else:
            self.fail(f"unsupported LaTeX command \\{name}",
                      "one of \\mathbf \\operatorname \\mathrm \\text \\frac \\sqrt \\sum \\top \\mathsf{T} "
                      "\\left \\right \\cdot \\cdots \\vdots \\in \\times \\begin{bmatrix} "
                      "\\begin{align*}", i)


def tokenize_latex(text: str) -> list[Token]:
    """The tokens of a LaTeX file (formulas, comments, ``%:`` directives)."""
    return Lexer(text).run()


class LatexParser(Parser):
    dialect = "latex"

    def starts_primary(self) -> bool:
        if self.at("begin") and self.peek().value in MATRIX_ENVS:
            return True
        return super().starts_primary()

    def primary(self):
        t = self.peek()
        if t.kind == "begin" and t.value in MATRIX_ENVS:
            self.next()
            self.enter()
            rows = self.cells("\\\\", "&", lambda: self.at("end"))
            end = self.next()
            if end.value != t.value:
                self.fail(f"\\end{{{end.value}}} closes \\begin{{{t.value}}}", f"\\end{{{t.value}}}", end)
            self.leave()
            return ast.Block((t.line, t.col), rows)
        return super().primary()

    def command(self, t: Token):
        p = (t.line, t.col)
        if t.value == "frac":
            self.next()
            self.enter()
            num = self.braced_expr("the numerator of \\frac")
            den = self.braced_expr("the denominator of \\frac")
            self.leave()
            return ast.Div(p, num, den)
        if t.value == "sqrt":
            self.next()
            self.enter()
            arg = self.braced_expr("the argument of \\sqrt") if self.at_op("{") else self.primary()
            self.leave()
            return ast.Sqrt(p, arg)
        if t.value == "sum":
            self.next()
            return self.sum(t)
        self.fail(f"found \\{t.value}", "a name, a number, '(' or a block matrix")

    def braced_expr(self, what):
        open_ = self.expect_op("{", f"'{{' opening {what}")
        if self.at_op("}") or self.at("eof"):
            self.fail(f"found {self.peek().show()} in {what}",
                      f"an expression, then '}}' closing the '{{' at line {open_.line}, column {open_.col}")
        e = self.expr()
        if not self.at_op("}"):
            self.fail(f"found {self.peek().show()} in {what}",
                      f"'}}' closing the '{{' at line {open_.line}, column {open_.col}")
        self.next()
        return e

    # statements ----------------------------------------------------------------

    def space(self):
        """``M^{r \\times c}`` or ``\\mathbb{R}^{r \\times c}``; returns a Shape."""
        t = self.peek()
        if not (t.kind == "ident" and t.value in ("M", "R")):
            self.fail(f"found {t.show()}", "a matrix space such as M^{d_{k} \\times n}")
        self.next()
        self.expect_op("^", "^{rows \\times columns}")
        self.expect_op("{", "^{rows \\times columns}")
        rows = self.expr()
        if not self.at("cmd", "times"):
            self.fail(f"found {self.peek().show()}", "\\times between rows and columns")
        self.next()
        cols = self.expr()
        self.expect_op("}", "'}' closing the shape")
        return ast.Shape((t.line, t.col), rows, cols)

    def statement(self):
        t = self.peek()
        p = (t.line, t.col)
        if (t.kind == "ident" and self.at("op", "=", 1) and self.at("num", "1", 2) and self.at("op", ",", 3)
                and self.at("dots", None, 4)):
            self.i += 5
            self.expect_op(",", "',' and the number of heads, as in h = 1, \\cdots, H")
            return [ast.HeadRange(p, t.value, self.expr())]
        save = self.i
        names = self.name_list()
        if names and self.at("cmd", "in"):
            self.next()
            return [ast.Declare(p, tuple(names), self.space())]
        if names and len(names) == 1 and self.at_op(":"):
            self.next()
            self.space()
            while self.at("cmd", "times"):
                self.next()
                self.space()
            if not self.at("cmd", "to"):
                self.fail(f"found {self.peek().show()}", "\\to and the space of the scores")
            self.next()
            self.space()
            return [ast.ScoreDecl(p, names[0].text())]
        self.i = save
        first, links = self.chain()
        shape = None
        if self.at("cmd", "in"):
            self.next()
            shape = self.space()
        return chain_or_definition(first, links, p, shape)

    def name_list(self):
        names = []
        while self.at("ident"):
            t = self.next()
            node = self.name(t)
            if not isinstance(node, ast.Name):
                return None
            names.append(node)
            if not self.at_op(","):
                break
            if not self.at("ident", None, 1):
                break
            self.next()
        return names

    def statements(self, end):
        """Statements separated by ',' up to ``end()``."""
        out = []
        while True:
            if end():
                return out
            out.extend(self.statement())
            if self.at_op(","):
                self.next()
                continue
            if not end():
                self.fail(f"found {self.peek().show()} after the end of the statement",
                          "',' between statements, or the end of the formula")


def _align_rows(tokens: list[Token]) -> list[Token]:
    """In align*, drop '&'; a row break continues the chain before '=' or ':=', else separates."""
    out, depth = [], 0
    for k, t in enumerate(tokens):
        if t.kind in ("begin", "end"):
            depth += 1 if t.kind == "begin" else -1
        if depth > 0:  # inside a bmatrix: '&' and '\\' belong to it
            out.append(t)
            continue
        if t.kind == "op" and t.value == "&":
            continue
        if t.kind == "op" and t.value == "\\\\":
            nxt = next((u for u in tokens[k + 1:k + 3] if not (u.kind == "op" and u.value == "&")), None)
            if nxt is None or (nxt.kind == "op" and nxt.value in ("=", ":=")) or nxt.kind == "end":
                continue
            out.append(Token("op", ",", t.line, t.col))
            continue
        out.append(t)
    return out


def _math_block(tokens: list[Token], k: int) -> tuple[list[Token], int]:
    """The tokens of the formula opened at ``tokens[k]``, and the index after it."""
    t = tokens[k]
    if t.kind == "math":
        close = {"$$": "$$", "$": "$", "\\[": "\\]"}.get(t.value)
        if close is None:
            raise ParseError(f"{t.value} closes a formula that was never opened", t.line, t.col,
                             "$$, \\[ or \\begin{align*} to open a formula")
        for j in range(k + 1, len(tokens)):
            u = tokens[j]
            if u.kind == "math":
                if u.value != close:
                    raise ParseError(f"found {u.value} inside the formula opened by {t.value} at line "
                                     f"{t.line}, column {t.col}", u.line, u.col, close)
                return tokens[k + 1:j], j + 1
            if u.kind == "directive":
                raise ParseError("a %: directive inside a formula", u.line, u.col,
                                 "directives between formulas")
        raise ParseError(f"the formula opened by {t.value} is never closed", t.line, t.col, close)
    # a bare environment at the top level
    depth = 0
    for j in range(k, len(tokens)):
        u = tokens[j]
        if u.kind == "begin":
            depth += 1
        elif u.kind == "end":
            depth -= 1
            if depth == 0:
                return tokens[k:j + 1], j + 1
    raise ParseError(f"\\begin{{{t.value}}} is never closed", t.line, t.col, f"\\end{{{t.value}}}")


def _formula(tokens: list[Token]) -> list:
    """Statements of one formula, unwrapping align*/equation environments."""
    if not tokens:
        return []
    out, k, plain = [], 0, []

    def flush():
        if plain:
            last = plain[-1]
            parser = LatexParser(plain + [Token("eof", "formula", last.line, last.col + len(last.value))])
            out.extend(parser.statements(lambda: parser.at("eof")))
            plain.clear()

    while k < len(tokens):
        t = tokens[k]
        if t.kind == "begin" and t.value not in MATRIX_ENVS:
            flush()
            body, k = _math_block(tokens, k)
            if not body or body[-1].kind != "end" or body[-1].value != t.value:
                raise ParseError(f"\\begin{{{t.value}}} is closed by something else", t.line, t.col,
                                 f"\\end{{{t.value}}}")
            out.extend(_formula(_align_rows(body[1:-1])))
            continue
        if t.kind == "end" and t.value not in MATRIX_ENVS:
            raise ParseError(f"\\end{{{t.value}}} without its \\begin", t.line, t.col, "a matching \\begin")
        plain.append(t)
        k += 1
    flush()
    return out


def _directive(t: Token) -> list:
    toks = [Token(u.kind, u.value, t.line, t.col + u.col - 1) for u in tokenize_plain(t.value)
            if u.kind not in ("nl", "eof")]
    if not toks:
        return []
    parser = NotationParser(toks + [Token("eof", "", t.line, t.col + len(t.value))])
    stmts = parser.statement()
    if not parser.at("eof"):
        parser.fail(f"found {parser.peek().show()} after the end of the directive", "the end of the line")
    return stmts


def parse_latex(text: str) -> list:
    """Parse a LaTeX derivation file into statements (:mod:`.ast`)."""
    tokens = tokenize_latex(text)
    out, k = [], 0
    while tokens[k].kind != "eof":
        t = tokens[k]
        if t.kind == "directive":
            out.extend(_directive(t))
            k += 1
        elif t.kind == "math" or (t.kind == "begin" and t.value not in MATRIX_ENVS):
            body, k = _math_block(tokens, k)
            out.extend(_formula(body))
        else:
            raise ParseError(f"found {t.show()} outside a formula", t.line, t.col,
                             "a formula ($$ ... $$, \\[ ... \\], $ ... $ or \\begin{align*}) or a % comment")
    return out
