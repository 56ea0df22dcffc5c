"""Runtime helpers of NumPy kernels (NumPy and the standard library only), with the shared ones of
:mod:`.common` (binding sizes, slices, chain order).

This module is imported by kernels built in-process, and ``symattn codegen`` copies the helpers a
module uses into it (:mod:`.standalone`), so it must not import sympy or anything else from symattn
except, optionally, the error classes.

Matrices are the last two axes of an array; leading axes are batch axes and broadcast.
"""

import math  # noqa: F401 (the code stock sympy.lambdify prints imports math from here)
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np

from ...errors import InputError, ShapeError  # codegen replaces this line by local classes
from .common import bind, chain_order, check_size, layer_count, slice_bounds, solve_size  # noqa: F401 (kernels call them)

#: NumPy and float under names of their own: the code stock ``sympy.lambdify`` prints through symattn's
#: hooks calls them so, and an argument named numpy or float does not hide them
symattn_numpy = np
symattn_float = float


#: why a boolean array is refused where a matrix is read: as numbers, True would be added as 1
BOOLEAN_MASK = (
    "the expression would use it as numbers (True as 1), and added to scores that is no mask. symattn's "
    "masks are additive: 0 where a key is visible, -inf where it is hidden. Convert it: "
    "numpy.where(allowed, 0.0, -numpy.inf) when True means attend (scaled_dot_product_attention), "
    "numpy.where(masked, -numpy.inf, 0.0) when True means masked (nn.MultiheadAttention)")


def as_inputs(named):
    """Convert (name, value) or (name, value, least number of axes) to float arrays of one common
    dtype (float32 stays float32). A family with a head axis needs 3 axes: (..., H, rows, cols)."""
    if named and type(named[0][1]) is np.ndarray and named[0][1].dtype.kind == "f":
        dtype = named[0][1].dtype  # the usual call: matrices of one float dtype, as given
        arrays = []
        for item in named:
            a = item[1]
            if len(item) != 2 or type(a) is not np.ndarray or a.dtype != dtype or a.ndim < 2:
                break
            arrays.append(a)
        else:
            return arrays, dtype
    arrays = []
    for name, value, *least in named:
        a = np.asarray(value)
        if a.dtype.kind == "b":
            raise InputError(f"{name}: got dtype bool (boolean), shape {a.shape}; {BOOLEAN_MASK}")
        if a.dtype.kind not in "f":
            what = {"i": "integer", "u": "unsigned integer", "b": "boolean", "c": "complex"}
            raise InputError(
                f"{name}: attention kernels work on real floating-point arrays; got dtype {a.dtype} "
                f"({what.get(a.dtype.kind, 'non-numeric')}); convert with .astype(numpy.float32) "
                f"or .astype(numpy.float64)")
        if a.ndim < (least[0] if least else 2):
            if least and least[0] == 3:
                raise InputError(f"{name}: expected the heads of a family, (..., H, rows, cols) with the "
                                 f"heads on axis -3 (or the layers of a stack's weight), got shape {a.shape}")
            raise InputError(
                f"{name}: expected a matrix (at least 2 axes, batch axes first), got shape {a.shape}")
        arrays.append(a)
    dtype = np.result_type(*arrays) if arrays else np.dtype(np.float64)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays], dtype


