r"""Operators built from Kronecker products, as Elhage et al. (2021) write a transformer's logits:

    T = (Id \otimes W_U) \cdot (Id + \sum_h A^h \otimes W_{OV}^h) \cdot (Id \otimes W_E).

``A \otimes W`` acts on a matrix x whose columns are positions (column convention) as W x Aᵀ, or
on one whose rows are (row convention) as A x Wᵀ; ``\mathrm{Id}`` (undeclared) is the identity. An
operator expression is a Kronecker product, the identity, a sum of operators (a sum over heads
included), a product of operators (composition) and a number times an operator.

Applied to a matrix, an operator is its value on that matrix (:func:`apply`). A step between two
operators (``T = ...``) is checked by applying both sides to one generic matrix ⟨X⟩ of their
input shape (:func:`probe`): two linear operators are equal exactly when they agree on every
matrix, so a proof for the symbolic ⟨X⟩ proves the operators equal, and a counterexample at some
⟨X⟩ shows them different. The input shape is read from the factors (:func:`sides`); a side on
which every factor is the identity has a dimension of its own.
"""

from __future__ import annotations

import sympy as sp

from .. import defs as D
from . import ast, componentwise
from .exponents import letter_power  # noqa: F401 (for the elaborator)
from .outer_products import is_outer_product, outer_product  # noqa: F401 (outer_product: for the elaborator)
from .symbols import KronOp, dimension_symbol, is_matrix, key_of

PROBE = "\u27e8X\u27e9"  # the generic matrix an operator is applied to (cannot be typed)


def is_identity(scope, node) -> bool:
    return (isinstance(node, ast.Name) and node.base == "Id" and node.sub is None and node.sup is None
            and "Id" not in scope.matrices and "Id" not in scope.defs)


def is_operator(scope, node, depth: int = 0) -> bool:
    """True when ``node`` stands for an operator (it contains a Kronecker product acting on nothing)."""
    if depth > 50:
        return False
    if isinstance(node, ast.Kron):  # rows of one shape: component-wise (componentwise.py); two vectors: outer
        return not (componentwise.reads_rows(scope, node) or is_outer_product(scope, node))
    if is_identity(scope, node):
        return True
    if isinstance(node, ast.Name):
        d = scope.defs.get(key_of(node))
        return d is not None and not d.params and is_operator(scope, d.body, depth + 1)
    if isinstance(node, ast.Group):
        return is_operator(scope, node.body, depth + 1)
    if isinstance(node, ast.Add):
        return any(is_operator(scope, t, depth + 1) for _, t in node.terms)
    if isinstance(node, ast.Sum):
        return is_operator(scope, node.body, depth + 1)
    if isinstance(node, ast.Mul):
        return (any(is_operator(scope, f, depth + 1) for f in node.factors)
                and all(is_operator(scope, f, depth + 1) or isinstance(f, ast.Num) for f in node.factors))
    return False


def mentions_operator(scope, node) -> bool:
    """A product with an operator among its factors (an operator applied to what follows it)."""
    return isinstance(node, ast.Mul) and any(is_operator(scope, f) for f in node.factors)


def _kron_sides(scope, node, L):
    """(rows side, columns side) of the input of ``A \\otimes W``: each None (the identity) or (in, out)."""
    op = scope._kron(node, L)
    pos, vec = op.left, op.right
    def side(m):
        return None if m is None else (m.cols, m.rows)
    if scope.convention == "column":  # W x Aᵀ
        return side(vec), side(pos)
    return side(pos), side(vec)  # A x Wᵀ


def _compose(outer, inner):
    if inner is None:
        return outer
    if outer is None:
        return inner
    return (inner[0], outer[1])


def sides(scope, node, L):
    """How the operator ``node`` maps shapes: per side of its input (rows, columns), None where it is the
    identity, else (the input's dimension, the output's)."""
    if isinstance(node, ast.Kron):
        return _kron_sides(scope, node, L)
    if is_identity(scope, node):
        return None, None
    if isinstance(node, ast.Name):
        return sides(scope, scope.defs[key_of(node)].body, {})
    if isinstance(node, ast.Group):
        return sides(scope, node.body, L)
    if isinstance(node, ast.Add):
        found = [sides(scope, t, L) for _, t in node.terms if is_operator(scope, t)]
        return tuple(next((s[k] for s in found if s[k] is not None), None) for k in (0, 1))
    if isinstance(node, ast.Sum):
        return sides(scope, node.body, {**L, node.index: D.h})
    if isinstance(node, ast.Mul):
        rows, cols = None, None
        for f in reversed(node.factors):
            if is_operator(scope, f):
                r, c = sides(scope, f, L)
                rows, cols = _compose(r, rows), _compose(c, cols)
        return rows, cols
    scope.fail(node, f"{node.text()} is not an operator", "a Kronecker product A \\otimes W or \\mathrm{Id}")


