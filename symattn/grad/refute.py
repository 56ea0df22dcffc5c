"""The gradient counterexample search: an exact random instance where a candidate is not the VJP.

At small dimensions (or exactly ``at``), every input and the cotangent get exact random values
(integers of two magnitudes and non-integer rationals); ``wrt`` is W0 + T with T a matrix of
symbols, the expression is evaluated explicitly, and the derivative Σ_ij G_ij ∂E_ij/∂T_kl at T = 0
is formed with ``sympy.diff``. A free scalar of the claim (RoPE's position a, a scale c) gets an
exact value too, an integer in 1..3 that has every property declared on it (a claim "for every a"
is refuted at one a), and the counterexample names it beside the dimensions. The candidate is
evaluated at the same instance, and an entry (k, l) where the two differ is certified nonzero (an
exact rational, or interval arithmetic, see
:func:`symattn.proof.certify.certify_nonzero`). Floats only choose which entry to look at first.
The counterexample's lhs is the candidate and its rhs the derivative (the verdict's lhs is the
candidate too), so its difference is candidate − derivative at the entry.
"""

from __future__ import annotations

import random

import numpy as np
import sympy as sp

from ..proof.audit import claim_symbols
from ..proof.audit_instance import admissible
from ..proof.certify import certify_nonzero
from ..proof.verdict import Counterexample
from .explicit import at_dims, derivative, explicit, inputs_of, symbols_for

SIZES = ((2, 3), (1, 2, 3), (2,), (3,))


def _value(rng, kind: int):
    if kind % 3 == 0:
        return sp.Integer(rng.randint(-3, 3))
    if kind % 3 == 1:
        return sp.Integer(rng.randint(-9, 9))
    return sp.Rational(rng.randint(-7, 7), rng.randint(2, 5))


def _matrix(rng, shape, kind):
    r, c = (int(x) for x in shape)
    return sp.ImmutableMatrix(r, c, lambda i, j: _value(rng, kind))


def _draw_dims(rng, k, dims, at):
    if at:
        return {d: int(at[k % len(at)][d]) for d in dims}
    return {d: rng.choice(SIZES[k % len(SIZES)]) for d in dims}


def _float(M):
    def f(x):
        try:
            return float(x)
        except TypeError:
            return float("nan")
    return np.array([[f(M[i, j]) for j in range(M.cols)] for i in range(M.rows)])


def counterexample_at(expr, wrt, candidate, cotangent, dims: dict, rng, kind: int):
    """A certified Counterexample at these dimensions, or None."""
    e, w, c, g = (at_dims(x, dims) for x in (expr, wrt, candidate, cotangent))
    values = {x: _matrix(rng, x.shape, kind) for x in inputs_of(e, c, g)}
    T = symbols_for(w, "t")
    moved = dict(values)
    moved[w] = values[w] + T
    E = explicit(e, moved)
    G = explicit(g, values)
    zero = {t: 0 for t in T}
    D = derivative(E, G, T).xreplace(zero)
    C = explicit(c, values)
    gaps = np.nan_to_num(np.abs(_float(D) - _float(C)), nan=np.inf)
    for flat in np.argsort(-gaps, axis=None, kind="stable"):
        k, l = (int(v) for v in np.unravel_index(flat, gaps.shape))
        difference = sp.nsimplify(0) + (C[k, l] - D[k, l])  # lhs − rhs: the candidate minus the derivative
        if difference.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            continue
        cert = certify_nonzero(difference)
        if cert:
            named = {str(x): np.array(v.tolist(), dtype=object) for x, v in values.items()}
            # lhs = the candidate, rhs = the derivative, as in the verdict (lhs = candidate, rhs = expr)
            return Counterexample({str(d): v for d, v in dims.items()}, named, _float(C), _float(D), C, D,
                                  (k, l), difference, cert)
    return None


def _draw_scalars(rng, scalars) -> dict:
    """An admissible integer in 1..3 for each free scalar (none for a scalar that admits none)."""
    out = {}
    for s in scalars:
        fits = [v for v in (1, 2, 3) if admissible(s, v)]
        if fits:
            out[s] = rng.choice(fits)
    return out


def search(expr, wrt, candidate, cotangent, dims: list, at=None, samples: int = 8, seed: int = 0):
    """The first certified counterexample over ``samples`` random instances, or None."""
    rng = random.Random(seed)
    scalars = claim_symbols(expr, candidate, cotangent)[1]
    for k in range(samples):
        values = _draw_dims(rng, k, dims, at)
        values.update(_draw_scalars(rng, scalars))
        found = counterexample_at(expr, wrt, candidate, cotangent, values, rng, k)
        if found is not None:
            return found
    return None
