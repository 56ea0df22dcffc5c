"""The projections of multi-head attention as work items over slices of their rows: the same numbers
as one product, each slice on one BLAS thread, the same kernels, and MKL inside items."""

import numpy as np
import pytest

try:  # before MKL is used in this process (see test_numeric_mkl)
    import torch  # noqa: F401
except ImportError:
    pass

import symattn.numeric as sn
from symattn.lowering.targets import numpy as runtime
from symattn.numeric import blas, kernels, mkl, multihead, parallel

needs_split = pytest.mark.skipif(not parallel.can_split(), reason="one core or no controllable BLAS: no work items")


def _case(name, dtype, rng):
    """(query, key, value, weights, keywords) of a case that takes the stepwise path (fewer than
    2·cores batch elements, a mask with batch axes, or cross-attention)."""
    d_model, H, d, n, m = 16, 4, 4, 24, 29
    G = {"gqa": 2, "mqa": 1}.get(name, H)

    def arr(*shape):
        return rng.normal(size=shape).astype(dtype)

    q = k = v = arr(1, n, d_model)
    kw = {"num_heads": H, "num_kv_heads": G}
    if name == "cross":
        k = v = arr(1, m, d_model)
    elif name == "cross_kv":
        k, v = arr(1, m, d_model), arr(1, m, d_model)
    elif name == "broadcast":  # the queries of three batch elements against one shared memory
        q, k = arr(3, n, d_model), arr(1, m, d_model)
        v = k
    elif name == "strided":  # not C-contiguous: the rows cannot be merged without a copy
        q = k = v = arr(n, 2, d_model).swapaxes(0, 1)
    elif name == "masked":  # a mask with batch axes: never the per-element path
        q = k = v = arr(4, n, d_model)
        kw["mask"] = rng.random((4, 1, n, n)) < 0.6
        kw["mask"][..., 0] = True
    elif name == "causal":
        kw["causal"] = True
    elif name == "biased":
        kw.update(b_q=arr(H * d), b_v=arr(G * d), b_o=arr(d_model))
    elif name == "biased_cross":
        k = v = arr(1, m, d_model)
        kw.update(b_k=arr(G * d), b_o=arr(d_model))
    w = [arr(d_model, H * d) / 3, arr(d_model, G * d) / 3, arr(d_model, G * d) / 3, arr(H * d, d_model) / 3]
    return q, k, v, w, kw


def split_everything(monkeypatch):
    """Every product of a call in slices of rows, however small."""
    monkeypatch.setattr(multihead, "SPLIT_PRODUCT", 0)
    monkeypatch.setattr(multihead, "MIN_SLICE_ROWS", 1)
    monkeypatch.setattr(multihead, "ROW_ALIGN", 4)


CASES = ["self", "biased", "causal", "gqa", "mqa", "masked", "cross", "cross_kv", "biased_cross", "broadcast",
         "strided"]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", CASES)
def test_row_slices_give_the_products_of_one_call(monkeypatch, name, dtype):
    q, k, v, w, kw = _case(name, dtype, np.random.default_rng(len(name)))
    if name == "strided":
        assert not q.flags.c_contiguous
    monkeypatch.setattr(multihead, "SPLIT_PRODUCT", 2**62)  # every product in one call
    with sn.trace() as used:
        whole = sn.multihead_attention(q, k, v, *w, **kw)
    one_call = {k.provenance.theorem for k in used}
    split_everything(monkeypatch)
    with sn.trace() as used:
        sliced = sn.multihead_attention(q, k, v, *w, **kw)
    assert {k.provenance.theorem for k in used} == one_call  # the same theorems' kernels
    assert all(k.provenance.status == "proved" for k in used)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(sliced, whole, **tol)
    assert sliced.dtype == whole.dtype == dtype and sliced.shape == whole.shape
    if parallel.can_split():  # the output projection ran once per slice of rows
        out_kernel = kernels.get("output_bias" if "b_o" in kw else "output")
        assert sum(k is out_kernel for k in used) > 1
        row_kernels = ("qkv_apply", "qkv_apply_bias") if q is k is v else ("proj_q", "proj_q_bias")
        assert sum(k is kernels.get(nm) for nm in row_kernels for k in used) > 1


def test_the_fused_product_is_split_into_the_weights_once_and_a_product_per_slice(monkeypatch):
    q, k, v, w, kw = _case("biased", np.float64, np.random.default_rng(1))
    split_everything(monkeypatch)
    with sn.trace() as used:
        sn.multihead_attention(q, k, v, *w, **kw)
    if not parallel.can_split():
        assert kernels.get("qkv_fused_bias") in used  # no items: one call, as before
        return
    assert kernels.get("qkv_fused_bias") not in used
    assert sum(k is kernels.get("qkv_weights") for k in used) == 1
    assert sum(k is kernels.get("qkv_bias_row") for k in used) == 1


