r"""The names and words of a backward pass, for the elaborator: ``dO`` (the gradient of O, a matrix of
O's shape, declared where it is first used) and ``\mathrm{rowsum}(X)`` / ``\mathrm{colsum}(X)`` (X 1 and
1ᵀ X), ``\operatorname{diag}(p)`` of a vector p (the diagonal matrix I ∘ (p 1ᵀ), as in the softmax Jacobian
diag(p) − p pᵀ). Only in a file with a gradient step (:func:`.gradients.split_gradient_claims` sets
``scope.gradient_names``): elsewhere these names mean what they meant before.
"""

from __future__ import annotations

import sympy as sp

from . import ast, scalar_gradients
from .diagonal import diag_call
from .maxima import extremum, is_extremum
from .symbols import is_matrix, key_of

WORDS = ("rowsum", "colsum", "diag")


def primal(n: ast.Name) -> ast.Name:
    """X for the gradient name dX."""
    return ast.Name(n.pos, n.base[1:], n.sub, n.sup, "")


def gradient_symbol(scope, node, L):
    """The matrix of a gradient name (dO, of O's shape), declared when first used; None for any other name."""
    names = getattr(scope, "gradient_names", None)
    if not names or not isinstance(node, ast.Name) or key_of(node) not in names:
        return None
    k = key_of(node)
    if k not in scope.matrices:
        value = scope._expr(primal(node), {})
        if not is_matrix(value):
            scope.fail(node, f"{node.text()} is the gradient of {primal(node).text()}, which is not a matrix",
                       "the gradient of a declared or defined matrix")
        scope.matrices[k] = sp.MatrixSymbol(k, value.rows, value.cols)
    return scope.matrices[k]


def vocabulary_call(scope, node, L):
    """rowsum(X), colsum(X), diag(p) in a file with a backward pass, \\max(a, b) and \\min(a, b) of numbers;
    None for any other call."""
    name = node.target
    if scalar_gradients.is_gradient_call(scope, node) and key_of(name) not in scope.defs:
        return scalar_gradients.scalar_gradient(scope, node, L)  # \nabla_{\xi} E of a defined scalar
    if is_extremum(node) and key_of(name) not in scope.defs:  # \max(a, b), \min(k, x) of numbers (.maxima)
        return extremum(scope, node, L)
    if name.base == "diag" and name.sub is None and name.sup is None and key_of(name) not in scope.defs:
        return diag_call(scope, node, L)  # diag(v) in any file (diagonal)
    if (not getattr(scope, "gradient_names", None) or name.base not in WORDS or name.sub is not None
            or name.sup is not None or key_of(name) in scope.defs):
        return None
    if len(node.args) != 1 or isinstance(node.args[0], ast.Dots):
        scope.fail(node, f"{name.base} takes 1 argument, got {len(node.args)}", f"{name.base}(X)")
    X = scope._expr(node.args[0], L)
    if not is_matrix(X):
        scope.fail(node.args[0], f"{name.base} of the number {node.args[0].text()}", f"{name.base} of a matrix")
    if name.base == "rowsum":
        return X * sp.OneMatrix(X.cols, 1)
    if name.base == "colsum":
        return sp.OneMatrix(1, X.rows) * X
    if X.cols == 1 or X.rows == 1:  # diag(p) = I ∘ (p 1ᵀ): the entries δ_ij p_i, in nodes the engine reads
        v = X if X.cols == 1 else X.T
        return sp.HadamardProduct(sp.Identity(v.rows), v * sp.OneMatrix(1, v.rows))
    scope.fail(node, f"diag of the {sp.sstr(X.rows)} × {sp.sstr(X.cols)} matrix {node.args[0].text()}: only the "
               "diagonal matrix of a vector is read", "diag(p) with p a vector (the softmax Jacobian diag(p) − p pᵀ)")
