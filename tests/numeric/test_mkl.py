"""The optional MKL backend: the products it computes equal NumPy's; what it cannot do it leaves
to NumPy; without MKL, asking for it says what to install. Skipped where MKL is not installed."""

import numpy as np
import pytest

try:  # before MKL is used in this process: a torch imported later would run its MKL products on one thread
    import torch  # noqa: F401
except ImportError:
    pass

import symattn.numeric as sn
from symattn.errors import InputError
from symattn.lowering.targets import numpy as runtime
from symattn.numeric import blas, blocked, mkl

needs_mkl = pytest.mark.skipif(not mkl.available(), reason="the mkl wheel (libmkl_rt) is not installed")


@pytest.fixture
def counted_mkl(monkeypatch):
    """MKL for every product inside work items, however small; the products it computed, counted."""
    if not mkl.available():
        pytest.skip("the mkl wheel (libmkl_rt) is not installed")
    monkeypatch.setattr(mkl, "MIN_PRODUCT", 0)
    computed = []

    def gemm(a, b, out=None):
        r = mkl.gemm(a, b, out)
        if r is not None:
            computed.append((a.shape, b.shape))
        return r

    yield computed, gemm
    blas.use_blas("numpy")


def _inputs(dtype, b=8, n=12, d_model=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(b, n, d_model)).astype(dtype)
    w = [(rng.normal(size=(d_model, d_model)) / 4).astype(dtype) for _ in range(4)]
    bias = [rng.normal(size=d_model).astype(dtype) for _ in range(4)]
    return x, w, bias


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multihead_with_mkl_products_equals_numpy_blas(counted_mkl, dtype, monkeypatch):
    computed, gemm = counted_mkl
    x, w, (b_q, b_k, b_v, b_o) = _inputs(dtype)
    kw = dict(num_heads=4, b_q=b_q, b_k=b_k, b_v=b_v, b_o=b_o)

    def both(*args):
        """(NumPy's BLAS, MKL) results of multihead_attention(*args)."""
        blas.use_blas("numpy")
        want = sn.multihead_attention(*args, *w, **kw)
        blas.use_blas("mkl")
        runtime._GEMM = gemm
        return want, sn.multihead_attention(*args, *w, **kw)

    want, got = both(x, x, x)
    y = x[:2] * 2  # cross-attention of two elements: the other path, its items heads and query tiles
    monkeypatch.setattr(blocked, "ITEM_BYTES", 256)  # one head per work item
    want_cross, got_cross = both(x[:2], y, y)
    assert any(len(b) == 2 for a, b in computed), "no projection went to MKL"
    assert any(len(b) > 2 for a, b in computed), "no product of a head went to MKL"
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(got_cross, want_cross, rtol=tol, atol=tol)


@needs_mkl
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gemm_handles_both_layouts_and_writes_into_out(dtype):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(300, 200)).astype(dtype)
    b = rng.normal(size=(90, 200)).astype(dtype)
    mkl._load()
    tol = 1e-4 if dtype == np.float32 else 1e-12
    for left in (a, np.asfortranarray(a)):
        for right in (b.T, np.ascontiguousarray(b.T)):
            out = np.empty((300, 90), dtype)
            assert mkl.gemm(left, right, out) is out
            np.testing.assert_allclose(out, left @ right, rtol=tol, atol=tol)
    x = rng.normal(size=(2, 150, 200)).astype(dtype)  # a's batch rows fold into one product
    np.testing.assert_allclose(mkl.gemm(x, b.T), x @ b.T, rtol=tol, atol=tol)


@needs_mkl
def test_gemm_declines_what_it_does_not_handle(monkeypatch):
    monkeypatch.setattr(mkl, "MIN_PRODUCT", 0)
    mkl._load()
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(4, 6)), rng.normal(size=(6, 5))
    assert mkl.gemm(a, b.astype(np.float32)) is None  # mixed dtypes
    assert mkl.gemm(a.astype(np.float16), b.astype(np.float16)) is None
    assert mkl.gemm(np.stack([a, a]), np.stack([b, b])) is None  # a batch of products
    assert mkl.gemm(a[:, ::2], b[::2]) is None  # neither row- nor column-major
    big = np.zeros((4, 6))
    assert mkl.gemm(big[:, :4], b[:4], out=big[:, 1:5]) is None  # out overlaps an input
    assert mkl.gemm(a, b, out=np.empty((5, 4)).T) is None  # out not C-contiguous
    assert mkl.gemm(np.zeros((0, 6)), b) is None  # nothing to compute
    monkeypatch.setattr(mkl, "MIN_PRODUCT", 10**9)
    assert mkl.gemm(a, b) is None  # too small to gain


def test_use_blas_names_the_choices():
    with pytest.raises(InputError, match="expected 'numpy'.*or 'mkl', got 'openblas'"):
        sn.use_blas("openblas")
    assert sn.current_blas() == "numpy"


def test_use_blas_mkl_without_the_library_says_what_to_install(monkeypatch):
    monkeypatch.setattr(mkl, "_STATE", {})
    monkeypatch.setattr(mkl, "library_path", lambda: None)
    with pytest.raises(InputError, match="pip install mkl"):
        sn.use_blas("mkl")
    assert sn.current_blas() == "numpy"


def _use_mkl_in_fresh_process(first: str):
    import subprocess
    import sys

    code = (f"{first}\nimport warnings\nwarnings.simplefilter('error', RuntimeWarning)\n"
            "import symattn.numeric as sn\nsn.use_blas('mkl')\nprint('no warning')")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


@needs_mkl
def test_use_blas_mkl_warns_when_torch_would_be_imported_after_it():
    pytest.importorskip("torch")
    late = _use_mkl_in_fresh_process("")
    assert late.returncode != 0 and "Import torch before use_blas('mkl')" in late.stderr, late.stderr[-2000:]
    early = _use_mkl_in_fresh_process("import torch")
    assert early.returncode == 0 and "no warning" in early.stdout, early.stderr[-2000:]
