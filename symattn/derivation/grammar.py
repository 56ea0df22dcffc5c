"""The recursive-descent expression grammar shared by both front ends.

    chain   := expr (("=" | ":=") expr)*
    expr    := ["+" | "-"] term (("+" | "-") term)*
    term    := factor ((["*" | "\\cdot"] factor) | ("/" factor))*   juxtaposition multiplies
    factor  := primary ("^" sup)*                                  sup: T | \\top | a label
    primary := name [sub] [sup] ["(" args ")"] | number | "(" expr ")" | "{" expr "}"
             | "[" cells (";" cells)* "]" | \\frac{expr}{expr} | \\sqrt{expr} | sqrt(expr)
             | ("sum" | \\sum) "_{" index "=1}^" upper term
             | \\begin{bmatrix} cells (\\\\ cells)* \\end{bmatrix}
    args    := (expr | dots) ("," (expr | dots))*

The parser never evaluates anything: it builds :mod:`.ast` nodes. Nesting deeper than
:data:`~.tokens.MAX_DEPTH` is rejected with a ParseError.
"""

from __future__ import annotations

from ..errors import ParseError
from . import ast, exponents, index_powers, position_sets, spaces
from .complex_notation import conjugate_refusal
from .labelled_slices import labelled_slice
from .real_functions import is_real_function
from .sequences import member_of_set
from .tokens import MAX_DEPTH, PINV, Token

AXES = {"row": "row", "rows": "row", "col": "col", "column": "col", "columns": "col"}
TRANSPOSE_LABELS = ("T", "top", "intercal", "mathsf{T}")


