r"""Spellings of the field that the parser reads here: the shape tuple ``\mathbb{R}^{(\mathtt{T}, \mathtt{N})}``,
the length ``|x|`` of a sequence x, a sequence as a tuple ``(h_1, h_2, \cdots, h_n)``, a negative index
``x_{-1}``, and ``\times`` between the indices of a sum's limits.

Dao & Gu (2024) write the shape of a T × N matrix as the tuple ``(T, N)``, as array libraries do; it
is read as ``\mathbb{R}^{T \times N}`` (a tuple of one entry is a vector, of three or more a tensor,
which is refused). Sun et al. (2023) write the number of tokens of the input x as ``|x|``, in
``\mathbb{R}^{|x| \times d}``: it is read as a dimension named ``|x|``, a positive integer like any
other (the reader knows nothing else about x from it).

>>> from symattn.derivation.latex import parse_latex
>>> parse_latex(r"$$ B \in \mathbb{R}^{(T, N)} $$")[0].shape.cols.text()
'N'
"""

from __future__ import annotations

from . import ast
from .tokens import Token


def is_tuple(p) -> bool:
    """At ``(`` that opens a tuple: a ',' at its own depth before its ')'."""
    if not p.at_op("("):
        return False
    depth, k = 0, 0
    while not p.at("eof", None, k) and k < 64:
        t = p.peek(k)
        if t.kind == "op" and t.value in "({[":
            depth += 1
        elif t.kind == "op" and t.value in ")}]":
            depth -= 1
            if depth == 0:
                return False
        elif t.kind == "op" and t.value == "," and depth == 1:
            return True
        k += 1
    return False


def tuple_shape(p, t):
    """``(T, N)}`` after ``\\mathbb{R}^{``: the Shape T × N."""
    open_ = p.next()
    entries = [dimension(p)]
    while p.at_op(","):
        p.next()
        entries.append(dimension(p))
    p.expect_op(")", f"')' closing the shape tuple at line {open_.line}, column {open_.col}")
    p.expect_op("}", "'}' closing the shape")
    pos = (t.line, t.col)
    if len(entries) != 2:
        p.fail(f"a shape of {len(entries)} axes ({', '.join(e.text() for e in entries)}): only matrices are read",
               "two axes, (rows, columns), or a vector \\mathbb{R}^{n}", open_)
    return ast.Shape(pos, entries[0], entries[1])


def dimension(p):
    """A dimension of a shape: ``|x|`` (the length of the sequence x) or an expression."""
    if p.at_op("|") and p.at("ident", None, 1) and p.at("op", "|", 2):
        bar = p.next()
        x = p.next()
        p.next()
        return ast.Name((bar.line, bar.col), f"|{x.value}|")
    return p.expr()


def tuple_cells(p, pos, start):
    """``(h_1, h_2, \\cdots, h_n)``, from token ``start`` after the '(': a :class:`~.ast.Tuple` (a sequence, read only
    where it names the rows or columns of a declared matrix)."""
    p.i = start
    rows = p.cells(";", ",", lambda: p.at_op(")"))
    p.next()
    p.leave()
    return ast.Tuple(pos, rows)


def negative_index(p):
    """``-1`` in ``x_{-1}`` (an initial condition before the first position), or None."""
    if not (p.at_op("-") and p.at("num", None, 1)):
        return None
    p.next()
    t = p.next()
    return ast.Num((t.line, t.col), -int(t.value))


def sum_limits(p):
    """The lower limit of a sum, up to its '}', ``\\times`` in it and in the upper limit read as a product of
    indices (``\\sum_{i=(j-1) \\times n/m+1}^{j \\times n/m}``, Xiong et al. 2021)."""
    depth, k, seen = 1, p.i, 0
    while k < len(p.toks) and seen < 2:
        t = p.toks[k]
        if t.kind == "op" and t.value == "{":
            depth += 1
        elif t.kind == "op" and t.value == "}":
            depth -= 1
            if depth == 0:
                seen += 1
                if not (k + 2 < len(p.toks) and p.toks[k + 1].value == "^" and p.toks[k + 2].value == "{"):
                    break
                depth, k = 1, k + 2
        elif t.kind == "cmd" and t.value == "times":
            p.toks[k] = Token("op", "*", t.line, t.col)
        k += 1
    return p.arith_subscript().body


def refuse_superscript(p):
    """After ``^``: ``a_{t:s}^{\\times}`` (the product a_t ... a_{s+1} over a range of positions) and a power by an
    index expression, ``\\bar{A}^{k-j}`` (a symbolic matrix power), refused by name."""
    if p.at_op("{") and p.at("cmd", "times", 1) and p.at("op", "}", 2):
        p.fail("a_{t:s}^{\\times}, the product of the members of a sequence over a range of positions (Dao & Gu "
               "2024), is not read", "the product written out at given positions, or a declared matrix")
    if p.at_op("{") and p.at("ident", None, 1) and len(p.peek(1).value) == 1 and (
            p.at("op", "-", 2) or p.at("op", "+", 2)) and (p.at("ident", None, 3) or p.at("num", None, 3)):
        k = 3
        while k < 16 and not p.at("op", "}", k):
            k += 1
        text = "".join(p.peek(j).value for j in range(1, k))
        p.fail(f"the power ^{{{text}}} by an index expression (a symbolic matrix power) is not read",
               "powers by given numbers (A^2), or the product written out at a given position", p.peek(1))


def refuse_entry_set(p):
    """``(0, 1)^{1 \\times d_k}``, ``\\{0, 1\\}^{L \\times L}``: a space whose entries lie in an interval or a
    finite set. Refused by name: read as real entries, a counterexample could take values the paper excludes."""
    if not p.at_op("("):
        return
    k = 1
    while k < 12 and not p.at("op", ")", k):
        k += 1
    if p.at("op", ")", k) and p.at("op", "^", k + 1) and p.at("op", ",", 2):
        entries = "".join(p.peek(j).value for j in range(1, k))
        p.fail(f"a space whose entries lie in ({entries}) is not read: a counterexample over the reals could take "
               "values the paper excludes", "\\mathbb{R}^{...} with the entries real, if the steps hold for every "
               "real entry")
