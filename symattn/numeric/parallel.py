"""Independent work items on every core, each with single-threaded BLAS.

Attention splits into independent slices (a batch element, a range of heads, a tile of
queries). Each slice is small enough that its scores stay in a core's cache from the GEMM
that makes them, through the exponential, to the GEMM with V. Run one slice per core, each
with a single-threaded BLAS, and every step of it (GEMMs and elementwise work alike) runs on
all cores without the cost of splitting small GEMMs between threads: measured here, for
the whole multi-head call in float32, 1.18x faster at S1, 1.12x at S2 and 1.03x at S3 than
the whole batch through multi-threaded BLAS and chunked ufuncs (measured together with
the batch rows folded into one GEMM, `runtime.mm`, which came in the same change).

NumPy's BLAS is told to use one thread while items run (threadpoolctl; only the BLAS that
NumPy itself loaded, never another library's, such as torch's) and restored afterwards; calls
that overlap from several threads share one restore. OpenBLAS (0.3.31 here) ignores
``openblas_set_num_threads`` from every thread but the first that called it, so a call of the
numeric core from a thread of the user's own pool would run its items on full BLAS threads (8-13x
the CPU time, measured here); OpenBLAS is therefore set through ``openblas_set_num_threads_local``,
which takes effect from any thread, and every change is read back. Without a BLAS that can be
controlled this way, or when a change does not take, or with one core, the items run one after
another in the calling thread, with BLAS's own threads: the same numbers, only slower.

The count is the process's, not the calling thread's: while items run, NumPy's BLAS is held to one
thread for every thread of the process. A ``threadpoolctl.threadpool_limits`` that another thread
enters and leaves while a call runs overlaps with it; whichever restores last wins, so the
process can be left with the other's count (review the limits of such programs, or call the
numeric core from the thread that sets them).
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from ..lowering.targets import numpy as runtime

_LOCK = threading.Lock()
_STATE = {"depth": 0, "saved": None, "controllers": None}


def _after_fork_in_child():
    """A child forked while a thread of the parent held BLAS to one thread: only the forking
    thread survives, so nothing is in flight; forget the depth and take a fresh lock."""
    global _LOCK
    _LOCK = threading.Lock()
    if _STATE["depth"]:
        _STATE["depth"] = 0
        for c, saved in zip(_numpy_blas(), _STATE["saved"] or []):
            _setter(c)(saved)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _numpy_blas():
    """threadpoolctl controllers of the BLAS libraries NumPy loaded (cached; [] if none or no
    threadpoolctl)."""
    if _STATE["controllers"] is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _STATE["controllers"] = []
            return []
        libs = ThreadpoolController().select(user_api="blas").lib_controllers
        here = os.path.dirname(os.path.dirname(np.__file__))  # site-packages (numpy/, numpy.libs/)
        own = [c for c in libs if os.path.relpath(c.filepath, here).startswith("numpy")]
        _STATE["controllers"] = own or (libs if len(libs) == 1 else [])
    return _STATE["controllers"]


def _setter(c):
    """A function n -> None that sets the BLAS of controller ``c`` to n threads from any thread:
    OpenBLAS's ``openblas_set_num_threads_local`` where the library has it, else threadpoolctl's."""
    cached = _SETTERS.get(c.filepath)
    if cached is None:
        cached = c.set_num_threads
        if c.internal_api == "openblas":
            try:
                fn = ctypes.CDLL(c.filepath).openblas_set_num_threads_local
            except (OSError, AttributeError):
                fn = None
            if fn is not None:
                fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
                cached = fn
        _SETTERS[c.filepath] = cached
    return cached


_SETTERS: dict = {}


def _set_all(counts) -> bool:
    """Set NumPy's BLAS libraries to ``counts`` threads each; True when every one reads back so."""
    ok = True
    for c, n in zip(_numpy_blas(), counts):
        _setter(c)(n)
        ok = ok and c.num_threads == n
    return ok


def _enter() -> bool:
    """Hold NumPy's BLAS to one thread (nested calls share it); False, and nothing held, when the
    BLAS does not take the change (the items must then run one after another)."""
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["saved"] = [c.num_threads for c in _numpy_blas()]
            if not _set_all([1] * len(_STATE["saved"])):
                _set_all(_STATE["saved"])
                return False
        _STATE["depth"] += 1
        return True


def _leave():
    with _LOCK:
        _STATE["depth"] -= 1
        if _STATE["depth"] == 0:
            _set_all(_STATE["saved"])


def can_split() -> bool:
    """True when items can run one per core (several cores and a BLAS we can hold to one thread)."""
    return runtime.cores() > 1 and bool(_numpy_blas()) and not runtime.in_worker()


def run_items(fn, items) -> None:
    """fn(item) for every item: on every core with single-threaded BLAS when ``can_split()``,
    else in order in this thread. The first exception raised by an item is raised here."""
    items = list(items)
    if len(items) < 2 or not can_split():
        for item in items:
            fn(item)
        return
    if not _enter():
        for item in items:
            fn(item)
        return
    try:
        runtime.share(fn, items)
    finally:
        _leave()
