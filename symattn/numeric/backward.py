"""The backward of multi-head attention (row convention), from the VJPs proved in
:mod:`symattn.numeric.backward_proofs`.

    out = [head_1 ... head_H] W^O + 1 b^O,   head_h = softmax(Q_h K_gᵀ + M) V_g,
    Q = (query W^Q + 1 b^Q)/sqrt(d_k),  K = key W^K + 1 b^K,  V = value W^V + 1 b^V

Given the cotangent d_out and what the forward saved (``multihead_attention(..., return_saved=True)``:
each row's log-sum-exp, the projections and the heads), the gradients, line by line of
:data:`~symattn.numeric.backward_proofs.LINES`: dZ = d_out W^Oᵀ, dW^O = Zᵀ d_out, db^O = 1ᵀ d_out
("out"); the core per head, key block by key block (``backward_core``); then the projections,
dW = Xᵀ dY, dX = dY Wᵀ, db = 1ᵀ dY ("proj"), with dY of Q multiplied by the scale.
A gradient of an input whose batch axes were broadcast is summed over them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import InputError, ShapeError
from . import checks, parallel
from .backward_core import core_backward, heads_first, heads_last
from .blocked import _positive
from .multihead import _check_mask_batches, _checked
from .saved import Saved


class Gradients(NamedTuple):
    """The gradients of every input of ``multihead_attention``, each of its operand's shape
    (None for a bias that was not given). ``query``, ``key`` and ``value`` are separate even when
    one array was passed for all three: its gradient is then their sum."""

    query: np.ndarray
    key: np.ndarray
    value: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    w_o: np.ndarray
    b_q: np.ndarray | None
    b_k: np.ndarray | None
    b_v: np.ndarray | None
    b_o: np.ndarray | None


def _reduce_to(g, shape):
    """g summed over the axes that were broadcast from ``shape`` (the gradient of a broadcast input)."""
    extra = g.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, s in enumerate(shape) if s == 1 and g.shape[extra + i] != 1)
    return g.sum(axis=axes).reshape(shape) if axes else g


def _linear(x, w, dy, bias, products: list):
    """The gradients of Y = X W + 1 b (line "proj"): dX = dY Wᵀ, dW = Xᵀ dY, db = 1ᵀ dY, with dY
    first summed over the batch axes X broadcast over. The two products are appended to
    ``products`` (run later as work items, ``_run_products``); returns a dict that they fill
    under "dx" and "dw", with "db" already there."""
    dy = _reduce_to(dy, x.shape[:-1] + (dy.shape[-1],))
    rows = math.prod(x.shape[:-1])
    x2, dy2 = x.reshape(rows, x.shape[-1]), dy.reshape(rows, dy.shape[-1])
    found = {"db": None if bias is None else dy2.sum(axis=0).reshape(np.shape(bias))}
    products.append((found, "dx", dy2, w.T, x.shape))
    products.append((found, "dw", x2.T, dy2, None))
    return found


def _run_products(products) -> None:
    """The products (target dict, key, a, b, shape) as work items on every core, each with
    single-threaded BLAS (``parallel``): NumPy's own BLAS threads, on a loaded machine, made these
    products 10-30x slower than one thread (measured here at (8, 128, 256): 3D @ W 85 ms against 2.3 ms)."""
    def item(p):
        found, key, a, b, shape = p
        r = a @ b
        found[key] = r if shape is None else r.reshape(shape[:-1] + (r.shape[-1],))

    parallel.run_items(item, products)


def _check_saved(saved, lead, n, m, sizes):
    if not isinstance(saved, Saved):
        raise InputError(f"multihead_attention_backward: saved must be the Saved that "
                         f"multihead_attention(..., return_saved=True) returned, got {type(saved).__name__}")
    H, G, d_k, d_v = sizes["H"], sizes["G"], sizes["d_k"], sizes["d_v"]
    want = {"lse": lead + (H, n), "q": (n, H * d_k), "k": (m, G * d_k), "v": (m, G * d_v), "heads": lead + (n, H * d_v)}
    for name, shape in want.items():
        got = getattr(saved, name).shape
        fits = got == shape if name in ("lse", "heads") else got[-2:] == shape
        if not fits:
            raise ShapeError(f"multihead_attention_backward: saved.{name} is {got}, expected "
                             f"{shape if name in ('lse', 'heads') else '(..., ' + ', '.join(map(str, shape)) + ')'}: "
                             f"was it saved by a call with these inputs?")


def _core_mask(mask, lead, H, n, m, dtype):
    """The additive mask as the core takes it: None, (n, m), or (B, 1 or H, n, m)."""
    mask = checks.additive_mask(mask, n, m, dtype)
    if mask is None or mask.ndim == 2:
        return mask
    heads = mask.shape[-3] if mask.ndim >= 3 else 1
    if mask.ndim == 3 and not lead:  # (H, n, m) without batch axes
        return mask[None] if heads in (1, H) else _bad_mask(mask, H)
    if heads not in (1, H):
        _bad_mask(mask, H)
    return np.broadcast_to(mask, lead + (heads, n, m)).reshape((math.prod(lead), heads, n, m))


def _bad_mask(mask, H):
    raise ShapeError(f"mask: its axis -3 ({mask.shape[-3]}) must be 1 or num_heads = {H} (shape {mask.shape})")


def multihead_attention_backward(grad_output, saved, query, key, value, w_q, w_k, w_v, w_o, *, num_heads,
                                 num_kv_heads=None, b_q=None, b_k=None, b_v=None, b_o=None, mask=None,
                                 causal=False, block_size=None) -> Gradients:
    """The gradients of ``multihead_attention`` at the cotangent ``grad_output``, a :class:`Gradients`.

    ``saved``: what ``multihead_attention(..., return_saved=True)`` returned with the same inputs;
    the other arguments as the forward takes them (GQA/MQA, biases, boolean or additive masks,
    causal). The scores are recomputed per key block from the saved log-sum-exp, P = exp(S - L 1ᵀ),
    ``block_size`` keys at a time (default: about 1 MiB of scores per step): no array of every
    head's n × m scores is formed. Masked scores get exactly zero gradient; a row that sees no
    key (NaN in the forward) gets no gradient through the core.

    >>> import numpy as np, symattn.numeric as sn
    >>> rng = np.random.default_rng(0)
    >>> x, w = rng.normal(size=(2, 5, 8)), rng.normal(size=(8, 8)) / 3
    >>> out, saved = sn.multihead_attention(x, x, x, w, w, w, w, num_heads=2, return_saved=True)
    >>> g = sn.multihead_attention_backward(np.ones_like(out), saved, x, x, x, w, w, w, w, num_heads=2)
    >>> g.query.shape, g.w_o.shape, g.b_o is None
    ((2, 5, 8), (8, 8), True)
    """
    what = "multihead_attention_backward"
    ops = _checked(what, query, key, value, w_q, w_k, w_v, w_o, num_heads, num_kv_heads, b_q, b_k, b_v, b_o, None)
    lead, n, m, sizes, W = ops.lead, ops.n, ops.m, ops.sizes, ops.W
    H, G, d_k, d_v = sizes["H"], sizes["G"], sizes["d_k"], sizes["d_v"]
    d_model = ops.x_q.shape[-1]
    dout = checks.array("grad_output", grad_output)
    if dout.shape != lead + (n, d_model):
        raise ShapeError(f"{what}: grad_output {dout.shape} should have the result's shape {lead + (n, d_model)} "
                         f"(query {ops.x_q.shape}, key {ops.x_k.shape}, value {ops.x_v.shape})")
    _check_saved(saved, lead, n, m, sizes)
    if mask is not None and np.ndim(mask) > 2:
        _check_mask_batches(np.asarray(mask), lead, H, query=ops.x_q, key=ops.x_k, value=ops.x_v)
    dtype = np.result_type(ops.dtype, dout)
    core_mask = _core_mask(mask, lead, H, n, m, dtype)

    # line "out": Z = [head_1 ... head_H], out = Z W^O + 1 b^O
    B = math.prod(lead)
    z2, dout2 = saved.heads.reshape(B * n, H * d_v), dout.reshape(B * n, d_model)
    found = {}
    _run_products([(found, "dz", dout2, W["w_o"].T, lead + (n, d_model)), (found, "dw_o", z2.T, dout2, None)])
    dz, dw_o = found["dz"], found["dw_o"]
    db_o = None if b_o is None else dout2.sum(axis=0).reshape(np.shape(b_o))

    # the core, per head (lines P, D, dV, dP, dS, dQ, dK)
    dq_h, dk_h, dv_h = core_backward(
        heads_first(saved.q, lead, n, H, d_k), heads_first(saved.k, lead, m, G, d_k),
        heads_first(saved.v, lead, m, G, d_v), heads_first(saved.heads, lead, n, H, d_v),
        heads_first(dz, lead, n, H, d_v), saved.lse.reshape(B, H, n),
        mask=core_mask, causal=causal, block_size=_positive("block_size", block_size))

    # line "proj": Q = (X W^Q + 1 b^Q) s, so its pre-scale gradient is s dQ
    dq = heads_last(dq_h, lead)
    dq *= 1 / math.sqrt(d_k)
    products: list = []
    gq = _linear(ops.x_q, W["w_q"], dq, b_q, products)
    gk = _linear(ops.x_k, W["w_k"], heads_last(dk_h, lead), b_k, products)
    gv = _linear(ops.x_v, W["w_v"], heads_last(dv_h, lead), b_v, products)
    _run_products(products)
    return Gradients(gq["dx"], gk["dx"], gv["dx"], gq["dw"], gk["dw"], gv["dw"], dw_o, gq["db"], gk["db"], gv["db"],
                     db_o)

