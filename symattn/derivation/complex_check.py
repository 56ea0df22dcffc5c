r"""Checking a complex-number derivation (read by :mod:`.complex_reader`, meant by :mod:`.complex_values`).

Each side of a step is a real number, a complex number (its real and imaginary parts), a vector of R^2
or a 2 × 2 matrix, every part a real expression in the real letters of the file. A step is the claim
that the parts agree: each is proved as a real identity by exact rewriting (:func:`real_identity`: the
cosines and sines of sums expanded, the numerator of the difference reduced modulo cos^2 t + sin^2 t = 1
for each angle t), for **all real values** of the letters (where the divisors written are nonzero), then
audited at exact instances by the kernel. A step that is not proved is refuted only by a certified
counterexample: small integer values for the letters, both sides evaluated exactly, the difference of
one part shown nonzero by interval arithmetic (:func:`~symattn.proof.certify.certify_nonzero`).
"""

from __future__ import annotations

import itertools
import random
import time

import numpy as np
import sympy as sp

from ..errors import DerivationError, ParseError, SymattnError
from ..proof.certify import certify_nonzero
from ..proof.kernel import combine, conclude
from ..proof.verdict import Counterexample, quantified, refuted, symbolic_proof, unknown
from . import complex_reader as R
from .complex_values import Meaning, instantiate, walk
from .model import Report, Step

VALUES = (1, 2, -1, 3, 0, -2)
MAX_INSTANCES = 300
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


def check_complex_document(text: str, *, source: str = "<text>", budget: float = 20.0,
                           diagnose_steps: bool = True) -> Report:
    """Read and check a complex-number derivation (RoPE's complex form); one report entry per step."""
    try:
        return _check(text, source, budget)
    except SymattnError:
        raise
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError) as exc:
        raise DerivationError(f"the complex reader failed on this file ({type(exc).__name__}: {str(exc)[:200]}): "
                              "a bug of symattn, not of the derivation; please report it with the file", 0, 0) from exc


def _check(text: str, source: str, budget: float) -> Report:
    start = time.perf_counter()
    meaning = Meaning(R.parse_complex_document(text))
    steps: list = []
    for chain_no, ch in enumerate(meaning.claims):
        nodes = [ch.first] + [n for _, n in ch.links]
        members = [m for m, _ in meaning.claim_parts(N_all(nodes)) if m is not None]
        for k, (pos, node) in enumerate(ch.links, start=1):
            a, b = nodes[k - 1], node
            s = Step(len(steps) + 1, R.source_text(text, a), R.source_text(text, b), R.source_text(text, a),
                     R.source_text(text, b), "=", pos, lhs_node=a, rhs_node=b)
            s.chain = chain_no
            _check_step(meaning, s, a, b, members, budget)
            steps.append(s)
    notes = ["complex reader: real letters; i the imaginary unit; a vector of R^2 used as a complex number read "
             "as x_1 + i x_2 (R^2 = C, RoPE's identification)"]
    if meaning.undeclared:
        notes.append(f"not declared, read as real numbers: {', '.join(sorted(meaning.undeclared))}")
    report = Report(source, steps, meaning.definitions, notes)
    report.seconds = time.perf_counter() - start
    return report


def N_all(nodes) -> R.N:
    return R.N("all", tuple(nodes))


