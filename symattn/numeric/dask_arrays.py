"""The numeric core on Dask arrays: batch elements are chunks, the NumPy kernels run per chunk.

``symattn.numeric.attention``, ``multihead_attention``, ``attention_pool``, ``mean_pool``,
``blocked_core`` and ``kv_decode_step`` call the function of the same name here when an array
input is a Dask array. The result is a Dask
array: nothing is computed until it is asked for (``.compute()``, ``.persist()``, ``da.store``).

How the work is split: the batch axes (all but the last two) keep the chunks of the input
(``query``'s for attention); the last two axes (positions and features) of every array input
are made one chunk each, since a softmax row needs all its keys and a projection all its
features. Each output chunk is then the NumPy function (the proved kernels of ``kernels.py``)
applied to one chunk of batch elements (``dask.array.map_blocks``); the weights, biases and
masks are put into the graph once (``dask.delayed``) and shared by every chunk. Key and value
are broadcast to the query's batch shape and rechunked to its batch chunks. With a
``dask.distributed`` client the chunks run on its workers, in processes or on other machines;
the scheduler is Dask's, symattn adds none. When such a client is the default scheduler at the
call, NumPy weights, biases and masks are not put into the graph but scattered to every worker
(``client.scatter(..., broadcast=True, hash=True)``, once per distinct array: later calls with
equal bytes reuse it; the ``SCATTERED_KEPT`` most recently used stay on the workers), and the
graph holds their Futures: that graph is computed by that client (``.compute()``,
``client.compute``, ``client.persist``). To compute it with another scheduler, build it with
that scheduler set (``with dask.config.set(scheduler="threads"): ...``). Inside a chunk the
NumPy function runs on one core (the numeric core does not split it again): the parallelism is
the chunks'.

To bring a result to the client, ``gather(result)`` fetches each chunk from the worker that
holds it and joins the chunks here; ``result.compute()`` joins them in one more task on a worker
first (which copies the other workers' chunks to that worker), then sends the joined array.

What stays out: masks with batch axes (a Dask mask, or one whose leading axes are batch axes)
are refused with an ``InputError``; a mask of shape (n, m), or (H, n, m) for multi-head
attention, is shared by every chunk.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import sys
import threading

import numpy as np

from ..errors import InputError, ShapeError
from ..lowering.targets import numpy as runtime


def is_dask(*arrays) -> bool:
    """True when any argument is a Dask array (checked without importing Dask)."""
    return any(type(a).__module__.split(".")[0] == "dask" for a in arrays if a is not None)


def _lazy(name, a, da):
    """A Dask array of ``a`` (NumPy arrays and lists become one chunk)."""
    if isinstance(a, da.Array):
        return a
    a = np.asarray(a)
    return da.from_array(a, chunks=a.shape) if a.ndim else a


def _matrix(name, a):
    if a.ndim < 2:
        raise InputError(f"{name}: expected a matrix (at least 2 axes, batch axes first), got shape {a.shape}")
    if np.dtype(a.dtype).kind != "f":
        raise InputError(f"{name}: attention works on real floating-point arrays; got dtype {a.dtype}; "
                         "convert with .astype(numpy.float32) or .astype(numpy.float64)")
    return a


def _aligned(named, da):
    """The arrays broadcast to one batch shape, with the first one's batch chunks and whole matrices."""
    arrays = [_matrix(nm, _lazy(nm, a, da)) for nm, a in named]
    try:
        batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    except ValueError as exc:
        shapes = ", ".join(f"{nm} {a.shape}" for (nm, _), a in zip(named, arrays))
        raise ShapeError(f"batch axes do not broadcast: {shapes}") from exc
    arrays = [a if a.shape[:-2] == batch else da.broadcast_to(a, batch + a.shape[-2:]) for a in arrays]
    chunks = arrays[0].chunks[:-2]
    return [a.rechunk(chunks + (a.shape[-2], a.shape[-1])) for a in arrays]


SCATTERED_KEPT = 16  # NumPy constants kept on a client's workers between calls (the most recently used)
_SCATTERED: dict = {}  # client -> OrderedDict(token of the array -> its Future); closed clients are dropped


def _default_client():
    """The ``dask.distributed`` client that computes Dask collections by default (a running,
    synchronous one), or None (no client, another scheduler, or ``distributed`` never imported)."""
    if "distributed" not in sys.modules:
        return None
    from dask.base import get_scheduler

    client = getattr(get_scheduler(), "__self__", None)
    if not isinstance(client, sys.modules["distributed"].Client):
        return None
    return client if client.status == "running" and not client.asynchronous else None


