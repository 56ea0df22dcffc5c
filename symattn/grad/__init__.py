"""Gradients: the VJP of symattn's expressions (:func:`vjp`) and proofs that a formula is one
(:func:`verify_gradient`). Importing it teaches ``sympy.diff`` the symattn nodes
(:mod:`symattn.grad.sympy_diff`)."""

from . import sympy_diff as _sympy_diff
from .verify import verify_gradient as verify_gradient
from .vjp import vjp as vjp

_sympy_diff.register()
