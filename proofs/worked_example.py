"""Seed 002's worked example ("Thinking Machines"), exactly.

The query of "Thinking" meets the keys of "Thinking" and "Machines" with dot products
q_1·k_1 = 112 and q_1·k_2 = 96; with d_k = 64 the scaled scores are 112/8 = 14 and 96/8 = 12,
and the attention weights are

    softmax([14, 12]) = [e^14, e^12] / (e^14 + e^12) = [e²/(1 + e²), 1/(1 + e²)] ≈ [0.8808, 0.1192],

which round to [0.88, 0.12] (rounding half up to two places, ⌊100 x + 1/2⌋ / 100; neither value
is near a tie, so every rounding rule agrees). The rounding is certified by interval arithmetic,
not by a float comparison.
"""

import sympy as sp

import symattn.defs as sa
from symattn.statements import theorem

SCORES = sp.ImmutableMatrix([[112, 96]])  # row convention: one query, two keys
D_K = 64


def weights():
    """softmax(q_1 Kᵀ / sqrt(d_k)) by the library's row-wise Softmax, as an explicit 1 × 2 matrix."""
    return sa.softmax(SCORES / sp.sqrt(D_K), axis=1).doit()


def rounded(x, places: int = 2):
    """⌊10^places · x + 1/2⌋, left unevaluated (the proof engine certifies it)."""
    return sp.floor(10**places * x + sp.Rational(1, 2), evaluate=False)


@theorem(
    "worked_example_thinking_machines",
    "scores [112, 96] / sqrt(64) = [14, 12]; softmax([14, 12]) = [e²/(1+e²), 1/(1+e²)] exactly, "
    "which round to [0.88, 0.12]",
    budget=10.0,
)
def _():
    A = weights()
    e2 = sp.exp(2)
    return [
        (SCORES / sp.sqrt(D_K), sp.ImmutableMatrix([[14, 12]])),
        (A[0, 0], e2 / (1 + e2)),
        (A[0, 1], 1 / (1 + e2)),
        (rounded(A[0, 0]), 88),
        (rounded(A[0, 1]), 12),
    ]