def shapes_agree(*leaves):
    """True when the inputs fit the expression, else an error naming them (stock ``sympy.lambdify``
    calls this before computing): each leaf is (array, name, rows, cols, stacked), the sizes the
    expression gives the last two axes, each a dimension's name (equal names, equal sizes), a whole
    number, or None (not checked); a stacked family has its heads on axis -3. The batch axes must
    broadcast."""
    bound: dict = {}
    batches: list = []
    for value, name, rows, cols, stacked in leaves:
        if getattr(value, "dtype", None) is not None and np.dtype(value.dtype).kind == "b":
            raise InputError(f"{name}: got dtype bool (boolean), shape {np.shape(value)}; {BOOLEAN_MASK}")
        shape = np.shape(value)
        if len(shape) < (3 if stacked else 2):
            what = ("the heads of a family or the layers of a stack's weight, (..., H or L, rows, cols)"
                    if stacked else "a matrix (at least 2 axes)")
            raise InputError(f"{name}: expected {what}, got shape {shape}")
        for size, want, axis in ((shape[-2], rows, "rows"), (shape[-1], cols, "columns")):
            if isinstance(want, str):
                bind(bound, want, size, f"{name} {shape}", axis)
            elif want is not None:
                check_size(want, size, f"{name} {shape}", axis, str(want))
        batches.append((name, shape, shape[:-3] if stacked else shape[:-2]))
    try:
        np.broadcast_shapes(*(b for _, _, b in batches))
    except ValueError as exc:
        shown = ", ".join(f"{name} {shape}" for name, shape, b in batches if b)
        raise ShapeError(f"the batch axes (all but the matrix axes) do not broadcast: {shown}") from exc
    return True


def sizes_given(*sizes):
    """True when every (name, read) pair reads a whole number, else an InputError naming the size
    (stock ``sympy.lambdify`` calls this for the sizes that no input's shape shows): ``read()`` is a
    lambda of the generated function, so a size that lambdify was not given is reported here."""
    for name, read in sizes:
        try:
            value = read()
        except NameError:
            value = None
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if value >= 1:
                continue  # given: its range (a position 1 <= i <= N, a length) is checked where it is used
            raise InputError(f"{name} = {value}: a size or a position counts from 1 (a positive whole number)")
        if not (isinstance(value, float) and value.is_integer() and value >= 1):
            raise InputError(
                f"the size {name} is shown by no input's shape, so it cannot be inferred: list the symbol "
                f"{name} among lambdify's arguments, sympy.lambdify([..., {name}], expr), and pass its value "
                f"(a positive whole number; got {value!r})")
    return True


def row_of(x, k):
    """Row ``k`` of the matrices of ``x`` (counting from 0) as (..., 1, cols); a ShapeError when the
    matrices have no row k (a slice would give an empty row)."""
    rows = x.shape[-2]
    if not 0 <= k < rows:
        raise ShapeError(f"row k = {k} of a matrix with {rows} rows: k counts from 0 to {rows - 1}")
    return x[..., k:k + 1, :]


def _batches(shapes):
    """The broadcast of the batch axes (all but the last two) of array shapes, or a ShapeError."""
    if not shapes:
        return ()
    first = shapes[0][:-2]
    for s in shapes:
        if s[:-2] != first:
            break
    else:  # the common case, without NumPy's slower general rule
        return first
    batches = [s[:-2] for s in shapes]
    try:
        return np.broadcast_shapes(*batches)
    except ValueError as exc:
        raise ShapeError(f"batch axes do not broadcast: {', '.join(str(b) for b in batches)}") from exc


#: earlier answers of ``chain_order`` by shapes
_ORDERS = {}


#: None, or gemm(a, b, out) -> the product, or None to leave it to NumPy; called by ``mm`` for the
#: products inside work items (see ``symattn.numeric.blas``)
_GEMM = None


def mm(a, b, out=None):
    """a @ b, written into ``out`` when given. When b is one matrix (no batch axes) and a's batch
    axes can be merged with its rows without a copy, one GEMM over all the rows instead of one
    per batch element (measured here 1.3x faster for (8, 128, 256) @ (256, 768): BLAS shares
    one large product better between its threads than eight small ones)."""
    if _GEMM is not None and in_worker():  # another BLAS for the products inside work items
        r = _GEMM(a, b, out)
        if r is not None:
            return r
    fits = out is None or (out.flags.c_contiguous and out.shape == a.shape[:-1] + (b.shape[-1],))
    if b.ndim == 2 and a.ndim > 2 and a.size and a.flags.c_contiguous and fits:
        flat = a.reshape(-1, a.shape[-1])
        if out is None:
            return (flat @ b).reshape(a.shape[:-1] + (b.shape[-1],))
        np.matmul(flat, b, out=out.reshape(flat.shape[0], b.shape[-1]))
        return out
    return np.matmul(a, b, out=out)


