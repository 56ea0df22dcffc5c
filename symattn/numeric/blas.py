"""Which BLAS computes the matrix products inside the numeric core's work items.

>>> current_blas()
'numpy'
>>> use_blas("openblas")
Traceback (most recent call last):
...
symattn.errors.InputError: use_blas: expected 'numpy' (NumPy's own BLAS, the default) or 'mkl', got 'openblas'
"""

from __future__ import annotations

from ..errors import InputError
from ..lowering import runtime
from . import mkl


def use_blas(name: str) -> None:
    """``"numpy"`` (default): every product by NumPy's own BLAS. ``"mkl"``: the large products inside
    work items by Intel oneMKL (:mod:`symattn.numeric.mkl`, needs the ``mkl`` wheel); the results are
    the same up to rounding."""
    if name == "numpy":
        runtime._GEMM = None
    elif name == "mkl":
        mkl._load()  # an InputError says why MKL cannot be used
        runtime._GEMM = mkl.gemm
    else:
        raise InputError(f"use_blas: expected 'numpy' (NumPy's own BLAS, the default) or 'mkl', got {name!r}")


def current_blas() -> str:
    """The BLAS of the products inside work items: 'numpy' or 'mkl'."""
    return "numpy" if runtime._GEMM is None else "mkl"
