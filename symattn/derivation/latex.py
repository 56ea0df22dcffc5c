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
from . import ast, spaces
from .column_lists import rewrite_column_lists
from .conditions import read_condition, sign_statement, stray_comparison
from .decay_masks import decay_value_ahead, read_decay_value
from .grad_notation import merge_gradient_tokens, rewrite_gradient_notation
from .grammar import Parser, chain_or_definition, pos_of
from .latex_lexer import MATRIX_ENVS, tokenize_latex
from .named_cases import labels_ahead, read_named_cases
from .notation import NotationParser
from .point_values import PointValue
from .position_sets import read_position_set
from .result_parts import PAREN_SUBSCRIPT, PartOf, entry_of, entry_refusal, is_plain_index
from .scalar_gradients import rewrite_scalar_gradients
from .sequences import sequence_length
from .set_families import refuse_family
from .tokens import Token, tokenize_plain


class LatexParser(Parser):
    dialect = "latex"
    mentions = False  # inline math ($x$, \\(x\\)) may mention a symbol without stating anything

    def starts_primary(self) -> bool:
        if self.at("begin") and (self.peek().value in MATRIX_ENVS or self.peek().value == "cases"):
            return True
        if self.at_op("⟨", "\\{") or self.at("cmd", "cos") or self.at("cmd", "sin"):
            return True
        if self.at_op("‖"):  # a norm opens here unless it closes one: \|x\| \|y\|
            return self.norms_open % 2 == 0
        return super().starts_primary()

    def primary(self):
        t = self.peek()
        if t.kind == "op" and t.value == "[":
            return self.bracket(t)
        if t.kind == "op" and t.value == "⟨":
            return self.inner(t)
        if t.kind == "op" and t.value == "‖":
            return self.norm(t)
        if t.kind == "begin" and t.value in MATRIX_ENVS:
            self.next()
            self.enter()
            rows = self.cells("\\\\", "&", lambda: self.at("end"))
            end = self.next()
            if end.value != t.value:
                self.fail(f"\\end{{{end.value}}} closes \\begin{{{t.value}}}", f"\\end{{{t.value}}}", end)
            self.leave()
            return ast.Block((t.line, t.col), rows)
        if t.kind == "begin" and t.value == "cases":
            return self.cases(t)
        if t.kind == "op" and t.value == "\\{":  # \{j : i \geq j\}: a set of positions (.position_sets)
            return read_position_set(self)
        node = super().primary()
        if isinstance(node, ast.Group) and self.at_op("_"):  # (P_l)_{h,h'}: an entry (result_parts)
            refuse_family(self, node, self.peek())  # (W_k x_j)_{j \in S_i}: a family over a set (set_families)
            op = self.next()
            return entry_of(node, self.subscript(), lambda *said: self.fail(*(said or PAREN_SUBSCRIPT), op))
        return node

    def inner(self, t: Token):
        """``\\langle q, k \\rangle``: an inner product of two vectors (or matrices) of one shape."""
        self.next()
        self.enter()
        left = self.expr()
        self.expect_op(",", "',' between the two sides of the inner product")
        right = self.expr()
        self.expect_op("⟩", f"\\rangle closing the \\langle at line {t.line}, column {t.col}")
        self.leave()
        return ast.Inner((t.line, t.col), left, right)

    norms_open = 0

    def norm(self, t: Token):
        """``\\|x\\|``, ``\\|x\\|_2``, ``\\|A\\|_F`` and their squares ``\\|x\\|^2``, ``\\|x\\|_2^2``."""
        self.next()
        self.enter()
        self.norms_open += 1
        arg = self.expr()
        self.expect_op("‖", f"\\| closing the norm opened at line {t.line}, column {t.col}")
        self.norms_open -= 1
        self.leave()
        squared = False
        for _ in range(2):
            if self.at_op("_"):
                u = self.peek(1) if not self.at("op", "{", 1) else self.peek(2)
                if not (u.kind == "num" and u.value == "2") and not (u.kind == "ident" and u.value == "F"):
                    self.fail(f"the norm with subscript {u.show()}", "the Euclidean norm \\|x\\| (or "
                              "\\|x\\|_2, \\|A\\|_F); other norms are not read", u)
                self.i += 2 if not self.at("op", "{", 1) else 4
            elif self.at_op("^"):
                u = self.peek(1) if not self.at("op", "{", 1) else self.peek(2)
                if not (u.kind == "num" and u.value == "2"):
                    self.fail(f"the norm to the power {u.show()}", "\\|x\\| or its square \\|x\\|^2", u)
                self.i += 2 if not self.at("op", "{", 1) else 4
                squared = True
        return ast.Norm((t.line, t.col), arg, squared)

    def cases(self, t: Token):
        """``\\begin{cases} 0 & s \\le t \\\\ -\\infty & s > t \\end{cases}``: a mask written entry by entry,
        each row a value (0 or -\\infty) and a comparison of indices (or \\text{otherwise})."""
        self.next()
        self.enter()
        if labels_ahead(self):  # h^T s & \text{dot} \\ ...: a definition by named alternatives (named_cases)
            return read_named_cases(self, t)
        usage = "rows such as 0 & s \\le t \\\\ -\\infty & s > t (a mask entry by entry)"
        rows = []
        while True:
            v = self.peek()
            if v.kind == "num" and v.value == "0":
                self.next()
                value = "0"
            elif self.at_op("-") and self.at("cmd", "infty", 1):
                self.i += 2
                value = "-inf"
            elif decay_value_ahead(self):  # \gamma^{n-m}: a decay mask (decay_masks)
                value = read_decay_value(self)
            else:
                self.fail(f"found {v.show()} as a value of the cases environment: only a mask (entries 0 and "
                          "-\\infty) is read", usage, v)
            if self.at_op(","):
                self.next()
            self.expect_op("&", "'&' between the value and its condition")
            if self.at("ident", "otherwise"):
                self.next()
                cond = None
            else:
                cond = read_condition(self)  # j \le i; i - W \le j \le i; |i - j| \le w
            rows.append((value, cond))
            if self.at_op(",", "."):
                self.next()
            if self.at_op("\\\\"):
                self.next()
            if self.at("end"):
                end = self.next()
                if end.value != "cases":
                    self.fail(f"\\end{{{end.value}}} closes \\begin{{cases}}", "\\end{cases}", end)
                break
        self.leave()
        return ast.Cases((t.line, t.col), tuple(rows))

    def bracket(self, t: Token):
        """``[x]`` groups as parentheses do; ``[x_1, \\dots, x_N]`` is one block row, as in the notation."""
        self.next()
        self.enter()
        if self.at("dots"):
            d = self.next()
            first = ast.Dots((d.line, d.col))
        else:
            first = self.expr()
        if self.at_op(",", ";"):  # [x_1, \dots, x_N] one block row; [q^C; q^R] stacked, as in the notation
            rows, cells = [], [first]
            while self.at_op(",", ";"):
                if self.next().value == ";":
                    rows.append(tuple(cells))
                    cells = []
                if self.at("dots"):
                    d = self.next()
                    cells.append(ast.Dots((d.line, d.col)))
                else:
                    cells.append(self.expr())
            rows.append(tuple(cells))
            if len({len(r) for r in rows}) > 1:
                self.fail(f"the rows of the block [...] at line {t.line}, column {t.col} have "
                          f"{' and '.join(sorted({str(len(r)) for r in rows}))} cells", "rows of the same number "
                          "of cells, separated by ';' (cells by ',')")
            node = ast.Block((t.line, t.col), tuple(rows))
        else:
            node = ast.Group((t.line, t.col), first)
        if not self.at_op("]"):
            self.fail(f"found {self.peek().show()}", f"']' closing the '[' at line {t.line}, column {t.col}")
        self.next()
        self.leave()
        if self.at_op("_") and isinstance(node, ast.Group):  # [softmax(...) V]_{t,:}: row t of a result
            op = self.next()
            sub = self.subscript()
            if is_plain_index(sub):  # [softmax(...) V]_n: the n-th vector of a result (result_parts)
                return PartOf(node.pos, node.body, sub)
            if not isinstance(sub, ast.RowIndex):
                self.fail(entry_refusal(node.body), "[\\cdot]_n or [\\cdot]_{t,:} (one vector), or the whole matrix",
                          op)
            node = ast.RowOf(node.pos, node, sub.index)
        return node

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
        if t.value == "prod":  # \prod_{j=1}^{3} a_j: over a given number of terms (index_ranges)
            self.next()
            s = self.sum(t)
            return ast.Prod(s.pos, s.index, s.upper, s.body, getattr(s, "lower", None))
        if t.value in ("cos", "sin"):  # \cos{m\theta_1}, \cos(m\theta_1), \sin^2 x (trig)
            self.next()
            power = self.power() if self.at_op("^") and self.power_ahead() else None
            if power is not None and (power[0] < 1 or power[1] != 1):
                self.fail(f"\\{t.value}^{{{power[0]}{'' if power[1] == 1 else '/' + str(power[1])}}}: only a positive "
                          f"whole power of \\{t.value} is read (\\{t.value}^{{-1}} would be the inverse function)",
                          f"\\{t.value}^2 x, or 1 / \\{t.value}(x)", t)
            self.enter()
            if self.at_op("{"):
                arg = self.braced_expr(f"the argument of \\{t.value}")
            elif self.at_op("("):
                arg = self.primary()
            else:  # \cos m\theta: the product that follows, up to the next \cos, \sin, \exp or \log
                factors = [self.factor()]
                while self.starts_primary() and not (self.at("cmd", "cos") or self.at("cmd", "sin")
                                                     or self.at("ident", "exp") or self.at("ident", "log")):
                    factors.append(self.factor())
                arg = factors[0] if len(factors) == 1 else ast.Mul(pos_of(factors[0]), tuple(factors))
            self.leave()
            call = ast.Call(p, ast.Name(p, t.value), (arg,))
            return call if power is None else ast.Power(p, call, *power)
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
        """``M^{r \\times c}``, ``\\mathbb{R}^{r \\times c}``, ``\\mathbb{R}^{n}`` (a column of n entries) or
        ``\\mathbb{R}`` (a scalar, Shape with no rows); returns a Shape."""
        t = self.peek()
        spaces.refuse_entry_set(self)  # (0, 1)^{1 \times d}, \{0, 1\}^{L \times L}
        if not (t.kind == "ident" and t.value in ("M", "R")):
            self.fail(f"found {t.show()}", "a matrix space such as M^{d_{k} \\times n} or \\mathbb{R}^{n \\times d}")
        self.next()
        if not self.at_op("^"):
            if t.value == "M":
                self.fail("M without its shape", "M^{rows \\times columns}")
            return ast.Shape((t.line, t.col), None, None)
        self.next()
        if not self.at_op("{"):
            rows = self.sub_atom()  # \mathbb{R}^n
            return ast.Shape((t.line, t.col), rows, ast.Num((t.line, t.col), 1), True)
        self.next()
        self.in_shape, outer = True, self.in_shape
        try:
            if spaces.is_tuple(self):  # \mathbb{R}^{(T, N)} (Dao & Gu 2024)
                return spaces.tuple_shape(self, t)
            rows = spaces.dimension(self)  # an expression, or |x|: the length of x
        finally:
            self.in_shape = outer
        if self.at_op("}"):
            self.next()
            return ast.Shape((t.line, t.col), rows, ast.Num((t.line, t.col), 1), True)
        if not self.at("cmd", "times"):
            self.fail(f"found {self.peek().show()}", "\\times between rows and columns")
        self.next()
        cols = spaces.dimension(self)
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
        if names and self.at_op(",") and self.at("dots", None, 1) and self.at_op(",", 2):
            return self.sequence(names, p)
        sign = sign_statement(self, names)  # \delta > 0, k \ge 0: real scalars of a sign (.conditions)
        if sign is not None:
            return [ast.Declare(p, tuple(names), ast.Shape(p, None, None), positive=sign == "> 0", sign=sign)]
        if names and self.at("cmd", "in"):
            self.next()
            return [ast.Declare(p, tuple(names), self.space())]
        if names and len(names) == 1 and self.at_op(":"):
            self.next()
            domain = [self.space()]
            while self.at("cmd", "times"):
                self.next()
                domain.append(self.space())
            arity = len(domain)
            if not self.at("cmd", "to"):
                self.fail(f"found {self.peek().show()}", "\\to and the space of the values")
            self.next()
            codomain = self.space()
            mapping = self.mapsto(names[0], domain, codomain, p)
            if mapping is not None and arity == 2:
                self.fail(f"{names[0].text()} : ... \\mapsto ... gives the score function a rule, which is not read "
                          "(Attention would not use it)", "the signature alone (f uninterpreted), or the directive "
                          "%: score: dot (or scaled_dot)", t)
            if mapping is not None:
                return [mapping]
            if arity == 1 and _is_vector_space(domain[0]) and _is_vector_space(codomain):
                return [ast.FeatureDecl(p, names[0].text(), domain[0], codomain)]  # phi : R^D -> R^C
            if arity != 2:
                self.fail(f"{names[0].text()} is declared as a function of {arity} argument"
                          f"{'s' if arity > 1 else ''} without (...) \\mapsto ...: only a score function of two "
                          "arguments (f : M^{..} \\times M^{..} \\to M^{..}) or a feature map of one vector "
                          "(\\phi : \\mathbb{R}^{D} \\to \\mathbb{R}^{C}) is read alone",
                          "a feature map between vector spaces, \\phi : \\mathbb{R}^{D} \\to \\mathbb{R}^{C} (it "
                          "then applies to vectors and to the rows of matrices), or the map's rule in the next row: "
                          "(Q, K, V) \\mapsto ...", t)
            return [ast.ScoreDecl(p, names[0].text(), tuple(domain), codomain)]
        self.i = save
        first, links = self.chain()
        stray_comparison(self, first)  # a + 1 \ge 0: an inequality after an expression (.conditions)
        shape = None
        if self.at("cmd", "in"):
            self.next()
            shape = self.space()
        if not links and shape is None and self.mentions:
            return []  # "$d_k$" in a sentence names a symbol: a mention, not a statement
        if not links and shape is None and isinstance(first, ast.Power) and self.at_op("_"):  # x^1_p, \ldots
            self.fail(f"{first.text()}_... indexed on top is not read: a member of a sequence indexed on top "
                      "(x^1_p, \\ldots, x^N_p, Dosovitskiy et al.) would be read as a power",
                      "x_1, \\ldots, x_N \\in S, the index below (or n = 1, \\ldots, N and x_n \\in S)", t)
        if not links and shape is not None and isinstance(first, ast.Call):  # \phi(k) \in \mathbb{R}^{d}
            return [PointValue(p, first, shape)]  # the value of phi at k (point_values)
        return chain_or_definition(first, links, p, shape)

    def sequence(self, names, p):
        """``x_1, \\ldots, x_N \\in S``: the family x_1, ..., x_N of members of S, read as the head range
        n = 1, ..., N with x_n declared in S (the index letter is the count's small letter)."""
        first = names[-1]
        self.i += 3
        t = self.peek()
        last = self.name(self.next()) if t.kind == "ident" else None
        usage = ("a sequence written x_1, \\ldots, x_N \\in S, the first member indexed 1 and the last by a "
                 "single capital letter N (or write n = 1, \\ldots, N and x_n \\in S)")
        plain = names[:-1]  # x, y, w_1, \ldots, w_D \in S: names of S, then the sequence
        if (length := sequence_length(self, plain, first, last, p)) is not None:  # x_1, \ldots, x_n (sequences)
            return length
        if not (all(n.sub is None for n in plain) and isinstance(last, ast.Name) and isinstance(first.sub, ast.Num)
                and first.sub.value == 1 and isinstance(last.sub, ast.Name) and last.sub.sub is None
                and last.sub.sup is None and len(last.sub.base) == 1 and last.sub.base.isupper()
                and (last.base, last.sup) == (first.base, first.sup)):
            shown = f", {last.text()}" if isinstance(last, ast.Name) else ""
            self.fail(f"the sequence {', '.join(n.text() for n in names)}, \\ldots{shown} is not read", usage, t)
        if not self.at("cmd", "in"):
            self.fail(f"found {self.peek().show()} after the sequence {first.text()}, \\ldots, {last.text()}",
                      "\\in and the space of its members", self.peek())
        self.next()
        upper = last.sub
        letter = upper.base.lower()
        member = ast.Name(first.pos, first.base, ast.Name(first.pos, letter), first.sup, first.font)
        space = self.space()
        return [ast.Declare(p, tuple(plain), space)] * bool(plain) + [ast.Declare(p, (member,), space, letter, upper)]

    def mapsto(self, name, domain, codomain, p):
        """After a signature: ``, (Q, K, V) \\mapsto body`` (the next row of an align), or None."""
        save = self.i
        if self.at_op(","):
            self.next()
        if not self.at_op("("):
            self.i = save
            return None
        self.next()
        params = []
        while self.at("ident"):
            n = self.name(self.next())
            if not isinstance(n, ast.Name):
                self.i = save
                return None
            params.append(n)
            if not self.at_op(","):
                break
            self.next()
        if not (self.at_op(")") and self.at("cmd", "mapsto", 1)) or len(params) != len(domain):
            if self.at_op(")") and self.at("cmd", "mapsto", 1):
                self.fail(f"{name.text()} takes {len(domain)} arguments by its signature, and {len(params)} are "
                          "mapped", f"{len(domain)} parameters in (...) \\mapsto")
            self.i = save
            return None
        self.i += 2
        return ast.MapDef(p, name, tuple(domain), codomain, tuple(params), self.expr())

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
            while self.at_op(","):  # "\\quad\\text{where}" after a comma: an empty statement
                self.next()
            if end():
                return out
            out.extend(self.statement())
            if self.at_op(","):
                self.next()
                continue
            if not end() and self.at_op("_") and self.i > 0 and self.toks[self.i - 1].value == ")":
                self.fail(*PAREN_SUBSCRIPT, self.peek())  # (P_l)_{h,h'}, (softmax(K) \odot V)_{t'}
            if not end():
                self.fail(f"found {self.peek().show()} after the end of the statement",
                          "',' between statements, or the end of the formula")


