"""The lowering targets: the array libraries a proved expression becomes code for.

- :mod:`.common`: the runtime helpers every target's kernels share (binding and checking sizes,
  slices, the order of a matrix chain), plain Python;
- :mod:`.numpy`: the NumPy runtime (in-place helpers, work shared among threads); its kernels are
  printed by :mod:`symattn.lowering.printer` and built by :mod:`symattn.lowering.kernel`;
- :mod:`.array_api`, :mod:`.torch`, :mod:`.jax`: the runtimes of the other targets, whose kernels
  are printed and built by :mod:`.build` (with :mod:`.expressions`);
- :mod:`.standalone`: a generated module's helpers, the ones its kernel uses and nothing else, copied
  from the runtimes above; :mod:`.codegen` writes the modules (``symattn codegen --target``);
- :mod:`.multihead`: multi-head attention on torch, JAX or array-API arrays from proved kernels.

This file imports nothing of the lowering, so that the runtimes can be imported on their own.
"""

from __future__ import annotations

from ...errors import LoweringError

TARGETS = ("numpy", "array-api", "torch", "jax")


def check_target(target: str) -> str:
    """``target`` when it is one of :data:`TARGETS`, else a LoweringError listing them."""
    if target not in TARGETS:
        raise LoweringError(f"unknown target {target!r}; the targets are {', '.join(TARGETS)}")
    return target
