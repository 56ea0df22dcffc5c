"""symattn.numeric.multihead_attention names the operands and their shapes when batch axes do not fit."""

import numpy as np
import pytest

import symattn.numeric as sn
from symattn.errors import ShapeError

RNG = np.random.default_rng(7)
W = [RNG.normal(size=(8, 8)) for _ in range(4)]


@pytest.mark.parametrize("shapes, named", [
    (((2, 4, 8), (3, 5, 8), (3, 5, 8)), r"query \(2, 4, 8\), key \(3, 5, 8\), value \(3, 5, 8\)"),
    (((2, 4, 8), (2, 5, 8), (3, 5, 8)), r"query \(2, 4, 8\), key \(2, 5, 8\), value \(3, 5, 8\)"),
    (((3, 4, 8), (2, 5, 8), (2, 5, 8)), r"query \(3, 4, 8\), key \(2, 5, 8\), value \(2, 5, 8\)"),
])
def test_batch_sizes_that_do_not_broadcast_are_named(shapes, named):
    q, k, v = (RNG.normal(size=s) for s in shapes)
    with pytest.raises(ShapeError, match=r"multihead_attention: the batch axes .* do not broadcast: " + named):
        sn.multihead_attention(q, k, v, *W, num_heads=2)


def test_batch_axes_that_broadcast_still_work():
    q, kv = RNG.normal(size=(3, 4, 8)), RNG.normal(size=(1, 5, 8))
    out = sn.multihead_attention(q, kv, kv, *W, num_heads=2)
    each = [sn.multihead_attention(q[i], kv[0], kv[0], *W, num_heads=2) for i in range(3)]
    np.testing.assert_allclose(out, np.stack(each), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mask_shape", [(3, 1, 4, 5), (2, 3, 4, 5), (4, 2, 2, 4, 5)])
def test_a_mask_that_does_not_fit_the_batch_and_heads_is_named(mask_shape):
    q, kv = RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 5, 8))
    shape = ", ".join(map(str, mask_shape))
    with pytest.raises(ShapeError, match=rf"mask \({shape}\) does not broadcast to .* = \(2, 2, 4, 5\): "
                                         r"query \(2, 4, 8\), key \(2, 5, 8\), value \(2, 5, 8\)"):
        sn.multihead_attention(q, kv, kv, *W, num_heads=2, mask=np.ones(mask_shape, bool))


def test_a_mask_per_head_or_per_batch_element_is_accepted():
    q, kv = RNG.normal(size=(2, 4, 8)), RNG.normal(size=(2, 5, 8))
    keep = RNG.random((2, 2, 4, 5)) < 0.7
    keep[..., 0] = True  # no fully masked row
    full = sn.multihead_attention(q, kv, kv, *W, num_heads=2, mask=keep)
    assert full.shape == (2, 4, 8) and np.isfinite(full).all()
    shared = sn.multihead_attention(q, kv, kv, *W, num_heads=2, mask=keep[:1, :1])
    np.testing.assert_allclose(shared, sn.multihead_attention(q, kv, kv, *W, num_heads=2, mask=keep[0, 0]),
                               rtol=1e-12, atol=1e-12)
