r"""Checking a complex-number derivation (read by :mod:`.complex_reader`, meant by :mod:`.complex_values`).

Each side of a step is a real number, a complex number (its real and imaginary parts), a vector of R^2
or a 2 × 2 matrix, every part a real expression in the real letters of the file. A step is the claim
that the parts agree: each is proved as a real identity by exact rewriting (:mod:`.complex_prove`: the
cosines and sines of sums expanded, the numerator of the difference reduced modulo cos^2 t + sin^2 t = 1
for each angle t), for **all real values** of the letters (where the divisors written are nonzero),
then audited at exact instances by the kernel. A step that is not proved is refuted only by a certified
counterexample: small integer values for the letters, both sides evaluated exactly, the difference of
one part shown nonzero by interval arithmetic (:func:`~symattn.proof.certify.certify_nonzero`); then
the usual slips are tried (:mod:`.complex_slips`).
"""

from __future__ import annotations

import itertools
import random
import time

import numpy as np
import sympy as sp

from ..errors import DerivationError, ParseError, SymattnError
from ..proof.certify import certify_nonzero
from ..proof.verdict import Counterexample, refuted, unknown
from . import complex_reader as R
from .complex_prove import METHOD, claim_pairs, prove_pairs
from .complex_slips import diagnose
from .complex_values import Meaning, walk
from .model import Report, Step

SLIPS = "the relative position reversed (n - m for m - n), a conjugate dropped, the exponent's sign"

VALUES = (1, 2, -1, 3, 0, -2)
MAX_INSTANCES = 300


def check_complex_document(text: str, *, source: str = "<text>", budget: float = 20.0,
                           diagnose_steps: bool = True) -> Report:
    """Read and check a complex-number derivation (RoPE's complex form); one report entry per step."""
    try:
        return _check(text, source, budget, diagnose_steps)
    except SymattnError:
        raise
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError) as exc:
        raise DerivationError(f"the complex reader failed on this file ({type(exc).__name__}: {str(exc)[:200]}): "
                              "a bug of symattn, not of the derivation; please report it with the file", 0, 0) from exc


def _check(text: str, source: str, budget: float, diagnose_steps: bool) -> Report:
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
            _check_step(meaning, s, a, b, members, budget, text, diagnose_steps)
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


def _check_step(meaning, s, a, b, members, budget, text, diagnose_steps):
    t0 = time.perf_counter()
    try:
        pairs, hows = claim_pairs(meaning, a, b, members)
    except ParseError:  # a refusal (i an index and a factor): the file is not read
        raise
    except DerivationError as exc:
        s.status, s.error = "ill-formed", str(exc)
        return
    s.lhs_expr = sp.Tuple(*[p for p, _, _ in pairs])
    s.rhs_expr = sp.Tuple(*[q for _, q, _ in pairs])
    s.slips_tried = SLIPS
    scope = _scope(meaning, pairs, members, hows, (a, b), text)
    v = prove_pairs(pairs, scope)
    if v is not None:
        s.status, s.verdict, s.scope, s.method, s.general = "proved", v, scope, METHOD, True
        s.seconds = time.perf_counter() - t0
        return
    cex = _counterexample(meaning, pairs, time.perf_counter() + min(budget, 10.0))
    if cex is not None:
        s.verdict = refuted(cex, ["the parts compared: " + "; ".join(f"{sp.sstr(p)[:120]} = {sp.sstr(q)[:120]}"
                                                                        for p, q, _ in pairs)[:600]])
        s.status, s.scope, s.method = "refuted", "counterexample at the values shown", s.verdict.method
        if diagnose_steps:
            s.diagnosis = diagnose(meaning, a, b, members, text)
    else:
        s.verdict = unknown(["neither an exact rewriting nor a counterexample at small integer values was found"])
        s.status, s.scope, s.method = "unknown", s.verdict.scope, "none"
    s.seconds = time.perf_counter() - t0


def _scope(meaning, pairs, members, hows, nodes, text) -> str:
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
            txt = R.source_text(text, n.parts[1])
            if txt not in divisors:
                divisors.append(txt)
    return out + ("; where " + ", ".join(f"{d} != 0" for d in divisors) if divisors else "")


def _instances(syms):
    """Values for the letters: small integers (all of them for up to 3 letters, else random draws, the
    same in every process: a generator seeded with the letters' names), then each letter its own."""
    if len(syms) <= 3:
        yield from itertools.product(VALUES, repeat=len(syms))
    else:
        rng = random.Random(",".join(str(x) for x in syms))
        for _ in range(MAX_INSTANCES - 1):
            yield tuple(rng.choice(VALUES) for _ in syms)
    yield tuple(1 + k for k in range(len(syms)))


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
