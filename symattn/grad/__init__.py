"""Gradients: the VJP of symattn's expressions (:func:`vjp`) and proofs that a formula is one
(:func:`verify_gradient`)."""

from .verify import verify_gradient as verify_gradient
from .vjp import vjp as vjp

from . import sympy_diff as _sympy_diff

_sympy_diff.register()
