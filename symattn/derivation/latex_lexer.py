r"""The LaTeX lexer: formulas of a file become tokens, the prose between them is skipped.

It knows the commands papers use (fonts, decorations, spacing, annotations such as ``\underbrace``),
expands ``\newcommand`` macros, and refuses what it does not read with a message that names the
command and what to write instead (:data:`REFUSED`). The parser is :mod:`.latex`; the catalogue of
the notation it reads is ``docs/notation.md``.

>>> [t.value for t in tokenize_latex(r"\hat{x}^{\prime}", math=True)][:1] == ["x\u0302'"]
True
"""

from __future__ import annotations

from ..errors import ParseError
from . import letter_runs
from .complex_notation import conjugate_refusal
from .conditions import SIGN_AHEAD
from .decimals import decimal_at, decimal_tokens
from .maxima import INSTEAD, OVER_AN_INDEX
from .position_sets import SET_BUILDER, SET_COMMANDS
from .symbols import ONES
from .tokens import MAX_DEPTH, MAX_TOKENS, Token, check_size, number

WORD_COMMANDS = ("mathbf", "boldsymbol", "bm", "mathit", "mathbfit", "operatorname", "mathrm", "mathtt", "text",
                 "textrm", "mathsf", "mathbb", "mathcal", "textbf", "textit", "mbox", "textnormal")
TEXT_COMMANDS = ("text", "textrm", "mbox", "textnormal", "textit", "textbf")
# words that join two statements in a display: "MultiHead(Q,K,V) = ... \text{where}~head_i = ..."
JOIN_WORDS = ("where", "and", "with", "for", "for all", "s.t.", "i.e.", "here", "then", "so", "thus", "hence")
SKIP = ("quad", "qquad", ",", ";", ":", "!", " ", "displaystyle", "textstyle", "limits", "notag", "nonumber",
        "left", "right", "bigl", "bigr", "Bigl", "Bigr", "big", "Big", "biggl", "biggr", "Biggl", "Biggr",
        "middle", "enspace", "thinspace", "medspace", "thickspace", "nolimits")
SKIP_WITH_ARG = ("tag", "label", "hspace", "vspace", "eqref", "ref", "cite")
GRAMMAR = ("frac", "sqrt", "sum", "prod", "cdot", "times", "in", "to", "mapsto", "lceil", "rceil", "lfloor", "rfloor",
           "otimes", "odot", "circ")
SYNONYMS = {"tfrac": ("cmd", "frac"), "dfrac": ("cmd", "frac"), "cfrac": ("cmd", "frac"),
            "coloneqq": ("op", ":="), "coloneq": ("op", ":="), "triangleq": ("op", ":="),
            "equiv": ("op", "="), "rightarrow": ("cmd", "to"),
            "exp": ("ident", "exp"), "log": ("ident", "log"), "ell": ("ident", "ell"),
            "tanh": ("ident", "tanh"), "sigmoid": ("ident", "sigmoid")}
DOTS = ("cdots", "dots", "ldots", "vdots", "ddots", "dotsc", "dotsb", "dotsm")
# Decorations are part of a name (\hat{x} is the name x̂, another name than x): the combining mark each
# adds. Wide and narrow forms are the same decoration, as are \bar and \overline.
DECORATIONS = {"hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303", "widetilde": "\u0303",
               "bar": "\u0304", "overline": "\u0304", "check": "\u030c", "dot": "\u0307", "ddot": "\u0308",
               "vec": "\u20d7", "breve": "\u0306", "acute": "\u0301", "grave": "\u0300",
               "mathring": "\u030a"}
# Presentation around an expression: the expression is read, the annotation is not.
# name: (arguments skipped before the expression, the annotation after it: "_", "^" or "")
ANNOTATED = {"underbrace": (0, "_"), "overbrace": (0, "^"), "underset": (1, ""), "overset": (1, ""),
             "stackrel": (1, ""), "boxed": (0, ""), "textcolor": (1, ""), "colorbox": (1, ""),
             "mathstrut": (None, ""), "color": (None, ""), "phantom": (None, ""), "hphantom": (None, ""),
             "vphantom": (None, ""), "mathclap": (0, ""), "mathllap": (0, ""), "mathrlap": (0, "")}
