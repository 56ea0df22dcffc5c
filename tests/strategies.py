"""Hypothesis strategies shared by the tests, in one place."""

import numpy as np
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
