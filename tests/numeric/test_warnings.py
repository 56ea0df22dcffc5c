"""Large scores make the first, unshifted attempt of a tile overflow; the tile is then computed
with the row max as the shift. The overflow of that attempt is not the user's concern: no
RuntimeWarning, and the result equals the max-shifted definition."""

import warnings

import numpy as np
import pytest

import symattn.numeric as sn


def _softmax_attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    return (p / p.sum(axis=-1, keepdims=True)) @ v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("block_size", [None, 3])
def test_overflowing_unshifted_attempt_warns_nothing_and_is_exact(dtype, block_size):
    rng = np.random.default_rng(0)
    q, k = (rng.normal(size=(2, 8, 16)) * 40 for _ in range(2))  # scores in the thousands
    v = rng.normal(size=(2, 8, 5))
    q, k, v = (a.astype(dtype) for a in (q, k, v))
    want = _softmax_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = sn.blocked_core(q, k, v, block_size=block_size)
    assert np.abs(np.max(q @ np.swapaxes(k, -1, -2))) > 1000  # the unshifted exp did overflow
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-6)


def test_multihead_with_large_inputs_warns_nothing():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 8, 16)) * 30
    w = [rng.normal(size=(16, 16)) for _ in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = sn.multihead_attention(x, x, x, *w, num_heads=2)
    assert np.isfinite(out).all()