# marks a superscript may hold as a label: v^*, v^{\ast}, W^{\star}
STAR_COMMANDS = ("ast", "star")
TRIG = ("cos", "sin")  # the cosine and sine of a number (and in a rotation's pmatrix)
# arrows a subscript holds as a label: Performers' bidirectional and unidirectional Att_{\leftrightarrow},
# Att_{\rightarrow}
ARROW_LABELS = {"leftrightarrow": "\u2194", "rightarrow": "\u2192", "leftarrow": "\u2190",
                "to": "\u2192", "uparrow": "\u2191", "downarrow": "\u2193"}
TOP = ("top", "intercal", "mathsf{T}")
GREEK = ("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho "
         "sigma tau upsilon phi varphi chi psi omega "
         "Alpha Beta Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega").split()
ENVS = ("align*", "align", "aligned", "equation", "equation*", "gather*", "gather", "split", "multline",
        "multline*", "bmatrix", "pmatrix", "matrix")
MATRIX_ENVS = ("bmatrix", "pmatrix", "matrix")
# Read only inside a cases environment (a mask M_{ts} defined entry by entry): comparisons and -\infty.
CASES_COMMANDS = {"le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "infty": "infty"}
MACRO_DEFINERS = ("newcommand", "renewcommand", "providecommand", "def", "DeclareMathOperator")
MAX_MACROS = 200
MAX_EXPANSION = 2_000  # macro uses expanded in one file
MAX_MACRO_ARGS = 9

# Constructs of papers that are refused, each with what to write instead (listed in the README).
INEQUALITY = ("inequalities are read only as the conditions of a cases row (a mask entry by entry) and as an "
              "assumption \\delta > 0, and in a set of positions written by a condition, \\{j : i \\geq j\\}: "
              "write the mask by cases, M_{ij} = \\begin{cases} 0 & j \\le i \\\\ -\\infty & \\text{otherwise} "
              "\\end{cases}, or the step as an equality")
SET_INCLUSION = ("an inclusion of sets is not read (a set of positions written by a condition is read as written "
                 "and refused where a step uses it): write the sum over a range, \\sum_{j=1}^{i}, or a mask by cases")
REFUSED = {
    "max": "maxima are not read in a matrix derivation (a file of numbers and vectors that uses \\max goes to the "
           "scalar reader, docs/scalars.md): state the step with \\operatorname{softmax}, whose shift invariance "
           "is proved",
    "min": "minima are not read: state the step with matrices and softmax",
    "infty": "infinite entries are not read (causal masks): write the masked attention without its entries",
    "leftarrow": "algorithm assignments are not read in a matrix derivation (a file of numbers that uses \\leftarrow "
                 "goes to the scalar reader, docs/scalars.md): write a definition with := or =",
    "gets": "algorithm assignments are not read in a matrix derivation (a file of numbers that uses \\gets goes "
            "to the scalar reader, docs/scalars.md): write a definition with := or =",
    "prime": "\\prime is not read: write a prime as W'",
    "partial": "derivatives are not read",
    "nabla": "a gradient of something other than the loss L or a scalar the file defines is not read: "
             "\\nabla_X L = ... (dX = ...) with L the loss, or \\nabla_{x} E with E = ... defined in the file",
    "int": "integrals are not read",
    "setminus": "set operations are not read",
    "notin": "a condition of membership (j \\notin \\mathcal{P}_i) is not read: write the condition of a cases row "
             "as a comparison of indices, as in 0 & j \\le i \\\\ -\\infty & \\text{otherwise}",
    "supseteq": SET_INCLUSION,
    "subseteq": SET_INCLUSION,
    "le": INEQUALITY,
    "leq": INEQUALITY,
    "ge": INEQUALITY,
    "geq": INEQUALITY,
    "approx": "approximations are not read: a derivation is a chain of equalities",
    "propto": "proportionality is not read: write the normalizing factor",
    "input": "files are not included: paste the formulas into the derivation",
    "include": "files are not included: paste the formulas into the derivation",
}
REFUSED_ENVS = {
    "array": "an array is not read: write the block matrix with bmatrix",
    "tabular": "a table is not a formula",
}


class Lexer:
    """Tokens of a LaTeX file: formulas are tokenized, text between them (prose) is skipped.

    ``\\newcommand``/``\\def`` macros (anywhere in the file) are expanded where they are used;
    the tokens of an expansion point at the macro's use.
    """

    def __init__(self, text: str, *, math: bool = False, macros: dict | None = None, depth: int = 0):
        if depth == 0:
            check_size(text, "the LaTeX file")
        self.s, self.i, self.line, self.col0 = text, 0, 1, 0
        self.out: list[Token] = []
        self.macros = {} if macros is None else macros
        self.depth = depth
        self.expansions = [0]
        self.math = "sub" if math else None  # None: prose; else what closes the formula
        self.env_depth = 0
        self.at = None  # (line, col) that every token takes in an expansion
        self.hyphen = False  # the next letter joins the name before it (GQA-G)
        self.matrix = 0  # depth of matrix environments (where \cos and \sin are read)
        self.cases = 0  # depth of cases environments (where \le and \infty are read)
        self.sets = []  # for each \{ open: whether it opens a set of positions (where \le and \bmod are read)

    def col(self, i=None):
        return (self.i if i is None else i) - self.col0 + 1

    def fail(self, message, expected="", i=None):
        line, col = self.at or (self.line, self.col(i))
        raise ParseError(message, line, col, expected)

    def emit(self, kind, value, i):
        line, col = self.at or (self.line, self.col(i))
        self.out.append(Token(kind, value, line, col))
        if len(self.out) > MAX_TOKENS:
            self.fail(f"more than {MAX_TOKENS} tokens", "a shorter file")

    def braced(self, what: str, multiline: bool = False) -> str:
        """The text of ``{...}`` right after a command (no nesting beyond MAX_DEPTH)."""
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t":
            i += 1
        if i >= len(s) or s[i] != "{":
            self.fail(f"\\{what} without its argument", "'{' after \\" + what, i)
        depth, j = 0, i
        while j < len(s):
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "{":
                depth += 1
                if depth > MAX_DEPTH:
                    self.fail("braces nested too deeply", "a flatter expression", j)
            elif c == "}":
                depth -= 1
                if depth == 0:
                    self.i = j + 1
                    return s[i + 1:j]
            elif c == "\n" and not multiline:
                self.fail(f"the '{{' of \\{what} is not closed on its line", "'}'", i)
            j += 1
        self.fail(f"the '{{' of \\{what} is never closed", "'}'", i)

    def newline(self, i):
        self.line, self.col0, self.i = self.line + 1, i + 1, i + 1

    def run(self, eof: bool = True) -> list[Token]:
        s = self.s
        n = len(s)
        while self.i < n:
            i, c = self.i, s[self.i]
            if c == "\n":
                self.newline(i)
            elif c == "%":
                j = s.find("\n", i)
                j = n if j < 0 else j
                if s.startswith("%:", i) and self.depth == 0:
                    self.emit("directive", s[i + 2:j], i + 2)
                self.i = j
            elif c == "$":
                two = s.startswith("$$", i)
                self.emit("math", "$$" if two else "$", i)
                self.i += 2 if two else 1
                if self.math is None:
                    self.math = "$$" if two else "$"
                elif self.math in ("$$", "$"):
                    self.math = None
            elif self.math is None:
                self.prose(i)
            elif c in " \t\r~":
                self.i += 1
            elif c == "\\":
                self.command(i)
            elif c.isascii() and c.isalpha():
                if self.hyphen:
                    last = self.out[-1]
                    self.out[-1] = Token("ident", f"{last.value}-{c}", last.line, last.col)
                    self.hyphen = False
                else:
                    self.emit("ident", c, i)
                self.i += 1
            elif c.isdigit():
                j = i
                while j < n and s[j].isdigit():
                    j += 1
                line, col = self.at or (self.line, self.col(i))
                j, whole = decimal_at(s, j), j  # 0.5: a decimal, never 0 times 5 (decimals.py)
                self.out.extend(decimal_tokens(s[i:j], line, col) if j > whole else [number(s[i:j], line, col)])
                self.i = j
            elif s.startswith(":=", i):
                self.emit("op", ":=", i)
                self.i += 2
            elif c in "[]":
                self.emit("op", c, i)  # a group [x], a call Softmax[x] or a list [x_1, ..., x_N]
                self.i += 1
            elif c == "^" and self.primes(i):
                pass  # W^{\prime}: the primes joined the name
            elif c == "*" and self.in_superscript():
                self.emit("ident", "*", i)  # v^*: a label
                self.i += 1
            elif c in "(){},;+-*/=:^_&|<>":
                self.emit("op", c, i)
                self.i += 1
            elif c == "'" and self.out and self.out[-1].kind == "ident":
                last = self.out[-1]  # a prime belongs to the name: V'_i, W'
                self.out[-1] = Token("ident", last.value + "'", last.line, last.col)
                self.i += 1
            elif s.startswith("...", i):
                self.emit("dots", "...", i)
                self.i += 3
            elif c == ".":
                self.i += 1  # punctuation at the end of a formula
            else:
                self.fail(f"unexpected character {c!r}", "LaTeX math: letters, digits, \\commands, "
                          "+ - = ^ _ { } ( ) , &")
        if eof:
            self.emit("eof", "", self.i)
        return self.out

    def primes(self, i) -> bool:
        """``^\\prime``, ``^{\\prime\\prime}`` after a name: the name gets its primes (W^{\\prime} is W')."""
        s, j = self.s, i + 1
        while j < len(s) and s[j] in " \t":
            j += 1
        braced = s.startswith("{", j)
        j += braced
        count = 0
        while True:
            while j < len(s) and s[j] in " \t":
                j += 1
            if s.startswith("\\prime", j) and not s[j + 6:j + 7].isalpha():
                count, j = count + 1, j + 6
            else:
                break
            if not braced:
                break
        if braced:
            if not s.startswith("}", j):
                return False
            j += 1
        if not count or not self.out or self.out[-1].kind != "ident":
            return False
        last = self.out[-1]
        self.out[-1] = Token("ident", last.value + "'" * count, last.line, last.col, last.font)
        self.i = j
        return True

    def in_superscript(self) -> bool:
        """Whether the next token is inside a superscript: right after '^' or '^{'."""
        out = self.out
        return bool(out) and ((out[-1].kind == "op" and out[-1].value == "^") or (
            len(out) > 1 and out[-1].kind == "op" and out[-1].value == "{" and out[-2].kind == "op"
            and out[-2].value == "^"))

    def in_subscript(self) -> bool:
        """Whether the next token is right after '_' or '_{'."""
        out = self.out
        return bool(out) and ((out[-1].kind == "op" and out[-1].value == "_") or (
            len(out) > 1 and out[-1].kind == "op" and out[-1].value == "{" and out[-2].kind == "op"
            and out[-2].value == "_"))

    def argument(self, what: str) -> str:
        """The argument of a command: ``{...}``, or one letter, digit or command (``\\hat x``)."""
        s, j = self.s, self.i
        while j < len(s) and s[j] in " \t":
            j += 1
        if s.startswith("{", j):
            return self.braced(what)
        if j < len(s) and s[j] == "\\":
            k = j + 1
            while k < len(s) and s[k].isascii() and s[k].isalpha():
                k += 1
            self.i = max(k, j + 2)
            return s[j:self.i]
        if j < len(s) and (s[j].isalnum()):
            self.i = j + 1
            return s[j]
        self.fail(f"\\{what} without its argument", "'{' after \\" + what, j)

    def decorate(self, name, i):
        """``\\hat{x}``, ``\\tilde{\\mathbf{q}}_i``, ``\\bar v``: the decorated name is one name."""
        text = self.argument(name)
        start = len(self.out)
        self.sublex(text, i)
        toks = self.out[start:]
        if not toks or toks[0].kind != "ident" or (len(toks) > 1 and not (
                toks[1].kind == "op" and toks[1].value in ("_", "^"))):
            if name in ("bar", "overline"):  # \overline{f(k, n)}: a conjugate (complex_notation)
                self.fail(*conjugate_refusal(f"\\{name}{{{text[:30]}}}"), i)
            self.fail(f"\\{name}{{{text[:30]}}} decorates more than a name",
                      f"\\{name} over one name, as in \\{name}{{x}}", i)
        first = toks[0]
        self.out[start] = Token("ident", first.value + DECORATIONS[name], first.line, first.col, first.font)

    def annotated(self, name, i):
        """``\\underbrace{X}_{\\text{..}}``, ``\\overset{!}{=}``, ``\\boxed{X}``: X is read, the rest is not."""
        skip, after = ANNOTATED[name]
        if skip is None:  # \color{red}, \phantom{x}: nothing to read
            if name != "mathstrut":
                self.argument(name)
            return
        for _ in range(skip):
            self.argument(name)
        self.sublex(self.argument(name), i)
        if after:
            s, j = self.s, self.i
            while j < len(s) and s[j] in " \t":
                j += 1
            if s.startswith(after, j):
                self.i = j + 1
                self.argument(name)

    def prose(self, i):
        """Text between formulas is prose: skipped, except what opens a formula or defines a macro."""
        s = self.s
        if s.startswith("\\[", i):
            self.emit("math", "\\[", i)
            self.math, self.i = "\\]", i + 2
            return
        if s.startswith("\\(", i):
            self.emit("math", "\\(", i)
            self.math, self.i = "\\)", i + 2
            return
        if s.startswith("\\]", i) or s.startswith("\\)", i):
            self.emit("math", s[i:i + 2], i)  # closes nothing: the parser reports it
            self.i = i + 2
            return
        if s.startswith("\\begin", i) or s.startswith("\\end", i):
            word = "begin" if s.startswith("\\begin", i) else "end"
            self.i = i + 1 + len(word)
            save = self.i
            try:
                env = self.braced(word).strip()
            except ParseError:
                self.i = save
                return
            if env in ENVS:
                self.emit(word, env, i)
                if word == "begin":
                    self.math, self.env_depth = "env", 1
            return
        if s[i] == "\\":
            j = i + 1
            while j < len(s) and s[j].isascii() and s[j].isalpha():
                j += 1
            name = s[i + 1:j]
            self.i = j if name else i + 2
            if name in MACRO_DEFINERS:
                self.define_macro(name, i)
            return
        self.i += 1

    def define_macro(self, how, i):
        """``\\newcommand{\\name}[n]{body}``, ``\\newcommand\\name{body}``, ``\\def\\name{body}``,
        ``\\DeclareMathOperator{\\name}{text}``."""
        s = self.s
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if s.startswith("{", self.i):
            name = self.braced(how).strip()
        else:
            j = self.i + 1
            while j < len(s) and s[j].isascii() and s[j].isalpha():
                j += 1
            name, self.i = s[self.i:j], j
        if not (name.startswith("\\") and name[1:].isalpha() and name[1:].isascii()):
            self.fail(f"\\{how} defines {name!r}, which is not a command name", "\\newcommand{\\name}{body}", i)
        nargs = 0
        if how != "def" and s.startswith("[", self.i):
            close = s.find("]", self.i)
            text = s[self.i + 1:close] if close > 0 else ""
            if not text.isdigit() or not 0 <= int(text) <= MAX_MACRO_ARGS:
                self.fail(f"\\{how}{{{name}}} has {text!r} arguments", f"0 to {MAX_MACRO_ARGS}", i)
            nargs, self.i = int(text), close + 1
            if s.startswith("[", self.i):
                self.fail(f"\\{how}{{{name}}} has an optional argument, which is not read",
                          "a macro with mandatory arguments only", i)
        if how == "def" and self.i < len(s) and s[self.i] == "#":
            self.fail(f"\\def{name} takes parameters, which are not read", "\\newcommand{\\name}[n]{body}", i)
        body = self.braced(how, multiline=True)
        if how == "DeclareMathOperator":
            body = "\\operatorname{" + body + "}"
        if len(self.macros) >= MAX_MACROS:
            self.fail(f"more than {MAX_MACROS} macros", "fewer macros", i)
        self.macros[name[1:]] = (nargs, body)

    def expand(self, name, i):
        nargs, body = self.macros[name]
        self.expansions[0] += 1
        if self.expansions[0] > MAX_EXPANSION or self.depth >= MAX_DEPTH:
            self.fail(f"the macro \\{name} expands too often (does it use itself?)", "macros that end", i)
        for k in range(1, nargs + 1):
            arg = self.braced(name)
            body = body.replace(f"#{k}", arg)
        sub = Lexer(body, math=True, macros=self.macros, depth=self.depth + 1)
        sub.expansions = self.expansions
        sub.at = self.at or (self.line, self.col(i))
        try:
            toks = sub.run(eof=False)
        except ParseError as exc:
            detail = exc.detail if exc.detail.startswith("in the expansion of") else \
                f"in the expansion of \\{name}: {exc.detail}"
            raise ParseError(detail, sub.at[0], sub.at[1], exc.expected) from None
        for t in toks:
            self.out.append(t)
        if len(self.out) > MAX_TOKENS:
            self.fail(f"more than {MAX_TOKENS} tokens", "a shorter file")

    def sublex(self, text, i):
        """Tokens of ``text`` (a name's subscript inside ``\\mathrm{head_i}``) placed at ``i``."""
        sub = Lexer(text, math=True, macros=self.macros, depth=self.depth + 1)
        sub.expansions = self.expansions
        sub.at = self.at or (self.line, self.col(i))
        self.out.extend(sub.run(eof=False))

    def word(self, name, i):
        """``\\mathbf{W}``, ``\\mathrm{head_i}``, ``\\text{where}``, ``\\operatorname{Self-Attention}``;
        also one letter without braces, ``\\mathbf Q``, ``\\mathsf T``."""
        word = self.argument(name).strip()
        if name == "mathsf" and word == "T":
            self.emit("top", "\\mathsf{T}", i)
            return
        if name in TEXT_COMMANDS and " ".join(word.split()).lower().strip(",.;:") in JOIN_WORDS:
            self.emit("op", ",", i)  # "\text{where}" joins two statements
            return
        if name in TEXT_COMMANDS and word == "-" and self.out and self.out[-1].kind == "ident" \
                and self.i < len(self.s) and self.s[self.i].isalpha():
            self.hyphen = True  # \mathrm{GQA}\text{-}G: one name, GQA-G
            return
        if "\\" in word and name not in TEXT_COMMANDS:  # \mathbf{\hat{x}}, \boldsymbol{\alpha}
            start = len(self.out)
            self.sublex(word, i)
            if start < len(self.out) and self.out[start].kind == "ident":
                t = self.out[start]
                self.out[start] = Token(t.kind, t.value, t.line, t.col, name)
            return
        if name in TEXT_COMMANDS and word in ("-", ""):
            self.fail(f"\\{name}{{{word}}} inside a name", "a name in one command, as in \\mathrm{GQA}", i)
        m = len(word)
        for k, ch in enumerate(word):
            if ch in "_^'":
                m = k
                break
        head, rest = word[:m].strip(), word[m:]
        plain = head.replace(" ", "").replace("-", "")
        if not plain or not plain.isalnum() or not plain.isascii() or head.startswith("-") or head.endswith("-"):
            self.fail(f"\\{name}{{{word[:30]}}} is not a name", "letters, as in \\mathbf{W}", i)
        if plain.isdigit():
            if not (plain == "1" and name in ("mathbf", "boldsymbol", "bm")):
                self.fail(f"\\{name}{{{word}}} is a number written as a name", "the number itself, or "
                          "\\mathbf{1}_N for the vector of ones", i)
            self.emit("ident", ONES, i)
        else:
            self.emit("ident", " ".join(head.split()), i)
            last = self.out[-1]
            self.out[-1] = Token(last.kind, last.value, last.line, last.col, name)
        if rest:
            self.sublex(rest, i)

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
            if ch in "[]()":
                self.emit("math", "\\" + ch, i)
                if self.math == "\\" + ch:
                    self.math = None
            elif ch in ",;:! ":
                pass
            elif ch in "{}":  # \{ \} group, as brackets do; \{j : j \le i\} is a set of positions (.position_sets)
                opens_set = ch == "{" and bool(SET_BUILDER.match(s, self.i))
                closes_set = ch == "}" and bool(self.sets) and self.sets.pop()
                if ch == "{":
                    self.sets.append(opens_set)
                self.emit("op", ("\\{" if opens_set else "(") if ch == "{" else ("\\}" if closes_set else ")"), i)
            elif ch == "|":
                self.emit("op", "‖", i)  # \|x\|: a norm
            else:
                self.fail(f"unsupported LaTeX command \\{ch}", "a command of the supported subset", i)
            return
        self.i = j
        if name in self.macros:
            self.expand(name, i)
            return
        if name in MACRO_DEFINERS:
            self.define_macro(name, i)
            return
        if name in SKIP:
            return
        if name == "mathop":  # \mathop{\mathrm{softmax}}_{j}: an operator with limits, read as its content
            return self.sublex(self.braced(name), i)
        if name in SKIP_WITH_ARG:
            self.braced(name)
            return
        if name in ("intertext", "shortintertext"):  # \intertext{where}: prose between two rows
            self.braced(name)
            self.emit("op", ",", i)
            return
        if name in ("begin", "end"):
            env = self.braced(name).strip()
            if env == "cases":  # a mask entry by entry: read by the parser, comparisons allowed inside
                self.emit(name, env, i)
                self.cases += 1 if name == "begin" else -1
                return
            if env in REFUSED_ENVS:
                what, _, instead = REFUSED_ENVS[env].partition(": ")
                self.fail(f"unsupported environment {env}: {what}", instead, i)
            if env not in ENVS:
                self.fail(f"unsupported environment {env}",
                          "align*, aligned, equation, bmatrix or pmatrix", i)
            self.emit(name, env, i)
            if env in MATRIX_ENVS:
                self.matrix += 1 if name == "begin" else -1
            if self.math == "env" and env not in MATRIX_ENVS:
                self.env_depth += 1 if name == "begin" else -1
                if self.env_depth == 0:
                    self.math = None
            return
        if name in WORD_COMMANDS:
            self.word(name, i)
            return
        if name in DECORATIONS:
            self.decorate(name, i)
            return
        if name in ANNOTATED:
            self.annotated(name, i)
            return
        if name in STAR_COMMANDS and self.in_superscript():
            self.emit("ident", "*", i)
            return
        if name in ARROW_LABELS and self.in_subscript():  # Att_{\leftrightarrow}: a label, not a relation
            self.emit("ident", ARROW_LABELS[name], i)
            return
        if name in TRIG:  # Q^{\cos}: a label; \cos x: the cosine (read by .trig, refused on matrices)
            self.emit(*(("ident", name) if self.in_superscript() else ("cmd", name)), i)
            return
        if name in ("max", "min"):  # \max(a, b) of numbers, read by .maxima; \max_j is refused there
            rest = self.s[self.i:].lstrip()
            if rest.startswith(("_", "\\limits", "\\nolimits")):
                self.fail(f"\\{name}_{{...}}: {OVER_AN_INDEX}", INSTEAD, i)
            self.emit("ident", name, i)
            last = self.out[-1]
            self.out[-1] = Token(last.kind, last.value, last.line, last.col, "operatorname")
            return
        if name in ("le", "leq", "ge", "geq") and SIGN_AHEAD.match(self.s, self.i):  # k \ge 0: a stated sign
            self.emit("cmd", CASES_COMMANDS[name], i)
            return
        if name in SET_COMMANDS and any(self.sets):  # \{j : (i - j) \bmod l = 0\}, \{j \mid j \le i\}
            self.emit(*SET_COMMANDS[name], i)
            return
        if name in CASES_COMMANDS and self.cases > 0:
            self.emit("cmd", CASES_COMMANDS[name], i)
            return
        if name in ("langle", "rangle"):
            self.emit("op", "⟨" if name == "langle" else "⟩", i)
            return
        if name in ("lVert", "rVert", "Vert"):
            self.emit("op", "‖", i)
            return
        if name in SYNONYMS:
            kind, value = SYNONYMS[name]
            self.emit(kind, value, i)
        elif name in TOP:
            self.emit("top", "\\" + name, i)
        elif name in GRAMMAR:
            self.emit("cmd", name, i)
        elif name in DOTS:
            self.emit("dots", "\\" + name, i)
        elif name in GREEK:
            self.emit("ident", name, i)
        elif name in REFUSED:
            what, _, instead = REFUSED[name].partition(": ")
            self.fail(f"unsupported LaTeX command \\{name}: {what}", instead, i)
        else:
            self.fail(f"unsupported LaTeX command \\{name}",
                      "one of \\mathbf \\operatorname \\mathrm \\text \\frac \\sqrt \\sum \\top \\mathsf{T} "
                      "\\left \\right \\cdot \\cdots \\vdots \\in \\times \\begin{bmatrix} "
                      "\\begin{align*}, or a macro defined with \\newcommand", i)



def tokenize_latex(text: str, *, math: bool = False) -> list[Token]:
    """The tokens of a LaTeX file (formulas, comments, ``%:`` directives; prose is skipped), or with
    ``math=True`` of one formula's body (``\\frac{Q}{2}``)."""
    toks = Lexer(text, math=math).run()
    return toks if math else letter_runs.merge(toks)  # wkv_t = ...: a name of letters the file defines
