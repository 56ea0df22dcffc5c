"""Permutation matrices P_σ, for permutation equivariance and invariance (seed 002).

For a permutation σ of {0, ..., n-1}, P_σ ∈ M^{n×n} has entries (P_σ)_{ij} = [i = σ(j)], so

    (X P_σ)_{:, j} = x_{σ(j)}       (column convention: P on the right permutes the tokens)
    (P_σᵀ X)_{i, :} = x_{σ(i)}      (row convention: Pᵀ on the left permutes the tokens)

σ is a symbol: a claim proved with P_σ holds for every permutation. The scalar
``PermIndex(σ, n, k)`` stands for σ(k) (``inverse=1`` for σ⁻¹(k)); its value is in {0..n-1}.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from .dims import check_dimension


class PermIndex(sp.Function):
    """σ(k) (inverse = 0) or σ⁻¹(k) (inverse = 1) for a permutation σ of {0, ..., n-1}.

    σ(σ⁻¹(k)) = σ⁻¹(σ(k)) = k:

    >>> s, n, k = sp.Symbol("sigma"), sp.Symbol("n"), sp.Symbol("k")
    >>> PermIndex(s, n, PermIndex(s, n, k, 1), 0)
    k
    """

    is_integer = True

    @classmethod
    def eval(cls, sigma, n, k, inverse=0):
        if isinstance(k, PermIndex) and k.args[0] == sigma and k.args[1] == n and k.args[3] != inverse:
            return k.args[2]
        return None

    def _sympystr(self, printer):
        name = printer._print(self.args[0]) + ("⁻¹" if self.args[3] else "")
        return f"{name}({printer._print(self.args[2])})"


class PermutationSymbol(sp.Symbol):
    """σ, the permutation of a :class:`Permutation` matrix: a class of its own, so that it never
    equals (nor is substituted as) a user's scalar symbol of the same name."""


class Permutation(MatrixExpr):
    """P_σ, the n × n permutation matrix of a symbolic permutation σ: (P_σ)_{ij} = [i = σ(j)].

    >>> from symattn import dims
    >>> n = dims("n")
    >>> P = Permutation("P", n)
    >>> P.shape, P.T.shape
    ((n, n), (n, n))
    """

    is_commutative = False
    entry_is_defined = True  # _entry is the exact definition (used by the proof engine)

    def __new__(cls, name, n):
        name = PermutationSymbol(name if isinstance(name, str) else name.name)
        n = check_dimension(n, f"Permutation {name}: ")
        return super().__new__(cls, name, n)

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def size(self):
        return self.args[1]

    @property
    def shape(self):
        return (self.args[1], self.args[1])

    @property
    def free_symbols(self):
        return self.args[1].free_symbols

    def sigma(self, k, inverse: int = 0):
        """σ(k) as a scalar expression."""
        return PermIndex(self.args[0], self.args[1], k, inverse)

    def _entry(self, i, j, **kwargs):
        return sp.KroneckerDelta(i, self.sigma(j))

    def _sympystr(self, printer):
        return self.name

    def _latex(self, printer):
        return rf"P_{{{self.name}}}"

    def _pretty(self, printer):
        from sympy.printing.pretty.stringpict import prettyForm

        return prettyForm(self.name)

    def _sympyrepr(self, printer):
        return f"Permutation({self.name!r}, {printer._print(self.size)})"
