"""JAX attention built from proved kernels: ``from symattn.jax import dot_product_attention``.

``symattn.jax.dot_product_attention`` takes ``jax.nn.dot_product_attention``'s arguments and
returns its result (shapes (B, T, N, H) and (B, S, K, H), GQA when K < N, a boolean mask with True
= attend, an additive bias); ``multihead_attention`` adds the projections. Their steps are lowered
from the theorems that ``provenance(function)`` names. See :mod:`symattn.lowering.jax_layers`.

Importing this module does not import JAX (``import symattn`` never does); the first use of a
name below imports it, and says how to install it when it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for readers and type checkers; at run time the names come from __getattr__
    from .lowering.jax_layers import dot_product_attention, multihead_attention, provenance

__all__ = ["dot_product_attention", "multihead_attention", "provenance"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'symattn.jax' has no attribute {name!r}")
    try:
        from .lowering import jax_layers
    except ModuleNotFoundError as exc:
        if exc.name not in ("jax", "jaxlib"):
            raise
        raise ModuleNotFoundError(
            f"symattn.jax.{name} needs JAX, which is not installed: pip install \"symattn[jax]\"",
            name="jax") from exc
    return getattr(jax_layers, name)


def __dir__():
    return sorted(list(globals()) + __all__)
