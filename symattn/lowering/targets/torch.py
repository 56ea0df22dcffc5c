"""Runtime helpers of torch kernels: native PyTorch calls, dtype and device kept.

The same helper names and signatures as :mod:`.array_api` (the first argument ``xp`` is the
``torch`` module here), so one printed kernel body serves both; these call ``torch.softmax``,
``Tensor.mT``, ``masked_fill`` and ``torch.cat`` directly, and :class:`TorchOps` gives the nodes
printed as one expression torch under the standard's names, so a torch kernel needs PyTorch
only (not array-api-compat). Imported by kernels built in-process; ``symattn codegen --target
torch`` copies the helpers a module uses into it (:mod:`.standalone`), the names defined here
taking the place of :mod:`.array_api`'s.
"""

import math

import torch

from ...errors import InputError, ShapeError  # codegen replaces this line by local classes
from .array_api import Ops


def inputs_torch(named):
    """(tensors, torch, dtype, device) for (name, array) pairs: NumPy arrays become tensors,
    real floating dtypes are promoted to one, and tensors on several devices are refused."""
    named = list(named)
    if named and isinstance(named[0][1], torch.Tensor):  # the usual call: tensors of one float dtype, one device
        dtype, where = named[0][1].dtype, named[0][1].device
        if dtype.is_floating_point:
            for t in named:
                a = t[1]
                if not isinstance(a, torch.Tensor) or a.dtype != dtype or a.device != where \
                        or a.dim() < (t[2] if len(t) > 2 else 2):
                    break
            else:
                return [t[1] for t in named], torch, dtype, where
    least = [t[2] if len(t) > 2 else 2 for t in named]
    pairs = [(t[0], t[1] if isinstance(t[1], torch.Tensor) else torch.as_tensor(t[1])) for t in named]
    if not pairs:
        return [], torch, torch.float64, torch.device("cpu")
    for (name, a), ndim in zip(pairs, least):
        if a.dtype == torch.bool:
            raise InputError(f"{name}: got dtype torch.bool, shape {tuple(a.shape)}; as numbers True would be "
                             "added as 1, which is no mask. The kernels' masks are additive (0 where a key is visible, "
                             "-inf where it is hidden): torch.zeros(m.shape).masked_fill(~m, -math.inf) when "
                             "True means attend, .masked_fill(m, -math.inf) when True means masked")
        if not a.is_floating_point():
            raise InputError(f"{name}: attention kernels work on real floating-point tensors; got dtype "
                             f"{a.dtype}; convert it with .float() or .double() first")
        if a.dim() < ndim:
            what = "a matrix (at least 2 axes" if ndim == 2 else "a stacked family (heads on axis -3"
            raise InputError(f"{name}: expected {what}, batch axes first), got shape {tuple(a.shape)}")
    where = pairs[0][1].device
    for name, a in pairs[1:]:
        if a.device != where:
            raise InputError(f"{name} is on device {a.device}, {pairs[0][0]} on {where}: "
                             "move the inputs to one device first")
    dtype = pairs[0][1].dtype
    for _, a in pairs[1:]:
        dtype = torch.promote_types(dtype, a.dtype)
    return [a if a.dtype == dtype else a.to(dtype) for _, a in pairs], torch, dtype, where


def attend(xp, q, k, v, scale, mask, causal):
    """softmax(scale · q kᵀ + mask [+ the causal mask]) v by ``scaled_dot_product_attention`` (its
    fused kernels keep the n × m scores out of memory). The causal mask is bottom-right aligned
    (query i of the last n of m positions sees keys j <= i + m - n); SDPA's ``is_causal`` is
    top-left aligned, so it is used only when n = m, an explicit mask otherwise."""
    n, m = q.shape[-2], k.shape[-2]
    if causal and (n != m or mask is not None):
        blocked = causal_mask(xp, n, m, q.dtype, q.device)
        mask = blocked if mask is None else mask + blocked
        causal = False
    if not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:  # one batch shape for SDPA (equal ones need no expand)
        batch = tuple(xp.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
        q, k, v = (a.expand(*batch, *a.shape[-2:]) for a in (q, k, v))
    return xp.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal,
                                                         scale=float(scale))


def linear(xp, a, w, b):
    """a w + b for a bias row b (..., 1, c): one ``addmm`` over all rows when w and b have no batch
    axes (the bias added inside the GEMM), else a product and a broadcast sum."""
    if w.dim() == 2 and b.dim() == 2 and a.dim() >= 2:
        flat = a.reshape(-1, a.shape[-1])
        return xp.addmm(b, flat, w).reshape(*a.shape[:-1], w.shape[-1])
    return a @ w + b


