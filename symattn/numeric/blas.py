"""Which BLAS computes the matrix products inside the numeric core's work items.

>>> current_blas()
'numpy'
>>> use_blas("openblas")
Traceback (most recent call last):
...
symattn.errors.InputError: use_blas: expected 'numpy' (NumPy's own BLAS, the default) or 'mkl', got 'openblas'
"""

from __future__ import annotations

import importlib.util
import sys
import warnings

from ..errors import InputError
from ..lowering.targets import numpy as runtime
from . import mkl


def use_blas(name: str) -> None:
    """``"numpy"`` (default): every product by NumPy's own BLAS. ``"mkl"``: the large products inside
    work items by Intel oneMKL (:mod:`symattn.numeric.mkl`, needs the ``mkl`` wheel); the results are
    the same up to rounding."""
    if name == "numpy":
        runtime._GEMM = None
    elif name == "mkl":
        mkl._load()  # an InputError says why MKL cannot be used
        _warn_if_torch_comes_later()
        runtime._GEMM = mkl.gemm
    else:
        raise InputError(f"use_blas: expected 'numpy' (NumPy's own BLAS, the default) or 'mkl', got {name!r}")


def _warn_if_torch_comes_later() -> None:
    """A RuntimeWarning when torch is installed but not imported yet. PyTorch's CPU wheel carries its
    own MKL and exports its symbols; when libmkl_rt (sequential layer) is loaded in a process before torch
    is imported, and MKL is then used, torch runs its MKL products on one thread. Measured here (torch 2.13,
    2 cores): ``F.linear`` of (8, 512, 512) by (512, 1536) took 42.6 ms of wall and 42.5 ms of CPU
    instead of 19.3 ms and 38.4 ms; SDPA with projections at (8, 512, 512, 8) 85.0 ms instead of 43.9 ms.
    Imported first, torch keeps its threads."""
    if "torch" in sys.modules or importlib.util.find_spec("torch") is None:
        return
    warnings.warn("use_blas('mkl'): torch is installed but not imported yet; a torch imported after MKL is "
                  "loaded in this process runs its MKL products on one thread (about 2x slower here). "
                  "Import torch before use_blas('mkl').", RuntimeWarning, stacklevel=3)


def current_blas() -> str:
    """The BLAS of the products inside work items: 'numpy' or 'mkl'."""
    return "numpy" if runtime._GEMM is None else "mkl"
