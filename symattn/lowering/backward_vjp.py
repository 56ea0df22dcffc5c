"""Backward passes from proved VJPs: ``lower(expr, target="torch" | "jax", backward=True)``.

For an expression E of the inputs W_1, ..., W_k and a cotangent G of E's shape, the backward pass
returns, for each input, the VJP Σ_ij G_ij ∂E_ij/∂W_kl. Here each VJP is

1. derived by :func:`symattn.grad.vjp.vjp_with_rules` (reverse accumulation, the forms papers write:
   dV = Pᵀ G, dS = P ∘ (dP − rowsum(dP ∘ P) 1ᵀ), ...);
2. decided by :func:`symattn.verify_gradient` (the proof kernel, after the gradient audit). A VJP that
   is not proved, generally or at the sizes the expression fixes, is not emitted: :func:`gradients`
   raises :class:`~symattn.errors.LoweringError` with the verdict and the first lines of its trace;
3. lowered like any expression for the target (:func:`~symattn.lowering.targets.lower_for_target`).

The forward kernel and the gradient kernels are then wrapped as a ``torch.autograd.Function``
(:mod:`symattn.lowering.backward_torch`) or a ``jax.custom_vjp`` function
(:mod:`symattn.lowering.backward_jax`) by :func:`symattn.lowering.backward_kernel.lower_backward`.
What is code rather than a theorem, said plainly: the sum of a gradient over the batch axes its
input was broadcast along (an input without batch axes used by a batch of queries gets the sum of
the batch's gradients, :func:`unbroadcast`), and the cast of each gradient to its input's dtype.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..errors import GradientError, LoweringError
from .kernel import FunctionInput, Provenance, ScalarInput, StackedFamily
from .targets.build import lower_for_target

BACKWARD_TARGETS = ("torch", "jax")


@dataclass(frozen=True)
class Gradient:
    """The proved VJP of the expression with respect to one input: the candidate formula, the
    verdict that proves it (status, scope, method, the VJP rules used) and its lowered kernel."""

    wrt: str
    formula: sp.Basic
    status: str
    scope: str
    method: str
    kernel: object

    def __str__(self):
        return f"d{self.wrt} = {sp.sstr(self.formula)[:120]}: {self.status}, {self.scope} ({self.method})"


def cotangent_for(expr, names) -> sp.MatrixSymbol:
    """A matrix symbol of expr's shape for the cotangent, named apart from the inputs."""
    name, k = "G", 0
    while name in names:
        k += 1
        name = f"G_{k}"
    return sp.MatrixSymbol(name, *expr.shape)


def _check_inputs(args) -> None:
    for x in args:
        if isinstance(x, StackedFamily):
            raise LoweringError(f"backward=True: the family {x.name} is stacked over a symbolic head count, and a "
                                "sum, stack or concatenation over a symbolic H has no VJP rule; fix the head count "
                                "with at={'H': 2} (each member is then an input of its own)")
        if isinstance(x, (ScalarInput, FunctionInput)):
            what = "scalar" if isinstance(x, ScalarInput) else "function"
            raise LoweringError(f"backward=True: the {what} input {x.name} has no proved VJP; only matrix inputs "
                                "are differentiated (fix it to a number, or make it a matrix)")


def _why(verdict) -> str:
    lines = [str(t) for t in verdict.trace][:3]
    return "; ".join(line.splitlines()[0][:200] for line in lines) or verdict.status


_PROVED: dict = {}
_GRADIENTS: dict = {}


def proved_vjps(expr, args, budget: float = 60.0) -> tuple:
    """(the cotangent symbol, ((input, VJP formula, verdict), ...)): each VJP derived by the rules and
    proved by :func:`symattn.verify_gradient`, once per process for every target. Raises
    LoweringError naming the input when a VJP has no rule or is not proved."""
    from ..grad.verify import verify_gradient
    from ..grad.vjp import vjp_with_rules

    _check_inputs(args)
    key = (expr, tuple(args))
    if key in _PROVED:
        return _PROVED[key]
    G = cotangent_for(expr, {x.name for x in args})
    out = []
    for x in args:
        try:
            formula, _ = vjp_with_rules(expr, x, G)
        except GradientError as exc:
            raise LoweringError(f"backward=True: no VJP of {sp.sstr(expr)[:80]} with respect to {x.name}: "
                                f"{exc}") from exc
        v = verify_gradient(expr, x, formula, G, budget=budget)
        if not v.proved:
            raise LoweringError(f"backward=True: the VJP with respect to {x.name} is {v.status}, not proved "
                                f"({_why(v)}); refusing to emit a backward pass that is not proved\n"
                                f"  the VJP: {sp.sstr(formula)[:200]}")
        out.append((x, formula, v))
    _PROVED[key] = (G, tuple(out))
    return _PROVED[key]


def gradients(expr, args, target: str, budget: float = 60.0) -> tuple:
    """(the cotangent symbol, one :class:`Gradient` per input in ``args`` order): the proved VJPs
    (:func:`proved_vjps`) lowered for ``target``; cached per process."""
    if target not in BACKWARD_TARGETS:
        raise LoweringError(f"backward=True is lowered for the targets {', '.join(BACKWARD_TARGETS)}, not "
                            f"{target!r}; for NumPy see symattn.numeric.multihead_attention_backward")
    key = (expr, tuple(args), target)
    if key in _GRADIENTS:
        return _GRADIENTS[key]
    G, proved = proved_vjps(expr, args, budget)
    out = []
    for x, formula, v in proved:
        prov = Provenance(f"VJP of {sp.sstr(expr)[:60]} with respect to {x.name}", "verify_gradient", 0, "candidate",
                          v.status, v.general, v.scope, v.method, ())
        if isinstance(formula, sp.ZeroMatrix):
            kernel = None  # the expression does not depend on x: its gradient is zero
        else:
            kernel = lower_for_target(formula, tuple(_leaves(formula, list(args) + [G])), target, prov)
        out.append(Gradient(x.name, formula, v.status, v.scope, v.method, kernel))
    _GRADIENTS[key] = (G, tuple(out))
    return _GRADIENTS[key]


def _leaves(formula, candidates) -> list:
    """The inputs among ``candidates`` that ``formula`` uses, in that order (one lookup per name)."""
    from .kernel import input_leaves

    names = {x.name for x in input_leaves(formula)}
    return [x for x in candidates if x.name in names]


def unbroadcast(xp, g, shape):
    """``g`` summed over the axes along which an input of ``shape`` was broadcast (the leading axes it
    lacks and its axes of length 1), so that it has the input's shape: the chain rule of broadcasting."""
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    if lead > 0:
        g = xp.sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, g.shape)) if a == 1 and b != 1)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    return g
