"""The Python API for derivations: declare shapes and assumptions, give the chain, check it.

Every argument that is text is read by the plain notation's parser (never evaluated);
steps may also be SymPy matrix expressions built with symattn's definitions.
"""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from . import ast
from .model import DEFAULT_BUDGET, Report, check_statements
from .notation import NotationParser, parse_notation
from .tokens import Token, tokenize_plain


def _text(x) -> str:
    return x if isinstance(x, str) else sp.sstr(x)


def _expression(item, k: int):
    """A chain element: notation text (parsed) or a SymPy expression (used as it is)."""
    if not isinstance(item, str):
        return ast.Given((0, k + 1), item)
    toks = [t for t in tokenize_plain(item) if t.kind not in ("nl", "eof")]
    if not toks:
        raise DerivationError(f"element {k + 1} of the chain is empty", 0, 0, "an expression")
    p = NotationParser(toks + [Token("eof", "", toks[-1].line, toks[-1].col + len(toks[-1].value))])
    node = p.expr()
    if not p.at("eof"):
        p.fail(f"found {p.peek().show()} after the expression", "one expression per element of the chain")
    return node


class Derivation:
    """A derivation built from Python.

    >>> d = Derivation()
    >>> d.declare("Q", "d_k", "n").declare("K", "d_k", "m")
    Derivation(2 statements, 0 chains)
    >>> r = d.chain("(K^T Q)^T", "Q^T K", "Q^T (K^T)^T").check()
    >>> [s.status for s in r.steps], r.ok
    (['proved', 'proved'], True)
    """

    def __init__(self, *, convention: str = "column", score: str | None = None, source: str = "<python>"):
        self.statements: list = []
        self.chains = 0
        self.source = source
        self._add(f"convention: {convention}")
        if score is not None:
            try:
                self._add(f"score: {_text(getattr(score, 'name', score))}")
            except DerivationError as exc:  # said about the argument, not about a line the caller never wrote
                raise type(exc)(f"Derivation(score={score!r}): {exc.detail}", 0, 0, exc.expected) from None

    def __repr__(self):
        n = len(self.statements) - 1 - sum(isinstance(s, ast.Chain) for s in self.statements)
        return f"Derivation({n} statements, {self.chains} chains)"

    def _add(self, line: str):
        self.statements.extend(parse_notation(line))
        return self

    def declare(self, names: str, rows, cols, *, heads: str | None = None) -> Derivation:
        """``declare("W_h^Q, W_h^K", "d_k", "d_model", heads="h in 1..H")``.

        A bad argument is reported by its name (``rows``, ``cols``, ``names``, ``heads``), not by a
        position in text the caller never wrote.
        """
        for what, v in (("rows", rows), ("cols", cols)):
            ok = (isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool) and v > 0)
                  or (isinstance(v, sp.Expr) and (v.is_Symbol or v.is_Integer or v.is_Mul or v.is_Add)))
            if not ok:
                raise DerivationError(f"declare({names!r}, ...): {what} = {v!r} ({type(v).__name__}) is not a "
                                      "dimension", 0, 0, "a dimension name such as 'd_k', a positive integer, "
                                      "or a symbol from symattn.dims")
        for what, v in (("names", names), ("heads", heads)):
            if v is not None and not isinstance(v, str):
                raise DerivationError(f"declare: {what} = {v!r} ({type(v).__name__}) must be text", 0, 0,
                                      "names such as 'W_h^Q, W_h^K' and heads such as 'h in 1..H'")
        tail = f" for {heads}" if heads else ""
        try:
            return self._add(f"{names}: {_text(rows)} x {_text(cols)}{tail}")
        except DerivationError as exc:
            raise DerivationError(f"declare({names!r}, {rows!r}, {cols!r}"
                                  f"{f', heads={heads!r}' if heads else ''}): {exc.detail}", 0, 0,
                                  exc.expected) from None

    def heads(self, index: str = "h", count="H") -> Derivation:
        """The head index and the number of heads (``h = 1..H``)."""
        return self._add(f"heads: {index} = 1..{_text(count)}")

    def define(self, target: str, body: str) -> Derivation:
        """``define("head_h", "Attention(W_h^Q Q, W_h^K K, W_h^V V)")``."""
        return self._add(f"{target} := {body}")

    def assume(self, lhs, rhs) -> Derivation:
        """Two dimensions are equal (``d_v``, ``d_k``), a count is fixed (``H``, 1), or two
        weights are the same (``W^K``, ``W^Q``)."""
        if isinstance(rhs, str) and rhs.strip() in ("permutation", "orthogonal", "identity"):
            raise DerivationError(f"assuming that {_text(lhs)} is a {rhs.strip()} matrix is not supported; "
                                  "the proof engine has no rules for it yet", 0, 0,
                                  "an equality of dimensions, head counts or weights")
        return self._add(f"assume {_text(lhs)} = {_text(rhs)}")

    def chain(self, *items) -> Derivation:
        """The chain items[0] = items[1] = ...: notation text or SymPy matrix expressions."""
        if len(items) < 2:
            raise DerivationError("a chain needs at least two expressions", 0, 0, "lhs and one more")
        nodes = [_expression(x, k) for k, x in enumerate(items)]
        links = tuple(("=", n.pos, n) for n in nodes[1:])
        self.statements.append(ast.Chain(nodes[0].pos, nodes[0], links))
        self.chains += 1
        return self

    def check(self, *, budget: float = DEFAULT_BUDGET, diagnose: bool = True) -> Report:
        """Check every chain; the report has one entry per step."""
        return check_statements(self.statements, source=self.source, budget=budget, diagnose=diagnose)
