"""Matrices of the audit as lists of rows of :mod:`symattn.proof.audit_numbers` values.

The operations the audit's interpreter needs, written out entry by entry: sums, products,
transposes, the exact inverse (Gauss-Jordan over rationals), softmax along either axis
(exp(-∞) = 0; a column with every entry masked has no value), block and block-diagonal
matrices. A shape that does not fit raises :class:`~symattn.proof.audit_numbers.Unevaluable`.
"""

from __future__ import annotations

from fractions import Fraction

from . import audit_numbers as num
from .audit_numbers import Malformed, Undecided, Unevaluable


def shape(M):
    return len(M), (len(M[0]) if M else 0)


def zeros(r, c, value=0):
    return [[value] * c for _ in range(r)]


def add(A, B):
    if shape(A) != shape(B):
        raise Malformed(f"adding {shape(A)} and {shape(B)} matrices")
    return [[num.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def matmul(A, B):
    (r, k), (k2, c) = shape(A), shape(B)
    if k != k2:
        raise Malformed(f"multiplying {r}×{k} by {k2}×{c}")
    cols = list(zip(*B)) if B else []
    out = []
    for row in A:
        line = []
        for col in cols:
            acc = 0
            for a, b in zip(row, col):
                acc = num.add(acc, num.mul(a, b))
            line.append(acc)
        out.append(line if cols else [0] * c)
    return out


def scale(s, A):
    return [[num.mul(s, a) for a in row] for row in A]


def transpose(A):
    return [list(col) for col in zip(*A)] if A and A[0] else zeros(shape(A)[1], shape(A)[0])


def elementwise(fn, A):
    return [[fn(a) for a in row] for row in A]


def inverse(A):
    """Gauss-Jordan over exact rationals; a singular or non-rational matrix is skipped."""
    n, c = shape(A)
    if n != c:
        raise Unevaluable("the inverse of a non-square matrix")
    if not all(num.is_exact(a) for row in A for a in row):
        raise Unevaluable("the inverse of a matrix with irrational entries")
    M = [[Fraction(a) for a in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(A)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if M[r][col] != 0), None)
        if pivot is None:
            raise Unevaluable("a singular matrix has no inverse")
        M[col], M[pivot] = M[pivot], M[col]
        p = M[col][col]
        M[col] = [x / p for x in M[col]]
        for r in range(n):
            if r != col and M[r][col] != 0:
                f = M[r][col]
                M[r] = [x - f * y for x, y in zip(M[r], M[col])]
    return [row[n:] for row in M]


def determinant(A):
    """The Leibniz sum over permutations (exact or enclosed, as the entries are): the definition,
    not an elimination, so that it shares nothing with how a strategy computes one."""
    from itertools import permutations

    n, c = shape(A)
    if n != c:
        raise Malformed(f"the determinant of a {n}×{c} matrix")
    total = 0
    for p in permutations(range(n)):
        inversions = sum(p[i] > p[j] for i in range(n) for j in range(i + 1, n))
        term = -1 if inversions % 2 else 1
        for i in range(n):
            term = num.mul(term, A[i][p[i]])
        total = num.add(total, term)
    return total


def _shift(column):
    """A finite number near the column's largest finite entry (0 when every entry is -∞ or one is
    +∞). Any finite shift gives the same softmax, so floats may choose it: they decide nothing."""
    finite = [x for x in column if not isinstance(x, num.Inf)]
    if any(isinstance(x, num.Inf) and x.sign > 0 for x in column) or not finite:
        return 0
    return max((num.center(x) for x in finite), key=num.approximate)


def _shifted_exp(x, shift):
    """exp(x - shift). After the shift no exponent is large unless the enclosures are too wide to
    tell the entries apart (a deep model at too low a precision): then Undecided, to retry higher."""
    if num.is_exact(shift) and shift == 0:
        return num.exp(x)
    y = num.sub(x, shift)
    if not isinstance(y, num.Inf) and not num.is_exact(y) and num.upper_bound_exceeds(y, num.EXP_FLOOR):
        raise Undecided("a softmax column whose enclosures are too wide to tell its largest entry")
    return num.exp(y)


def softmax(A, axis: int):
    """exp of every entry over its column sum (axis 0) or row sum (axis 1); exp(-∞) = 0.

    Each column is shifted first, exp(x_i - c) / Σ_k exp(x_k - c) with c near its largest entry:
    the same number for every finite c (the factor exp(-c) cancels), and the exponents stay small
    where the scores are large (deep models: scores of 10^6 have no enclosure of their exp)."""
    if axis == 1:
        return transpose(softmax(transpose(A), 0))
    r, c = shape(A)
    shifts = [_shift([A[i][j] for i in range(r)]) for j in range(c)]
    E = [[_shifted_exp(A[i][j], shifts[j]) for j in range(c)] for i in range(r)]
    out = zeros(r, c)
    for j in range(c):
        total = 0
        for i in range(r):
            total = num.add(total, E[i][j])
        if num.is_exact(total) and total == 0:
            raise Unevaluable("a softmax column with every entry masked")
        for i in range(r):
            out[i][j] = num.div(E[i][j], total)
    return out


def blocks(grid):
    """A block matrix from a grid of evaluated blocks, checking that the blocks fit."""
    rows = []
    for line in grid:
        heights = {shape(b)[0] for b in line}
        if len(heights) != 1:
            raise Malformed("blocks of one block row have different heights")
        for k in range(heights.pop()):
            rows.append([x for b in line for x in b[k]])
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise Malformed("block rows have different widths")
    return rows


def block_diag(blocks):
    r = sum(shape(b)[0] for b in blocks)
    c = sum(shape(b)[1] for b in blocks)
    out, i0, j0 = zeros(r, c), 0, 0
    for b in blocks:
        br, bc = shape(b)
        for i in range(br):
            out[i0 + i][j0:j0 + bc] = b[i]
        i0, j0 = i0 + br, j0 + bc
    return out
