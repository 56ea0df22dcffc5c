r"""Sums over a block of positions whose limits divide by a dimension, refused with what they mean.

Papers average segments of a sequence, as Nyströmformer's landmarks:
``\tilde{q}_j = \sum_{i=(j-1) n/m + 1}^{j n/m} \frac{q_i}{n/m}``, the mean of the j-th of m blocks of
n/m consecutive rows, which is a block only where m divides n. Such a sum has n/m terms, a number
that is a quotient of dimensions, and reading it would need the reindexing of the blocks
(Σ_j Σ_{i in block j} = Σ_{i=1}^{n}), which the reader does not derive. It is refused here with a
message that names the construct and the divisibility it presumes, never read under another meaning.
"""

from __future__ import annotations

import sympy as sp

from ..errors import NotationShapeError


def is_block_count(count) -> bool:
    """True when the number of terms of a range is a quotient by a dimension (n/m, or 2n/m)."""
    _, den = sp.fraction(sp.together(count))
    return bool(den.free_symbols)


def refuse_block_sum(scope, node, rng: str, count) -> None:
    """Refuse the block sum ``node`` (its range written ``rng``, with ``count`` terms)."""
    _, den = sp.fraction(sp.together(count))
    divisor = sp.sstr(den)
    scope.fail(node, f"{rng} is a sum over a block of positions: it has {sp.sstr(count)} terms, a whole number only "
               f"where {divisor} divides the positions, and sums over blocks of positions (segment means) are not "
               "read, whether or not the file states the divisibility",
               "the block's terms written out at given sizes, or a sum from 1 over a number of terms that is a "
               "dimension or a number (\\sum_{i=1}^{n} q_i)", NotationShapeError)
