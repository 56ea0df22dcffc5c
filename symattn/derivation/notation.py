"""The plain-text notation for derivation files.

One statement per line; a line that starts with ``=`` continues the chain above it.
``#`` starts a comment.

    convention: column                  # or row (the Transformer paper)
    score: f                            # an uninterpreted f; or scaled_dot (default), dot
    Q: d_model x n
    W_h^Q, W_h^K: d_k x d_model for h in 1..H
    W^O := [W_1^O, W_2^O, ..., W_H^O]   # a definition; ';' separates block rows
    head_h := Attention(W_h^Q Q, W_h^K K, W_h^V V)
    assume d_k = d_v
    MultiHead(Q, K, V) = W^O [head_1; head_2; ...; head_H]
      = sum_{h=1}^{H} W_h^O head_h

>>> stmts = parse_notation("Q: d_k x n\\nQ = Q^T^T")
>>> [type(s).__name__ for s in stmts]
['Declare', 'Chain']
"""

from __future__ import annotations

from . import ast
from .grammar import VOCABULARY, Parser, chain_or_definition
from .tokens import Token, tokenize_plain

SETTINGS = ("convention", "score", "heads")
SCORE_CHOICES = ("scaled_dot (Kᵀ Q / sqrt(d_k), the default), dot (Kᵀ Q), or a new one-word name such as f "
                 "for an uninterpreted score function f(Q, K)")
#: words a score function cannot be named: the notation's own functions and keywords
RESERVED_SCORE_NAMES = frozenset(VOCABULARY) | {"sum", "assume", "x", "for", "in"}


class NotationParser(Parser):
    dialect = "notation"

    def statement(self):
        t = self.peek()
        p = (t.line, t.col)
        if t.kind == "ident" and t.value in SETTINGS and self.at("op", ":", 1):
            self.next()
            self.next()
            return [self.setting(t)]
        if t.kind == "ident" and t.value == "assume":
            self.next()
            lhs = self.expr()
            self.expect_op("=", "'=' in the assumption, as in assume d_k = d_v")
            rhs = self.expr()
            return [ast.Assume(p, lhs, rhs)]
        save = self.i
        names = self.name_list()
        if names and self.at_op(":"):
            self.next()
            return [self.declaration(p, names)]
        self.i = save
        first, links = self.chain()
        return chain_or_definition(first, links, p)

    def name_list(self):
        names = []
        while self.at("ident"):
            t = self.next()
            sub, sup = None, None
            while self.at_op("_", "^"):
                op = self.next()
                if op.value == "_" and sub is None:
                    sub = self.subscript()
                elif op.value == "^" and sup is None:
                    sup = self.superscript(op)
                    if sup is None:
                        return None
                else:
                    return None
            names.append(ast.Name((t.line, t.col), t.value, sub, sup))
            if not self.at_op(","):
                break
            self.next()
        return names

    def setting(self, key: Token):
        p = (key.line, key.col)
        if key.value == "heads":
            idx = self.peek()
            if idx.kind != "ident":
                self.fail(f"found {idx.show()}", "the head index, as in heads: h = 1..H")
            self.next()
            self.expect_op("=", "'=' as in heads: h = 1..H")
            return ast.HeadRange(p, idx.value, self.range_upper())
        v = self.peek()
        if v.kind != "ident":
            self.fail(f"found {v.show()}", f"a value for {key.value}")
        self.next()
        if key.value == "score":
            return self.score(p, v)
        if key.value == "convention" and v.value not in ("row", "column"):
            self.fail(f"unknown convention {v.value!r}", "row or column", v)
        return ast.Setting(p, key.value, v.value)

    def score(self, p, v: Token):
        """``score: scaled_dot`` (the default), ``score: dot``, or ``score: f``: an uninterpreted score
        function f. The tokens split ``scaled_dot`` at its '_'; they are joined again here."""
        if v.value == "scaled" and self.at_op("_") and self.at("ident", "dot", 1):
            self.next()
            self.next()
            return ast.Setting(p, "score", "scaled_dot")
        if v.value == "dot":
            return ast.Setting(p, "score", "dot")
        if self.at_op("_", "^") or v.value == "scaled":
            mark, nxt = self.peek(), self.peek(1)
            joined = mark.kind == "op" and mark.value in "_^" and nxt.kind in ("ident", "num")
            written = v.value + (mark.value + nxt.value if joined else "")
            self.fail(f"the score {written} is not one symattn knows (a score function's name is one word)",
                      SCORE_CHOICES, v)
        if v.value in RESERVED_SCORE_NAMES:
            self.fail(f"{v.value} is a word of the notation, not a name for the score function", SCORE_CHOICES, v)
        return ast.ScoreDecl(p, v.value)

    def range_upper(self):
        one = self.peek()
        if not (one.kind == "num" and one.value == "1"):
            self.fail(f"found {one.show()}", "1..H (heads are numbered from 1)")
        self.next()
        self.expect_op("..", "'..' as in 1..H")
        return self.dim()

    def dim(self):
        self.stop_words = {"x", "for"}
        try:
            return self.expr()
        finally:
            self.stop_words = set()

    def declared_dim(self):
        """A dimension of a declared shape; a constant one that is not positive (``-3``, ``2 - 2``)
        is refused here, where it is written."""
        start = self.peek()
        node = self.dim()
        value = _constant(node)
        if value is not None and value < 1:
            written = node.text()
            shown = str(value) if written.replace(" ", "") == str(value) else f"{written} = {value}"
            self.fail(f"the dimension {shown} is not positive", "a positive integer or a "
                      "dimension name such as d_k (matrices have at least one row and one column)", start)
        return node

    def declaration(self, p, names):
        rows = self.declared_dim()
        if not (self.at("ident", "x")):
            self.fail(f"found {self.peek().show()}", "'x' between rows and columns, as in Q: d_k x n")
        self.next()
        cols = self.declared_dim()
        shape = ast.Shape(p, rows, cols)
        index = upper = None
        if self.at("ident", "for"):
            self.next()
            idx = self.peek()
            if idx.kind != "ident":
                self.fail(f"found {idx.show()}", "the head index, as in for h in 1..H")
            self.next()
            if not self.at("ident", "in"):
                self.fail(f"found {self.peek().show()}", "'in' as in for h in 1..H")
            self.next()
            index, upper = idx.value, self.range_upper()
        return ast.Declare(p, tuple(names), shape, index, upper)


