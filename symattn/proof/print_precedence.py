"""Printing matrix products without building their negation.

SymPy's string printer asks every product for its precedence, and for a ``MatMul`` that asks
``could_extract_minus_sign``, which compares the product with its negation: it builds
``(-1)·product`` and evaluates it (a ``doit`` of the whole subtree) for every product it prints,
at every level of nesting. Proof traces and the audit's seeds print large canonical forms, and
that comparison was most of the time spent printing them.

A product equals its negation only when its coefficient c satisfies c = -c (0, zoo, nan), and
then SymPy answers "no minus sign", which is also what "c is a negative number" answers; for
every other product the answer is whether c is a negative number. :func:`matmul_precedence`
therefore gives exactly SymPy's precedence without building the negation, and :func:`register`
enters it for ``MatMul`` in SymPy's table of precedence functions: ``sympy.sstr`` prints the same
text, faster.
"""

from __future__ import annotations

from sympy.core.function import Function
from sympy.printing.precedence import PRECEDENCE, PRECEDENCE_FUNCTIONS


def matmul_precedence(item) -> int:
    """The precedence of a matrix product for the string printer: that of a sum when its
    coefficient is a negative number (it prints with a leading minus), else that of a product."""
    if any(hasattr(a, "precedence") and isinstance(a, Function) and a.precedence < PRECEDENCE["Mul"]
           for a in item.args):
        return PRECEDENCE["Mul"]
    c = item.args[0] if item.args else None
    negative = c is not None and bool(getattr(c, "is_Number", False)) and c.is_extended_negative is True
    return PRECEDENCE["Add"] if negative else PRECEDENCE["Mul"]


def register() -> None:
    """Use :func:`matmul_precedence` for ``MatMul`` (unless something registered one already)."""
    PRECEDENCE_FUNCTIONS.setdefault("MatMul", matmul_precedence)