class Parser:
    """Expression parser over a token list. Subclasses add the statement level."""

    dialect = "notation"
    in_shape = False  # inside M^{r \times c}, where \times separates the sides (elsewhere a product, \pi \times x)

    def __init__(self, tokens: list[Token]):
        self.toks = tokens
        self.i = 0
        self.depth = 0
        self.stop_words: set[str] = set()
        self.label_transposed = False  # the last superscript was a label with a transpose (W^{K\top})

    # token helpers ---------------------------------------------------------

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.peek()
        self.i += 1
        return t

    def at(self, kind: str, value: str | None = None, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind == kind and (value is None or t.value == value)

    def at_op(self, *values: str) -> bool:
        t = self.peek()
        return t.kind == "op" and t.value in values

    def fail(self, message: str, expected: str = "", tok: Token | None = None):
        t = tok or self.peek()
        raise ParseError(message, t.line, t.col, expected)

    def expect_op(self, value: str, expected: str | None = None) -> Token:
        if not self.at_op(value):
            t = self.peek()
            self.fail(f"found {t.show()}", expected or repr(value))
        return self.next()

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"the expression is nested more than {MAX_DEPTH} levels deep",
                      "a flatter expression")

    def leave(self):
        self.depth -= 1

    def pos(self, t: Token | None = None):
        t = t or self.peek()
        return (t.line, t.col)

    # expressions -----------------------------------------------------------

    def chain(self):
        """Parse ``e0 rel e1 rel e2 ...``; returns (first, links)."""
        first = self.expr()
        links = []
        while self.at_op("=", ":="):
            rel = self.next()
            links.append((rel.value, (rel.line, rel.col), self.expr()))
        if self.at_op(")", "}", "]"):
            self.fail(f"found {self.peek().show()} that closes nothing", "an opening bracket before it")
        return first, tuple(links)

    def expr(self):
        self.enter()
        p = self.pos()
        terms = []
        sign = 1
        if self.at_op("+", "-"):
            sign = -1 if self.next().value == "-" else 1
        terms.append((sign, self.kron_term()))
        while self.at_op("+", "-"):
            sign = -1 if self.next().value == "-" else 1
            terms.append((sign, self.kron_term()))
        self.leave()
        if len(terms) == 1 and terms[0][0] == 1:
            return terms[0][1]
        return ast.Add(p, tuple(terms))

    def kron_term(self):
        """``A \\otimes W`` binds looser than a product: (A^h \\otimes W_O^h W_V^h)."""
        left = self.hadamard_term()
        while self.at("cmd", "otimes"):  # a (x) b (x) c: read (componentwise.py) or refused when elaborated
            op = self.next()
            left = ast.Kron((op.line, op.col), left, self.term())
        return left

    def hadamard_term(self):
        """``P \\odot dP``: the entrywise product binds looser than a matrix product (A B \\odot C is
        (A B) \\odot C), tighter than a sum."""
        factors = [self.term()]
        while self.at("cmd", "odot") or self.at("cmd", "circ"):
            self.next()
            factors.append(self.term())
        return factors[0] if len(factors) == 1 else ast.Hadamard(pos_of(factors[0]), tuple(factors))

    def starts_primary(self) -> bool:
        t = self.peek()
        if t.kind == "ident":
            return t.value not in self.stop_words
        if t.kind == "num":
            return True
        if t.kind == "op":
            return t.value in ("(", "[", "{")
        if t.kind == "cmd":
            return t.value in ("frac", "sqrt", "sum", "begin")
        return False

    def term(self):
        p = self.pos()
        factors, dots = [self.factor()], []
        while True:
            if isinstance(factors[-1], ast.Sum):
                break  # the body of a sum took the rest of the product
            if self.at_op("*") or self.at("cmd", "cdot") or (self.at("cmd", "times") and not self.in_shape):
                if self.next().value == "cdot":
                    dots.append(len(factors))
                factors.append(self.factor())
            elif self.at_op("/"):
                slash = self.next()
                if not self.starts_primary():
                    self.fail(f"found {self.peek().show()} after '/'", "a divisor such as sqrt(d_k)")
                den = self.factor()
                num = factors[0] if len(factors) == 1 else ast.product(p, factors, dots)
                factors, dots = [ast.Div((slash.line, slash.col), num, den)], []
            elif self.starts_primary():
                factors.append(self.factor())
            else:
                break
        return factors[0] if len(factors) == 1 else ast.product(p, factors, dots)

    def factor(self):
        node = self.primary()
        if (self.at_op("^") and isinstance(node, ast.Call) and node.target.base not in VOCABULARY
                and len(node.args) == 1 and node.axis is None
                and not (self.power_ahead() and is_real_function(node.target))):  # ReLU(x)^2 = (ReLU(x))^2
            # A (B)^T is A times (B)^T: the superscript belongs to the parenthesis
            group = self.postfix(ast.Group(node.args[0].pos, node.args[0]))
            return ast.Mul(node.pos, (node.target, group))
        return self.postfix(node)

    def postfix(self, node):
        marks = 0
        while self.at_op("^"):
            if exponents.letter_power_ahead(self, node) and not index_powers.ahead(self):  # 2^{-8h/n} (exponents)
                node = exponents.read_letter_power(self, node)
                continue
            if self.power_ahead() or index_powers.ahead(self):  # A^2, and \gamma^{n-m} (index_powers)
                node = index_powers.power(self, node, pos_of(node))
                continue
            caret = self.next()
            marks += 1
            if marks > MAX_DEPTH:
                self.fail(f"more than {MAX_DEPTH} superscripts in a row", "a shorter expression", caret)
            plus = self.plus_ahead(0) if self.dialect == "latex" else 0
            if plus:  # A^{+}: the pseudo-inverse, an uninterpreted map (vectors.py)
                self.i += plus
                node = ast.Call(pos_of(node), ast.Name(pos_of(node), PINV, None, None, "operatorname"), (node,))
                continue
            label = self.superscript(caret)
            if label is None:
                node = ast.T((caret.line, caret.col), node)
            elif isinstance(node, ast.Name) and node.sup is None and not isinstance(node, ast.Call):
                node = ast.Name(node.pos, node.base, node.sub, label)
                if self.label_transposed:
                    node = ast.T((caret.line, caret.col), node)
            elif label == "*":  # (W_k x_n)^*: a conjugate (complex_notation)
                self.fail(*conjugate_refusal(f"{node.text()}^*"), caret)
            else:
                self.fail(f"the superscript ^{label} can only label a name", "^T or ^\\top (transpose)",
                          caret)
        return node

    def plus_ahead(self, k) -> int:
        """The number of tokens of ``+`` or ``{+}`` from token k on (a pseudo-inverse mark after '^'), else 0."""
        if self.at("op", "+", k):
            return 1
        return 3 if self.at("op", "{", k) and self.at("op", "+", k + 1) and self.at("op", "}", k + 2) else 0

    def superscript(self, caret: Token) -> str | None:
        """After ``^``: None for a transpose mark, else the label (``Q``, ``QX``)."""
        spaces.refuse_superscript(self)  # a_{t:s}^{\times} (Dao & Gu 2024), \bar{A}^{k-j}
        braced = self.at_op("{")
        if braced:
            self.next()
        parts = []
        while True:
            t = self.peek()
            if t.kind == "top":
                self.next()
                parts.append(None)
            elif t.kind == "ident":
                self.next()
                parts.append(t.value)
                if (braced and self.dialect == "latex" and self.at_op("_") and len(t.value) == 1
                        and (self.at("num", None, 1) or self.at("ident", None, 1)) and self.at("op", "}", 2)):
                    self.next()  # A^{h_2}: head h_2 (Elhage et al.'s virtual heads), a subscripted label on top
                    parts[-1] += "_" + self.next().value
            elif braced and self.dialect == "latex" and (
                    (t.kind == "op" and t.value == "," and parts and parts[-1] not in (None, ","))
                    or (t.kind == "num" and (parts[-1:] == [","] or (not parts and self.at("op", ",", 1))))):
                self.next()  # W^{1,l}, x^{pre,1}: a label of parts separated by commas
                parts.append(t.value)
            elif t.kind == "op" and t.value == "-":
                self.fail("the inverse ^{-1} (or a negative power) is not read", "a derivation without inverses, "
                          "as matrix inverses are not part of the notation", t)
            elif t.kind == "num":
                self.fail(f"the exponent ^{t.value} is not supported (matrix powers are not part of "
                          "the notation)", "^T, ^\\top or ^{\\mathsf{T}} (transpose) or a label such as ^{Q}",
                          t)
            else:
                self.fail(f"found {t.show()} after '^'",
                          "^T, ^\\top or ^{\\mathsf{T}} (transpose) or a label such as ^{Q}", t)
            if not braced:
                break
            if self.at_op("}"):
                self.next()
                break
        self.label_transposed = False
        if parts == [None] or parts == ["T"]:
            return None
        if self.dialect == "latex" and len(parts) > 1 and parts[-1] in (None, "T") and None not in parts[:-1]:
            self.label_transposed = True  # W^{K\top}, W_Q^{h\,T}: the label, then a transpose
            return "".join(parts[:-1])
        if None in parts:
            self.fail("a transpose mark mixed with a label", "^T alone or a label alone", caret)
        return "".join(parts)

    def subscript(self):
        """After ``_``: an index (``h``, ``1``, ``h+1``) or a label (``model``, ``k``)."""
        braced = self.at_op("{")
        if braced:
            self.next()
        if braced and (self.at("cmd", "lceil") or self.at("cmd", "lfloor")):
            node = self.rounded()
            self.expect_op("}", "'}' closing the subscript")
            return node
        start = self.i
        if braced and self.dialect == "latex" and self.at_op("("):
            return self.arith_subscript()
        node = spaces.negative_index(self) if braced and self.dialect == "latex" else None  # x_{-1} = 0
        node = node or self.sub_atom(braced)
        if braced:
            while self.at_op("+", "-"):
                op = self.next()
                node = ast.Index(node.pos, node, op.value, self.sub_atom(True))
            if self.dialect == "latex" and (self.at_op("/", "*", "(") or (
                    self.at("ident") and isinstance(node, ast.Index))):
                self.i = start  # (g-1)h/G+j, i G / h: a compound subscript
                return self.arith_subscript()
            if self.at_op(",") and self.at("op", ":", 1) and self.at("op", "}", 2) and self.dialect == "latex":
                self.i += 3  # A_{t,:}: row t
                return ast.RowIndex(node.pos, node)
            if self.at_op(":") and self.dialect == "latex":  # K_{1:t}: positions 1..t
                self.next()
                hi = self.sub_atom(True)
                while self.at_op("+", "-"):
                    op = self.next()
                    hi = ast.Index(hi.pos, hi, op.value, self.sub_atom(True))
                self.expect_op("}", "'}' closing the slice")
                return ast.Slice(node.pos, node, hi)
            if (self.at_op(",") and self.dialect == "latex" and isinstance(node, ast.Name)
                    and node.base[:1].isupper() and self.at("ident", None, 1)):  # R_{\Theta,m}: label, position
                self.next()
                index = self.sub_atom(True)
                while self.at_op("+", "-"):
                    op = self.next()
                    index = ast.Index(index.pos, index, op.value, self.sub_atom(True))
                self.expect_op("}", "'}' closing the subscript")
                return ast.ParamIndex(node.pos, node, index)
            if (self.at_op(",") and self.dialect == "latex" and isinstance(node, (ast.Name, ast.Num, ast.Index))
                    and (self.at("ident", None, 1) or self.at("num", None, 1))):
                return self.label_subscript(node)  # W_{k,E}, q_{t,i}: a compound label, read as part of the name
            if self.at_op(":", ","):
                what, example = ("a slice", "K_{1:t}") if self.at_op(":") else ("a double subscript", "A_{t,:}")
                self.fail(f"{what} in a subscript ({example}) is not read", "whole matrices (the KV cache and "
                          "causal-mask theorems of `symattn prove` state the sliced forms)")
            node = member_of_set(self, node)  # softmax_{x_j \in X}: over the members of a set (set_softmax)
            self.expect_op("}", "'}' closing the subscript")
        return node

    def label_subscript(self, first):
        """``{k,E}``, ``{t,i}``, ``{l+1,i}``: a subscript of several parts separated by commas, read as one
        label of the name (``W_{k,E}`` and ``q_{t,i}`` are names of their own, as the paper declares them)."""
        parts = [first]
        while self.at_op(","):
            self.next()
            part = self.sub_atom(True)
            while self.at_op("+", "-"):
                op = self.next()
                part = ast.Index(part.pos, part, op.value, self.sub_atom(True))
            parts.append(part)
        if len(parts) == 2 and self.at_op(":"):
            return labelled_slice(self, parts)  # K_{s,1:t}: positions of the labelled matrix K_s
        self.expect_op("}", "'}' closing the subscript")
        return ast.Labels(first.pos, tuple(parts))

    def arith_subscript(self):
        """``{(g-1)h/G+j}``: the braces' content as index arithmetic, up to the closing '}'."""
        self.enter()
        body = self.expr()
        self.leave()
        self.expect_op("}", "'}' closing the subscript")
        return ast.Arith(body.pos, body)

    def rounded(self):
        """``\\lceil iG/h \\rceil`` (or a floor) as a subscript: a group map."""
        t = self.next()
        kind, close = ("ceil", "rceil") if t.value == "lceil" else ("floor", "rfloor")
        self.enter()
        body = self.expr()
        if not self.at("cmd", close):
            self.fail(f"found {self.peek().show()}", f"\\{close} closing the \\{t.value} at line {t.line}, "
                      f"column {t.col}")
        self.next()
        self.leave()
        return ast.Round((t.line, t.col), kind, body)

    def sub_atom(self, braced: bool = False):
        t = self.peek()
        if t.kind == "num":
            self.next()
            return ast.Num((t.line, t.col), int(t.value))
        if t.kind == "ident":
            self.next()
            name = t.value
            # in LaTeX, letters of a word arrive one by one: d_{model} (but W_i W_j is two names)
            while braced and self.dialect == "latex" and self.at("ident") and len(self.peek().value) == 1:
                name += self.next().value
            if braced and self.dialect == "latex" and self.at("num") and self.at("op", "}", 1):
                name += self.next().value  # W_{s1}, W_{s2} (Lin et al. 2017): a label of letters and a number
            if self.dialect == "latex" and self.at_op("_"):  # E_{x_i}: a subscripted name in a subscript
                self.next()
                return ast.Name((t.line, t.col), name, self.subscript(), None, t.font)
            return ast.Name((t.line, t.col), name)
        self.fail(f"found {t.show()} in a subscript", "an index (h, 1, H) or a label (k, model)", t)

    def name(self, t: Token):
        """A name with its subscript and label, in either order (W_h^Q or W^Q_h)."""
        if t.value == "e" and self.dialect == "latex" and self.at_op("^"):  # e^{x}: the exponential
            self.next()
            if self.at_op("{"):
                self.next()
                self.enter()
                arg = self.expr()
                self.leave()
                self.expect_op("}", "'}' closing the exponent of e")
            else:
                arg = self.primary()
            return ast.Call((t.line, t.col), ast.Name((t.line, t.col), "exp"), (arg,))
        if t.value in ("exp", "log") and self.dialect == "latex" and not self.at_op("(", "_", "^") \
                and self.starts_primary():
            return self.bare_application(t)
        sub, sup, transpose, upper = None, None, [], None
        power = None
        while self.at_op("_", "^"):
            if self.at_op("^") and self.dialect == "latex" and self.plus_ahead(1):
                break  # A^{+}: the pseudo-inverse, read by postfix
            if self.at_op("^") and (self.power_ahead() or index_powers.ahead(self)):
                power = None if index_powers.ahead(self) else self.power()  # A^{k-j}: read by postfix
                break
            op = self.next()
            if op.value == "^" and self.dialect == "latex" and self.at_op("{") and self.at("op", "(", 1):
                if upper is not None:
                    self.fail("a second index in parentheses", "one index per name, as in W^{(i)}", op)
                upper, transposed = self.paren_index()
                if transposed:
                    transpose.append(op)
                    break
                continue
            if op.value == "_":
                if sub is not None:
                    self.fail("a second subscript", "one subscript per name", op)
                sub = self.subscript()
            else:
                label = self.superscript(op)
                if label is not None and self.label_transposed:
                    if sup is not None:
                        self.fail("a second superscript", "one label per name", op)
                    sup = label
                    transpose.append(op)
                    if self.at_op("_") and sub is None and self.dialect == "latex":
                        continue  # W^{h\,T}_Q: the subscript, printed below the mark, is the name's
                    if self.at_op("_"):
                        self.fail("a subscript after the transpose mark", "the subscript before ^T", op)
                    break
                if label is None:
                    transpose.append(op)
                    if self.at_op("_") and sub is None and self.dialect == "latex":
                        continue  # K^\top_{1:t}
                    if self.at_op("_"):
                        self.fail("a subscript after the transpose mark", "the subscript before ^T", op)
                    break
                if sup is not None:
                    self.fail("a second superscript", "one label per name", op)
                sup = label
        if upper is not None:
            sub, sup = self.upper_index(t, upper, sub, sup)
        node = ast.Name((t.line, t.col), t.value, sub, sup, t.font)
        # Q^T (K) and A^{2} (C - A) are products: a name with a transpose or a power is not applied
        if not transpose and power is None and (self.at_op("(") or (self.at_op("[") and self.dialect == "latex"
                                                                     and t.value in VOCABULARY)):
            node = self.call(node)
        if self.at_op("_") and isinstance(node, ast.Call):
            op = self.next()
            sub = self.subscript()
            if not isinstance(sub, ast.RowIndex):
                self.fail(f"a subscript after {node.text()}: entries of a result ({node.target.text()}(X)_{{i,j}}) "
                          "are not read", "the whole matrix, or a row-wise definition F(X)_{t,:} := ...", op)
            node = ast.RowOf(node.pos, node, sub.index)
        for op in transpose:
            node = ast.T((op.line, op.col), node)
        if power is not None:
            node = ast.Power(node.pos, node, *power)
        return node

    def power_ahead(self) -> bool:
        return exponents.power_ahead(self)

    def power(self):
        return exponents.read_power(self)

    def bare_application(self, t: Token):
        """``\\exp x``, ``\\exp q^\\top k / \\sqrt{d}``: without parentheses the argument is the product that
        follows, up to a sign, a fraction bar, or the next \\exp or \\log (\\exp a \\exp b is exp(a) exp(b))."""
        p = (t.line, t.col)
        factors = [self.factor()]
        while self.starts_primary() and not (self.at("ident", "exp") or self.at("ident", "log")):
            factors.append(self.factor())
        arg = factors[0] if len(factors) == 1 else ast.Mul(pos_of(factors[0]), tuple(factors))
        return ast.Call(p, ast.Name(p, t.value), (arg,))

    def paren_index(self):
        """After ``^``: ``{(i)}`` or ``{(i)\\top}``, an index written as a superscript in parentheses (the
        i-th head's W^{(i)}, the first layer's x^{(1)}); returns the index and whether a transpose follows."""
        self.i += 2
        index = self.sub_atom(True)
        while self.at_op("+", "-"):
            op = self.next()
            index = ast.Index(index.pos, index, op.value, self.sub_atom(True))
        self.expect_op(")", "')' closing the index in parentheses")
        transposed = self.at("top") or self.at("ident", "T")
        if transposed:
            self.next()
        self.expect_op("}", "'}' closing the superscript")
        return index, transposed

    def upper_index(self, t, upper, sub, sup):
        """``W_Q^{(i)}`` is head i's W^Q: the index in parentheses is the name's index, and a label in the
        subscript (a capital or a word: Q, K, model) becomes its label."""
        if sub is None:
            return upper, sup
        if sup is None and isinstance(sub, ast.Name) and sub.sub is None and (
                sub.base[:1].isupper() or len(sub.base) > 1):
            return upper, sub.base
        self.fail(f"{t.value}_{{{sub.text()}}} with the index ({upper.text()}) as well: two indices on one name",
                  f"one index, as in {t.value}_{{{sub.text()}}} or {t.value}^{{({upper.text()})}}", t)

    def call(self, target: ast.Name):
        axis = None
        if target.sub is not None and isinstance(target.sub, ast.Name) and target.sub.base in AXES \
                and target.base.lower() == "softmax":
            axis = AXES[target.sub.base]
            target = ast.Name(target.pos, target.base, None, target.sup)
        open_ = self.next()
        close = ")" if open_.value == "(" else "]"
        self.enter()
        args = []
        if not self.at_op(close):
            while True:
                if self.at("dots"):
                    d = self.next()
                    args.append(ast.Dots((d.line, d.col)))
                else:
                    args.append(self.expr())
                if self.at_op(","):
                    self.next()
                    continue
                break
        extra = []
        if self.at_op(";"):  # Att(Q, K, V; omega): names of the function's fixed parameters
            semi = self.next()
            while True:
                t = self.peek()
                if t.kind != "ident":
                    self.fail(f"found {t.show()} after ';' in the arguments of {target.text()}",
                              "names of parameters, as in Att(Q, K, V; \\omega)", semi)
                node = self.name(self.next())
                if not isinstance(node, ast.Name):  # Attention(x_q ; M(x_q, S_{x_k})): Tsai et al.'s set filtering
                    self.fail(f"{node.text()} after ';' is not a name: a parameter that is the value of a map, such "
                              "as a set filtering M(x_q, S) (the keys a query attends to), is not read",
                              "names of parameters only; a sum over a declared set, the rows of a declared matrix "
                              "(\\sum_{j=1}^{N} ...)", semi)
                extra.append(node)
                if not self.at_op(","):
                    break
                self.next()
        if not self.at_op(close):
            self.fail(f"found {self.peek().show()} in the arguments of {target.text()}",
                      f"',' or '{close}' closing the '{open_.value}' at line {open_.line}, column {open_.col}")
        self.next()
        self.leave()
        return ast.Call(target.pos, target, tuple(args), axis, tuple(extra))

    def primary(self):
        t = self.peek()
        p = (t.line, t.col)
        if t.kind == "ident" and t.value not in self.stop_words:
            self.next()
            if t.value == "sum" and self.dialect == "notation" and self.at_op("_"):
                return self.sum(t)
            if t.value == "sqrt" and self.dialect == "notation" and self.at_op("("):
                self.next()
                self.enter()
                arg = self.expr()
                self.expect_op(")", "')' closing sqrt(")
                self.leave()
                return ast.Sqrt(p, arg)
            return self.name(t)
        if t.kind == "num":
            self.next()
            return ast.Num(p, int(t.value))
        if t.kind == "op" and t.value in "({":
            self.next()
            self.enter()
            start, body = self.i, self.expr()
            close = ")" if t.value == "(" else "}"
            if close == ")" and self.at_op(",") and self.dialect == "latex":  # (h_1, h_2, \cdots, h_n): a sequence
                return spaces.tuple_cells(self, p, start)
            if not self.at_op(close):
                self.fail(f"found {self.peek().show()}",
                          f"{close!r} closing the {t.value!r} at line {t.line}, column {t.col}")
            self.next()
            self.leave()
            return ast.Group(p, body) if t.value == "(" else body
        if t.kind == "op" and t.value == "[":
            return self.bracket_block(t)
        if t.kind == "cmd" and t.value in ("lceil", "lfloor"):
            self.fail(f"\\{t.value} outside a subscript: ceilings and floors are read only as group maps "
                      "(W^K_{\\lceil iG/h \\rceil})", "a subscript of a head family, or the matrix it stands for")
        if t.kind == "cmd" and t.value == "cdot" and self.dialect == "latex":  # omega(\cdot): a placeholder
            self.next()
            return ast.Name(p, PLACEHOLDER)
        if t.kind == "cmd":
            return self.command(t)
        self.fail(f"found {t.show()}", "a name, a number, '(' or a block matrix")

    def cells(self, row_sep: str, cell_sep: str, close):
        """Rows of cells up to ``close()``; a cell is an expression or an ellipsis."""
        rows, row = [], []
        while True:
            if self.at("dots"):
                d = self.next()
                row.append(ast.Dots((d.line, d.col)))
            else:
                row.append(self.expr())
            if self.at_op(cell_sep):
                self.next()
                continue
            if self.at_op(row_sep):
                self.next()
                rows.append(tuple(row))
                row = []
                if close():
                    break
                continue
            if close():
                rows.append(tuple(row))
                break
            self.fail(f"found {self.peek().show()} in a block matrix",
                      f"'{cell_sep}' between cells, '{row_sep}' between rows, or the end of the block")
        widths = {len(r) for r in rows}
        if len(widths) > 1:
            self.fail("the rows of the block matrix have different numbers of cells", "rows of equal length")
        return tuple(rows)

    def bracket_block(self, t: Token):
        self.next()
        self.enter()
        rows = self.cells(";", ",", lambda: self.at_op("]"))
        self.expect_op("]", f"']' closing the '[' at line {t.line}, column {t.col}")
        self.leave()
        return ast.Block((t.line, t.col), rows)

    def sum(self, t: Token):
        """``sum_{h=1}^{H} body``: the body is the rest of the product."""
        p = (t.line, t.col)
        if self.dialect == "latex" and self.at_op("^"):  # \sum^{H}_{h=1}: the limits in the other order
            self.swap_limits()
        self.expect_op("_", "_{h=1}^{H} after the sum")
        if self.dialect == "latex" and self.at("ident"):  # \sum_i: over the declared range of i
            return self.sum_body(p, self.next().value, None)
        self.expect_op("{", "_{h=1}^{H} after the sum")
        idx = self.peek()
        if idx.kind != "ident":
            self.fail(f"found {idx.show()}", "the head index, as in _{h=1}")
        self.next()
        if self.dialect == "latex" and self.at_op("}"):  # \sum_{i}
            self.next()
            return self.sum_body(p, idx.value, None)
        if (self.dialect == "latex" and self.at("cmd", "in") and self.at("ident", None, 1) and self.at("op", "}", 2)
                and self.peek(1).value[:1].isupper() and len(self.peek(1).value) == 1):
            self.next()  # \sum_{h \in H}: over the set H of heads (Elhage et al.), h = 1, ..., H
            upper = self.sub_atom()
            self.next()
            return self.sum_body(p, idx.value, upper)
        if self.dialect == "latex" and self.at("cmd", "in"):  # \sum_{i \in [h]}
            self.next()
            if not self.at_op("["):  # \sum_{j \in \mathcal{P}_i}: over a set of positions (position_sets)
                position_sets.sum_over_set(self, idx.value)
            self.next()
            upper = self.expr()
            self.expect_op("]", "']' closing [h]")
            self.expect_op("}", "'}' closing the subscript of the sum")
            return self.sum_body(p, idx.value, upper)
        self.expect_op("=", "'=1' after the index of the sum")
        one = self.peek()
        if self.dialect == "latex" and not (one.kind == "num" and one.value == "1" and self.at("op", "}", 1)):
            lower = spaces.sum_limits(self)  # \sum_{s=0}^{2}, \sum_{i=t-1}^{t}: from any start (index_ranges)
            self.expect_op("^", "^{n}, the upper limit of the sum")
            return ast.RangeSum(**{**vars(self.sum_body(p, idx.value, self.subscript())), "lower": lower})
        if not (one.kind == "num" and one.value == "1"):
            self.fail(f"the sum starts at {one.show()}: sums run over heads and positions numbered from 1",
                      "the sum from 1 with the index shifted (\\sum_{j=0}^{n-1} a_j is \\sum_{j=1}^{n} a_{j-1})", one)
        self.next()
        self.expect_op("}", "'}' closing _{h=1")
        self.expect_op("^", "^{H}, the number of heads")
        return self.sum_body(p, idx.value, self.subscript())

    def swap_limits(self):
        """``^{H}_{h=1}`` after \\sum: reorder the tokens to ``_{h=1}^{H}`` (the same in print)."""
        def group(k):  # the end of the script that starts at token k (after '^' or '_')
            if not self.at("op", "{", k - self.i):
                return k + 1
            depth = 0
            for j in range(k, len(self.toks)):
                t = self.toks[j]
                if t.kind == "op" and t.value in ("{", "}"):
                    depth += 1 if t.value == "{" else -1
                    if depth == 0:
                        return j + 1
            self.fail("the upper limit of the sum is never closed", "'}'")

        up_end = group(self.i + 1)
        if not self.at("op", "_", up_end - self.i):
            return
        low_end = group(up_end + 1)
        toks = self.toks
        toks[self.i:low_end] = toks[up_end:low_end] + toks[self.i:up_end]

    def sum_body(self, p, index, upper):
        self.enter()
        if not self.starts_primary():
            self.fail(f"found {self.peek().show()} after the sum", "the summand")
        # in LaTeX the summand is the whole product that follows, entrywise and Kronecker products included:
        # \sum_h A^h \otimes W^h is \sum_h (A^h \otimes W^h)
        body = self.kron_term() if self.dialect == "latex" else self.term()
        self.leave()
        return ast.Sum(p, index, upper, body)

    def command(self, t: Token):
        self.fail(f"found {t.show()}", "a name, a number, '(' or a block matrix")