def _spy_blas_threads(monkeypatch):
    """Record NumPy's BLAS thread count at every product of every kernel that has run so far."""
    seen = []
    for name in kernels.names():
        fn = kernels._KERNELS.get(name)
        if fn is None or "mm" not in fn.fn.__globals__:
            continue
        mm = fn.fn.__globals__["mm"]

        def spy(a, b, out=None, mm=mm):
            seen.append([c.num_threads for c in parallel._numpy_blas()])
            return mm(a, b, out)

        monkeypatch.setitem(fn.fn.__globals__, "mm", spy)
    return seen


@needs_split
@pytest.mark.parametrize("name", ["self", "cross", "masked", "biased_cross"])
def test_split_products_run_on_one_blas_thread(monkeypatch, name):
    """OpenBLAS's own threads spin after a product they shared and take a core from the work items:
    the projections and W^O, when split into slices of rows, run with BLAS held to one thread."""
    q, k, v, w, kw = _case(name, np.float64, np.random.default_rng(3))
    before = [c.num_threads for c in parallel._numpy_blas()]
    sn.multihead_attention(q, k, v, *w, **kw)  # every kernel lowered
    split_everything(monkeypatch)
    seen = _spy_blas_threads(monkeypatch)
    sn.multihead_attention(q, k, v, *w, **kw)
    assert len(seen) >= 5 and all(counts == [1] * len(before) for counts in seen), seen
    assert [c.num_threads for c in parallel._numpy_blas()] == before  # restored


def test_row_slices_of_a_product_cover_every_row_once(monkeypatch):
    """Slices of rows (not multiples of ROW_ALIGN, strided, several batch axes) fill every row of the
    result exactly once, in place."""
    rng = np.random.default_rng(5)
    monkeypatch.setattr(multihead, "SPLIT_PRODUCT", 0)
    monkeypatch.setattr(multihead, "MIN_SLICE_ROWS", 1)
    w = rng.normal(size=(7, 5))
    for x in (rng.normal(size=(37, 7)), rng.normal(size=(2, 3, 19, 7)), rng.normal(size=(19, 3, 7)).swapaxes(0, 1)):
        out = np.full(x.shape[:-1] + (5,), np.nan)
        got = multihead._by_rows(kernels.PROJECTIONS["k", False], "X", x, {"W^K": w, "G": 1, "d_k": 5}, out)
        assert got is out
        np.testing.assert_allclose(out, x @ w, rtol=1e-13, atol=1e-13)


@needs_split
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_with_mkl_the_projections_inside_items_go_to_mkl(monkeypatch, dtype):
    if not mkl.available():
        pytest.skip("the mkl wheel (libmkl_rt) is not installed")
    q, k, v, w, kw = _case("biased_cross", dtype, np.random.default_rng(9))
    monkeypatch.setattr(mkl, "MIN_PRODUCT", 0)
    computed = []

    def gemm(a, b, out=None):
        r = mkl.gemm(a, b, out)
        if r is not None:
            computed.append(b.shape)
        return r

    def products(split):
        """(result, number of products MKL computed) with the projections in slices or in one call."""
        if split:
            split_everything(monkeypatch)
        else:
            monkeypatch.setattr(multihead, "SPLIT_PRODUCT", 2**62)
        computed.clear()
        monkeypatch.setattr(runtime, "_GEMM", runtime._GEMM)  # teardown restores the BLAS of before
        try:
            blas.use_blas("mkl")
            monkeypatch.setattr(runtime, "_GEMM", gemm)
            return sn.multihead_attention(q, k, v, *w, **kw), len(computed)
        finally:
            blas.use_blas("numpy")

    want = sn.multihead_attention(q, k, v, *w, **kw)
    whole, in_core = products(False)
    sliced, in_all = products(True)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(whole, want, **tol)
    np.testing.assert_allclose(sliced, want, **tol)
    assert in_all - in_core >= 2 * 4  # W^Q, W^K, W^V and W^O, each in at least two slices of rows, by MKL


@needs_split
def test_only_products_with_enough_rows_and_multiply_adds_are_split():
    """Each slice packs all of W again: few rows stay in one call, however wide W is; so do small products."""
    least = multihead.MIN_SLICE_ROWS * runtime.cores()
    wide = multihead.SPLIT_PRODUCT  # inner × width: enough multiply-adds with a single row
    assert not multihead._splits(least - 1, wide, 1)
    assert multihead._splits(least, wide, 1)
    assert not multihead._splits(least, 1, max(1, wide // least - 1))