def batch_of(*arrays):
    """The broadcast of the batch axes (all but the last two) of the arrays."""
    first = arrays[0].shape[:-2] if arrays else ()
    for a in arrays:
        if a.shape[:-2] != first:
            return _batches([a.shape for a in arrays])
    return first


def check_out(out, dtype, shape):
    """``out`` must be an array of the result's exact shape and dtype."""
    if out is None:
        return
    if not isinstance(out, np.ndarray) or out.shape != tuple(shape) or out.dtype != dtype:
        got = f"{out.shape} {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ShapeError(f"out: the result is {tuple(shape)} {np.dtype(dtype)}, got {got}")
    if not out.flags.writeable:
        raise InputError("out: the array is read-only (a view such as numpy.broadcast_to's); the result "
                         "is written into out, so pass a writeable array")


def check_donated(x, name, others):
    """A donated input ``x`` (named ``name``) is overwritten by the kernel: it must be writeable and
    share no memory with the other inputs ``others`` ((name, array) pairs), which it would change."""
    if not x.flags.writeable:
        raise InputError(f"{name}: the kernel overwrites this donated input, but the array is read-only (a view "
                         f"such as numpy.broadcast_to's); pass a writeable copy or do not donate {name}")
    for other, a in others:
        if np.may_share_memory(x, a):
            raise InputError(f"{name}: the kernel overwrites this donated input, but it shares memory with the "
                             f"input {other}, which would change too; pass a copy or do not donate {name}")


def into(t, out):
    """The result ``t``, in ``out`` when given (copied only if it was not computed there)."""
    if out is None or t is out:
        return t
    out[...] = t
    return out


def chain(coeff, *arrays, out=None):
    """coeff · A_1 A_2 ... A_k with the cheapest parenthesization; the scalar is applied to the
    smallest operand or intermediate (a Python float keeps float32 arrays float32). The last
    product is written into ``out`` when given."""
    one = not isinstance(coeff, np.ndarray) and coeff == 1  # an array: one coefficient per batch element
    if len(arrays) == 1:
        if out is None:
            return arrays[0] if one else coeff * arrays[0]
        return np.multiply(arrays[0], 1 if one else coeff, out=out)
    order = chain_order([a.shape for a in arrays], _ORDERS)
    if not one:
        small = min(range(len(arrays)), key=lambda t: arrays[t].size)
        arrays = list(arrays)
        arrays[small] = coeff * arrays[small]

    return _multiply_in_order(order, arrays, out)


def _multiply_in_order(node, arrays, into=None):
    """The product of ``arrays`` parenthesized as ``node`` (a nested tuple of indices), the last one
    into ``into``. A function of its own, not a closure that calls itself: such a closure is a
    reference cycle that keeps every operand and intermediate product alive until the garbage
    collector runs (measured: 0.07 ms more per 512 × 512 product, from memory not reused)."""
    if isinstance(node, int):
        return arrays[node]
    return mm(_multiply_in_order(node[0], arrays), _multiply_in_order(node[1], arrays), out=into)


def _fits_into(small, large):
    """Whether an array of shape ``small`` broadcasts to ``large`` without growing it."""
    if len(small) > len(large):
        return False
    return all(s == 1 or s == g for s, g in zip(reversed(small), reversed(large)))


def iadd(a, b):
    """a + b, in place in ``a`` when ``a`` is a temporary of the full broadcast shape (a large
    ``a`` plus one row, such as a bias, in row chunks on every core)."""
    if not _fits_into(b.shape, a.shape):
        return a + b
    one_row = b.ndim >= 1 and b.shape[-1] == a.shape[-1] and b.size == a.shape[-1]
    chunks = _row_chunks(a) if one_row else None
    if chunks is None:
        a += b
        return a
    row = b.reshape(-1)
    _run_chunks(chunks, lambda rows: np.add(rows, row, out=rows))
    return a


def ufunc_(ufunc, a, b):
    """ufunc(a, b), in place in ``a`` when ``b`` broadcasts to ``a``'s shape, else a new array of the
    broadcast shape."""
    if _fits_into(np.shape(b), a.shape):
        return ufunc(a, b, out=a)
    return ufunc(a, b)