def _scattered(client, a):
    """The Future of the NumPy array ``a`` on every worker of ``client``: scattered once by the
    hash of its bytes, then reused by later calls with equal bytes (the last ``SCATTERED_KEPT``)."""
    from dask.base import tokenize

    for gone in [c for c in _SCATTERED if c.status != "running"]:  # their Futures hold them: let them go
        del _SCATTERED[gone]
    kept = _SCATTERED.setdefault(client, collections.OrderedDict())
    token = tokenize(a)
    future = kept.get(token)
    if future is None or future.status not in ("pending", "finished"):
        future = client.scatter(a, broadcast=True, hash=True)
        kept[token] = future
        while len(kept) > SCATTERED_KEPT:
            kept.popitem(last=False)
    kept.move_to_end(token)
    return future


def _constant(name, a, dask):
    """A weight, bias or mask shared by every chunk: one node of the graph.

    A Dask array becomes one task that gathers it. A NumPy array, when a ``dask.distributed``
    client is the default scheduler, is scattered to every worker once and the graph holds its
    Future (measured at S2 with 2 workers: 4 weights of 1 MB inside the graph cost 33 ms a call,
    their Futures 1 ms); otherwise it is put into the graph itself."""
    if a is None:
        return None
    if is_dask(a):
        return dask.delayed(a)  # one task gathers it (on a worker), then every chunk reads it
    a = np.asarray(a)
    client = _default_client()
    if client is not None:
        return dask.delayed(_scattered(client, a))
    return dask.delayed(a, pure=True)


def _nested(keys, futures):
    """The nested list of chunk keys ``keys`` with each key replaced by its Future."""
    return [_nested(k, futures) for k in keys] if isinstance(keys, list) else futures[keys]


def gather(array):
    """The values of the Dask array ``array`` as one NumPy array on the client, equal to
    ``array.compute()``.

    With a ``dask.distributed`` client as the default scheduler, the chunks are computed on the
    workers (``client.persist``) and each is fetched from the worker that holds it, then joined
    here. ``array.compute()`` joins them in one more task on a worker, which first receives the
    other workers' chunks, then sends the joined array: one more copy of the result between
    workers and one more task on the way (measured at S2 on 2 local worker processes:
    ``benchmarks/bench_targets.py``). The client holds the chunks and the joined array at once,
    twice the result at the peak, as the joining worker does with ``compute()``. Without such a
    client this is ``array.compute()``.

    >>> import dask.array as da
    >>> gather(da.ones((4, 2, 3), chunks=(1, 2, 3))).shape
    (4, 2, 3)
    """
    import dask.array as da

    if not isinstance(array, da.Array):
        raise InputError(f"gather: expected a Dask array, got {type(array).__name__}")
    client = _default_client()
    if client is None or array.ndim == 0:
        return array.compute()
    from dask.array.core import concatenate3
    from distributed import futures_of

    held = client.persist(array)
    futures = {f.key: f for f in futures_of(held)}
    parts = _nested(held.__dask_keys__(), futures)
    del held, futures  # the parts alone hold the chunks on the workers until they arrive
    return concatenate3(client.gather(parts))


def _no_batched_mask(mask, allowed: int, what: str):
    if mask is not None and (is_dask(mask) or np.ndim(mask) > allowed):
        raise InputError(f"mask: on Dask arrays {what} takes a mask of at most {allowed} axes "
                         f"((n, m){', (H, n, m)' if allowed == 3 else ''}), shared by every batch chunk; "
                         f"got shape {np.shape(mask)}{' (a Dask array)' if is_dask(mask) else ''}")


@contextlib.contextmanager
def _one_share():
    """Run the NumPy function of a chunk as one share of a larger job: the numeric core neither
    splits it into work items on every core nor chunks its rows, and NumPy's BLAS runs on one
    thread (Dask runs the chunks in parallel, one per worker thread; splitting again would put
    several threads on each core: measured here, a chunk of 4 S2 elements took 2.1 s with two
    BLAS threads inside one share against 0.2 s with one)."""
    from . import parallel

    was = runtime.in_worker()
    runtime._LOCAL.worker = True
    parallel._enter()  # NumPy's BLAS on one thread too (Dask's workers start so; its local threads do not)
    try:
        yield
    finally:
        parallel._leave()
        runtime._LOCAL.worker = was


def _per_chunk(fn):
    @functools.wraps(fn)
    def chunk(*args, **kwargs):
        with _one_share():
            return fn(*args, **kwargs)

    return chunk


