r"""Checking a scalar or vector derivation (read by :mod:`.scalars`) step by step.

The parts: the values of the expressions (:mod:`.scalar_values`), the proofs
(:mod:`.scalar_prove`, through :mod:`symattn.proof.maxcases`), the counterexamples and the
independent exact evaluation (:mod:`.scalar_refute`), the slips (:mod:`.scalar_slips`).

What "proved" means (:func:`check_scalar_document`): a step between scalars is proved by
:func:`~symattn.proof.maxcases.prove_scalar` (exact rewriting, maxima as opaque reals, then a
case split on the largest entry), for every length B and every real entry. A step between
vectors is proved block by block, at a symbolic index. A chain about a running sequence (its
first side d_j, d defined by ``\leftarrow``) is read as the paper's proof by induction on j, for
every j in 1..V:

- first the running values are shown finite at every j >= 1 (:meth:`Prover.finite_from_one`);
- j = 1, ..., c (c the largest offset in m_{j-c}, and beyond which every sum's range is a range):
  the recurrences are unfolded down to the initial values, which are used exactly
  (e^{-\infty} = 0, \max(-\infty, a) = a); the running maxima m_t with t >= 1 stay opaque
  reals, or are unfolded too when the step needs it;
- every larger j, symbolically: the step is proved as it stands, or after unfolding the
  recurrence of a value at the top index (d_j), or using the induction hypothesis
  d_{j-1} = e(j-1), where e is an expression of the chain after which every step is proved:
  the steps up to e prove d_j = e(j) at j = 1 directly and at every j >= 2 from the claim at
  j - 1, which is the induction. The scope of a step says which of these it used.

A step that is not proved is refuted only by a certified counterexample: small lengths and
integer entries (the running values computed exactly by their recurrences), both sides
evaluated exactly, the difference shown nonzero by :func:`~symattn.proof.certify.certify_nonzero`.
Then the usual slips of these papers are tried (:func:`diagnose`): a rescaling factor
e^{m(u) - m(v)} dropped, and an off-by-one in a running index or a sum's bound.
"""

from __future__ import annotations

import time

import sympy as sp

from ..errors import BudgetExceeded, DerivationError, SymattnError
from ..proof.verdict import general_scope, refuted, unknown
from . import scalar_bounds as B
from . import scalars as S
from .model import Report, Step
from .scalar_prove import Prover
from .scalar_refute import Refuter
from .scalar_slips import CATALOGUE, diagnose
from .scalar_values import Elaborator, Vec

__all__ = ["Elaborator", "Prover", "Refuter", "check_scalar_document", "diagnose"]


def check_scalar_document(text: str, *, source: str = "<text>", budget: float = 20.0,
                          diagnose_steps: bool = True) -> Report:
    """Read (:mod:`.scalars`) and check a scalar or vector derivation; the report has one entry per step.

    A failure of the reader itself (a Python error, never a verdict) is raised as a DerivationError
    that says so, so that ``symattn check --json`` still prints a JSON object."""
    try:
        return _check_scalar_document(text, source, budget, diagnose_steps)
    except SymattnError:  # a refusal (ParseError, DerivationError) or a SoundnessError: as it is
        raise
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError) as exc:
        raise DerivationError(f"the scalar reader failed on this file ({type(exc).__name__}: {str(exc)[:200]}): "
                              "a bug of symattn, not of the derivation; please report it with the file", 0, 0) from exc


def _check_scalar_document(text: str, source: str, budget: float, diagnose_steps: bool) -> Report:
    start = time.perf_counter()
    stmts = S.parse_scalar_document(text)
    el = Elaborator(stmts)
    pr = Prover(el, budget=min(budget, 10.0))
    notes = ["scalar reader: real numbers, vectors of any length and running values (\\max, \\leftarrow)"]
    notes += el.notes
    steps: list = []
    for chain_no, st in enumerate(el.chains):
        steps.extend(_check_chain(el, pr, st, len(steps), chain_no))
    proved = [s for s in steps if s.status == "proved"]
    if proved:
        refuter = Refuter(el, pr)
        agreed = [refuter.agree(s.lhs_expr, s.rhs_expr) for s in proved]
        notes.append(f"exact instances: the {len(proved)} proved steps agree at {sum(agreed)} random exact instances "
                     "(evaluated apart from the proofs: lengths 1..3, integer entries small and far apart, "
                     "the recurrences run)")
    report = Report(source, steps, el.definitions, notes)
    if diagnose_steps:
        for s in steps:
            if s.status == "refuted":
                s.diagnosis = diagnose(el, pr, s)
    report.seconds = time.perf_counter() - start
    return report


def _values(el, st):
    nodes = [st.first] + [n for _, n in st.links]
    vals = []
    for n in nodes:
        try:
            vals.append(el.value(n, {}))
        except DerivationError as exc:
            vals.append(exc)
    return nodes, vals


