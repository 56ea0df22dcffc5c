"""Runtime helpers of array-API kernels: the namespace comes from the inputs.

``inputs`` finds the namespace of the input arrays (``array_api_compat.array_namespace``:
NumPy, PyTorch, JAX, CuPy, Dask), checks that they are real floating-point matrices on one
device, and promotes them to one dtype; every helper below then takes that namespace ``xp``
as its first argument and makes its arrays with the inputs' dtype and on their device. No
helper writes into an array (JAX arrays are immutable; Dask arrays are lazy).

This module is imported by kernels built in-process, and ``symattn codegen`` copies the helpers a
module uses into it (:mod:`.standalone`), so it must not import sympy or anything else from symattn
except, optionally, the error classes.

Matrices are the last two axes of an array; leading axes are batch axes and broadcast.
"""

import math

from ...errors import InputError, ShapeError  # codegen replaces this line by local classes
from .common import bind, broadcast_batches, chain_order, check_size, layer_count, slice_bounds, solve_size, traced  # noqa: F401


def _check_matrices(pairs, xp, least):
    for (name, a), ndim in zip(pairs, least):
        if not xp.isdtype(a.dtype, "real floating"):
            raise InputError(
                f"{name}: attention kernels work on real floating-point arrays; got dtype {a.dtype}; "
                f"convert it to float32 or float64 first")
        if a.ndim < ndim:
            what = "a matrix (at least 2 axes" if ndim == 2 else "a stacked family (heads on axis -3"
            raise InputError(f"{name}: expected {what}, batch axes first), got shape {tuple(a.shape)}")


def _named(named):
    """(pairs (name, array), the least number of axes of each) from (name, array[, least]) tuples."""
    named = list(named)
    return [(t[0], t[1]) for t in named], [t[2] if len(t) > 2 else 2 for t in named]


def inputs(named):
    """(arrays, xp, dtype, device) for (name, array) pairs: the namespace of the arrays, their
    promoted dtype and their common device (arrays of several devices are refused)."""
    from array_api_compat import array_namespace, device

    pairs, least = _named(named)
    arrays = [a for _, a in pairs]
    if not arrays:  # only numbers and functions: NumPy's namespace
        import array_api_compat.numpy as xp

        return [], xp, xp.float64, None
    try:
        xp = array_namespace(*arrays)
    except TypeError as exc:
        kinds = ", ".join(f"{name}: {type(a).__module__}.{type(a).__name__}" for name, a in pairs)
        raise InputError(f"the inputs are not arrays of one array library ({kinds}): {exc}") from exc
    _check_matrices(pairs, xp, least)
    where = device(arrays[0])
    for name, a in pairs[1:]:
        if device(a) != where:
            raise InputError(f"{name} is on device {device(a)}, {pairs[0][0]} on {where}: "
                             "move the inputs to one device first")
    dtype = xp.result_type(*arrays)
    return [a if a.dtype == dtype else xp.astype(a, dtype) for a in arrays], xp, dtype, where


def no_out(out):
    if out is not None:
        raise InputError("out: array-API kernels return a new array (an array of JAX or Dask cannot be "
                         "written into); call without out=")


def chain(xp, coeff, *arrays):
    """coeff · A_1 ... A_k, cheapest parenthesization, the scalar applied to the smallest operand."""
    arrays = list(arrays)
    if not (isinstance(coeff, (int, float)) and coeff == 1):  # an array: one coefficient per batch element
        small = 0
        for t in range(1, len(arrays)):
            if math.prod(arrays[t].shape) < math.prod(arrays[small].shape):
                small = t
        arrays[small] = coeff * arrays[small]

    return _multiply_in_order(chain_order([tuple(a.shape) for a in arrays]), arrays)


def _multiply_in_order(node, arrays):
    """The product of ``arrays`` parenthesized as ``node`` (a nested tuple of indices); a function of
    its own, since a closure that calls itself is a reference cycle that keeps the operands and the
    intermediate products alive until the garbage collector runs."""
    if isinstance(node, int):
        return arrays[node]
    return _multiply_in_order(node[0], arrays) @ _multiply_in_order(node[1], arrays)


def transpose(xp, x):
    """xᵀ on the last two axes."""
    return xp.matrix_transpose(x)


def softmax(xp, x, axis):
    """Softmax along ``axis`` (-2: each column, -1: each row), max-shifted; a row of -inf only is NaN."""
    e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def rowsum(xp, x):
    """x 1: the sum of each row, as a column."""
    return xp.sum(x, axis=-1, keepdims=True)


def colsum(xp, x):
    """1ᵀ x: the sum of each column, as a row."""
    return xp.sum(x, axis=-2, keepdims=True)


def repeat_rows(xp, x, n):
    """1 x for a row x (..., 1, c): the row repeated n times, (..., n, c)."""
    return xp.broadcast_to(x, tuple(x.shape[:-2]) + (n, x.shape[-1]))


def _blocked(xp, n, m, device):
    """The n × m booleans True where query i (of the last n of m positions) may not see key j."""
    j = xp.arange(m, device=device)
    i = xp.arange(n, device=device)
    return (j[None, :] - i[:, None]) > (m - n)


