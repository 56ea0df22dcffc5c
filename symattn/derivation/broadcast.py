"""A scalar added to a vector, as normalizations write it: ``\\mathbf{a}^l - \\mu^l``, ``a + \\gamma``.

Ba et al. (2016) subtract the mean ``\\mu^l`` of the entries of ``\\mathbf{a}^l`` from the vector itself,
and re-center it by a scalar ``\\gamma``: the scalar is added to every entry. A term that is a scalar
(a declared scalar, or a 1 × 1 value such as a mean over the entries) beside a vector (one row or
one column) of the sum is read as that scalar times the vector of ones, ``\\mu^l \\mathbf{1}``; the
report says so. A 1 × 1 value beside a scalar (``\\delta a_i + \\gamma``, an entry and a number) is a sum
of two scalars. Beside a matrix with more than one row and column a scalar is still refused
("cannot add"), since there the sum is more often a slip (a product missing, q^T k for k q^T) than a
broadcast.
"""

from __future__ import annotations

import sympy as sp

from .symbols import is_matrix


def _vector(v) -> bool:
    return is_matrix(v) and (v.rows == 1 or v.cols == 1) and v.shape != (1, 1)


def _scalar(v) -> bool:
    return not is_matrix(v) or v.shape == (1, 1)


def spread(scope, node, out, v, first):
    """The two summands ``out`` (so far) and ``v`` (the term ``node``) with a scalar one spread over the
    vector of the other; None when they are not a scalar beside a vector."""
    if is_matrix(out) != is_matrix(v) and _scalar(out) and _scalar(v):  # a 1 × 1 value and a scalar
        return tuple(x if is_matrix(x) else x * sp.OneMatrix(1, 1) for x in (out, v)) + (None,)
    if _vector(out) and _scalar(v):
        return out, _ones_times(scope, node, v, out), None
    if _scalar(out) and _vector(v):
        return _ones_times(scope, first, out, v), v, None
    return None


def _ones_times(scope, node, s, like):
    note = (f"{node.text()} is a scalar added to a vector: it is added to every entry ({node.text()} times the "
            "vector of ones)")
    if note not in scope.notes:
        scope.notes.append(note)
    if is_matrix(s):  # a 1 × 1 matrix: 1 s (a column) or s 1^T (a row)
        return sp.OneMatrix(like.rows, 1) * s if like.cols == 1 else s * sp.OneMatrix(1, like.cols)
    return s * sp.OneMatrix(like.rows, like.cols)