def _check_chain(el, pr, st, offset, chain_no) -> list:
    nodes, vals = _values(el, st)
    steps = []
    for k, (pos, node) in enumerate(st.links, start=1):
        s = Step(offset + k, S.latex(nodes[k - 1]), S.latex(node), S.latex(nodes[k - 1]), S.latex(node), "=", pos,
                 lhs_expr=vals[k - 1], rhs_expr=vals[k], lhs_node=nodes[k - 1], rhs_node=node)
        s.chain = chain_no
        s.slips_tried = CATALOGUE  # the words of a report when no slip explains a refuted step
        steps.append(s)
    subject = vals[0]
    hyps = [None]
    if (pr.j is not None and isinstance(subject, sp.core.function.AppliedUndef) and subject.func in pr.funs
            and subject.args[0] == pr.j):
        prior = subject.func(pr.j - 1)
        hyps = [(prior, vals[h].xreplace({pr.j: pr.j - 1}), h) for h in range(len(vals) - 1, 0, -1)
                if not isinstance(vals[h], Exception) and not isinstance(vals[h], Vec)
                and not vals[h].has(subject.func)] + [None]
    running = len(hyps) > 1 or (pr.j is not None and isinstance(subject, sp.core.function.AppliedUndef)
                                and subject.func in pr.funs and subject.args[0] == pr.j)
    for s in steps:  # what the diagnosis needs to re-read the chain with a step corrected
        s.chain_steps, s.chain_subject = steps, (subject if running else None)
    results = None
    for hyp in hyps:
        attempt = [_run_step(pr, s, hyp) for s in steps]
        upto = hyp[2] if hyp is not None else 0
        if hyp is None or all(a[0] == "proved" for a in attempt[:upto]):
            results = (attempt, hyp)
            break
    attempt, hyp = results
    for s, (status, verdict, how, error) in zip(steps, attempt):
        s.status, s.verdict, s.error = status, verdict, error
        if verdict is not None:
            s.general, s.method, s.seconds = verdict.general, verdict.method, verdict.seconds
        s.scope = _scope(el, pr, nodes, how, hyp) if status == "proved" else (verdict.scope if verdict else "")
        if status == "proved":
            # a claim that SymPy evaluated to a closed one (a b - b a = 0 is 0 = 0) has nothing left to vary
            s.general = s.general or (verdict.over is not None and not any(verdict.over)
                                      and verdict.scope == general_scope(((), (), ())))
            s.scope += _where_nonzero(el, (s.lhs_node, s.rhs_node))
    for s in steps:
        if s.status not in ("proved", "ill-formed") and s.verdict is not None and s.verdict.status == "unknown":
            cex = Refuter(el, pr).search(s.lhs_expr, s.rhs_expr, time.perf_counter() + min(pr.budget, 10.0))
            if cex is not None:
                s.verdict = refuted(cex, list(s.verdict.trace))
                s.status, s.scope, s.method = "refuted", s.verdict.scope, s.verdict.method
                if not cex.dims:  # a claim about numbers: no dimension was chosen
                    s.scope = "counterexample at the values shown"
    return steps


def _run_step(pr, s, hyp):
    L, R = s.lhs_expr, s.rhs_expr
    if isinstance(L, Exception) or isinstance(R, Exception):
        bad = L if isinstance(L, Exception) else R
        return "ill-formed", None, "", str(bad)
    try:
        v, how = pr.step(L, R, None if hyp is None else hyp[:2], (s.lhs_node, s.rhs_node))
    except DerivationError as exc:
        return "ill-formed", None, "", str(exc)
    except BudgetExceeded as exc:
        return "unknown", unknown([str(exc)]), "", ""
    return v.status, v, how, ""


def _where_nonzero(el, nodes) -> str:
    """'; where b != 0' for the divisors of the written step that are not known to be nonzero
    (a number, e^{...} and a value SymPy knows nonzero are not listed): a step such as
    \frac{a}{b} b = a holds only there (SymPy cancels b/b when it builds the value)."""
    seen = []
    stack = list(nodes)
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
        if not isinstance(n, S.N):
            continue
        stack.extend(n.parts)
        if n.kind != "div" or n.parts[1].kind in ("num", "exp"):
            continue
        try:
            v = el.value(n.parts[1], {})
            if not isinstance(v, Vec) and sp.sympify(v).is_zero is False:
                continue
        except DerivationError:
            pass
        shown = S.latex(n.parts[1])
        if shown not in seen:
            seen.append(shown)
    return "; where " + ", ".join(f"{d} != 0" for d in reversed(seen)) if seen else ""


def _scope(el, pr, nodes, how, hyp) -> str:
    """What a proved step holds for, in words: every length, every real entry, every j."""
    dims = sorted(str(d) for d in el.dims)
    if pr.j is not None and "symbolically" in how:
        lengths = ", ".join(dims) or "V"
        out = f"every {pr.j} in 1..{lengths}, all real entries: {how}"
    else:
        out = (f"every {', '.join(dims)} >= 1 and " if dims else "") + "".join(
            f"{B.text(b)}, " for b in el.bounds) + (
            "all real entries" if (el.vectors or el.reals) else "all values")
        if how:
            out += f"; {how}"
    if hyp is not None and "induction hypothesis" in how:
        out += (f" (steps 1..{hyp[2]} at {pr.j} - 1: {S.latex(nodes[0])} = {S.latex(nodes[hyp[2]])}, proved at the "
                f"first {pr.j} without it: an induction on {pr.j})")
    return out

