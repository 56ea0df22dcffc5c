"""The work items of the attention core: every way of cutting them (query tiles, key blocks, the
budgets that size them, the per-element path) gives the definition's numbers on the inputs the core
accepts, and with MKL selected every product of an item at the sizes of the benchmark shapes is
computed by MKL, strided views of the projection included."""

import numpy as np
import pytest

try:  # before MKL is used in this process: a torch imported later would run its MKL products on one thread
    import torch  # noqa: F401
except ImportError:
    pass

import symattn.numeric as sn
from symattn.lowering.targets import numpy as runtime
from symattn.numeric import blas, blocked, mkl, parallel
from symattn.numeric.kernels import get
from symattn.numeric.multihead import _split


def definition(q, k, v, mask=None, causal=False):
    """softmax(Q Kᵀ + M) V in float64 with the row max as the shift; a row that sees no key is NaN."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        n, m = s.shape[-2:]
        s = np.where(np.arange(m)[None, :] - np.arange(n)[:, None] > m - n, -np.inf, s)
    top = s.max(-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - np.where(np.isfinite(top), top, 0))
        return p @ v / p.sum(-1, keepdims=True)


def inputs(kind, dtype, rng):
    """(q, k, v, keywords of blocked_core) of one kind of input."""
    q = rng.normal(size=(2, 3, 24, 8))
    k, v = rng.normal(size=(2, 3, 40, 8)), rng.normal(size=(2, 3, 40, 5))
    kw = {}
    if kind == "mask":
        kw["mask"] = rng.random((3, 24, 40)) < 0.7
    elif kind == "float mask":
        kw["mask"] = np.where(rng.random((24, 40)) < 0.8, 0.0, -np.inf) + rng.normal(size=(24, 40))
    elif kind == "causal":
        kw["causal"] = True
    elif kind == "causal, more queries than keys":
        k, v, kw["causal"] = k[..., :20, :], v[..., :20, :], True
    elif kind == "broadcast batch":  # one key/value head for every query head (MQA)
        k, v = k[:, :1], v[:, :1]
    elif kind == "fully masked rows":
        mask = rng.random((24, 40)) < 0.7
        mask[[3, 17]] = False
        kw["mask"] = mask
    elif kind == "huge scores":  # exp overflows without a shift
        q = q * 300
    elif kind == "subnormal products":  # exp(s) v subnormal without a shift (the check's third case)
        q, v = np.zeros_like(q), v * 1e-28 if dtype == np.float32 else v * 1e-300
        kw["mask"] = np.full((24, 40), -35.0 if dtype == np.float32 else -700.0)
    cast = [a.astype(dtype) for a in (q, k, v)]
    if isinstance(kw.get("mask"), np.ndarray) and kw["mask"].dtype != bool:
        kw["mask"] = kw["mask"].astype(dtype)
    return (*cast, kw)


KINDS = ["plain", "mask", "float mask", "causal", "causal, more queries than keys", "broadcast batch",
         "fully masked rows", "huge scores", "subnormal products"]
#: (tile, block_size, ITEM_BYTES, TILE_BYTES): explicit cuts and the automatic ones at other budgets
CUTS = [(None, None, None, None), (5, 7, None, None), (24, 1, None, None), (1, 40, None, None),
        (None, None, 2**10, 2**9), (None, None, 2**14, 2**12)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", KINDS)
def test_every_cut_of_the_work_items_gives_the_definition(kind, dtype, monkeypatch):
    q, k, v, kw = inputs(kind, dtype, np.random.default_rng(KINDS.index(kind)))
    want = definition(q, k, v, kw.get("mask"), kw.get("causal", False))
    tol = 2e-5 if dtype == np.float32 else 1e-12
    first = None
    for tile, block, item_bytes, tile_bytes in CUTS:
        if item_bytes:
            monkeypatch.setattr(blocked, "ITEM_BYTES", item_bytes)
            monkeypatch.setattr(blocked, "TILE_BYTES", tile_bytes)
        got = sn.blocked_core(q, k, v, tile=tile, block_size=block, **kw)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=tol, atol=0 if kind == "subnormal products" else tol)
        if first is None:
            first = got
        else:  # the cuts agree with each other to rounding
            np.testing.assert_allclose(got, first, rtol=tol, atol=tol)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [1.0, 300.0])
def test_a_mask_with_batch_axes_only_the_values_have_gives_the_definition(causal, scale):
    """q and k one matrix each, v and the mask a batch of two: the masked scores of a tile have the
    batch axis that Q K_bᵀ lacks (scale 300: through the shifted kernels)."""
    rng = np.random.default_rng(4)
    q, k, v = scale * rng.normal(size=(24, 8)), rng.normal(size=(40, 8)), rng.normal(size=(2, 40, 5))
    mask = rng.random((2, 24, 40)) < 0.7
    want = definition(q, k, v, mask, causal)
    for tile, block in ((None, None), (5, 7), (24, 40)):
        got = sn.blocked_core(q, k, v, mask=mask, causal=causal, tile=tile, block_size=block)
        assert got.shape == (2, 24, 5)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_per_element_tiles_give_the_definition_at_every_budget(dtype, monkeypatch):
    """attend_tile (the per-element path) with its steps cut by TILE_BYTES: all at once, heads in
    groups, one head per step, queries in tiles, keys in blocks."""
    rng = np.random.default_rng(11)
    q, k, v = (rng.normal(size=(2, 4, 1, 48, 8)).astype(dtype) for _ in range(3))
    q[0, 1, 0, 5] *= 400  # one step needs the shifted form
    want = definition(q, k, v)
    blocked.prepare()
    for budget in (2**22, 2**14, 2**12, 2**10):
        monkeypatch.setattr(blocked, "TILE_BYTES", budget)
        out = np.full(q.shape, np.nan, dtype)
        blocked.attend_tile(q, k, v, None, False, out)
        np.testing.assert_allclose(out, want, rtol=2e-5 if dtype == np.float32 else 1e-12, atol=1e-6)


def _projection_views(dtype, b, n, H, d=64):
    """q, k, v of every head as multihead_attention makes them: views into one fused projection,
    each head's rows strided by the fused width."""
    proj = (np.random.default_rng(2).normal(size=(b, n, 3 * H * d)) * 0.3).astype(dtype)
    return [_split(proj[..., i * H * d:(i + 1) * H * d], n, H, 1, d)[..., 0, :, :] for i in range(3)]


