"""Scalar statistics of a vector as normalizations write them: a root of a mean of squares.

Layer normalization (Ba et al. 2016) and RMSNorm (Zhang & Sennrich 2019) divide a vector by a
statistic of its entries::

    \\sigma^l = \\sqrt{\\frac{1}{H} \\sum_{i=1}^{H} \\left(a_i^l - \\mu^l\\right)^2}, \\qquad
    \\mathrm{RMS}(\\mathbf{a}) = \\sqrt{\\frac{1}{n} \\sum_{i=1}^{n} a_i^2}

A sum of entries over a symbolic count is a 1 × 1 matrix with no entry to take apart; its square root
is read as the entrywise square root of that 1 × 1 matrix (a scalar), which a division then uses as a
scalar divisor (:func:`symattn.derivation.vectors.divide`, "where it is nonzero").
"""

from __future__ import annotations

import sympy as sp


def root_of_sum(scope, node, v):
    """The square root of the 1 × 1 sum ``v`` (written ``node``): its entrywise square root, noted."""
    note = (f"\\sqrt{{{node.arg.text()}}} is the square root of a 1 × 1 sum, read as a scalar (the root of its "
            "one entry)")
    if note not in scope.notes:
        scope.notes.append(note)
    return sp.HadamardPower(v, sp.Rational(1, 2))
