"""The inverses a claim relies on, and what can be said about where they exist.

A proof of a claim that holds an inverse is a proof where every inverse exists; the scope says so.
Two things make that assumption worth spelling out:

- SymPy folds a product with an inverse while the claim is built: ``Inverse(M) * M`` becomes the
  identity before :func:`symattn.verify` sees it (nothing is left to detect), and under
  ``sympy.evaluate(False)`` it becomes ``M**(-1 + 1)``, a power whose exponent is not a positive
  integer. Such a power is read as the inverse product it came from.
- A square product through a narrow inner dimension, u vᵀ (n × n through one column), has rank at
  most that inner dimension, so it has no inverse at any larger size: the claim is then only
  meaningful at the sizes where the rank can be full.
"""

from __future__ import annotations

import sympy as sp

from ..defs.shapes import show
from . import dag


def _is_inverse_power(x) -> bool:
    """Inverse(M), or M**k with k not a positive integer (a negative or unevaluated exponent)."""
    if isinstance(x, sp.Inverse):
        return True
    if isinstance(x, sp.MatPow):
        k = sp.sympify(x.exp)
        if k.is_Integer:
            return bool(k <= 0)
        return k.is_number or k.is_positive is not True  # folded (-1 + 1) or of unknown sign
    return False


def inverted(lhs, rhs) -> list:
    """The inverse nodes of the claim (Inverse, and powers with a non-positive or folded exponent)."""
    return [x for x in dag.nodes(lhs, rhs) if _is_inverse_power(x)]


def _rank_bound(M):
    """(k, size - k) when the square matrix M is a product through an inner dimension k that may be
    smaller than its size; None otherwise."""
    if not isinstance(M, sp.MatMul):
        return None
    _, mats = M.as_coeff_matrices()
    inner = [f.cols for f in mats[:-1]]
    size = M.rows
    for k in inner:
        gap = sp.expand(size - k)
        if gap.is_nonpositive is True:
            continue
        return k, gap
    return None


def notes(lhs, rhs) -> list[str]:
    """Sentences for the scope of a proof: folded powers read as inverses, and inverses of matrices
    whose rank is bounded by an inner dimension (they exist only where that bound allows)."""
    out = []
    for x in inverted(lhs, rhs):
        M = x.args[0]
        if isinstance(x, sp.MatPow) and not sp.sympify(x.exp).is_Integer:
            out.append(f"SymPy folded a product with an inverse into {show(x, 60)} while the claim was built; "
                       f"it is read as that product, which exists only where {show(M, 40)} is invertible")
        bound = _rank_bound(M)
        if bound is not None:
            k, _ = bound
            size = M.rows
            out.append(f"{show(M, 40)} is {size} × {size} through an inner dimension {k}: its rank is at most "
                       f"{k}, so its inverse exists only when {size} <= {k} (the claim says nothing elsewhere)")
    return list(dict.fromkeys(out))
