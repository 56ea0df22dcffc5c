"""``symattn.vjp``: the vector-Jacobian product of a matrix expression, by reverse accumulation.

For an expression E (p × q) of an input W and a cotangent G (p × q), the VJP is the matrix of W's
shape whose (k, l) entry is Σ_ij G_ij ∂E_ij/∂W_kl. :func:`vjp_with_rules` walks the expression's
DAG from the output to the inputs, applies the local rule of every node that depends on W
(:mod:`symattn.grad.rules`), sums the cotangents of a subexpression used more than once, and
records which rules it used. Nodes without a rule raise :class:`~symattn.errors.GradientError`.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.shapes import as_matrix, same_dim, show_shape
from ..errors import GradientError
from .coverage import CONSTANTS, INPUTS, REFUSED_WRT, refuse
from .rules import pullback


def check_request(expr, wrt, cotangent, op: str = "vjp(expr, wrt, cotangent)"):
    """The three operands, checked: matrices, wrt an input of expr, cotangent of expr's shape."""
    expr = as_matrix(expr, "expr", op)
    cotangent = as_matrix(cotangent, "cotangent", op)
    if not isinstance(wrt, INPUTS):
        raise GradientError(f"{op}: wrt must be a MatrixSymbol or a Family member, got "
                            f"{type(wrt).__name__}: {sp.sstr(wrt)[:80]}")
    for cls, why in REFUSED_WRT.items():
        if isinstance(wrt, cls):
            raise GradientError(f"{op}: cannot differentiate with respect to {wrt} ({type(wrt).__name__}): {why}")
    for k, what in enumerate(("rows", "columns")):
        if not same_dim(expr.shape[k], cotangent.shape[k]):
            raise GradientError(f"{op}: the cotangent must have the shape of expr ({what} differ).\n"
                                f"  expr: {show_shape(expr)}\n  cotangent: {show_shape(cotangent)}")
    return expr, wrt, cotangent


def _order(expr, depends):
    """The subexpressions that depend on wrt, children before parents (each once)."""
    seen, out, stack = set(), [], [(expr, False)]
    while stack:
        e, done = stack.pop()
        if done:
            out.append(e)
            continue
        if e in seen:
            continue
        seen.add(e)
        stack.append((e, True))
        stack.extend((a, False) for a in reversed(e.args) if isinstance(a, MatrixExpr) and depends(a))
    return out


def _total(parts):
    return parts[0] if len(parts) == 1 else sp.MatAdd(*parts).doit(deep=False)


def vjp_with_rules(expr, wrt, cotangent):
    """(the VJP of expr with respect to wrt at cotangent, the names of the rules used)."""
    expr, wrt, cotangent = check_request(expr, wrt, cotangent)
    memo: dict = {}

    def depends(e):
        if e not in memo:
            memo[e] = bool(getattr(e, "has", None)) and e.has(wrt)
        return memo[e]

    if not depends(expr):
        return sp.ZeroMatrix(*wrt.shape), []
    grads, used = {expr: [cotangent]}, []
    for e in reversed(_order(expr, depends)):
        if e == wrt:
            continue
        G = _total(grads.pop(e))
        if isinstance(e, INPUTS + CONSTANTS):
            continue
        found = pullback(e, G, depends)
        if found is None:
            raise refuse(e)
        name, parts = found
        if name == "matmul" and e.as_coeff_matrices()[0].has(wrt):
            raise refuse(e, "a scalar coefficient that depends on wrt")
        if name not in used:
            used.append(name)
        for child, g in parts:
            grads.setdefault(child, []).append(g)
    return _total(grads[wrt]) if wrt in grads else sp.ZeroMatrix(*wrt.shape), used


def vjp(expr, wrt, cotangent):
    """Σ_ij cotangent_ij ∂expr_ij/∂wrt_kl as a matrix expression of wrt's shape, in the forms
    papers write (dV = G Pᵀ, dS = P ∘ (dP − 1 colsum(dP ∘ P)), ...).

    >>> import sympy as sp, symattn as sa
    >>> n, m, d = sa.dims("n m d")
    >>> Q, K, V = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m), sp.MatrixSymbol("V", d, m)
    >>> G = sp.MatrixSymbol("G", d, n)
    >>> sa.vjp(sa.attention(Q, K, V), V, G)
    G*Softmax(1/sqrt(d)*K.T*Q).T
    """
    return vjp_with_rules(expr, wrt, cotangent)[0]
