r"""Two spellings of a matrix space's shape: the tuple ``\mathbb{R}^{(\mathtt{T}, \mathtt{N})}`` and the
length ``|x|`` of a sequence x.

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