PROBED_KEPT = 64  # outcomes of the probe kept for later calls with the same function, shapes and constants
_PROBED: collections.OrderedDict = collections.OrderedDict()  # token -> (last two axes of a result chunk, dtype)
_PROBED_LOCK = threading.Lock()


def _probe(fn, arrays, constants: dict, values: dict):
    """(the last two axes of each output chunk, the output dtype) of ``fn``, and a token of the call.

    ``fn`` runs here on empty batches (no batch element; ``values`` are the constants
    themselves): the NumPy function checks every shape, dtype and head count now, not when the
    graph is computed. It sees only the last two axes and the dtype of each array and the
    constants, so its outcome is kept under a token of exactly these: the function with the
    options it closes over, those axes and dtypes, and the keys of the constants in the graph,
    which name their bytes (a hash of a NumPy array's bytes; a Dask array's graph). A later call
    with the same token has passed the same checks and gets the same answer, without the
    probe's cost (measured at S2: 2.7 ms a call, mostly the fused QKV weights the probe builds)."""
    from dask.base import tokenize

    token = tokenize(fn, [(a.shape[-2:], a.dtype.str) for a in arrays],
                     sorted((nm, getattr(c, "key", None)) for nm, c in constants.items()))
    with _PROBED_LOCK:
        known = _PROBED.get(token)
        if known is not None:
            _PROBED.move_to_end(token)
            return known, token
    result = fn(*(np.empty((0,) + a.shape[-2:], dtype=a.dtype) for a in arrays), **values)
    known = (tuple(result.shape[-2:]), result.dtype)
    with _PROBED_LOCK:
        _PROBED[token] = known
        while len(_PROBED) > PROBED_KEPT:
            _PROBED.popitem(last=False)
    return known, token


def _run(fn, arrays, da, constants: dict, values: dict):
    """fn(*chunks, **constants) per batch chunk of the (aligned) ``arrays``, checked first by the
    probe (``_probe``), which gives the shape and dtype of every output chunk. The output is named
    by the probe's token and the names of the input arrays (the token already names the function,
    its options and the constants): the name Dask would derive itself, without hashing it all again."""
    from dask.base import tokenize

    (tail, dtype), token = _probe(fn, arrays, constants, values)
    first = arrays[0]
    chunks = first.chunks[:-2] + tuple((size,) for size in tail)
    name = f"{fn.__qualname__.split('.')[0]}-{tokenize(token, [(a.name, a.chunks) for a in arrays])}"
    return da.map_blocks(_per_chunk(fn), *arrays, chunks=chunks, dtype=dtype, name=name,
                         meta=np.empty((0,) * first.ndim, dtype=dtype), **constants)


def _shared(named: dict, dask) -> tuple[dict, dict]:
    """(constants for the graph, their values for the probe) of the named weights, biases and masks."""
    graph = {nm: _constant(nm, a, dask) for nm, a in named.items()}
    # the probe checks shapes and dtypes only: a Dask weight stands there as zeros of its shape and
    # dtype, and stays where it is (persisted on the workers, it is never brought to the client)
    values = {nm: (np.zeros(a.shape, a.dtype) if is_dask(a) else a) for nm, a in named.items()}
    return graph, values


def attention(query, key, value, *, convention="row", mask=None, causal=False, scale=None):
    """``symattn.numeric.attention`` on Dask arrays, per chunk of batch elements."""
    import dask
    import dask.array as da

    from .attention import attention as numpy_attention

    _no_batched_mask(mask, 2, "attention")
    q, k, v = _aligned([("query", query), ("key", key), ("value", value)], da)
    def chunk(qc, kc, vc, mask=None):
        return numpy_attention(qc, kc, vc, convention=convention, mask=mask, causal=causal, scale=scale)

    return _run(chunk, [q, k, v], da, *_shared({"mask": mask}, dask))