def _check_step(meaning, s, a, b, members, budget):
    t0 = time.perf_counter()
    pairs, hows = [], set()
    try:
        for m in members or [None]:
            x, y = (instantiate(a, m), instantiate(b, m)) if m else (a, b)
            L, Rv = meaning.value(x, {}), meaning.value(y, {})
            ls, rs, how = meaning.compare(L, Rv, b)
            pairs += [(p, q, m) for p, q in zip(ls, rs)]
            if how:
                hows.add(how)
    except ParseError:  # a refusal (i an index and a factor): the file is not read
        raise
    except DerivationError as exc:
        s.status, s.error = "ill-formed", str(exc)
        return
    s.lhs_expr = sp.Tuple(*[p for p, _, _ in pairs])
    s.rhs_expr = sp.Tuple(*[q for _, q, _ in pairs])
    if all(real_identity(p - q) for p, q, _ in pairs):
        verdicts = []
        for p, q, _ in pairs:
            syms = sorted(sp.sympify(p).free_symbols | sp.sympify(q).free_symbols, key=str)
            found = symbolic_proof(METHOD, [f"{sp.sstr(p)[:160]} = {sp.sstr(q)[:160]}"], quantified(scalars=syms))
            verdicts.append(conclude(p, q, found, scalar=True))
        if all(v.proved for v in verdicts):
            scope = _scope(meaning, pairs, members, hows, (a, b))
            v = verdicts[0] if len(verdicts) == 1 else combine(verdicts, METHOD, scope, [
                line for w in verdicts for line in w.trace], True)
            s.status, s.verdict, s.scope, s.method, s.general = "proved", v, scope, METHOD, True
            s.seconds = time.perf_counter() - t0
            return
    cex = _counterexample(meaning, pairs, time.perf_counter() + min(budget, 10.0))
    if cex is not None:
        s.verdict = refuted(cex, ["the parts compared: " + "; ".join(f"{sp.sstr(p)[:120]} = {sp.sstr(q)[:120]}"
                                                                        for p, q, _ in pairs)[:600]])
        s.status, s.scope, s.method = "refuted", "counterexample at the values shown", s.verdict.method
    else:
        s.verdict = unknown(["neither an exact rewriting nor a counterexample at small integer values was found"])
        s.status, s.scope, s.method = "unknown", s.verdict.scope, "none"
    s.seconds = time.perf_counter() - t0


def _scope(meaning, pairs, members, hows, nodes) -> str:
    syms = sorted({str(x) for p, q, _ in pairs for x in sp.sympify(p).free_symbols | sp.sympify(q).free_symbols})
    out = f"all real values of {', '.join(syms)}" if syms else "as stated (a closed claim)"
    if members:
        out += f"; for each of {', '.join(members)} in \\{{{','.join(members)}\\}}"
    und = sorted(set(meaning.undeclared) & set(syms))
    if und:
        out += f"; {', '.join(und)} not declared, read as real numbers"
    if hows:
        out += "; " + "; ".join(sorted(hows))
    divisors = []
    for n in walk(R.N("all", tuple(nodes))):
        if n.kind == "div" and n.parts[1].kind != "num":
            txt = _plain(n.parts[1])
            if txt not in divisors:
                divisors.append(txt)
    return out + ("; where " + ", ".join(f"{d} != 0" for d in divisors) if divisors else "")


def _plain(node) -> str:
    if node.kind == "name":
        return node.parts[0].text()
    return "the divisor at line {}, column {}".format(*node.pos)


def _instances(syms):
    """Values for the letters: first each letter its own (1, 2, 3, ...), then small integers, the same
    draws in every process (a generator seeded with the letters' names)."""
    yield tuple(1 + k for k in range(len(syms)))
    if len(syms) <= 3:
        yield from itertools.product(VALUES, repeat=len(syms))
        return
    rng = random.Random(",".join(str(x) for x in syms))
    for _ in range(MAX_INSTANCES):
        yield tuple(rng.choice(VALUES) for _ in syms)


def _counterexample(meaning, pairs, deadline):
    syms = sorted({x for p, q, _ in pairs for x in sp.sympify(p).free_symbols | sp.sympify(q).free_symbols}, key=str)
    for count, combo in enumerate(_instances(syms)):
        if count >= MAX_INSTANCES or time.perf_counter() > deadline:
            return None
        at = dict(zip(syms, (sp.Integer(v) for v in combo)))
        left, right = [], []
        try:
            for p, q, _ in pairs:
                lv, rv = sp.sympify(p).xreplace(at), sp.sympify(q).xreplace(at)
                if lv.has(sp.zoo, sp.nan, sp.oo, -sp.oo) or rv.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
                    raise ZeroDivisionError
                left.append(lv)
                right.append(rv)
        except ZeroDivisionError:
            continue
        for t, (lv, rv) in enumerate(zip(left, right)):
            diff = sp.expand(lv - rv)
            cert = certify_nonzero(diff)
            if cert:
                values = {str(k): np.array([int(v)]) for k, v in at.items()}
                return Counterexample({}, values, np.array([float(sp.N(x)) for x in left]),
                                      np.array([float(sp.N(x)) for x in right]), sp.Matrix(left), sp.Matrix(right),
                                      (t, 0), diff, cert)
    return None