@pytest.mark.skipif(not mkl.available(), reason="the mkl wheel (libmkl_rt) is not installed")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_with_mkl_every_product_of_an_item_goes_to_mkl_at_the_benchmark_sizes(dtype, monkeypatch):
    """At S3's item size (512 queries, keys in blocks of 512, d = 64; the heads' rows strided by
    the fused width) the scores Q K_bᵀ and the products with [V_b 1] all clear MKL's threshold:
    none may fall back to NumPy's BLAS for its layout. The results equal NumPy's BLAS."""
    if not parallel.can_split():
        pytest.skip("items run in the calling thread here (one core or no controllable BLAS): MKL is not used there")
    q, k, v = _projection_views(dtype, 1, 1024, 2)
    offered, computed = [], []

    def gemm(a, b, out=None):
        r = mkl.gemm(a, b, out)
        offered.append((a.shape, b.shape))
        if r is not None:
            computed.append((a.shape, b.shape))
        return r

    want = sn.blocked_core(q, k, v, tile=512, block_size=512)
    monkeypatch.setattr(runtime, "_GEMM", runtime._GEMM)  # teardown restores the BLAS of before
    try:
        blas.use_blas("mkl")
        monkeypatch.setattr(runtime, "_GEMM", gemm)
        with sn.trace() as used:
            got = sn.blocked_core(q, k, v, tile=512, block_size=512)
    finally:
        blas.use_blas("numpy")
    products = sum(any(kern is get(name) for name in ("scores", "exp_product", "accumulate", "exp2_product",
                                                     "accumulate_base2")) for kern in used)
    # 2 heads x 2 query tiles x 2 key blocks, each block one product for its scores and one with [V_b 1]
    assert products == 2 * 2 * 2 * 2
    assert len(offered) == products, "a product of an item did not reach the selected BLAS"
    assert computed == offered, "a product of an item fell back to NumPy's BLAS"
    assert all(a[-2:] in ((512, 64), (512, 512)) for a, _ in computed)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
