"""RoPE (seed 002's Llama apply_rotary_emb): rotated scores depend only on relative position."""

import sympy as sp

import symattn.defs as sa
from symattn.defs.rope import apply_rope, rope, rotation
from symattn.statements import theorem

p = sa.dims("p")                      # d = 2p: the head dimension
a, b, s = sp.symbols("a b s", integer=True)
theta = sp.Function("theta")          # arbitrary frequencies θ_i
q, k = sp.MatrixSymbol("q", 2 * p, 1), sp.MatrixSymbol("k", 2 * p, 1)


@theorem(
    "rope_scores_depend_on_relative_position",
    "(R_a q)ᵀ (R_b k) = qᵀ R_{b−a} k and R_aᵀ R_b = R_{b−a}, for every d = 2p, positions a, b, "
    "any frequencies θ_i and Llama's θ_i = 10000^{-2(i-1)/d}; shifting both positions by s changes "
    "no score; ρ(x)ᵀρ(y) = ρ(y−x); row twin (q R_aᵀ)(k R_bᵀ)ᵀ = q R_{b−a} kᵀ",
)
def _():
    x, y = sp.symbols("x y", real=True)
    claims = [(rotation(x).T * rotation(y), rotation(y - x))]
    for th in (theta, None):
        claims += [
            ((rope(a, p, th) * q).T * (rope(b, p, th) * k), q.T * rope(b - a, p, th) * k),
            (rope(a, p, th).T * rope(b, p, th), rope(b - a, p, th)),
            ((rope(a + s, p, th) * q).T * (rope(b + s, p, th) * k),
             (rope(a, p, th) * q).T * (rope(b, p, th) * k)),
        ]
    claims.append((apply_rope(q.T, a, p, theta, "row") * apply_rope(k.T, b, p, theta, "row").T,
                   q.T * rope(b - a, p, theta) * k))
    return claims


@theorem(
    "rope_scores_depend_on_a_minus_b",
    "claim: (R_a q)ᵀ (R_b k) = qᵀ R_{a−b} k (Llama's θ_i)",
    expect="refuted",
    explanation=(
        "R_aᵀ = R_{−a} because a rotation's transpose is its inverse, so R_aᵀ R_b = R_{b−a}: the score "
        "depends on the offset b − a of the key from the query, and R_{a−b} rotates the wrong way."
    ),
)
def _():
    return [((rope(a, p) * q).T * (rope(b, p) * k), q.T * rope(a - b, p) * k)]
