"""The strategy's explicit instances: an expression at concrete dimensions as an explicit matrix.

:func:`at_dims` substitutes concrete dimensions; :func:`explicit` evaluates an expression whose
inputs are bound (in ``env``) to explicit matrices, node by node. :func:`derivative` forms the VJP
by its definition, Σ_ij G_ij ∂E_ij/∂W_kl with ``sympy.diff`` on the explicit entries, and
:func:`is_zero` decides a difference of such entries exactly (every exp atom written over
independent generators, then cancelled as a rational function). Used by the strategies of
:mod:`symattn.grad.verify` and by :mod:`symattn.grad.rule_check`; the audit has its own.

>>> import sympy as sp
>>> X = sp.MatrixSymbol("X", 1, 2)
>>> W = sp.ImmutableMatrix([[sp.Symbol("a"), sp.Symbol("b")]])
>>> explicit(2 * X.T, {X: W})
Matrix([
[2*a],
[2*b]])
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, ScaleRows, ShiftRows
from ..defs.softmax import Softmax
from ..errors import GradientError


def at_dims(e, dims: dict):
    """e with every dimension symbol replaced by its integer."""
    return e.xreplace({k: sp.Integer(v) for k, v in dims.items()}) if dims else e


def inputs_of(*exprs) -> list:
    """The input matrices (MatrixSymbols and Family members) of the expressions, in a fixed order; a head
    sum, stack or concatenation over a concrete H contributes the members of its H terms."""
    found, stack = set(), list(exprs)
    while stack:
        e = stack.pop()
        if isinstance(e, (sp.MatrixSymbol, FamilyMember)):
            found.add(e)
        elif isinstance(e, (HeadSum, HeadStack, HeadConcat)) and e.count.is_Integer:
            stack.append(e.expand_heads())  # the members W_1..W_H, not the bound W_h
        elif isinstance(e, sp.Basic):
            stack.extend(e.args)
    return sorted(found, key=sp.default_sort_key)


def symbols_for(M, tag: str) -> sp.ImmutableMatrix:
    """An explicit matrix of fresh real Dummies of M's (concrete) shape."""
    r, c = (int(x) for x in M.shape)
    return sp.ImmutableMatrix(r, c, lambda i, j: sp.Dummy(f"{tag}{i}{j}", real=True))


def _softmax(X, axis):
    if axis == 1:
        return _softmax(X.T, 0).T
    E = X.applyfunc(sp.exp)
    sums = [sp.Add(*E[:, j]) for j in range(E.cols)]
    return sp.ImmutableMatrix(E.rows, E.cols, lambda i, j: E[i, j] / sums[j])


