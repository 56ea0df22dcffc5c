"""Score functions f(Q, K): the uninterpreted f of seed 000 and the dot products.

Seed 000 lets the score be any f : M^{d_k×n} × M^{d_k×m} → M^{m×n}. An
uninterpreted f (a :class:`ScoreFunction`) is a symbol that the proof engine
never looks inside, so whatever is proved with it holds for every f.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixExpr

from .shapes import as_matrix, require_equal, show


class Score(MatrixExpr):
    """f(Q, K) in the column convention: Q is d_k × n, K is d_k × m, the result m × n."""

    is_commutative = False
    entry_is_opaque = True  # the proof engine never looks inside f

    def __new__(cls, f, Q, K):
        # the function's name is a Str: substituting a user's scalar symbol f never reaches it
        f = Str(f) if isinstance(f, str) else Str(f.name)
        Q = as_matrix(Q, "Q", f"{f}(Q, K)")
        K = as_matrix(K, "K", f"{f}(Q, K)")
        require_equal(
            Q.rows, K.rows, f"{f}(Q, K)",
            f"a score function maps M^(d_k×n) × M^(d_k×m) to M^(m×n), "
            f"so {show(Q, 30)} and {show(K, 30)} need the same number of rows",
            [("Q", Q), ("K", K)],
        )
        return super().__new__(cls, f, Q, K)

    @property
    def function(self):
        return self.args[0]

    @property
    def shape(self):
        return (self.args[2].cols, self.args[1].cols)

    @property
    def free_symbols(self):
        return self.args[1].free_symbols | self.args[2].free_symbols

    def _sympystr(self, printer):
        q, k = (printer._print(a) for a in self.args[1:])
        return f"{self.function}({q}, {k})"

    def _latex(self, printer):
        q, k = (printer._print(a) for a in self.args[1:])
        return rf"{self.function}\left({q}, {k}\right)"


class Apply(Score):
    """g(X): a map the document names but never defines, applied to one matrix, uninterpreted.

    Whatever is proved with it holds for every map g, so a step that depends on what g does is
    never proved. It is a :class:`Score` whose second argument is the constant all-ones matrix of
    ``out_rows`` columns (g(X) = f(X, 1) for an uninterpreted f), so the proof engine and the audit
    treat it as they treat f; its value has out_rows rows and the columns of X.

    >>> import sympy as sp
    >>> from symattn import dims
    >>> n, d = dims("n d")
    >>> Apply("LN", sp.MatrixSymbol("X", d, n)).shape
    (d, n)
    """

    def __new__(cls, f, X, out_rows=None):
        X = as_matrix(X, "X", f"{f}(X)")
        if not isinstance(out_rows, MatrixExpr):  # rebuilt from its args, the constant comes back as it is
            out_rows = sp.OneMatrix(X.rows, X.rows if out_rows is None else out_rows)
        return super().__new__(cls, f, X, out_rows)

    @property
    def argument(self):
        return self.args[1]

    def _sympystr(self, printer):
        return f"{self.function}({printer._print(self.argument)})"

    def _latex(self, printer):
        return rf"\operatorname{{{self.function}}}\left({printer._print(self.argument)}\right)"


class ScoreFunction:
    """An uninterpreted score function f, applied as ``f(Q, K)``.

    In the row convention, attention applies the row twin of f,
    f_row(Qᵀ, Kᵀ) := f(Q, K)ᵀ, which is what makes the two conventions agree.

    >>> import sympy as sp
    >>> from symattn import dims
    >>> d_k, n, m = dims("d_k n m")
    >>> f = ScoreFunction("f")
    >>> f(sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m)).shape
    (m, n)
    """

    def __init__(self, name: str = "f"):
        self.name = name
        self.symbol = Str(name)

    def __call__(self, Q, K) -> Score:
        return Score(self.symbol, Q, K)

    def row(self, Q, K):
        """The row twin: for Q (n × d_k) and K (m × d_k), f(Qᵀ, Kᵀ)ᵀ, an n × m matrix."""
        return Score(self.symbol, Q.T, K.T).T

    def __repr__(self):
        return f"ScoreFunction({self.name!r})"


def scaled_dot(Q, K, convention: str = "column"):
    """Kᵀ Q / sqrt(d_k) (column) or Q Kᵀ / sqrt(d_k) (row)."""
    if convention == "column":
        return K.T * Q / sp.sqrt(Q.rows)
    return Q * K.T / sp.sqrt(Q.cols)


def dot(Q, K, convention: str = "column"):
    """The unscaled dot product of the math papers: Kᵀ Q (column) or Q Kᵀ (row)."""
    return K.T * Q if convention == "column" else Q * K.T