def causal_masked(xp, s, device):
    """The scores s with the causal mask added: -inf where key j > i + m - n."""
    n, m = s.shape[-2], s.shape[-1]
    return xp.where(_blocked(xp, n, m, device), xp.asarray(-math.inf, dtype=s.dtype, device=device), s)


def causal_mask(xp, n, m, dtype, device):
    """The causal mask as an n × m array of 0 and -inf."""
    return causal_masked(xp, xp.zeros((n, m), dtype=dtype, device=device), device)


def block(xp, rows):
    """A block matrix from a list of block rows, broadcasting the batch axes of the blocks."""
    flat = [b for row in rows for b in row]
    batch = broadcast_batches(*[tuple(b.shape[:-2]) for b in flat])
    out = []
    for row in rows:
        parts = [xp.broadcast_to(b, batch + tuple(b.shape[-2:])) for b in row]
        out.append(xp.concat(parts, axis=-1) if len(parts) > 1 else parts[0])
    return xp.concat(out, axis=-2) if len(out) > 1 else out[0]


def eye(xp, n, dtype, device):
    return xp.eye(n, dtype=dtype, device=device)


def zeros(xp, r, c, dtype, device):
    return xp.zeros((r, c), dtype=dtype, device=device)


def ones(xp, r, c, dtype, device):
    return xp.ones((r, c), dtype=dtype, device=device)


def exp(xp, x):
    return xp.exp(x)


def exp2(xp, x):
    """2^x: the namespace's exp2 (NumPy, PyTorch, JAX, CuPy, Dask have one), else pow(2, x), which
    the array-API standard has."""
    fn = getattr(xp, "exp2", None)
    return fn(x) if fn is not None else xp.pow(xp.full_like(x, 2), x)


def log(xp, x):
    return xp.log(x)


class Functions:
    """``ops.f.<name>(x)``: ``math.<name>`` on a Python number (a coefficient such as sqrt(d_k)),
    the array library's function on an array."""

    def __init__(self, xp):
        self.xp = xp

    def __getattr__(self, name):
        fn = getattr(self.xp, name)
        scalar = getattr(math, name, None)

        def apply(x, *args, **kwargs):
            if scalar is not None and isinstance(x, (int, float)) and not args and not kwargs:
                return scalar(x)
            return fn(x, *args, **kwargs)

        return apply


