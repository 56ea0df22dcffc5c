"""The ``jax.custom_vjp`` function of a forward kernel and its proved gradient kernels
(:mod:`symattn.lowering.backward_vjp` derives, proves and lowers them).

The residuals are the inputs (the backward recomputes what it needs from them); the backward runs
the gradient kernel of every input on the inputs and the cotangent, sums it over the axes along
which the input was broadcast and casts it to the input's dtype. The function is pure, so
``jax.jit``, ``jax.grad`` and ``jax.vmap`` apply; the sizes no input shows are a static argument.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from .backward_vjp import unbroadcast


def make_function(forward, grads, cotangent):
    """``f(sizes, *inputs)``: the forward kernel with the proved VJPs as its ``custom_vjp``;
    ``sizes``: ((name, size), ...), hashable, for the sizes no input shows."""
    names = forward.arg_names
    g_name = cotangent.name

    def f(sizes, *inputs):
        return forward(*inputs, **dict(sizes))

    def fwd(sizes, *inputs):
        return forward(*inputs, **dict(sizes)), inputs

    def bwd(sizes, inputs, g_out):
        arrays = dict(zip(names, inputs))
        arrays[g_name] = g_out
        given = dict(sizes)
        out = []
        for x, g in zip(inputs, grads):
            x = jnp.asarray(x)
            if g.kernel is None:
                out.append(jnp.zeros_like(x))
                continue
            want = {nm: arrays[nm] for nm in g.kernel.arg_names}
            extra = {str(d): given[str(d)] for d in g.kernel.extra_dims if str(d) in given}
            dx = unbroadcast(jnp, g.kernel(**want, **extra), x.shape)
            out.append(dx.astype(x.dtype))
        return tuple(out)

    proved = jax.custom_vjp(f, nondiff_argnums=(0,))
    proved.defvjp(fwd, bwd)
    return proved
