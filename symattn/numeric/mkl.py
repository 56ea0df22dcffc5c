"""Intel oneMKL's GEMM for the large matrix products inside the numeric core's work items (optional).

NumPy's own BLAS (OpenBLAS in NumPy's wheels) is the default and stays so. With the ``mkl``
wheel installed (``pip install symattn[mkl]``), ``symattn.numeric.use_blas("mkl")`` makes the
products that run inside work items, one per core and each single-threaded, call
``cblas_sgemm`` / ``cblas_dgemm`` of ``libmkl_rt`` through ctypes, with MKL's sequential
threading layer; ``use_blas("numpy")`` goes back. Products outside work items (a whole-batch
projection that NumPy's BLAS splits between its threads) and small ones (below ``MIN_PRODUCT``
multiply-adds, where the ctypes call costs more than MKL saves) always use NumPy.

The kernels are unchanged: the same lowered code calls ``runtime.mm``, which hands a product
to ``gemm`` below; ``gemm`` declines (returns None) every case it does not handle, and NumPy
computes it. Measured here (2 cores, one thread per work item, CPU time of a whole call,
interleaved): float64 0.89-0.95 of OpenBLAS at S1-S3, float32 0.97-1.02.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

import numpy as np

from ..errors import InputError

#: products with fewer multiply-adds (rows × columns × inner size) stay with NumPy
MIN_PRODUCT = 2**21

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_LP64, _SEQUENTIAL = 0, 1
_STATE: dict = {}


def library_path() -> str | None:
    """Where ``libmkl_rt`` is: the file installed by the ``mkl`` wheel, else the system's, else None."""
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        dist = distribution("mkl")
        for f in dist.files or ():
            if os.path.basename(str(f)).startswith("libmkl_rt.so"):
                path = os.path.realpath(str(dist.locate_file(f)))
                if os.path.exists(path):
                    return path
    except (ImportError, PackageNotFoundError):
        pass
    return ctypes.util.find_library("mkl_rt")


def _load():
    """(sgemm, dgemm) of libmkl_rt with the LP64 interface and the sequential layer, loaded once;
    an InputError says why not."""
    if "gemm" in _STATE:
        return _STATE["gemm"]
    path = library_path()
    if path is None:
        raise InputError("use_blas('mkl'): libmkl_rt was not found; install it with "
                         "`pip install mkl` (or the extra: `pip install symattn[mkl]`)")
    lib = ctypes.CDLL(path)
    if lib.MKL_Set_Interface_Layer(_LP64) != _LP64 or lib.MKL_Set_Threading_Layer(_SEQUENTIAL) != _SEQUENTIAL:
        raise InputError(f"use_blas('mkl'): {path} is already in use in this process with another interface "
                         "or threading layer; the numeric core needs LP64 and the sequential layer")
    i = ctypes.c_int
    gemm = {}
    for dtype, name, scalar in ((np.float32, "cblas_sgemm", ctypes.c_float),
                                (np.float64, "cblas_dgemm", ctypes.c_double)):
        f = getattr(lib, name)
        f.argtypes = [i, i, i, i, i, i, scalar, ctypes.c_void_p, i, ctypes.c_void_p, i, scalar, ctypes.c_void_p, i]
        f.restype = None
        gemm[np.dtype(dtype)] = f
    _STATE["gemm"] = gemm
    return gemm


def available() -> bool:
    """True when libmkl_rt can be loaded with the layers the numeric core needs."""
    try:
        _load()
    except (InputError, OSError, AttributeError):
        return False
    return True


def _layout(x):
    """(transpose flag, leading dimension) of a 2-D array for a row-major GEMM, or None."""
    (s0, s1), item = x.strides, x.itemsize
    rows, cols = x.shape
    if s1 == item and s0 % item == 0 and s0 // item >= max(1, cols):
        return _NO_TRANS, s0 // item
    if s0 == item and s1 % item == 0 and s1 // item >= max(1, rows):
        return _TRANS, s1 // item
    return None


def gemm(a, b, out=None):
    """a @ b by MKL, written into ``out`` when given; None (not computed) unless both are float32
    or both float64, the product is one matrix product (b a matrix and a's rows contiguous, or
    every batch axis of length 1), each operand is row- or column-major, ``out`` (if given) is
    C-contiguous and apart from both, and the product has at least MIN_PRODUCT multiply-adds."""
    dtype = a.dtype
    if b.dtype != dtype or (out is not None and out.dtype != dtype) or a.ndim < 2 or b.ndim < 2:
        return None
    f = _STATE["gemm"].get(dtype)
    if f is None:
        return None
    if b.ndim == 2 and a.flags.c_contiguous:
        a2, b2, shape = a.reshape(-1, a.shape[-1]), b, a.shape[:-1] + (b.shape[-1],)
    elif all(s == 1 for s in a.shape[:-2] + b.shape[:-2]):
        lead = (1,) * (max(a.ndim, b.ndim) - 2)
        a2, b2, shape = a.reshape(a.shape[-2:]), b.reshape(b.shape[-2:]), lead + (a.shape[-2], b.shape[-1])
    else:
        return None
    m, k = a2.shape
    n = b2.shape[1]
    if b2.shape[0] != k or min(m, n, k) == 0 or m * n * k < MIN_PRODUCT:
        return None
    la, lb = _layout(a2), _layout(b2)
    if la is None or lb is None:
        return None
    if out is None:
        out = np.empty(shape, dtype)
    elif out.shape != shape or not out.flags.c_contiguous or np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return None
    c2 = out.reshape(m, n)
    f(_ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, a2.ctypes.data, la[1], b2.ctypes.data, lb[1], 0.0,
      c2.ctypes.data, n)
    return out
