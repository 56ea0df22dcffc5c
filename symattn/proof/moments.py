"""Expectations of polynomials in standardized random vectors, symbolic in their length.

A :class:`StandardVector` q of length d (a symbol or an integer) has entries q_1, ..., q_d
that are independent with E[q_a] = 0 and Var(q_a) = 1; distinct StandardVectors are
independent of each other. No distribution is assumed, so only first and second moments are
known: a term that needs a higher moment (E[q_a³], E[q_a⁴], ...) is reported as
undetermined, never guessed.

The rules (the trust base of :func:`expectation`), each true under these assumptions:

- ``expand_sums``: (Σ_i a_i)(Σ_j b_j) = Σ_i Σ_j a_i b_j, with a fresh bound index for every
  copy of a sum (so (Σ_i a_i)² never captures an index), and products distributed over +;
- linearity: E[a + b] = E[a] + E[b], E[c·a] = c·E[a] for c not random, and
  E[Σ_{i=1}^{d} a_i] = Σ_{i=1}^{d} E[a_i] (a finite sum);
- independence: E[f(q)·g(k)] = E[f(q)]·E[g(k)] for distinct vectors q and k;
- moments of one vector: E[1] = 1, E[q_a] = 0, E[q_a q_b] = δ_ab (for a ≠ b independence
  gives E[q_a]E[q_b] = 0; for a = b, E[q_a²] = Var(q_a) + E[q_a]² = 1);
- delta summation: Σ_{b=1}^{d} δ_ab F(b) = F(a) when a also ranges over 1..d, and
  Σ_{a=1}^{d} c = d·c for c free of a.

>>> import sympy as sp
>>> from symattn import dims
>>> d_k = dims("d_k")
>>> q, k = StandardVector("q", d_k), StandardVector("k", d_k)
>>> expectation(dot(q, k))[0], expectation(dot(q, k) ** 2)[0]
(0, d_k)
"""

from __future__ import annotations

import itertools

import sympy as sp

from ..printing import dummy_names, text

_COUNTER = itertools.count(1)


class Undetermined(Exception):
    """The expectation needs a moment that mean 0 and variance 1 do not fix."""


class StandardVector(sp.IndexedBase):
    """A random vector of length ``length`` with independent, zero-mean, unit-variance entries."""

    def __new__(cls, name, length):
        if isinstance(length, (tuple, sp.Tuple)):  # rebuilt from its args (xreplace, subs): the shape
            (length,) = length
        return super().__new__(cls, name, shape=(sp.sympify(length),))

    @property
    def length(self):
        return self.shape[0]


class Expectation(sp.Function):
    """E[x], left unevaluated; :func:`reduce_expectations` evaluates it by the rules above."""

    nargs = 1

    def _sympystr(self, printer):
        return f"E[{printer._print(self.args[0])}]"


def variance(x):
    """Var(x) = E[x²] - E[x]²."""
    return Expectation(x**2) - Expectation(x) ** 2


def dot(q: StandardVector, k: StandardVector):
    """qᵀk = Σ_{i=1}^{d} q_i k_i (the two vectors must have the same length)."""
    if sp.expand(q.length - k.length) != 0:
        raise ValueError(f"dot(q, k): lengths {q.length} and {k.length} differ")
    i = sp.Dummy("i", integer=True, positive=True)
    return sp.Sum(q[i] * k[i], (i, 1, q.length))


def _terms(x):
    """x as a list of (limits, monomial-free-of-Sum): x = Σ over terms of Σ_limits body."""
    if isinstance(x, sp.Sum):
        (i, lo, hi), = x.limits
        out = []
        for lims, body in _terms(x.function):
            fresh = sp.Dummy(f"{i.name}{next(_COUNTER)}", integer=True)
            ren = {i: fresh}
            out.append((((fresh, lo, hi),) + tuple((j, a.xreplace(ren), b.xreplace(ren)) for j, a, b in lims),
                        body.xreplace(ren)))
        return out
    if isinstance(x, sp.Add):
        return [t for a in x.args for t in _terms(a)]
    if isinstance(x, sp.Mul):
        out = [((), sp.Integer(1))]
        for f in x.args:
            out = [(l1 + l2, b1 * b2) for l1, b1 in out for l2, b2 in _terms(f)]
        return out
    if isinstance(x, sp.Pow) and x.exp.is_Integer and x.exp > 0 and x.base.has(sp.Sum, sp.Indexed):
        out = [((), sp.Integer(1))]
        for _ in range(int(x.exp)):
            out = [(l1 + l2, b1 * b2) for l1, b1 in out for l2, b2 in _terms(x.base)]
        return out
    if x.has(sp.Sum):
        raise Undetermined(f"cannot expand {sp.sstr(x)[:80]} into sums of monomials")
    return [((), x)]