def multihead_attention(query, key, value, w_q, w_k, w_v, w_o, *, num_heads, num_kv_heads=None, b_q=None,
                        b_k=None, b_v=None, b_o=None, mask=None, causal=False, block_size=None,
                        return_saved=False):
    """``symattn.numeric.multihead_attention`` on Dask arrays, per chunk of batch elements
    (``return_saved`` is refused: the backward runs on NumPy arrays).

    Self-attention stays self-attention: when query, key and value are one Dask array, each
    chunk gets one array (the fused QKV projection)."""
    import dask
    import dask.array as da

    from .multihead import multihead_attention as numpy_multihead

    if return_saved:
        raise InputError("multihead_attention: return_saved=True needs NumPy arrays, not Dask arrays "
                         "(compute them first: the backward keeps the whole batch)")
    _no_batched_mask(mask, 3, "multihead_attention")
    if query is key and key is value:
        arrays = _aligned([("query", query)], da)
    else:
        arrays = _aligned([("query", query), ("key", key), ("value", value)], da)
    shared = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o, "b_q": b_q, "b_k": b_k, "b_v": b_v, "b_o": b_o,
              "mask": mask}
    options = dict(num_heads=num_heads, num_kv_heads=num_kv_heads, causal=causal, block_size=block_size)

    def chunk(*parts, **named):
        x_q, x_k, x_v = (parts[0],) * 3 if len(parts) == 1 else parts
        return numpy_multihead(x_q, x_k, x_v, **named, **options)

    return _run(chunk, arrays, da, *_shared(shared, dask))


def attention_pool(x, query, w_q, w_k, w_v, w_o=None, *, num_heads=1, b_q=None, b_k=None, b_v=None, b_o=None):
    """``symattn.numeric.attention_pool`` on a Dask ``x``, per chunk of batch elements."""
    import dask
    import dask.array as da

    from .pooling import attention_pool as numpy_pool

    (xs,) = _aligned([("x", x)], da)
    shared = {"query": query, "w_q": w_q, "w_k": w_k, "w_v": w_v, "w_o": w_o, "b_q": b_q, "b_k": b_k, "b_v": b_v,
              "b_o": b_o}

    def chunk(xc, **parts):
        return numpy_pool(xc, parts.pop("query"), **parts, num_heads=num_heads)

    return _run(chunk, [xs], da, *_shared(shared, dask))


def mean_pool(x):
    """``symattn.numeric.mean_pool`` on a Dask ``x``, per chunk of batch elements."""
    import dask.array as da

    from .pooling import mean_pool as numpy_mean

    (xs,) = _aligned([("x", x)], da)
    return _run(numpy_mean, [xs], da, {}, {})


def blocked_core(q, k, v, *, causal=False, mask=None, block_size=None, tile=None, out=None):
    """``symattn.numeric.blocked_core`` on Dask arrays, per chunk of batch elements (no ``out=``:
    a Dask result is a new array)."""
    import dask
    import dask.array as da

    from .blocked import blocked_core as numpy_blocked

    if out is not None:
        raise InputError("out: on Dask arrays blocked_core returns a new Dask array; call without out=")
    _no_batched_mask(mask, 2, "blocked_core")
    arrays = _aligned([("q", q), ("k", k), ("v", v)], da)

    def chunk(qc, kc, vc, mask=None):
        return numpy_blocked(qc, kc, vc, causal=causal, mask=mask, block_size=block_size, tile=tile)

    return _run(chunk, arrays, da, *_shared({"mask": mask}, dask))


def kv_decode_step(query, new_key, new_value, key_cache=None, value_cache=None, *, scale=None):
    """``symattn.numeric.kv_decode_step`` on Dask arrays: the caches grow lazily
    (``dask.array.concatenate`` along the positions) and the newest query attends per chunk of
    batch elements, by the same proved kernel (``kv_cache_step_needs_no_mask``)."""
    import dask.array as da

    from . import checks
    from .kernels import DECODE

    if (key_cache is None) != (value_cache is None):
        raise InputError("kv_decode_step: give both caches or neither")
    named = [("query", query), ("new_key", new_key), ("new_value", new_value)]
    if key_cache is not None:
        named += [("key_cache", key_cache), ("value_cache", value_cache)]
    parts = _aligned(named, da)
    q, k_new, v_new = parts[:3]
    for nm, a in zip(("query", "new_key", "new_value"), (q, k_new, v_new)):
        checks.same("kv_decode_step", f"{nm}'s number of positions", a.shape[-2], "one new position", 1)
    K, V = (k_new, v_new) if key_cache is None else (
        da.concatenate([parts[3], k_new], axis=-2), da.concatenate([parts[4], v_new], axis=-2))
    K, V = (a.rechunk(q.chunks[:-2] + (a.shape[-2], a.shape[-1])) for a in (K, V))
    factor = checks.scale_factor(scale, q.shape[-1])

    def chunk(qc, kc, vc):
        dtype = np.result_type(qc, kc, vc)
        return DECODE(q=(qc * dtype.type(factor)).astype(dtype, copy=False), K=kc, V=vc)

    return _run(chunk, [q, K, V], da, {}, {}), K, V
