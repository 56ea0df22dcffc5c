"""The tensor product of two vectors, ``u \\otimes v``, as the fast-weight papers write it.

Schlag et al. (2021) write the update of the fast weights as ``W + \\beta (v - \\bar{v}) \\otimes \\phi(k)``:
between two vectors, ``\\otimes`` is the outer product, the matrix whose entry (i, j) is u_i v_j. Under the
column convention (vectors are columns) that is ``u v^\\top``; under the row convention ``u^\\top v``.
Between matrices ``A \\otimes W`` stays the Kronecker operator of Elhage et al. (:mod:`.operators`); a
vector beside a matrix is not read as either. Whether a Kronecker node is an outer product is decided by
the shapes of its two sides, so it is decided where they elaborate.
"""

from __future__ import annotations

from ..errors import DerivationError
from . import ast
from .symbols import is_matrix


def _is_vector(scope, v) -> bool:
    if not is_matrix(v):
        return False
    return v.cols == 1 if scope.convention == "column" else v.rows == 1


def _sides(scope, node, L):
    """The values of both sides of ``node`` (a Kron), or None when one is the identity or is not a vector."""
    if not isinstance(node, ast.Kron):
        return None
    sides = []
    for n in (node.left, node.right):
        if isinstance(n, ast.Name) and n.base == "Id" and n.sub is None and n.sup is None:
            return None
        v = scope._expr(n, L)
        if not _is_vector(scope, v):
            return None
        sides.append(v)
    return sides


def is_outer_product(scope, node) -> bool:
    """True when the Kronecker node ``node`` joins two vectors (so it is a matrix, not an operator)."""
    if not isinstance(node, ast.Kron):
        return False
    try:
        return _sides(scope, node, {}) is not None
    except DerivationError:
        return False


def outer_product(scope, node, L):
    """The matrix ``u \\otimes v`` of two vectors (u vᵀ for columns, uᵀ v for rows), or None."""
    sides = _sides(scope, node, L)
    if sides is None:
        return None
    u, v = sides
    note = (f"{node.left.text()} \\otimes {node.right.text()} of two vectors is their outer product "
            f"({'u v^T' if scope.convention == 'column' else 'u^T v'})")
    if note not in scope.notes:
        scope.notes.append(note)
    return u * v.T if scope.convention == "column" else u.T * v