def _moment(monomial):
    """E[monomial] by independence and the first two moments; 0, 1, or a product of deltas."""
    coeff, indexed = sp.Integer(1), {}
    for f in sp.Mul.make_args(monomial):
        base, e = f.as_base_exp()
        if isinstance(base, sp.Indexed) and isinstance(base.base, StandardVector):
            if not (e.is_Integer and e > 0):
                raise Undetermined(f"E[{sp.sstr(f)}] is not a moment")
            indexed.setdefault(base.base, []).extend([base.indices[0]] * int(e))
        elif f.has(sp.Indexed):
            raise Undetermined(f"{sp.sstr(f)} is not an entry of a StandardVector")
        else:
            coeff *= f
    out = coeff
    for vec, idx in indexed.items():
        if len(idx) == 1:
            return sp.Integer(0)
        if len(idx) > 2:
            raise Undetermined(
                f"E[{' '.join(f'{vec}_{sp.sstr(a)}' for a in idx)}] needs moments of order "
                f"{len(idx)}, which mean 0 and variance 1 do not fix"
            )
        out *= sp.KroneckerDelta(*idx)
    return out


def _sum_out(limits, body):
    """Σ over ``limits`` of ``body`` (a product of deltas and constants), by delta summation."""
    limits = list(limits)
    ranges = {i: (lo, hi) for i, lo, hi in limits}
    changed = True
    while changed:
        changed = False
        for delta in body.atoms(sp.KroneckerDelta):
            a, b = delta.args
            if b in ranges and a in ranges and ranges[a] == ranges[b] and a != b:
                body = body.xreplace({b: a})
                limits = [(i, lo, hi) for i, lo, hi in limits if i != b]
                del ranges[b]
                changed = True
                break
    for i, lo, hi in reversed(limits):
        if body.has(i):
            raise Undetermined(f"the sum over {i} of {sp.sstr(body)[:80]} does not close")
        body = body * (hi - lo + 1)
    return body


def _show(limits, body) -> str:
    if not limits:
        return text(body)
    names = dummy_names(*(i for i, _, _ in limits), body)
    idx = ", ".join(text(i, names=names) for i, _, _ in limits)
    lo, hi = limits[0][1], limits[0][2]
    same = all((a, b) == (lo, hi) for _, a, b in limits)
    rng = f"={text(lo)}..{text(hi)}" if same else ""
    return f"Σ_{{{idx}{rng}}} {text(body, names=names)}"


def expectation(x) -> tuple[sp.Expr, list[str]]:
    """E[x] by the rules of this module: (value, trace of the derivation)."""
    x = sp.sympify(x)
    terms = _terms(x)
    total, expanded, moments = sp.Integer(0), [], []
    for limits, body in terms:
        monos = sp.Add.make_args(sp.expand(body))
        expanded.append(_show(limits, Expectation(sp.Add(*monos))))
        m = sp.Add(*[_moment(mono) for mono in monos])
        moments.append(_show(limits, m))
        for part in sp.Add.make_args(sp.expand(m)):
            if part != 0:
                total += _sum_out(limits, part)
    value = sp.simplify(total)
    return value, [
        f"E[{text(x, 120)}]",
        f"  = {' + '.join(expanded)[:200]}   (expand sums, linearity)",
        f"  = {' + '.join(moments)[:200]}   (independence; E[q_a] = 0, E[q_a q_b] = δ_ab)",
        f"  = {text(value)}   (delta summation)",
    ]


def reduce_expectations(x) -> tuple[sp.Expr, list[str]]:
    """Replace every :class:`Expectation` in ``x`` by its value: (expression, trace)."""
    trace: list[str] = []

    def ev(arg):
        value, t = expectation(arg)
        trace.extend(t)
        return value

    return x.replace(lambda e: isinstance(e, Expectation), lambda e: ev(e.args[0])), trace