def apply(scope, node, v, L):
    """The operator ``node`` applied to the matrix ``v``."""
    if isinstance(node, ast.Kron):
        op = scope._kron(node, L)  # a KronOp, or the component-wise product of rows (componentwise.py)
        return scope.kron_multiply(op, node, v, node) if isinstance(op, KronOp) else scope.multiply(op, node, v, node)
    if is_identity(scope, node):
        return v
    if isinstance(node, ast.Name):
        return apply(scope, scope.defs[key_of(node)].body, v, {})
    if isinstance(node, ast.Group):
        return apply(scope, node.body, v, L)
    if isinstance(node, ast.Add):
        out = None
        for sign, t in node.terms:
            if not is_operator(scope, t):
                scope.fail(t, f"{t.text()} is added to an operator (a Kronecker product) but is not one",
                           "terms that are all operators, such as \\mathrm{Id} + A \\otimes W")
            w = apply(scope, t, v, L)
            w = w if sign > 0 else -w
            out = w if out is None else out + w
        return out
    if isinstance(node, ast.Sum):
        if node.lower is not None:
            scope.fail(node, "a sum of operators from a start other than 1", "the sum from 1, the index shifted")
        count = scope.sum_count(node, L)
        return D.head_sum(lambda k: apply(scope, node.body, v, {**L, node.index: k, (node.index, "count"): count}),
                          count)
    if isinstance(node, ast.Mul):
        return apply_product(scope, list(node.factors), v, L)
    scope.fail(node, f"{node.text()} is not an operator", "a Kronecker product A \\otimes W or \\mathrm{Id}")


def apply_product(scope, factors, v, L):
    """``F_1 F_2 ... F_k v``, right to left: an operator factor acts on what follows it, any other factor
    (a matrix or a number) multiplies it."""
    for f in reversed(factors):
        if is_operator(scope, f):
            v = apply(scope, f, v, L)
        else:
            c = scope._expr(f, L)
            v = scope.multiply(c, f, v, f) if is_matrix(c) else c * v
    return v


def application(scope, node, L):
    """``(Id + A \\otimes W) \\cdot t``: a product whose last operator factor acts on the matrices after it."""
    factors = list(node.factors)
    last = max(k for k, f in enumerate(factors) if is_operator(scope, f))
    if last == len(factors) - 1:
        scope.fail(node, f"{node.text()} is an operator that acts on nothing here",
                   "(A \\otimes W) \\cdot x, with x the matrix it acts on, or a step between operators")
    rest = factors[last + 1:]
    v = scope._expr(rest[0], L) if len(rest) == 1 else scope._expr(ast.Mul(rest[0].pos, tuple(rest)), L)
    if not is_matrix(v):
        scope.fail(rest[0], f"{node.text()} applies an operator to a scalar", "(A \\otimes W) \\cdot x, x a matrix")
    return apply_product(scope, factors[:last + 1], v, L)


def probe(scope, node, L):
    """The operator ``node`` applied to the generic matrix ⟨X⟩ of its input shape (see the module)."""
    rows, cols = sides(scope, node, L)
    r = rows[0] if rows is not None else dimension_symbol("m_Id")
    c = cols[0] if cols is not None else dimension_symbol("n_Id")
    X = sp.MatrixSymbol(PROBE, r, c)
    note = (f"operators (Kronecker products acting on matrices) acting on {sp.sstr(r)} × {sp.sstr(c)} matrices: a "
            f"step between them compares both sides applied to one generic such matrix {PROBE} (operators equal "
            "on every matrix are equal)")
    if note not in scope.notes:
        scope.notes.append(note)
    return apply(scope, node, X, L)


__all__ = ["KronOp", "PROBE", "application", "apply", "is_operator", "mentions_operator", "probe", "sides"]
