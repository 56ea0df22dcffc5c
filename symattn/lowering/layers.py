"""Stacks of layers (:class:`~symattn.proof.layer_stack.LayerStack`) in a kernel.

A stack S_0 = start, S_l = layer_l(S_{l-1}) is computed by a loop over the layers
(``layers(step, start, depth)`` of the runtime). Each weight W that every layer has of its own is one
input array with the layers on axis -3, ``(..., L, rows, cols)``: layer l reads ``W[..., l - 1, :, :]``,
as a stacked family reads its heads. A symbolic depth L is read from that axis; a stack with no
weights of its own takes L as a size by keyword.

>>> import numpy as np, sympy as sp, symattn as sa
>>> n, L = sa.dims("n L")
>>> X, S, A = (sp.MatrixSymbol(s, n, n) for s in "XSA")
>>> deep = sa.layer_stack(S + A * S, S, X, L, weights=[A])          # S_l = S_{l-1} + A_l S_{l-1}
>>> f = sp.lambdify([X, A], deep)
>>> f(np.eye(2), np.stack([np.eye(2), 2 * np.eye(2)]))               # L = 2 layers: (1 + 2)(1 + 1) I
array([[6., 0.],
       [0., 6.]])
"""

from __future__ import annotations

import sympy as sp

from ..errors import LoweringError
from ..proof.instances import dimension_symbols
from ..proof.layer_stack import LayerStack, stacks_of

__all__ = ["LayerStack", "depth_symbols", "layer_weights", "lowering_dimensions", "placeholders", "stacks_of"]


def depth_symbols(*exprs) -> set:
    """The symbolic depths L of the stacks of ``exprs``."""
    return {s.depth for s in stacks_of(*exprs) if isinstance(s.depth, sp.Symbol)}


def lowering_dimensions(*exprs) -> list:
    """The sizes a kernel binds: the dimensions of the claim (``proof.instances.dimension_symbols``) and
    the symbolic depths of its stacks, sorted by name."""
    return sorted(set(dimension_symbols(*exprs)) | depth_symbols(*exprs), key=str)


def placeholders(*exprs) -> set:
    """The placeholders (each layer's input) of the stacks of ``exprs``: bound inside their stack."""
    return {s.placeholder for s in stacks_of(*exprs)}


def layer_weights(expr) -> dict:
    """{weight W: the stack it belongs to}: the matrices each layer has of its own. A weight read
    outside its stack, or by two stacks of different depths, has no single array: a LoweringError."""
    found: dict = {}
    for s in stacks_of(expr):
        for W in s.weights:
            other = found.setdefault(W, s)
            if other is not s and other.depth != s.depth:
                raise LoweringError(f"the weight {W} belongs to a stack of {other.depth} layers and to one of "
                                    f"{s.depth}: one array (..., L, rows, cols) cannot hold both; name them apart")
    if found:
        outside = _read_outside_stacks(expr, {}) & set(found)
        if outside:
            W = sorted(outside, key=str)[0]
            raise LoweringError(f"{W} is a weight of a stack of layers (one matrix per layer, an array "
                                f"(..., L, rows, cols)) and is also read outside the stack as one matrix; "
                                "name the two apart")
    return found


def _read_outside_stacks(e, memo: dict) -> set:
    """The matrix symbols ``e`` reads outside the layer maps of its stacks (a shared node once)."""
    if e in memo:
        return memo[e]
    if isinstance(e, LayerStack):
        out = _read_outside_stacks(e.start, memo)
    elif isinstance(e, sp.MatrixSymbol):
        out = {e}
    else:
        out = set()
        for a in getattr(e, "args", ()):
            if isinstance(a, sp.Basic):
                out |= _read_outside_stacks(a, memo)
    memo[e] = out
    return out