def softmax_(x, axis):
    """Softmax along ``axis`` (-2: each column, -1: each row), in place, max-shifted.

    A row (column) whose entries are all -inf has no softmax: its result is NaN, as
    is any row that contains a NaN.
    """
    if axis == -1 and _row_chunks(x) is not None:
        def work(xs):
            xs -= np.max(xs, axis=-1, keepdims=True)
            np.exp(xs, out=xs)
            xs /= np.sum(xs, axis=-1, keepdims=True)

        _run_chunks(_row_chunks(x), work)
        return x
    x -= np.max(x, axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x


def causal_mask_(s):
    """Add the causal mask in place: query i (of the last n of m positions) sees keys j <= i + m - n."""
    n, m = s.shape[-2], s.shape[-1]
    blocked = np.arange(m)[None, :] - np.arange(n)[:, None] > m - n  # n × m booleans, not kept
    if blocked.any():
        s[..., blocked] = -np.inf
    return s


def causal_mask(n, m, dtype):
    """The causal mask as an n × m array of 0 and -inf."""
    out = np.zeros((n, m), dtype=dtype)
    return causal_mask_(out)


def block(rows):
    """A block matrix (a new array) from a list of block rows, broadcasting the batch axes of the blocks."""
    flat = [b for row in rows for b in row]
    batch = _batches([b.shape for b in flat])
    out_rows = []
    for row in rows:
        parts = [b if b.shape[:-2] == batch else np.broadcast_to(b, batch + b.shape[-2:]) for b in row]
        out_rows.append(np.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0])
    if len(out_rows) > 1:
        return np.concatenate(out_rows, axis=-2)
    # one block row: concatenated, it is already a new array; a single block is copied
    return out_rows[0] if len(rows[0]) > 1 else np.array(out_rows[0])


# -- elementwise work on large temporaries, in row chunks on every core ---------------------------
# NumPy's ufuncs run on one core and release the GIL, so chunks of rows go to a thread pool;
# each chunk (about CHUNK elements) stays in cache while it is worked on. Code that already
# runs in a worker of the pool never splits its own work again (it would wait on itself).

CHUNK = 2**19
_POOL = {}
_LOCAL = threading.local()


def _mark_worker():
    _LOCAL.worker = True


def in_worker() -> bool:
    """True in a thread of the pool: the work there is already one share of a larger job."""
    return getattr(_LOCAL, "worker", False)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def pool():
    """The thread pool of this process, one worker per core (a forked child makes its own: the
    parent's threads are gone)."""
    pid = os.getpid()
    if pid not in _POOL:
        _POOL.clear()
        _POOL[pid] = ThreadPoolExecutor(max_workers=cores(), initializer=_mark_worker)
    return _POOL[pid]


def share(fn, items):
    """fn(item) for every item, shared between this thread and cores() - 1 workers of the pool
    (each takes the next item when it is done with one). After an item raises, no new item
    starts; this returns only when every started item has finished, then raises the first
    exception."""
    items = iter(list(items))
    lock = threading.Lock()
    done = object()
    failed = []

    def drain():
        while True:
            with lock:
                item = done if failed else next(items, done)
            if item is done:
                return
            try:
                fn(item)
            except BaseException as exc:
                with lock:
                    failed.append(exc)
                return

    helpers = [pool().submit(drain) for _ in range(cores() - 1)]
    was = in_worker()
    _LOCAL.worker = True  # this thread works on one share now: it must not split its work again
    try:
        drain()
    finally:
        _LOCAL.worker = was
        wait(helpers)
    if failed:
        raise failed[0]


