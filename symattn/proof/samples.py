"""Random instances for the counterexample search: input entries, score functions, frequencies.

Every instance is exact: entries are integers or rationals, a score function f is replaced by a
concrete function of (Q, K) given both as a float and as an exact SymPy function, and an undefined
scalar function θ (RoPE's generic frequencies θ_i) by a polynomial with rational coefficients.
Each instance carries the text that the counterexample shows for it.
"""

from __future__ import annotations

import zlib

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

#: entry distributions, tried in turn: (label, draw(rng, shape) -> ndarray of ints or Rationals)
SAMPLERS = (
    ("integers in [-2, 2]", lambda rng, shape: rng.integers(-2, 3, size=shape)),
    ("integers in [-2, 2]", lambda rng, shape: rng.integers(-2, 3, size=shape)),
    ("rationals p/q, |p| <= 6, q in {2, 3, 5, 7}", lambda rng, shape: _rationals(rng, shape, 6, (2, 3, 5, 7))),
    ("integers in [-9, 9]", lambda rng, shape: rng.integers(-9, 10, size=shape)),
    ("integers in [-2, 2]", lambda rng, shape: rng.integers(-2, 3, size=shape)),
    ("rationals p/q, |p| <= 40, q in {3, 7, 11, 13}", lambda rng, shape: _rationals(rng, shape, 40, (3, 7, 11, 13))),
)


def _rationals(rng, shape, top: int, denominators: tuple):
    p = rng.integers(-top, top + 1, size=shape)
    q = rng.choice(denominators, size=shape)
    flat = [sp.Rational(int(a), int(b)) for a, b in zip(p.ravel(), q.ravel())]
    return np.array(flat, dtype=object).reshape(shape)


def sampler(t: int):
    """The entry distribution of trial ``t``: (label, draw)."""
    return SAMPLERS[t % len(SAMPLERS)]


def _matrix_text(a) -> str:
    return str(np.asarray(a).tolist())


def _fixed(name: str, seed: int, shape: tuple, low: int, high: int):
    """A fixed random integer matrix of ``shape`` for the function ``name`` (the same at every call)."""
    r = np.random.default_rng([seed, *shape, zlib.crc32(name.encode())])
    return r.integers(low, high + 1, size=shape)


#: number of score-function instances; kind 0 is bilinear, the others are not
SCORE_KINDS = 4


def score_instance(kind: int, name: str, seed: int):
    """An instance of the score function ``name``: (float f, exact f, text).

    kind 0: f(Q, K) = Kᵀ M Q; 1: its elementwise square; 2: exp of Kᵀ M Q / 4, elementwise;
    3: Kᵀ Q + C with a constant matrix C (m × n) for each shape. M (d_k × d_k) is fixed per d_k and
    C per (m, n), so f is a function of (Q, K) within one sample.
    """
    kind %= SCORE_KINDS
    made: dict = {}

    def M(d):
        if ("M", d) not in made:
            made[("M", d)] = _fixed(name, seed, (d, d), -2, 2)
        return made[("M", d)]

    def C(m, n):
        if ("C", m, n) not in made:
            made[("C", m, n)] = _fixed(name, seed + 1, (m, n), -3, 3)
        return made[("C", m, n)]

    def f_float(Q, K):
        if kind == 3:
            return K.T @ Q + C(K.shape[-1], Q.shape[-1])
        S = K.T @ M(Q.shape[-2]) @ Q
        return S if kind == 0 else S * S if kind == 1 else np.exp(S / 4)

    def f_exact(Q, K):
        if kind == 3:
            return K.T * Q + sp.ImmutableMatrix(C(K.cols, Q.cols).tolist())
        S = K.T * sp.ImmutableMatrix(M(Q.rows).tolist()) * Q
        if kind == 0:
            return S
        if kind == 1:
            return S.applyfunc(lambda x: x**2)
        return S.applyfunc(lambda x: sp.exp(x / 4))

    def text():
        head = f"{name}(Q, K) := " + ("Kᵀ·M·Q", "(Kᵀ·M·Q)∘(Kᵀ·M·Q), the elementwise square of a bilinear form",
                                      "exp(Kᵀ·M·Q / 4), elementwise", "Kᵀ·Q + C, a constant matrix C added")[kind]
        parts = [f"{'M' if key[0] == 'M' else 'C'} = {_matrix_text(v)}" for key, v in made.items()]
        return head + (" with " + "; ".join(parts) if parts else "")

    return f_float, f_exact, text


