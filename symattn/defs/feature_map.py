"""A feature map phi : R^D -> R^C applied to every row (Katharopoulos et al. 2020, linear attention).

Linear attention replaces the similarity of a query Q_i and a key K_j by phi(Q_i)^T phi(K_j)
for a feature map phi. Applied to a matrix X (N × D) whose rows are the vectors, phi acts row by
row:

    phi(X) ∈ R^{N × C},   row i of phi(X) = phi(X_{i,:})   (phi(X)_{i,c} = phi_c(X_{i,:})).

phi is uninterpreted: the proof engine sees each entry phi_c(row) only as a function of that row
(:meth:`FeatureMap.entry_rule` reduces phi(X)_{i,c} to phi of the one row X_{i,:}), so whatever is
proved holds for every phi. At concrete sizes the node is the explicit matrix of its coordinate
functions phi[c](x_1, ..., x_D) (undefined SymPy functions of the row's entries), which is what
the counterexample search instantiates with concrete exact functions and what strategy D keeps
symbolic.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr

from .dims import check_dimension
from .shapes import as_matrix, require_equal, show


def coordinate(name, c: int):
    """The undefined function phi[c] (the c-th coordinate of the feature map ``name``, 0-based). The
    keyword keeps it apart from a user's scalar function that prints alike."""
    return sp.Function(f"{name}[{c}]", symattn_feature_map=True)


def row_of(X, i):
    """Row i (0-based) of X as a 1 × cols expression, written canonically: a slice of the matrix the
    row belongs to (X[i:i+1, :], a slice of a slice composed), the transpose of a column of a
    transposed matrix, else the generic RowOf(X, i)."""
    from .numeric_nodes import RowOf

    i = sp.sympify(i)
    if X.rows == 1:
        return X
    if isinstance(X, sp.MatrixSlice):
        (r0, _, rs), cols = X.rowslice, X.colslice
        k = r0 + rs * i
        return sp.MatrixSlice(X.parent, (k, k + 1, 1), cols)
    if isinstance(X, sp.Transpose) and isinstance(X.arg, sp.MatrixSymbol):
        return sp.MatrixSlice(X.arg, (0, X.arg.rows, 1), (i, i + 1, 1)).T
    if isinstance(X, sp.MatrixSymbol):
        return sp.MatrixSlice(X, (i, i + 1, 1), (0, X.cols, 1))
    return RowOf(X, i)


class FeatureMap(MatrixExpr):
    """phi(X): the feature map phi : R^D -> R^C applied to every row of X (N × D), an N × C matrix.

    >>> from symattn import dims
    >>> N, D, C = dims("N D C")
    >>> Q = sp.MatrixSymbol("Q", N, D)
    >>> phi = FeatureMap("phi", Q, C)
    >>> phi.shape
    (N, C)
    >>> phi
    phi(Q)
    >>> FeatureMap("phi", sp.MatrixSymbol("x", 1, 2), 2)
    Matrix([[phi[0](x[0, 0], x[0, 1]), phi[1](x[0, 0], x[0, 1])]])
    """

    is_commutative = False

    def __new__(cls, name, X, C):
        name = Str(name) if isinstance(name, str) else name
        X = as_matrix(X, "X", f"{name}(X)")
        C = check_dimension(C, f"the feature map {name}: its number of features: ")
        if all(sp.sympify(d).is_Integer for d in (X.rows, X.cols, C)):
            return explicit(name, X, int(C))
        return super().__new__(cls, name, X, C)

    @property
    def function(self):
        return self.args[0]

    @property
    def arg(self):
        return self.args[1]

    @property
    def features(self):
        return self.args[2]

    @property
    def shape(self):
        return (self.arg.rows, self.features)

    @property
    def free_symbols(self):
        return self.arg.free_symbols | sp.sympify(self.features).free_symbols

    def entry_rule(self, i, j, entry):
        """phi(X)_{i,c} = phi(X_{i,:})_c: the entry depends on row i of X only (and is opaque in it)."""
        if self.arg.rows == 1:
            return MatrixElement(self, 0, j)
        return entry(FeatureMap(self.function, row_of(self.arg, i), self.features), 0, j)

    def _entry(self, i, j, **kwargs):
        return MatrixElement(self, i, j)

    def doit(self, **hints):
        """Row by row: phi of stacked blocks is the stack of phi of each block, and phi(P X) = P phi(X)
        for a permutation P of the rows."""
        from .permutation import Permutation

        X = self.arg.doit(**hints) if hints.get("deep", True) else self.arg
        if isinstance(X, sp.BlockMatrix) and X.blockshape[1] == 1:
            return sp.BlockMatrix([[FeatureMap(self.function, X.blocks[i, 0], self.features)]
                                   for i in range(X.blockshape[0])])
        if isinstance(X, sp.MatMul):
            coeff, mats = X.as_coeff_matrices()
            if coeff == 1 and len(mats) > 1 and isinstance(mats[0], Permutation):
                rest = mats[1] if len(mats) == 2 else sp.MatMul(*mats[1:])
                return sp.MatMul(mats[0], FeatureMap(self.function, rest, self.features))
        return FeatureMap(self.function, X, self.features)

    def _sympystr(self, printer):
        return f"{self.function}({printer._print(self.arg)})"

    def _latex(self, printer):
        name = str(self.function)
        head = rf"\{name}" if name in _GREEK else name if len(name) == 1 else rf"\operatorname{{{name}}}"
        return rf"{head}\left({printer._print(self.arg)}\right)"

    def _pretty(self, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        arg = prettyForm(*printer._print(self.arg).parens())
        return prettyForm(*arg.left(str(self.function)))


_GREEK = frozenset("alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi "
                   "rho sigma tau upsilon phi varphi chi psi omega".split())


def explicit(name, X, C: int) -> sp.ImmutableMatrix:
    """phi(X) at concrete sizes: entry (r, c) is phi[c](X[r, 0], ..., X[r, D-1])."""
    N, D = int(X.rows), int(X.cols)
    coords = [coordinate(name, c) for c in range(C)]
    return sp.ImmutableMatrix(N, C, lambda r, c: coords[c](*[MatrixElement(X, r, d) for d in range(D)]))


def feature_map(name, X, C, D=None):
    """phi(X) for a feature map phi : R^D -> R^C (``name`` is phi's name).

    X with D columns (N × D, its rows are the vectors) gives phi(X), N × C. A column vector x (D × 1,
    the paper's Q_i) gives phi(x), the column of its C features: phi(xᵀ)ᵀ. With ``D`` given, X must
    have D columns or be a column of D entries, else a ShapeError names X and its shape.
    """
    X = as_matrix(X, "X", f"{name}(X)")
    if D is not None and not _same(X.cols, D):
        if _same(X.rows, D) and _same(X.cols, 1):
            return FeatureMap(name, X.T, C).T
        require_equal(X.cols, D, f"{name}(X)",
                      f"{name} maps R^{sp.sstr(D)} to R^{sp.sstr(C)}: it applies to the rows of a matrix with "
                      f"{sp.sstr(D)} columns or to a column of {sp.sstr(D)} entries, and {show(X, 40)} is neither",
                      [("X", X)])
    return FeatureMap(name, X, C)


def _same(a, b) -> bool:
    return sp.expand(sp.sympify(a) - sp.sympify(b)) == 0