PLACEHOLDER = "\u00b7"  # \cdot standing for an argument: omega(\cdot) = softmax(\cdot / \sqrt{d})
VOCABULARY = ("Attention", "Softmax", "softmax", "MultiHead", "Concat", "exp", "log")


def row_definition(first, body):
    """``F(X)_{t,:} := softmax(A_{t,:}) M`` (or ``A_{t,:} M``), M free of t: the row-wise definition
    of ``F(X) := Softmax_row(A) M``, since row t of Softmax_row(A) M is softmax(A_{t,:}) M. Returns
    (target, params, body) or raises a ParseError saying which forms are read."""
    call, t = first.arg, first.index
    usage = ("a row-wise definition read in the form F(X)_{t,:} := softmax(A_{t,:}) M or A_{t,:} M, "
             "with no other row of anything in M")
    if not (isinstance(call, ast.Call) and all(isinstance(a, ast.Name) and a.sub is None for a in call.args)):
        raise ParseError(f"{first.text()} is not row {t.text()} of a new function", pos_of(first)[0],
                         pos_of(first)[1], usage)
    factors = list(body.factors) if isinstance(body, ast.Mul) else [body]
    head, rest = factors[0], factors[1:]

    def sliced(n):
        n = n.body if isinstance(n, ast.Group) else n
        return isinstance(n, ast.Name) and isinstance(n.sub, ast.RowIndex) and n.sub.index == t

    def strip(n):
        n = n.body if isinstance(n, ast.Group) else n
        return ast.Name(n.pos, n.base, None, n.sup, n.font)

    if isinstance(head, ast.Call) and head.target.base in ("softmax", "Softmax") and len(head.args) == 1 \
            and sliced(head.args[0]):
        head = ast.Call(head.pos, head.target, (strip(head.args[0]),), "row")
    elif sliced(head):
        head = strip(head)
    else:
        raise ParseError(f"the body of {first.text()} does not start with row {t.text()} of a matrix",
                         pos_of(body)[0], pos_of(body)[1], usage)
    if any(isinstance(n, (ast.RowIndex, ast.RowOf)) for f in rest for n in ast.nodes_of(f)):
        raise ParseError(f"the body of {first.text()} takes a row after its first factor", pos_of(body)[0],
                         pos_of(body)[1], usage)
    new = ast.Mul(body.pos, (head, *rest)) if rest else head
    return call.target, call.args, new


