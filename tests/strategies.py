"""Hypothesis strategies shared by the tests, in one place."""

import numpy as np
import sympy as sp
from hypothesis import strategies as st

small = st.integers(min_value=1, max_value=4)
batch_shapes = st.lists(st.integers(min_value=1, max_value=3), min_size=0, max_size=2).map(tuple)


@st.composite
def mha_sizes(draw):
    """Sizes of a multi-head problem: n, m, d_model, d_k, d_v, H and a batch shape."""
    return {
        "n": draw(small), "m": draw(small), "d_model": draw(small), "d_k": draw(small),
        "d_v": draw(small), "H": draw(st.integers(min_value=1, max_value=4)), "batch": draw(batch_shapes),
    }


def arrays(rng: np.random.Generator, shape, batch=()):
    """Standard normal entries (float64) with leading batch axes."""
    return rng.standard_normal(tuple(batch) + tuple(shape))


small_rationals = st.builds(sp.Rational, st.integers(min_value=-6, max_value=6), st.integers(min_value=1, max_value=4))


@st.composite
def exact_scalar_pairs(draw):
    """(e, e') with e = e' exactly, built from exp, cos and sin of small rationals and written two ways.

    e uses exp(a + b), cos(a + b), sin(a + b); e' the expanded forms exp(a) exp(b),
    cos a cos b - sin a sin b, sin a cos b + cos a sin b (SymPy does not expand these by itself).
    """
    e, e2 = sp.Integer(0), sp.Integer(0)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        c, a, b = draw(small_rationals), draw(small_rationals), draw(small_rationals)
        kind = draw(st.sampled_from(("exp", "cos", "sin", "softmax")))
        if kind == "exp":
            e, e2 = e + c * sp.exp(a + b), e2 + c * sp.exp(a) * sp.exp(b)
        elif kind == "cos":
            e, e2 = e + c * sp.cos(a + b), e2 + c * (sp.cos(a) * sp.cos(b) - sp.sin(a) * sp.sin(b))
        elif kind == "sin":
            e, e2 = e + c * sp.sin(a + b), e2 + c * (sp.sin(a) * sp.cos(b) + sp.cos(a) * sp.sin(b))
        else:  # a softmax weight, shifted: e^a / (e^a + e^b) = 1 / (1 + e^(b - a))
            e, e2 = e + c * sp.exp(a) / (sp.exp(a) + sp.exp(b)), e2 + c / (1 + sp.exp(b - a))
    return e, e2
