"""``BackwardKernel``: a forward kernel for torch or JAX with its proved backward pass, what
``lower(expr, target="torch" | "jax", backward=True)`` returns (the VJPs are derived, proved and
lowered by :mod:`symattn.lowering.backward_vjp`)."""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import LoweringError
from .backward_vjp import gradients
from .kernel import Provenance
from .targets.build import lower_for_target


@dataclass
class BackwardKernel:
    """A forward kernel and its proved backward pass for ``target``, called like the forward kernel
    (positionally in :attr:`arg_names` order, or by name) and differentiable by the framework:
    ``fn`` is the ``torch.autograd.Function`` (torch) or the ``jax.custom_vjp`` function (jax).

    ``gradients``: one :class:`Gradient` per input, with the verdict that proves it;
    ``provenance``: the forward's provenance (its theorem, when it was lowered from one)."""

    forward: object
    gradients: tuple
    cotangent: sp.MatrixSymbol
    target: str
    fn: object
    source: str

    @property
    def arg_names(self) -> tuple:
        return self.forward.arg_names

    @property
    def provenance(self):
        return self.forward.provenance

    @property
    def expr(self):
        return self.forward.expr

    def __call__(self, *arrays, **named):
        sizes = {d: named.pop(d) for d in list(named) if d in {str(x) for x in self.forward.extra_dims}}
        if named:
            unknown = [k for k in named if k not in self.arg_names]
            if unknown:
                raise LoweringError(f"backward kernel has no input {unknown[0]!r}; inputs: {', '.join(self.arg_names)}")
            if arrays:
                raise LoweringError("backward kernel: pass the arrays all by position or all by name")
            missing = [k for k in self.arg_names if k not in named]
            if missing:
                raise LoweringError(f"backward kernel: missing input(s) {', '.join(missing)}")
            arrays = tuple(named[k] for k in self.arg_names)
        if len(arrays) != len(self.arg_names):
            raise LoweringError(f"backward kernel takes {len(self.arg_names)} arrays ({', '.join(self.arg_names)}), "
                                f"got {len(arrays)}")
        return self.fn(tuple(sorted(sizes.items())), *arrays)

    def __repr__(self):
        return f"BackwardKernel[{self.target}]({sp.sstr(self.expr)[:60]}, args={list(self.arg_names)})"


def lower_backward(expr, args, target: str, provenance: Provenance | None = None) -> BackwardKernel:
    """The forward kernel of ``expr`` for ``target`` with its proved backward pass (see the module)."""
    G, grads = gradients(expr, args, target)
    forward = lower_for_target(expr, tuple(args), target, provenance)
    if target == "torch":
        from .backward_torch import make_function
    else:
        from .backward_jax import make_function
    fn = make_function(forward, grads, G)
    source = "\n".join([forward.source] + [f"# d{g.wrt}: {g.status}, {g.scope}\n" + (g.kernel.source if g.kernel
                                            else "# zero\n") for g in grads])
    return BackwardKernel(forward, grads, G, target, fn, source)