def pos_of(n):
    return n.pos


def chain_or_definition(first, links, pos, shape=None):
    """``x := e`` with x a new name (or a new function of names) defines x; anything else is a chain.

    ``MultiHead(Q, K, V) := ...`` stays a chain: MultiHead belongs to the vocabulary, so the
    document's definition is checked against symattn's.
    """
    if links and links[0][0] == ":=" and isinstance(first, ast.RowOf):
        target, params, body = row_definition(first, links[0][2])
        if len(links) > 1:
            raise ParseError("a row-wise definition is a definition on its own", pos[0], pos[1],
                             "the chain in a formula of its own, about the whole matrix")
        return [ast.Define(pos, target, params, body, shape)]
    if links and links[0][0] == ":=":
        target, params = first, ()
        if isinstance(first, ast.Call) and all(isinstance(a, ast.Name) for a in first.args):
            target, params = first.target, first.args
        if isinstance(target, ast.Name) and target.base not in VOCABULARY:
            define = ast.Define(pos, target, params, links[0][2], shape if len(links) == 1 else None)
            if len(links) == 1:
                return [define]
            return [define, ast.Chain(pos, first, (("=",) + links[1][1:],) + links[2:], shape)]
    if not links:
        raise ParseError("an expression on its own is neither a declaration nor a step",
                         pos[0], pos[1], "'=' and the next expression of the derivation, "
                         "':' and a shape, or ':=' and a definition")
    for rel, p, _ in links[1:]:
        if rel == ":=":
            raise ParseError("':=' in the middle of a chain", p[0], p[1], "'='")
    return [ast.Chain(pos, first, links, shape)]
