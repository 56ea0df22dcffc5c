"""Runtime helpers of JAX kernels: the array-API helpers (:mod:`.array_api`) with ``jax.numpy`` as the
namespace, which follows the standard; NumPy inputs become JAX arrays. The kernels are pure functions
of their arrays, so ``jax.jit(kernel.fn)`` compiles them.

Imported by kernels built in-process; ``symattn codegen --target jax`` copies the helpers a module
uses into it (:mod:`.standalone`), so this module imports nothing from symattn but the helpers.
"""

import jax
import jax.numpy as jnp

from .array_api import _check_matrices, _named


def inputs_jax(named):
    """``inputs`` for the jax target: the namespace is ``jax.numpy`` (NumPy arrays are converted)."""
    pairs, least = _named(named)
    pairs = [(name, jnp.asarray(a)) for name, a in pairs]
    _check_matrices(pairs, jnp, least)
    arrays = [a for _, a in pairs]
    dtype = jnp.result_type(*arrays) if arrays else jnp.result_type(float)
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays], jnp, dtype, None



def traced(x) -> bool:
    """True inside ``jax.jit`` (``x`` is a tracer): its entries are not known (the jax target's own
    :func:`.common.traced`)."""
    return isinstance(x, jax.core.Tracer)
