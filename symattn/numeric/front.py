"""The numeric core's public functions: one dispatch between the NumPy core and its Dask wrapper.

Each function here has the signature and docstring of its NumPy core function. When one of its
array arguments is a Dask array, the call goes to :mod:`symattn.numeric.dask_arrays`, which runs
the same core lazily, per chunk of batch elements; otherwise straight to the core. The core never
imports the Dask wrapper (and the wrapper imports only the core), so the two form no circle.
"""

from __future__ import annotations

import functools
import inspect

from . import attention as _attention
from . import backward as _backward
from . import blocked as _blocked
from . import checks, dask_arrays
from . import decode as _decode
from . import multihead as _multihead
from . import pooling as _pooling


def _front(core, lazy, arrays: tuple, prepare=None):
    """``core`` when none of the arguments named ``arrays`` is a Dask array, else ``lazy`` with the
    same arguments (after ``prepare`` validates or normalizes them, so errors come at the call)."""
    signature = inspect.signature(core)
    positions = [(name, list(signature.parameters).index(name)) for name in arrays]

    @functools.wraps(core)
    def public(*args, **kwargs):
        # the arrays found without binding the signature: this runs on every call of the core
        found = [args[k] if k < len(args) else kwargs.get(name) for name, k in positions]
        if not dask_arrays.is_dask(*found):
            return core(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        if prepare is not None:
            prepare(bound.arguments)
        return lazy(*bound.args, **bound.kwargs)

    return public


def _head_counts(arguments) -> None:
    H, G = checks.head_counts(arguments.get("num_heads", 1), arguments.get("num_kv_heads"))
    arguments["num_heads"], arguments["num_kv_heads"] = H, G


def _one_head_count(arguments) -> None:
    arguments["num_heads"] = checks.head_counts(arguments.get("num_heads", 1), None)[0]


attention = _front(_attention.attention, dask_arrays.attention, ("query", "key", "value"))
blocked_core = _front(_blocked.blocked_core, dask_arrays.blocked_core, ("q", "k", "v"))
kv_decode_step = _front(_decode.kv_decode_step, dask_arrays.kv_decode_step,
                        ("query", "new_key", "new_value", "key_cache", "value_cache"))
multihead_attention = _front(_multihead.multihead_attention, dask_arrays.multihead_attention,
                             ("query", "key", "value"), _head_counts)
attention_pool = _front(_pooling.attention_pool, dask_arrays.attention_pool, ("x",), _one_head_count)
mean_pool = _front(_pooling.mean_pool, dask_arrays.mean_pool, ("x",))
# the backward takes NumPy arrays only (what it needs was saved by a NumPy forward)
multihead_attention_backward = _backward.multihead_attention_backward
