"""The ``torch.autograd.Function`` of a forward kernel and its proved gradient kernels
(:mod:`symattn.lowering.backward_vjp` derives, proves and lowers them).

``forward`` saves the inputs (not the n × m attention weights: each gradient kernel recomputes what
it needs from them, as FlashAttention's backward recomputes P); ``backward`` runs the gradient kernel
of every input that needs a gradient on the inputs and the incoming gradient, sums it over the axes
along which the input was broadcast and casts it to the input's dtype. The kernels were lowered,
and their VJPs proved, before this class was made, so a traced call (``torch.compile``) runs plain
tensor code.
"""

from __future__ import annotations

import torch

from .backward_vjp import unbroadcast


def _sum_to(g, x):
    """The gradient g of the input x, summed over x's broadcast axes, in x's dtype."""
    if tuple(g.shape) != tuple(x.shape):
        g = _unbroadcast_torch(g, x.shape)
    return g if g.dtype == x.dtype else g.to(x.dtype)


class _TorchXp:
    """torch's sum under the names :func:`unbroadcast` uses (``axis=``, ``keepdims=``)."""

    @staticmethod
    def sum(g, axis, keepdims=False):
        return g.sum(dim=axis, keepdim=keepdims)


def _unbroadcast_torch(g, shape):
    return unbroadcast(_TorchXp, g, shape)


def make_function(forward, grads, cotangent):
    """A ``torch.autograd.Function`` subclass: ``apply(sizes, *inputs)`` is the forward kernel, its
    backward the proved VJPs. ``sizes``: ((name, size), ...) for the sizes no input shows."""
    names = forward.arg_names
    g_name = cotangent.name

    class ProvedBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, sizes, *inputs):
            ctx.sizes = sizes
            ctx.save_for_backward(*inputs)
            return forward(*inputs, **dict(sizes))

        @staticmethod
        def backward(ctx, grad_out):
            inputs = ctx.saved_tensors
            arrays = dict(zip(names, inputs))
            arrays[g_name] = grad_out
            sizes = dict(ctx.sizes)
            out = [None]
            for k, (x, g) in enumerate(zip(inputs, grads)):
                if not ctx.needs_input_grad[k + 1]:
                    out.append(None)
                    continue
                if g.kernel is None:
                    out.append(torch.zeros_like(x))
                    continue
                want = {nm: arrays[nm] for nm in g.kernel.arg_names}
                extra = {str(d): sizes[str(d)] for d in g.kernel.extra_dims if str(d) in sizes}
                out.append(_sum_to(g.kernel(**want, **extra), x))
            return tuple(out)

    ProvedBackward.__name__ = ProvedBackward.__qualname__ = "ProvedBackward_" + "_".join(
        "".join(c if c.isalnum() else "_" for c in nm) for nm in names)
    ProvedBackward.gradients = grads

    def apply(sizes, *inputs):
        return ProvedBackward.apply(sizes, *inputs)

    apply.function = ProvedBackward
    return apply
