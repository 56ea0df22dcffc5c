"""The derivation's symbol table vocabulary: how names are keyed (:func:`key_of`, :func:`family_key`),
what a definition holds, dimension symbols, and the words of the seeds (``Attention``, ``Softmax``,
``MultiHead``) with their arities. :class:`~.elaborate.Scope` holds the table itself."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .. import defs as D
from . import ast

VOCABULARY_ARITY = {"Attention": 3, "Softmax": 1, "softmax": 1, "MultiHead": 3}
ONES = "\U0001d7cf"  # \mathbf{1}, the vector of ones
TOP = "\u00b7"  # the family key A^· of A^h, head h's A with the index on top (cannot be typed)
HOLE = "\u27e8k\u27e9"  # the placeholder index of an ellipsis pattern (cannot be typed)
MAX_MATRIX_POWER = 64  # A^{k} is read as k - 1 products, up to this k
MAX_WORK = 5_000  # syntax nodes elaborated for one expression, definitions expanded included


class KronOp:
    """``A \\otimes W`` as an operator on a matrix x whose columns are positions (column convention)
    or whose rows are (row convention): (A \\otimes W) x = W x Aᵀ, resp. A x Wᵀ, which is
    vec(W x Aᵀ) = (A \\otimes W) vec(x). ``None`` on a side is the identity (\\mathrm{Id})."""

    def __init__(self, left, right):
        self.left, self.right = left, right


def is_matrix(x) -> bool:
    return isinstance(x, (MatrixExpr, sp.MatrixBase))


def shape_text(x) -> str:
    return f"{sp.sstr(x.rows)} × {sp.sstr(x.cols)}"


def key_of(n: ast.Name) -> str:
    """The declared name of ``n``: ``d_model``, ``W^O``, ``q_pool``."""
    out = n.base
    if n.sub is not None:
        out += "_" + n.sub.text()
    if n.sup is not None:
        out += "^" + n.sup
    return out


def family_key(n: ast.Name) -> str:
    return n.base + (f"^{n.sup}" if n.sup is not None else "")


class CountSymbol(sp.Symbol):
    """A dimension named like the head index (seed 002 counts heads with h): a distinct symbol."""


def dimension_symbol(name: str) -> sp.Symbol:
    """A positive integer symbol; a dimension named ``h`` must not be the head index h."""
    if name == str(D.h):
        return CountSymbol(name, integer=True, positive=True)
    return sp.Symbol(name, integer=True, positive=True)


@dataclass(eq=False)
class Definition:
    target: ast.Name
    params: tuple
    body: ast.Node
    index: str | None
    extra: tuple = ()  # the base names of the fixed parameters after ';'
    open: bool = False  # a "where" clause: it reads the parameters of the function that uses it


class Members:
    """The members of a head family under assumptions about them: ``W[k]`` and ``W(k)``."""

    def __init__(self, member):
        self.member = member

    def __getitem__(self, k):
        return self.member(sp.sympify(k))

    def __call__(self, k):
        return self.member(sp.sympify(k))


# Functions papers use whose meaning the reader would get wrong as an uninterpreted map of the
# argument's shape: refused, with what to write instead.
NOT_UNINTERPRETED = {
    "diag": "the product with the diagonal matrix written out, or ScaleRows in Python",
    "Diag": "the product with the diagonal matrix written out, or ScaleRows in Python",
    "tr": "the trace written as a sum, or the step about the matrices themselves",
    "Tr": "the trace written as a sum, or the step about the matrices themselves",
    "trace": "the trace written as a sum, or the step about the matrices themselves",
    "det": "the step about the matrices themselves",
    "vec": "the matrices themselves",
    "rank": "the matrices themselves",
    "argmax": "the step about the scores themselves",
    "argmin": "the step about the scores themselves",
}
