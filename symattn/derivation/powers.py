"""Negative powers of matrices: ``A^{-1}``, ``(\\Delta A)^{-1}``, read as inverses where they exist.

A square matrix raised to ``-1`` (or ``-k``) is its inverse (its k-th power); a proof of a step that holds
such an inverse holds where every inverse exists, and the proof's scope says so (see
:mod:`symattn.proof.inverses`). The inverse of a non-square matrix, a zeroth power and a fractional power
(a root) of a matrix are refused.

``\\exp`` of a matrix is read entrywise, as attention papers mean it (``\\exp(QK^\\top)``). A file that inverts
matrices may mean the matrix exponential (the zero-order hold of Gu & Dao 2023, ``(\\Delta A)^{-1}(\\exp(\\Delta
A) - I)``), under which ``\\exp(\\Delta A)`` commutes with ``A^{-1}``; read entrywise, a true step would be
refuted. A side that holds both an inverse and ``\\exp`` of a square matrix is therefore refused, naming both,
unless the file inverts that matrix itself: then ``\\exp`` of it is the matrix exponential (:mod:`.matrix_exponential`).
"""

from __future__ import annotations

import sympy as sp

from ..defs import Exp
from ..defs.shapes import same_dim
from ..errors import DerivationError
from .symbols import shape_text


def non_positive_power(scope, node, v):
    """``v`` (the matrix ``node.base``) to the power ``node.num / node.den`` when that is not a positive whole
    power: the inverse for a negative whole power of a square matrix; refused otherwise."""
    if node.den != 1 or node.num == 0:
        scope.fail(node, f"the power ^{{{node.exponent()}}} of the matrix {node.base.text()}",
                   "a whole power of a square matrix: A^2 = A A, or A^{-1} its inverse; roots of matrices and "
                   "A^0 are not part of the notation")
    if not same_dim(v.rows, v.cols):
        scope.fail(node, f"the inverse ^{{{node.exponent()}}} of the {shape_text(v)} matrix {node.base.text()}, "
                   "which is not square", "the inverse of a square matrix")
    note = (f"{node.base.text()}^{{{node.exponent()}}}: a negative power of a square matrix is a power of its "
            "inverse (a step with it holds where it is invertible)")
    if note not in scope.notes:
        scope.notes.append(note)
    inv = sp.Inverse(v)
    return inv if node.num == -1 else sp.MatPow(inv, -node.num)


def guard(scope, node, value):
    """``value`` (of the side ``node``), unless it holds an inverse and an entrywise exp of a square matrix."""
    if not isinstance(value, sp.Basic) or not value.has(sp.Inverse):
        return value
    for e in sp.preorder_traversal(value):
        if isinstance(e, Exp) and e.rows != 1 and same_dim(e.rows, e.cols):
            arg = sp.sstr(e.args[0])
            raise DerivationError(
                f"{node.text()} holds an inverse and exp of the square matrix {arg}: beside an inverse, exp of a "
                "square matrix may be the matrix exponential (as state-space models mean it), which is not read, "
                "and read entrywise a true step could be refuted", node.pos[0], node.pos[1],
                "a step without the inverse, or with exp of scores (entrywise, as attention papers mean it)")
    return value
