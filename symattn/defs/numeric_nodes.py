"""Elementwise nodes that numeric kernels need: the causal mask and the pieces of online softmax.

    row_causal_mask(n, m)  the n × m row-convention mask, CausalMask(m, n, offset=m - n)ᵀ: entry
                      (i, j) is 0 when key j is not after query i (j <= i + m - n, the n queries
                      being the last n of the m positions), else -∞
    Exp(X)            the exponential of every entry (public: ``symattn.Exp``)
    Exp2(X)           2 to the power of every entry, 2^x = e^(x ln 2) (public: ``symattn.Exp2``)
    Log(X)            the natural logarithm of every entry (public: ``symattn.Log``)
    ShiftRows(X, c)   X - c 1ᵀ: subtract c_i (c is a column n × 1) from every entry of row i
    ScaleRows(d, X)   diag(d) X: multiply row i by d_i
    DivideRows(X, d)  diag(d)⁻¹ X: divide row i by d_i
    RowOf(X, k)       row k of X (1 × cols), for a symbolic k: states that rows are independent

Each node gives its (i, j) entry to the entrywise strategy (``entry_rule``), and the
elementwise ones act blockwise on a block row (``doit``): Exp([A B]) = [Exp(A) Exp(B)] (Exp2 alike),
ShiftRows([A B], c) = [ShiftRows(A, c) ShiftRows(B, c)]; these two rules are true because
the operations act entry by entry and on rows. A single query (n = 1) is the newest
position and is masked nowhere: row_causal_mask(1, m) = 0.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .mask import CausalMask
from .shapes import as_matrix, require_equal


class _Node(MatrixExpr):
    is_commutative = False

    def _sympystr(self, printer):
        return f"{type(self).__name__}({', '.join(printer._print(a) for a in self.args)})"


def row_causal_mask(n, m):
    """The causal mask of the row convention (queries are rows, keys are columns), aligned
    bottom-right as in PyTorch: the transpose of :class:`~symattn.defs.mask.CausalMask` with
    offset m - n (the n queries are the last n of the m positions).

    >>> from symattn import dims
    >>> n, m = dims("n m")
    >>> row_causal_mask(n, m).shape
    (n, m)
    >>> row_causal_mask(1, m).doit()
    0
    """
    return CausalMask(m, n, offset=m - n).T


def _split_block_row(node_cls, X, *rest):
    """node(X) for X a 1 × k block row: the block row of node(block)."""
    blocks = X.blocks
    return sp.BlockMatrix([[node_cls(blocks[0, j], *rest) for j in range(blocks.cols)]])


def _split_blocks(node_cls, X):
    """node(X) for an entrywise node and any block matrix X: the block matrix of node(block)."""
    B = X.blocks
    return sp.BlockMatrix([[node_cls(B[i, j]) for j in range(B.cols)] for i in range(B.rows)])


class _Entrywise(_Node):
    """A scalar function applied to every entry (``scalar``: sp.exp, sp.log)."""

    scalar = None

    def __new__(cls, X):
        return super().__new__(cls, as_matrix(X, "X", f"{cls.__name__}(X)"))

    @property
    def shape(self):
        return self.args[0].shape

    shape_of_first_argument = shape  # its shape is its argument's (defs/shapes.py reads it memoized)

    def entry_rule(self, i, j, entry):
        return type(self).scalar(entry(self.args[0], i, j))

    def doit(self, **hints):
        X = self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]
        if isinstance(X, sp.BlockMatrix):  # entry by entry, so block by block
            return _split_blocks(type(self), X)
        return type(self)(X)


class Exp(_Entrywise):
    """exp of every entry (elementwise, not the matrix exponential)."""

    scalar = sp.exp


def _power_of_two(x):
    """2^x written as exp(x ln 2), its definition for real x: the exp rules of the proof engine
    (exp(a + b) = exp(a) exp(b), exp atoms as generators) then apply to it as to Exp; SymPy writes
    it back as a rational or algebraic number when x is a number (exp(3 ln 2) = 8)."""
    return sp.exp(x * sp.log(2))


class Exp2(_Entrywise):
    """2 to the power of every entry (elementwise): Exp2(X)_ij = 2^(X_ij) = exp(X_ij ln 2), so
    Exp(X) = Exp2(X / ln 2). NumPy's exp2 is cheaper than its exp; kernels keep the node and call it.

    >>> import sympy as sp
    >>> X = sp.MatrixSymbol("X", 2, 3)
    >>> Exp2(X).shape, Exp2(X).T.shape
    ((2, 3), (3, 2))
    """

    scalar = staticmethod(_power_of_two)


def _log_entry(x):
    """log of an entry: log(exp(a)) = a, since entries are real (Exp2's entries are exp(a ln 2),
    so log(2^a) = a ln 2 as well); SymPy's log otherwise."""
    if isinstance(x, sp.exp):
        return x.args[0]
    return sp.log(x)


