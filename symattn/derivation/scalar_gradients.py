r"""The gradient of a scalar the file defines, ``\nabla_{\xi} E``, as papers write it of an energy.

Modern Hopfield networks (Ramsauer et al. 2021) define an energy E, a scalar function of the state
vector ξ, and state its gradient: ``\nabla_{\boldsymbol{\xi}} \mathrm{E} = -X \mathrm{softmax}(\beta X^T \xi)
+ \xi``. Before parsing, ``\nabla_{v} F`` with F a name other than the loss (whose gradient is the
name dF of a backward pass, :mod:`.grad_notation`) that the file defines (``F = ...``) is written as
the call ``\mathrm{nabla}(v, F)``; it is read here as the vector (or matrix) of v's shape whose entries are ∂F/∂v_k:

    ∇_v F = vjp(F, v, 1),   F a 1 × 1 expression in v,

derived by :func:`symattn.grad.vjp.vjp_with_rules` (reverse mode, each local rule checked exactly at
every size in 1..3 by :mod:`symattn.grad.rule_check`). A step using it is then decided by the proof
engine as any other: proved for all dimensions modulo those rules (the note says which), or refuted
with a counterexample. F must be a scalar of the file (a number, or a 1 × 1 product such as ξᵀξ) and v
a declared input; anything else is refused with what to write. Terms of F that do not read v add
nothing. Nothing is decided by numeric agreement.
"""

from __future__ import annotations

import re

import sympy as sp

from ..errors import GradientError
from ..grad.rule_check import check_rule
from ..grad.vjp import vjp_with_rules
from . import ast
from .parameter_entries import entrywise_sums
from .symbols import is_matrix

NABLA = "nabla"
_FONT = r"\\(?:mathbf|boldsymbol|bm|mathrm|mathit|mathcal)"
_ARG = rf"(?:{_FONT}\s*\{{\s*\\?[A-Za-z]+\s*\}}|\\[A-Za-z]+|[A-Za-z])"
_VAR = rf"(?:\{{\s*(?P<v1>{_ARG}(?:_\{{[^{{}}]*\}}|_[A-Za-z0-9])?)\s*\}}|(?P<v2>{_ARG}))"
_GRADIENT = re.compile(rf"\\nabla\s*_\s*{_VAR}\s*(?P<f>{_ARG})(?![A-Za-z_^({{])")


def rewrite_scalar_gradients(text: str) -> str:
    r"""``text`` with every ``\nabla_{v} F`` (F not the loss, already rewritten) as ``\mathrm{nabla}(v, F)``."""
    if "\\nabla" not in text:
        return text
    rest = _GRADIENT.sub(" ", text)

    def defined(f: str) -> bool:  # F = ... or F := ... somewhere other than after a \nabla
        return re.search(rf"(?<![A-Za-z\\]){re.escape(f)}\s*:?=", rest) is not None

    def sub(m):
        if not defined(m.group("f")):
            return m.group(0)  # the gradient of a name the file does not define: the lexer refuses it
        return f"\\mathrm{{{NABLA}}}({m.group('v1') or m.group('v2')}, {m.group('f')})"
    return _GRADIENT.sub(sub, text)


def is_gradient_of(node) -> bool:
    """True for ``\\mathrm{nabla}(v, F)``: a gradient, never the name a definition ``= ...`` gives."""
    return isinstance(node, ast.Call) and is_gradient_call(None, node)


def is_gradient_call(scope, node) -> bool:
    name = node.target
    return (name.base == NABLA and name.font == "mathrm" and name.sub is None and name.sup is None
            and len(node.args) == 2)


def _constant(e, v) -> bool:
    return not is_matrix(e) and not e.has(v)


def scalar_gradient(scope, node, L):
    """The value of ``\\mathrm{nabla}(v, F)``: the gradient of the scalar F with respect to v."""
    var, fn = node.args
    label = f"\\nabla_{{{var.text()}}} {fn.text()}"
    v = scope._expr(var, L)
    if not isinstance(v, sp.MatrixSymbol):
        scope.fail(var, f"{label}: {var.text()} is not a declared vector or matrix, so the gradient is not read",
                   "the gradient with respect to a declared input, as \\nabla_{\\xi} E with \\xi \\in \\mathbb{R}^{d}")
    F = scope._expr(fn, L)
    if is_matrix(F) and F.shape != (1, 1):
        scope.fail(fn, f"{label}: {fn.text()} is {sp.sstr(F.rows)} × {sp.sstr(F.cols)}, not a scalar: the gradient "
                   "of a non-scalar (a Jacobian) is not read", "the gradient of a scalar the file defines")
    terms = sp.Add.make_args(F) if not is_matrix(F) else (sp.MatAdd.make_args(F) if isinstance(F, sp.MatAdd) else (F,))
    reading = [t for t in terms if not _constant(t, v)]
    if not all(is_matrix(t) for t in reading):
        scope.fail(fn, f"{label}: a term of {fn.text()} reads {var.text()} through its entries, which the gradient "
                   "rules do not derive", "the scalar written with matrix products (\\xi^T \\xi, \\mathbf{1}^T "
                   "\\exp(z)), whose gradient the VJP rules derive")
    if not reading:
        return sp.ZeroMatrix(*v.shape)
    body = reading[0] if len(reading) == 1 else sp.MatAdd(*reading)
    body = entrywise_sums(body)  # Σ_i exp(β z_i) as 1ᵀ exp(β z) (parameter_entries)
    try:
        R, used = vjp_with_rules(body, v, sp.OneMatrix(1, 1))
    except GradientError as exc:
        scope.fail(node, f"{label}: the gradient is not derived ({str(exc).splitlines()[0]})",
                   "a scalar built from products, sums, exp, log and softmax")
    bad = [c for c in (check_rule(r) for r in used) if not c.ok]
    if bad:
        scope.fail(node, f"{label}: a VJP rule failed its check: {bad[0].line()}", "a scalar whose rules hold")
    note = (f"{label} is the gradient of the scalar {fn.text()} with respect to {var.text()}, derived by reverse mode "
            f"modulo the VJP rules {', '.join(used)} (each checked exactly at every size in 1..3)")
    if note not in scope.notes:
        scope.notes.append(note)
    return R