def explicit(e, env: dict, memo=None):  # noqa: C901 (one dispatch over node types)
    """The explicit matrix of e with the inputs in ``env`` (input -> explicit matrix)."""
    memo = {} if memo is None else memo
    if e in env:
        return env[e]
    if e in memo:
        return memo[e]
    ev = lambda a: explicit(a, env, memo)  # noqa: E731
    if isinstance(e, sp.MatAdd):
        out = ev(e.args[0])
        for a in e.args[1:]:
            out = out + ev(a)
    elif isinstance(e, sp.MatMul):
        coeff, mats = e.as_coeff_matrices()
        out = ev(mats[0])
        for a in mats[1:]:
            out = out * ev(a)
        out = coeff * out
    elif isinstance(e, sp.Transpose):
        out = ev(e.arg).T
    elif isinstance(e, sp.HadamardProduct):
        out = ev(e.args[0])
        for a in e.args[1:]:
            out = out.multiply_elementwise(ev(a))
    elif isinstance(e, sp.HadamardPower):
        out = ev(e.base).applyfunc(lambda x: x ** e.exp)
    elif isinstance(e, sp.Inverse):
        out = ev(e.arg).inv()
    elif isinstance(e, Softmax):
        out = _softmax(ev(e.arg), e.axis)
    elif isinstance(e, (Exp, Exp2, Log)):
        out = ev(e.args[0]).applyfunc(type(e).scalar)
    elif isinstance(e, ShiftRows):
        X, c = ev(e.args[0]), ev(e.args[1])
        out = sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: X[i, j] - c[i, 0])
    elif isinstance(e, ScaleRows):
        d, X = ev(e.args[0]), ev(e.args[1])
        out = sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: d[i, 0] * X[i, j])
    elif isinstance(e, DivideRows):
        X, d = ev(e.args[0]), ev(e.args[1])
        out = sp.ImmutableMatrix(X.rows, X.cols, lambda i, j: X[i, j] / d[i, 0])
    elif isinstance(e, (HeadSum, HeadStack, HeadConcat)):
        if not e.count.is_Integer:
            raise GradientError(f"explicit: the head count {e.count} of {type(e).__name__} has no value")
        out = ev(e.expand_heads())
    elif isinstance(e, sp.MatrixSlice):  # a block of a head stack's cotangent, at concrete bounds
        (r0, r1, rs), (c0, c1, cs) = (tuple(int(b) for b in t) for t in (e.rowslice, e.colslice))
        out = ev(e.parent)[r0:r1:rs, c0:c1:cs]
    elif isinstance(e, sp.BlockMatrix):
        out = sp.BlockMatrix([[ev(b) for b in row] for row in e.blocks.tolist()]).as_explicit()
    elif isinstance(e, (sp.MatrixSymbol, FamilyMember)):
        raise GradientError(f"explicit: the input {e} has no value")
    elif isinstance(e, MatrixExpr) or isinstance(e, sp.MatrixBase):
        out = e.doit().as_explicit()  # constants: masks, permutations, identity, ones, explicit matrices
        if out.free_symbols & set(env):
            raise GradientError(f"explicit: cannot evaluate the node {type(e).__name__}")
    else:
        raise GradientError(f"explicit: not a matrix: {e!r}")
    out = sp.ImmutableMatrix(out)
    memo[e] = out
    return out


def derivative(E: sp.MatrixBase, G: sp.MatrixBase, W: sp.MatrixBase) -> sp.ImmutableMatrix:
    """Σ_ij G_ij ∂E_ij/∂W_kl for every (k, l), with sympy.diff (W: explicit matrix of symbols)."""
    f = sp.Add(*[G[i, j] * E[i, j] for i in range(E.rows) for j in range(E.cols)])
    return sp.ImmutableMatrix(W.rows, W.cols, lambda k, l: sp.diff(f, W[k, l]))


def _generators(x):
    """x with every exp(a) written over independent generators: a is expanded into terms c·t
    (c rational), and exp(c·t) = z_t^(c·D_t) with z_t = exp(t / D_t), D_t the common denominator
    of t's coefficients. A polynomial identity in the z_t holds for every value, so a difference
    that cancels to 0 over them is 0 (the converse may fail: then nothing is claimed)."""
    atoms = list(x.atoms(sp.exp))
    terms = {}
    for a in atoms:
        for t in sp.Add.make_args(sp.expand(a.args[0])):
            c, rest = t.as_coeff_Mul()
            terms.setdefault(rest, []).append(sp.Rational(c))
    lcd = {t: sp.ilcm(*[c.q for c in cs]) if len(cs) > 1 else cs[0].q for t, cs in terms.items()}
    z = {t: sp.Dummy("z", positive=True) for t in terms}
    rep = {}
    for a in atoms:
        value = sp.Integer(1)
        for t in sp.Add.make_args(sp.expand(a.args[0])):
            c, rest = t.as_coeff_Mul()
            value *= z[rest] ** int(sp.Rational(c) * lcd[rest])
        rep[a] = value
    return x.xreplace(rep)


def is_zero(x) -> bool:
    """True only when x is shown to be exactly 0 (exp atoms as generators, then cancel).

    The expansion of x over the generators is tried first: when its terms cancel (the VJP and the
    derivative share their softmax denominators, so they usually do) that is the proof, and the
    common denominator, which costs most, is formed only when they do not."""
    x = sp.sympify(x)
    if x == 0:
        return True
    if x.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return False
    y = _generators(x)
    if sp.expand(y) == 0:
        return True
    y = sp.together(y)
    num, _ = sp.fraction(y)
    return sp.expand(num) == 0