class Log(_Entrywise):
    """The natural logarithm of every entry (elementwise, not the matrix logarithm); defined where
    every entry is positive, which is what a claim using it assumes (exp(log x) = x for x > 0).
    Entries are real, so Log(Exp(X)) = X."""

    scalar = staticmethod(_log_entry)


class ShiftRows(_Node):
    """X - c 1ᵀ with c an n × 1 column: row i shifted by -c_i."""

    def __new__(cls, X, c):
        X, c = as_matrix(X, "X", "ShiftRows(X, c)"), as_matrix(c, "c", "ShiftRows(X, c)")
        require_equal(X.rows, c.rows, "ShiftRows(X, c)", "c needs one entry per row of X",
                      [("X", X), ("c", c)])
        require_equal(c.cols, 1, "ShiftRows(X, c)", "c must be a column", [("c", c)])
        return super().__new__(cls, X, c)

    @property
    def shape(self):
        return self.args[0].shape

    def entry_rule(self, i, j, entry):
        return entry(self.args[0], i, j) - entry(self.args[1], i, sp.Integer(0))

    def doit(self, **hints):
        deep = hints.get("deep", True)
        X, c = (a.doit(**hints) if deep else a for a in self.args)
        if isinstance(X, sp.BlockMatrix) and X.blockshape[0] == 1:
            return _split_block_row(ShiftRows, X, c)
        return ShiftRows(X, c)


class ScaleRows(_Node):
    """diag(d) X: row i of X times d_i."""

    def __new__(cls, d, X):
        d, X = as_matrix(d, "d", "ScaleRows(d, X)"), as_matrix(X, "X", "ScaleRows(d, X)")
        require_equal(X.rows, d.rows, "ScaleRows(d, X)", "d needs one entry per row of X",
                      [("d", d), ("X", X)])
        require_equal(d.cols, 1, "ScaleRows(d, X)", "d must be a column", [("d", d)])
        return super().__new__(cls, d, X)

    @property
    def shape(self):
        return self.args[1].shape

    def entry_rule(self, i, j, entry):
        return entry(self.args[0], i, sp.Integer(0)) * entry(self.args[1], i, j)

    def doit(self, **hints):
        deep = hints.get("deep", True)
        return ScaleRows(*(a.doit(**hints) if deep else a for a in self.args))


class DivideRows(_Node):
    """diag(d)⁻¹ X: row i of X divided by d_i."""

    def __new__(cls, X, d):
        X, d = as_matrix(X, "X", "DivideRows(X, d)"), as_matrix(d, "d", "DivideRows(X, d)")
        require_equal(X.rows, d.rows, "DivideRows(X, d)", "d needs one entry per row of X",
                      [("X", X), ("d", d)])
        require_equal(d.cols, 1, "DivideRows(X, d)", "d must be a column", [("d", d)])
        return super().__new__(cls, X, d)

    @property
    def shape(self):
        return self.args[0].shape

    def entry_rule(self, i, j, entry):
        return entry(self.args[0], i, j) / entry(self.args[1], i, sp.Integer(0))

    def doit(self, **hints):
        deep = hints.get("deep", True)
        return DivideRows(*(a.doit(**hints) if deep else a for a in self.args))


class RowOf(_Node):
    """Row k of X (a 1 × cols matrix), for a symbolic or concrete row index k (0-based)."""

    def __new__(cls, X, k):
        return super().__new__(cls, as_matrix(X, "X", "RowOf(X, k)"), sp.sympify(k))

    @property
    def shape(self):
        return (sp.Integer(1), self.args[0].cols)

    @property
    def free_symbols(self):
        return self.args[0].free_symbols | self.args[1].free_symbols

    def entry_rule(self, i, j, entry):
        return entry(self.args[0], self.args[1], j)

    def doit(self, **hints):
        deep = hints.get("deep", True)
        X = self.args[0].doit(**hints) if deep else self.args[0]
        return RowOf(X, self.args[1])