def _row_chunks(*arrays):
    """Views of the arrays as (rows, columns) split into chunks of rows, or None if not possible."""
    x = arrays[0]
    if x.size < 2 * CHUNK or cores() < 2 or not x.flags.c_contiguous or in_worker():
        return None
    flat = []
    for a in arrays:
        if a.shape[:-1] != x.shape[:-1] or not a.flags.c_contiguous:
            return None
        flat.append(a.reshape(-1, a.shape[-1]))
    rows = flat[0].shape[0]
    step = max(1, CHUNK // max(1, x.shape[-1]))
    return [[f[i:i + step] for f in flat] for i in range(0, rows, step)]


def _run_chunks(chunks, fn):
    share(lambda parts: fn(*parts), chunks)


def shift_exp_(x, c):
    """x <- exp(x - c) in place, c a column (one shift per row); a new array when ``c`` has batch axes
    that ``x`` lacks (the result has the broadcast shape, which ``x`` cannot hold)."""
    if not _fits_into(c.shape, x.shape):
        return np.exp(x - c)
    chunks = _row_chunks(x, c) if c.shape[-1] == 1 else None
    if chunks is None:
        x -= c
        np.exp(x, out=x)
        return x

    def work(xs, cs):
        xs -= cs
        np.exp(xs, out=xs)

    _run_chunks(chunks, work)
    return x


def _in_place(ufunc, x):
    """x <- ufunc(x) in place; large arrays in row chunks on every core."""
    chunks = _row_chunks(x)
    if chunks is None:
        return ufunc(x, out=x)
    _run_chunks(chunks, lambda xs: ufunc(xs, out=xs))
    return x


def exp_(x):
    """x <- exp(x) in place."""
    return _in_place(np.exp, x)


def exp2_(x):
    """x <- 2^x in place."""
    return _in_place(np.exp2, x)


def _row_reduce(x, reduce):
    """reduce(x) along each row, as a column; large arrays in row chunks on every core."""
    out = np.empty(x.shape[:-1] + (1,), dtype=x.dtype)
    parts = _row_chunks(x, out)
    if parts is None:
        return reduce(x, axis=-1, keepdims=True)
    _run_chunks(parts, lambda xs, os_: reduce(xs, axis=-1, keepdims=True, out=os_))
    return out


def rowsum(x):
    """x 1: the sum of each row, as a column."""
    return _row_reduce(x, np.sum)


def rowmax(x):
    """The largest entry of each row, as a column."""
    return _row_reduce(x, np.max)


# -- helpers of the expression printer (lambdify and the nodes the statement printer does not
# specialise). Their names are distinct from NumPy's: lambdify imports them beside ``from numpy
# import *``. Head axes: inside a sum, stack or concatenation over heads h = 1..H, an array that
# depends on h carries an axis of length H just before the two matrix axes: (..., H, rows, cols).

def softmax_of(x, axis):
    """Softmax along ``axis`` (-2: each column, -1: each row) of a new array, max-shifted."""
    z = np.exp(x - np.max(x, axis=axis, keepdims=True))
    z /= np.sum(z, axis=axis, keepdims=True)
    return z


def matmul_chain(*arrays):
    """A_1 A_2 ... A_k with the cheapest parenthesization for the shapes of this call."""
    return chain(1, *arrays)


def batched_block(rows):
    """A block matrix from block rows; the batch (and head) axes of the blocks broadcast."""
    return block(rows)


def repeat_head(x, count):
    """``x`` repeated ``count`` times on a new head axis at -3 (a body that does not depend on h)."""
    return np.broadcast_to(x[..., None, :, :], x.shape[:-2] + (count,) + x.shape[-2:])


def layers(layer, start, depth):
    """A stack of ``depth`` layers: S_0 = start, S_l = layer(S_{l-1}, l - 1) (l - 1: where layer l's
    weights are on their axis -3)."""
    out = start
    for index in range(layer_count(depth)):
        out = layer(out, index)
    return out


def heads_sum(x):
    """Σ_h x_h over the head axis (-3)."""
    return np.sum(x, axis=-3)


def heads_stack(x):
    """[x_1; ...; x_H]: (..., H, r, c) -> (..., H·r, c)."""
    x = np.ascontiguousarray(x)
    return x.reshape(x.shape[:-3] + (x.shape[-3] * x.shape[-2], x.shape[-1]))


def heads_concat(x):
    """[x_1 ... x_H]: (..., H, r, c) -> (..., r, H·c)."""
    y = np.ascontiguousarray(np.moveaxis(x, -3, -2))
    return y.reshape(y.shape[:-3] + (y.shape[-3], y.shape[-2] * y.shape[-1]))


def block_diagonal(x):
    """diag(x_1, ..., x_p): (..., p, r, c) -> (..., p·r, p·c), zeros off the diagonal blocks."""
    p, r, c = x.shape[-3:]
    out = np.zeros(x.shape[:-3] + (p * r, p * c), dtype=x.dtype)
    for k in range(p):
        out[..., k * r:(k + 1) * r, k * c:(k + 1) * c] = x[..., k, :, :]
    return out


def take_heads(stacked, index, family, count):
    """Members of a stacked family (heads on axis -3) at the 1-based ``index`` (an int or an integer
    array over the head axes); a ShapeError names the family when an index is out of range."""
    index = np.asarray(index)
    if index.size and (index.min() < 1 or index.max() > stacked.shape[-3]):
        raise ShapeError(
            f"{family}: the expression reads head {int(index.max())} but the array holds "
            f"{stacked.shape[-3]} heads on its axis -3 (expected {count})")
    if index.ndim == 0:
        return stacked[..., int(index) - 1, :, :]
    return np.take(stacked, index - 1, axis=-3)


def head_positions(count, position, ndim):
    """1..count as an integer array with its values on axis ``position`` of ``ndim`` axes."""
    shape = [1] * ndim
    shape[position] = count
    return np.arange(1, count + 1).reshape(shape)


def explicit_matrix(entries, dtype):
    """A matrix from a nested list of entries (numbers, or arrays over head axes), shape (..., r, c)."""
    flat = [np.asarray(e, dtype=dtype) for row in entries for e in row]
    lead = np.broadcast_shapes(*[f.shape for f in flat])
    out = np.empty(lead + (len(entries), len(entries[0])), dtype=dtype)
    for i, row in enumerate(entries):
        for j, e in enumerate(row):
            out[..., i, j] = e
    return out


def column_causal_mask(m, n, offset, dtype):
    """The m × n causal mask of the column convention: 0 where key k <= query j + offset, else -inf."""
    blocked = np.arange(m)[:, None] > np.arange(n)[None, :] + offset
    return np.where(blocked, -np.inf, 0.0).astype(dtype)


def column_padding_mask(m, n, length, dtype):
    """The m × n padding mask of the column convention: keys 0..length-1 visible, the rest -inf."""
    return np.where((np.arange(m) >= length)[:, None], -np.inf, np.zeros((m, n))).astype(dtype)


def apply_feature_map(phi, x, name, features, where, dtype=None):
    """phi applied to every row of the matrices of ``x`` (..., N, D): ``phi(x)`` must be (..., N, C), the
    feature map acting on the last axis (each row a vector), C = ``features`` (None: any C). ``name`` is
    the map's name and ``where`` the node (``phi(K)``) for the error; the result is cast to ``dtype``."""
    if not callable(phi):
        raise InputError(f"{where}: the feature map {name} must be a callable taking an array (..., N, D) "
                         f"and returning (..., N, C); got {type(phi).__name__}")
    y = np.asarray(phi(x))
    if y.dtype.kind not in "fiub":
        kind = "complex" if y.dtype.kind == "c" else "non-numeric"
        raise InputError(f"{where}: the feature map {name} returned dtype {y.dtype} ({kind}); attention kernels "
                         f"work on real floating-point arrays, so {name} must return real values")
    rows = tuple(np.shape(x)[:-1])
    if y.shape[:-1] != rows or (features is not None and y.shape[-1] != features):
        expected = ", ".join(str(s) for s in rows + ("C" if features is None else features,))
        raise ShapeError(f"{where}: the feature map {name} returned shape {y.shape} for the rows of {np.shape(x)}; "
                         f"expected ({expected}) ({name} : R^D -> R^C acts on the last axis, each row a vector"
                         f"{'' if features is None else f', C = {features}'})")
    return y if dtype is None or y.dtype == dtype else y.astype(dtype)