def _constant(node):
    """The value of a dimension written with numbers only (``3``, ``-3``, ``2 (1 - 2)``), else None."""
    if isinstance(node, ast.Num):
        return node.value
    if isinstance(node, ast.Group):
        return _constant(node.body)
    if not isinstance(node, (ast.Mul, ast.Add)):
        return None
    parts = node.factors if isinstance(node, ast.Mul) else [t for _, t in node.terms]
    values = [_constant(x) for x in parts]
    if None in values:
        return None
    if isinstance(node, ast.Mul):
        out = 1
        for v in values:
            out *= v
        return out
    return sum(sign * v for (sign, _), v in zip(node.terms, values))


def logical_lines(tokens: list[Token]) -> list[list[Token]]:
    """Group tokens into statements: a line starting with '=' or ':=' continues the last one."""
    lines, cur = [], []
    for t in tokens:
        if t.kind == "eof":
            break
        if t.kind == "nl":
            if cur:
                lines.append(cur)
            cur = []
            continue
        if not cur and t.kind == "op" and t.value in ("=", ":=") and lines:
            cur = lines.pop()
        cur.append(t)
    if cur:
        lines.append(cur)
    return lines


def parse_notation(text: str) -> list:
    """Parse a derivation in the plain notation into a list of statements (:mod:`.ast`)."""
    out = []
    for line in logical_lines(tokenize_plain(text)):
        last = line[-1]
        end = Token("eof", "line", last.line, last.col + max(len(last.value), 1))
        parser = NotationParser(line + [end])
        stmts = parser.statement()
        if not parser.at("eof"):
            t = parser.peek()
            parser.fail(f"found {t.show()} after the end of the statement",
                        "the end of the line (one statement per line)")
        out.extend(stmts)
    return out
