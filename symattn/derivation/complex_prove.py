r"""Proving a step of a complex-number derivation: its real parts agree, as real identities.

:func:`claim_pairs` gives the real numbers a step compares (the real and imaginary parts of complex
sides, the components of vectors, the entries of matrices; each member of a family ``\\{q,k\\}``);
:func:`real_identity` decides each difference by exact rewriting; :func:`prove_pairs` hands the
identities to the proof kernel, which audits each at exact instances before it seals a proof.
"""

from __future__ import annotations

import sympy as sp

from ..proof.kernel import combine, conclude
from ..proof.verdict import quantified, symbolic_proof
from .complex_values import instantiate

MAX_OPS = 20000
METHOD = "exact rewriting of real and imaginary parts (trig expansion, cos^2 + sin^2 = 1)"


def real_identity(d) -> bool:
    """True when the real expression ``d`` is 0 for every real value of its symbols (where defined):
    its numerator, with the cosines and sines of sums expanded, is 0 modulo cos^2 t + sin^2 t - 1 for
    every angle t. False means: not shown (never: shown false)."""
    d = sp.expand(sp.sympify(d), trig=True)
    if d == 0:
        return True
    num = sp.expand(sp.numer(sp.together(d)), trig=True)
    if num == 0:
        return True
    if sp.count_ops(num) > MAX_OPS:  # too large to reduce here: not shown
        return False
    angles = sorted({f.args[0] for f in num.atoms(sp.cos, sp.sin)}, key=sp.default_sort_key)
    subs, basis, gens = {}, [], []
    for k, t in enumerate(angles):
        c, s = sp.Dummy(f"c{k}"), sp.Dummy(f"s{k}")
        subs[sp.cos(t)], subs[sp.sin(t)] = c, s
        basis.append(c ** 2 + s ** 2 - 1)
        gens += [s, c]
    poly = num.xreplace(subs)
    if poly.has(sp.cos, sp.sin):
        return False
    if not basis:
        return sp.expand(poly) == 0
    others = sorted(poly.free_symbols - set(gens), key=str)
    try:
        _, rem = sp.reduced(poly, basis, *gens, *others, order="lex")
    except (sp.PolynomialError, sp.GeneratorsNeeded):
        return False
    return sp.expand(rem) == 0


def claim_pairs(meaning, a, b, members) -> tuple[list, set]:
    """The real parts the step a = b compares, (lhs part, rhs part, member), and how (R^2 = C)."""
    pairs, hows = [], set()
    meaning.calls, meaning.identified = 0, set()
    for m in members or [None]:
        x, y = (instantiate(a, m), instantiate(b, m)) if m else (a, b)
        L, Rv = meaning.value(x, {}), meaning.value(y, {})
        ls, rs, how = meaning.compare(L, Rv, b)
        pairs += [(p, q, m) for p, q in zip(ls, rs)]
        if how:
            hows.add(how)
    return pairs, hows | meaning.identified


def prove_pairs(pairs, scope: str = ""):
    """The proved verdict of a claim whose parts are all real identities, or None."""
    if not all(real_identity(p - q) for p, q, _ in pairs):
        return None
    verdicts = []
    for p, q, _ in pairs:
        syms = sorted(sp.sympify(p).free_symbols | sp.sympify(q).free_symbols, key=str)
        found = symbolic_proof(METHOD, [f"{sp.sstr(p)[:160]} = {sp.sstr(q)[:160]}"], quantified(scalars=syms))
        verdicts.append(conclude(p, q, found, scalar=True))
    if not all(v.proved for v in verdicts):
        return None
    if len(verdicts) == 1:
        return verdicts[0]
    return combine(verdicts, METHOD, scope or "every part", [line for w in verdicts for line in w.trace], True)