class Ops:
    """The helpers of nodes printed as one expression (heads, slices, explicit matrices, masks), for
    the namespace ``xp`` of a kernel's inputs, making arrays of ``dtype`` on ``device``. Head axes:
    inside a sum, stack or concatenation over heads h = 1..H, an array that depends on h carries
    an axis of length H just before the two matrix axes, (..., H, rows, cols)."""

    def __init__(self, xp, dtype, device):
        self.xp, self.dtype, self.device = xp, dtype, device

    @property
    def f(self):
        return Functions(self.xp)

    def softmax_of(self, x, axis):
        return softmax(self.xp, x, axis)

    def exp2(self, x):
        """2^x: the namespace's exp2, else pow(2, x) (the array-API standard has no exp2)."""
        return exp2(self.xp, x)

    def slice_bounds(self, *args):
        return slice_bounds(*args)

    def matmul_chain(self, *arrays):
        return chain(self.xp, 1, *arrays)

    def batched_block(self, rows):
        return block(self.xp, rows)

    def transpose(self, x):
        return self.xp.matrix_transpose(x)

    def eye(self, n, dtype):
        return self.xp.eye(n, dtype=dtype, device=self.device)

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype=dtype, device=self.device)

    def ones(self, shape, dtype):
        return self.xp.ones(shape, dtype=dtype, device=self.device)

    def where(self, condition, a, b):
        xp = self.xp
        return xp.where(condition, xp.asarray(a, dtype=self.dtype, device=self.device),
                        xp.asarray(b, dtype=self.dtype, device=self.device))

    def repeat_head(self, x, count):
        """``x`` repeated ``count`` times on a new head axis at -3."""
        return self.xp.broadcast_to(x[..., None, :, :], tuple(x.shape[:-2]) + (count,) + tuple(x.shape[-2:]))

    def layers(self, layer, start, depth):
        """A stack of ``depth`` layers: S_0 = start, S_l = layer(S_{l-1}, l - 1)."""
        out = start
        for index in range(layer_count(depth)):
            out = layer(out, index)
        return out

    def heads_sum(self, x):
        return self.xp.sum(x, axis=-3)

    def heads_stack(self, x):
        """[x_1; ...; x_H]: (..., H, r, c) -> (..., H·r, c)."""
        return self.xp.reshape(x, tuple(x.shape[:-3]) + (x.shape[-3] * x.shape[-2], x.shape[-1]))

    def heads_concat(self, x):
        """[x_1 ... x_H]: (..., H, r, c) -> (..., r, H·c)."""
        axes = tuple(range(x.ndim - 3)) + (x.ndim - 2, x.ndim - 3, x.ndim - 1)
        y = self.xp.permute_dims(x, axes)
        return self.xp.reshape(y, tuple(y.shape[:-3]) + (y.shape[-3], y.shape[-2] * y.shape[-1]))

    def block_diagonal(self, x):
        """diag(x_1, ..., x_p): (..., p, r, c) -> (..., p·r, p·c), zeros off the diagonal blocks."""
        xp = self.xp
        p = x.shape[-3]
        rows = []
        for k in range(p):
            parts = [x[..., k, :, :] if j == k else xp.zeros_like(x[..., k, :, :]) for j in range(p)]
            rows.append(parts)
        return block(xp, rows)

    def take_heads(self, stacked, index, family, count):
        """Members of a stacked family (heads on axis -3) at the 1-based ``index`` (an int or an
        integer array over the head axes)."""
        xp = self.xp
        if isinstance(index, int):
            if not 1 <= index <= stacked.shape[-3]:
                raise ShapeError(f"{family}: the expression reads head {index} but the array holds "
                                 f"{stacked.shape[-3]} heads on its axis -3 (expected {count})")
            return stacked[..., index - 1, :, :]
        flat = xp.astype(xp.reshape(index, (-1,)), xp.int64)
        # the bounds are checked on concrete arrays only: under torch.compile or jax.jit the entries are
        # not known (reading them would be a data-dependent guard and, on a GPU, a device-to-host sync)
        checked = flat.shape[0] > 0 and not traced(flat)
        top = int(xp.max(flat)) if checked else 0
        if checked and (int(xp.min(flat)) < 1 or top > stacked.shape[-3]):
            raise ShapeError(f"{family}: the expression reads head {top} but the array holds "
                             f"{stacked.shape[-3]} heads on its axis -3 (expected {count})")
        picked = xp.take(stacked, flat - 1, axis=stacked.ndim - 3)  # the standard's take is one-dimensional
        return xp.reshape(picked, tuple(stacked.shape[:-3]) + tuple(index.shape) + tuple(stacked.shape[-2:]))

    def head_positions(self, count, position, ndim):
        """1..count (in the kernel's float dtype, exact: torch would make an integer array times a
        float float32) with its values on axis ``position`` of ``ndim`` axes."""
        shape = [1] * ndim
        shape[position] = count
        return self.xp.reshape(self.xp.arange(1, count + 1, dtype=self.dtype, device=self.device), tuple(shape))

    def explicit_matrix(self, entries, dtype):
        """A matrix from a nested list of entries (numbers, or arrays over head axes), shape (..., r, c)."""
        xp = self.xp
        flat = [xp.asarray(e, dtype=dtype, device=self.device) for row in entries for e in row]
        lead = broadcast_batches(*[tuple(f.shape) for f in flat])
        cells = [xp.broadcast_to(f, lead) for f in flat]
        stacked = xp.stack(cells, axis=-1)
        return xp.reshape(stacked, lead + (len(entries), len(entries[0])))

    def column_causal_mask(self, m, n, offset, dtype):
        """The m × n causal mask of the column convention: 0 where key k <= query j + offset, else -inf."""
        xp = self.xp
        blocked = xp.arange(m, device=self.device)[:, None] > xp.arange(n, device=self.device)[None, :] + offset
        return xp.where(blocked, xp.asarray(-math.inf, dtype=dtype, device=self.device),
                        xp.zeros((m, n), dtype=dtype, device=self.device))

    def column_padding_mask(self, m, n, length, dtype):
        """The m × n padding mask of the column convention: keys 0..length-1 visible, the rest -inf."""
        xp = self.xp
        hidden = xp.broadcast_to((xp.arange(m, device=self.device) >= length)[:, None], (m, n))
        return xp.where(hidden, xp.asarray(-math.inf, dtype=dtype, device=self.device),
                        xp.zeros((m, n), dtype=dtype, device=self.device))

    def apply_feature_map(self, phi, x, name, features, where, dtype=None):
        """phi applied to every row of the matrices of ``x`` (..., N, D), an array of the kernel's library:
        ``phi(x)`` must be an array of that library of shape (..., N, C), C = ``features`` (None: any C);
        cast to ``dtype``."""
        if not callable(phi):
            raise InputError(f"{where}: the feature map {name} must be a callable taking an array (..., N, D) "
                             f"and returning (..., N, C); got {type(phi).__name__}")
        y = phi(x)
        shape, rows = tuple(getattr(y, "shape", ())), tuple(x.shape[:-1])
        if shape[:-1] != rows or (features is not None and shape[-1] != features):
            expected = ", ".join(str(s) for s in rows + ("C" if features is None else features,))
            raise ShapeError(f"{where}: the feature map {name} returned shape {shape} for the rows of "
                             f"{tuple(x.shape)}; expected ({expected}) ({name} : R^D -> R^C acts on the last "
                             f"axis, each row a vector{'' if features is None else f', C = {features}'})")
        return y if dtype is None or y.dtype == dtype else self.xp.astype(y, dtype)