def _is_vector_space(shape) -> bool:
    """``\\mathbb{R}^{D}``: a space of vectors (a shape of one column)."""
    return shape.rows is not None and isinstance(shape.cols, ast.Num) and shape.cols.value == 1


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
            if nxt is None or (nxt.kind == "op" and nxt.value in ("=", ":=", ",")) or nxt.kind == "end":
                continue
            out.append(Token("op", ",", t.line, t.col))
            continue
        out.append(t)
    return out


def _math_block(tokens: list[Token], k: int) -> tuple[list[Token], int]:
    """The tokens of the formula opened at ``tokens[k]``, and the index after it."""
    t = tokens[k]
    if t.kind == "math":
        close = {"$$": "$$", "$": "$", "\\[": "\\]", "\\(": "\\)"}.get(t.value)
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


def _formula(tokens: list[Token], inline: bool = False) -> list:
    """Statements of one formula, unwrapping align*/equation environments."""
    if not tokens:
        return []
    out, k, plain = [], 0, []

    def flush():
        if plain:
            last = plain[-1]
            parser = LatexParser(plain + [Token("eof", "formula", last.line, last.col + len(last.value))])
            parser.mentions = inline
            out.extend(parser.statements(lambda: parser.at("eof")))
            plain.clear()

    while k < len(tokens):
        t = tokens[k]
        if t.kind == "begin" and t.value not in MATRIX_ENVS and t.value != "cases":
            flush()
            body, k = _math_block(tokens, k)
            if not body or body[-1].kind != "end" or body[-1].value != t.value:
                raise ParseError(f"\\begin{{{t.value}}} is closed by something else", t.line, t.col,
                                 f"\\end{{{t.value}}}")
            out.extend(_formula(_align_rows(body[1:-1])))
            continue
        if t.kind == "end" and t.value not in MATRIX_ENVS and t.value != "cases":
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
    text = rewrite_column_lists(rewrite_scalar_gradients(rewrite_gradient_notation(text)))  # dX; \nabla_x E
    tokens = merge_gradient_tokens(tokenize_latex(text))
    out, k = [], 0
    while tokens[k].kind != "eof":
        t = tokens[k]
        if t.kind == "directive":
            out.extend(_directive(t))
            k += 1
        elif t.kind == "math" or (t.kind == "begin" and t.value not in MATRIX_ENVS):
            body, k = _math_block(tokens, k)
            out.extend(_formula(body, inline=t.value in ("$", "\\(")))
        else:
            raise ParseError(f"found {t.show()} outside a formula", t.line, t.col,
                             "a formula ($$ ... $$, \\[ ... \\], $ ... $ or \\begin{align*}) or a % comment")
    return out