def scalar_functions(*exprs) -> dict:
    """The undefined scalar functions in the claim (e.g. θ in RoPE's θ_i) -> their number of arguments."""
    found = {}
    for e in exprs:
        for x in sp.preorder_traversal(e):
            if isinstance(x, AppliedUndef):
                found.setdefault(x.func, len(x.args))
    return dict(sorted(found.items(), key=lambda item: str(item[0])))


_COEFFS = (sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(2, 3), sp.Integer(1), sp.Rational(3, 2),
           sp.Rational(-1, 2), sp.Rational(2, 5), sp.Integer(2))


def satisfies(value, facts: dict) -> bool:
    """True when the number ``value`` has every assumption in ``facts`` (e.g. {"positive": True})."""
    v = sp.sympify(value)
    return all(getattr(v, f"is_{fact}", None) in (None, held) for fact, held in facts.items())


def assumptions(x) -> dict:
    """The assumptions declared on a symbol or an undefined function (commutativity aside)."""
    facts = x.default_assumptions if isinstance(x, type) else x.assumptions0
    return {k: v for k, v in facts.items() if k != "commutative"}


def scalar_values(symbol, rational: bool) -> list:
    """Small values for a free scalar that satisfy its assumptions; non-integers too when ``rational``
    and the scalar is declared real (a plain symbol may stand for an exponent or a position)."""
    pool = [sp.Integer(v) for v in (-2, -1, 0, 1, 2, 3)]
    if rational and symbol.is_real:
        pool += [sp.Rational(1, 2), sp.Rational(-1, 3), sp.Rational(3, 2), sp.Rational(-5, 2)]
    facts = assumptions(symbol)
    return [v for v in pool if satisfies(v, facts)]


def function_instance(F, arity: int, rng):
    """An instance of the undefined function F: (Lambda, text).

    F(x_1, ..., x_k) := c_0 + c_1 x_1 + ... + c_k x_k + c x_1² with small rational c's; a function
    declared with assumptions (``Function("theta", positive=True)``) becomes a constant that
    satisfies them, or None when no small constant does.
    """
    arity = max(arity, 1)
    xs = sp.symbols(f"x_1:{arity + 1}", cls=sp.Dummy)
    shown = sp.symbols(f"x_1:{arity + 1}") if arity > 1 else (sp.Symbol("x"),)
    facts = assumptions(F)
    if facts:
        fits = [c for c in _COEFFS + (sp.Integer(3),) if satisfies(c, facts)]
        if not fits:
            return None
        c = fits[int(rng.integers(len(fits)))]
        return sp.Lambda(xs, c), f"{F}({', '.join(map(str, shown))}) := {c}, a constant with the assumptions of {F}"
    c = [_COEFFS[int(k)] for k in rng.integers(0, len(_COEFFS), size=arity + 2)]
    body = c[0] + sum(ci * x for ci, x in zip(c[1:], xs)) + c[-1] * xs[0] ** 2
    text = f"{F}({', '.join(map(str, shown))}) := {sp.sstr(body.xreplace(dict(zip(xs, shown))))}"
    return sp.Lambda(xs, body), text


def instantiate_functions(expr, instances: dict):
    """``expr`` with each undefined function F applied replaced by its instance (a Lambda)."""
    for F, lam in instances.items():
        expr = expr.replace(F, lam)
    return expr