def transpose(xp, x):
    return x.mT


def softmax(xp, x, axis):
    """torch.softmax along ``axis`` (-2: each column, -1: each row); a row of -inf only is NaN."""
    return xp.softmax(x, dim=axis)


def rowsum(xp, x):
    return x.sum(dim=-1, keepdim=True)


def colsum(xp, x):
    return x.sum(dim=-2, keepdim=True)


def repeat_rows(xp, x, n):
    return x.expand(*x.shape[:-2], n, x.shape[-1])


def causal_masked(xp, s, device):
    """The scores s with -inf where key j > i + m - n (query i of the last n of m positions)."""
    n, m = s.shape[-2], s.shape[-1]
    blocked = xp.ones((n, m), dtype=xp.bool, device=device).triu(m - n + 1)
    return s.masked_fill(blocked, -math.inf)


def causal_mask(xp, n, m, dtype, device):
    return causal_masked(xp, xp.zeros((n, m), dtype=dtype, device=device), device)


def block(xp, rows):
    """A block matrix from block rows, broadcasting the batch axes of the blocks."""
    flat = [b for row in rows for b in row]
    if all(b.shape[:-2] == flat[0].shape[:-2] for b in flat):  # one batch shape (or none): nothing to expand
        return _joined(xp, rows)
    try:
        batch = tuple(xp.broadcast_shapes(*[b.shape[:-2] for b in flat]))
    except RuntimeError as exc:
        raise ShapeError(f"batch axes do not broadcast: {', '.join(str(tuple(b.shape)) for b in flat)}") from exc
    return _joined(xp, [[b.expand(*batch, *b.shape[-2:]) for b in row] for row in rows])


def _joined(xp, rows):
    """The block rows (blocks of one batch shape) joined: each row along the columns, then the rows."""
    out = []
    for parts in rows:
        out.append(xp.cat(parts, dim=-1) if len(parts) > 1 else parts[0])
    return xp.cat(out, dim=-2) if len(out) > 1 else out[0]


def eye(xp, n, dtype, device):
    return xp.eye(n, dtype=dtype, device=device)


def zeros(xp, r, c, dtype, device):
    return xp.zeros((r, c), dtype=dtype, device=device)


def ones(xp, r, c, dtype, device):
    return xp.ones((r, c), dtype=dtype, device=device)


def exp(xp, x):
    return xp.exp(x)


def exp2(xp, x):
    return xp.exp2(x)


def log(xp, x):
    return xp.log(x)


class TorchStandard:
    """torch under the array-API names that :class:`Ops` calls (what array-api-compat's torch view
    adds), every other name torch's own."""

    def __getattr__(self, name):
        return getattr(torch, name)

    @staticmethod
    def matrix_transpose(x):
        return x.mT

    @staticmethod
    def permute_dims(x, axes):
        return x.permute(*axes)

    @staticmethod
    def astype(x, dtype):
        return x.to(dtype)

    @staticmethod
    def take(x, indices, axis):
        return torch.index_select(x, axis, indices)

    @staticmethod
    def concat(arrays, axis=0):
        return torch.cat(arrays, dim=axis)

    @staticmethod
    def stack(arrays, axis=0):
        return torch.stack(arrays, dim=axis)

    @staticmethod
    def sum(x, axis=None, keepdims=False):
        return torch.sum(x, dim=axis, keepdim=keepdims)

    @staticmethod
    def asarray(x, dtype=None, device=None):
        return torch.as_tensor(x, dtype=dtype, device=device)


class TorchOps(Ops):
    """:class:`Ops` on torch tensors through :class:`TorchStandard`; softmax, exp2 and the block
    helpers are torch's own."""

    def __init__(self, xp, dtype, device):
        super().__init__(TorchStandard(), dtype, device)

    def softmax_of(self, x, axis):
        return softmax(torch, x, axis)

    def exp2(self, x):
        return torch.exp2(x)

    def batched_block(self, rows):
        return block(torch, rows)

    def block_diagonal(self, x):
        """diag(x_1, ..., x_p): (..., p, r, c) -> (..., p·r, p·c), zeros off the diagonal blocks."""
        p = x.shape[-3]
        rows = []
        for k in range(p):
            rows.append([x[..., k, :, :] if j == k else torch.zeros_like(x[..., k, :, :]) for j in range(p)])
        return block(torch, rows)


def traced(x) -> bool:
    """True inside ``torch.compile``: the entries of ``x`` are not known (the torch target's own
    :func:`.common.traced`)."""
    return torch.compiler.is_compiling()
