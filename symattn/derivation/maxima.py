r"""Maxima and minima of numbers in a matrix derivation: ``\max(a, b)``, ``\min(k, x)``.

Papers of matrices write maxima of numbers beside their matrices: the ends of a window clipped at
the ends of the sequence (Longformer's ``\max(1, i - \frac{w}{2})``), the clipping of a relative
distance (Shaw et al.'s ``\mathrm{clip}(x, k) = \max(-k, \min(k, x))``). Read here:

- ``\max(a, b, ...)`` and ``\min(a, b, ...)`` of two or more numbers (also ``\max\{a, b\}`` and
  ``\max\left(a, b\right)``): SymPy's ``Max`` and ``Min`` of the values, which the proof engine
  splits by cases (:mod:`symattn.proof.order_cases`), so that a true step is proved for all values
  and a false one refuted with a counterexample;
- ``\max_j e``, a maximum over an index, is refused in a matrix derivation (its range is not
  written): a file of numbers and vectors that uses it is read by the scalar reader (docs/scalars.md).

A maximum of a matrix (its entries? its rows?) is refused, naming it: papers mean different things.

>>> from symattn.derivation import check_statements
>>> from symattn.derivation.latex import parse_latex
>>> text = r"$$ a, b \in \mathbb{R} $$ $$ \max(a, b) + \min(a, b) = a + b $$"
>>> [s.status for s in check_statements(parse_latex(text), dialect="latex").steps]
['proved']
"""

from __future__ import annotations

import sympy as sp

from . import ast
from .symbols import is_matrix

WORDS = ("max", "min")
OVER_AN_INDEX = ("an extremum over an index is not read in a matrix derivation, where its range is not written "
                 "(a file of numbers and vectors that uses \\max_j goes to the scalar reader, docs/scalars.md)")
INSTEAD = ("\\max(a, b) of numbers, or the step with \\operatorname{softmax}, whose shift invariance is proved")


def is_extremum(node) -> bool:
    """True for a call ``\\max(...)`` or ``\\min(...)`` that the file does not define itself."""
    name = node.target
    return name.base in WORDS and name.sub is None and name.sup is None and name.font in ("operatorname", "mathrm")


def extremum(scope, node, L):
    """The value of ``\\max(a, b, ...)`` / ``\\min(a, b, ...)``: SymPy's Max / Min of its arguments' values."""
    word = node.target.base
    args = list(node.args)
    if len(args) < 2 or any(isinstance(a, ast.Dots) for a in args):
        scope.fail(node, f"\\{word} of {len(args)} argument{'s' if len(args) != 1 else ''}: the {word}imum of a "
                   "list written with its members is read", f"\\{word}(a, b) of two or more numbers")
    values = []
    for a in args:
        v = scope._expr(a, L)
        if is_matrix(v):
            shape = f"{sp.sstr(v.rows)} × {sp.sstr(v.cols)}"
            scope.fail(a, f"\\{word} of the {shape} matrix {a.text()}: a {word}imum of matrices (of their entries, "
                       "of each row?) is not read", f"\\{word}(a, b) of numbers")
        values.append(v)
    return (sp.Max if word == "max" else sp.Min)(*values)


def as_scalar_claim(L, R):
    """A claim between two 1 × 1 matrices of numbers with a maximum or a minimum, as the claim between their
    entries (the same claim), so that the proof engine's case split on the order of the numbers applies;
    any other claim as it is."""
    pair = (L, R)
    if all(isinstance(x, sp.ImmutableMatrix) and x.shape == (1, 1) for x in pair) and any(
            x[0, 0].has(sp.Max, sp.Min) for x in pair):
        return L[0, 0], R[0, 0]
    return L, R
