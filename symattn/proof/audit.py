"""An independent audit of every "proved": the claim checked at random exact instances.

Before the proof kernel (:mod:`symattn.proof.kernel`) makes a proved verdict, general or at given
dimensions, :func:`run_audit` evaluates both sides at a few
(default 4) random exact instances with the audit's own interpreter
(:mod:`symattn.proof.audit_eval`, on the draws of :mod:`symattn.proof.audit_instance`), which
shares no code with the strategies' evaluation and substitution:

- dimensions drawn from 2..3 and 1..3 in turn (up to 8 when a symbol's assumptions need it,
  e.g. ``even=True``);
  for a verdict proved at given dimensions, exactly those dimensions;
- integer entries in -3..3 for every input matrix (a MatrixSymbol, a Family member at each
  index value), a random permutation for each symbolic permutation, integers for free scalars
  (respecting their assumptions), each score function instantiated in turn as a bilinear
  Kᵀ M Q, the elementwise square of Kᵀ Q, and the elementwise exp of Kᵀ M Q, and small
  rationals for uninterpreted scalar functions such as RoPE's θ(i); once an instance's
  enclosures are too wide to decide at every precision (a stack of many attention layers, whose
  values grow with each layer), that instance and the next are drawn with entries k/16 instead;
- values exact where possible and certified intervals (mpmath.iv, outward rounding) where
  exp, sqrt, cos or sin enter, at 128 bits and, when an enclosure is too wide to decide, at
  256 and 512 bits.

If some entry of the two sides is certified different (exactly, or by disjoint enclosures), the
prover has proved a false claim: a :class:`~symattn.errors.SoundnessError` is raised with the
prover's trace and the instance, and no verdict is returned. Overlapping enclosures agree. An
instance where a side has no value (a singular inverse, a fully masked softmax column, a node
the interpreter does not know) is skipped and counted; an instance whose values have other shapes
than SymPy gives the expression (:class:`~symattn.proof.audit_numbers.Malformed`) ends the audit.
The result is an :class:`~symattn.proof.verdict.AuditRecord` with one trace line, e.g. "audit: 4
random exact instances agree"; the kernel seals a proof only when at least one instance agreed
and none was malformed. The instances depend only on the claim (the seed is a hash of its text),
so a claim is always audited the same way.
"""

from __future__ import annotations

import hashlib
import random
from fractions import Fraction

import sympy as sp
from mpmath import iv
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import Binder, FamilyMember
from ..defs.mask import PaddingMask
from ..defs.permutation import PermIndex, Permutation
from ..defs.score import Score
from ..errors import BudgetExceeded, SoundnessError
from . import audit_numbers as num
from . import dag
from .audit_eval import Evaluator
from .audit_expect import LAWS, Expectations
from .audit_instance import ENTRIES, POSITIVE_ENTRIES, SCORE_KINDS, Instance, admissible
from .audit_numbers import Malformed, Undecided, Unevaluable
from .budget import Budget
from .moments import Expectation
from .verdict import AuditRecord

DEFAULT_INSTANCES = 4
#: working precisions in bits: 128 resolves differences down to about 10^-30 of the values; the
#: higher ones serve enclosures too wide to decide (a floor near an integer, a denominator near 0)
PRECISIONS = (128, 256, 512)
#: seconds the audit of one claim may take; past it, the instances checked so far are reported
DEFAULT_SECONDS = 30.0
#: the sizes instance k draws each dimension from (cycled): every other instance avoids size 1,
#: where much is degenerate (one key: every softmax is 1; one row: every matrix has rank 1)
DIMENSIONS = ((2, 3), (1, 2, 3))
_NAMES_NOT_SYMBOLS = (FamilyMember, Permutation, Score, PermIndex)
#: the reason an instance is skipped when its enclosures stay too wide at every precision
WIDE = "an enclosure too wide to decide"
#: the entries drawn once an instance was too wide to decide (e.g. a stack of many attention
#: layers: with integer entries its scores grow with each layer, and so does the width of their
#: exp); they are exact rationals of the same signs, 16 times smaller
SMALL = {ENTRIES: tuple(Fraction(x, 16) for x in ENTRIES),
         POSITIVE_ENTRIES: tuple(Fraction(x, 16) for x in POSITIVE_ENTRIES)}
SMALL_TEXT = "k/16"


def claim_symbols(*exprs) -> tuple[list, list]:
    """(dimension symbols, free scalar symbols) of a claim, each sorted by name.

    Dimensions are the symbols of shapes, binder counts and padding lengths; scalars are every
    other free symbol. Indices bound by a binder or a sum are neither; the name symbols of
    families, permutations and score functions are not symbols of the claim.
    """
    dims, scalars = set(), set()
    shapes = dag.Shapes()
    seen: dict = {}  # (id of a node, bound) -> node: a subexpression shared by many nodes is walked once

    def walk(e, bound):
        if (id(e), bound) in seen:
            return
        seen[(id(e), bound)] = e
        if isinstance(e, sp.Symbol):
            if e not in bound:
                scalars.add(e)
            return
        if isinstance(e, (sp.Indexed, sp.IndexedBase)) or type(e).__name__ == "RandomSymbol":
            return
        if isinstance(e, MatrixExpr):
            for d in shapes(e):
                dims.update(s for s in sp.sympify(d).free_symbols if s not in bound)
        if isinstance(e, PaddingMask):
            dims.update(s for s in e.length.free_symbols if s not in bound)
        args = e.args
        if isinstance(e, _NAMES_NOT_SYMBOLS):
            args = args[1:]
        if isinstance(e, Binder):
            dims.update(s for s in e.count.free_symbols if s not in bound)
            walk(e.count, bound)
            walk(e.body, bound | {e.index})
            return
        if isinstance(e, (sp.Sum, sp.Product)):
            inner = frozenset(bound)
            for var, lo, hi in e.limits:
                walk(lo, inner)
                walk(hi, inner)
                inner = inner | {var}
            walk(e.function, inner)
            return
        for a in args:
            if isinstance(a, sp.Basic):
                walk(a, bound)

    for e in exprs:
        walk(sp.sympify(e), frozenset())
    scalars -= dims
    return sorted(dims, key=_order), sorted(scalars, key=_order)


def _order(s):
    """A sort key that does not depend on hashing: name, class, then creation order of Dummies."""
    return str(s), type(s).__name__, getattr(s, "dummy_index", 0) or 0


def _choose(rng, symbol, candidates) -> int:
    ok = [v for v in candidates if admissible(symbol, v)]
    if not ok:
        ok = [v for v in range(1, 9) if admissible(symbol, v)] or [v for v in range(-8, 1) if admissible(symbol, v)]
    if not ok:
        raise Unevaluable(f"no small integer satisfies the assumptions on {symbol}")
    return rng.choice(ok)


def _seed(*exprs) -> int:
    """A seed that depends only on the claim's structure: a digest of every node's class and of
    every leaf's printed form, computed once per distinct subexpression (a deep model's tree is
    exponentially larger than its DAG), and the same in every process (Dummies by name)."""
    memo: dict = {}

    def digest(e) -> bytes:  # memoized by identity (comparing deep trees built apart is exponential)
        if id(e) in memo:
            return memo[id(e)][1]
        if isinstance(e, sp.Basic) and e.args:
            parts = [type(e).__name__.encode()] + [digest(a) for a in e.args]
        else:
            parts = [type(e).__name__.encode(), sp.sstr(e).encode()]
        out = hashlib.sha256(b"\0".join(parts)).digest()
        memo[id(e)] = (e, out)
        return out

    whole = hashlib.sha256(b"\n".join(digest(sp.sympify(e)) for e in exprs)).digest()
    return int.from_bytes(whole[:8], "big")


def draw_instance(rng, k: int, dims, scalars, at=None, entries=ENTRIES) -> Instance:
    """Instance number ``k``: dimensions from ``at`` (cycled) when given, else drawn from
    ``DIMENSIONS[k]`` (cycled); input entries from ``entries``."""
    base = {}
    given = at[k % len(at)] if at else {}
    for d in dims:
        base[d] = int(given[d]) if d in given else _choose(rng, d, DIMENSIONS[k % len(DIMENSIONS)])
    for s in scalars:
        base[s] = _choose(rng, s, range(-3, 4))
    return Instance(rng, base, kind=k, entries=entries)


def _compare(L, R, prec):
    """(first disagreeing entry or None, every pair tight at ``prec``, every pair exact)."""
    if isinstance(L, list):
        if num_shape(L) != num_shape(R):
            return ("shape", num_shape(L), num_shape(R)), True, True
        pairs = (((i, j), a, b) for i, (ra, rb) in enumerate(zip(L, R)) for j, (a, b) in enumerate(zip(ra, rb)))
    else:
        pairs = iter([((0, 0), L, R)])
    all_tight = all_exact = True
    for entry, a, b in pairs:
        if num.disjoint(a, b):
            return (entry, a, b), all_tight, all_exact
        all_exact = all_exact and num.is_exact(a) and num.is_exact(b)
        all_tight = all_tight and num.tight(a, b, prec)
    return None, all_tight, all_exact


def num_shape(M):
    return len(M), (len(M[0]) if M else 0)


def check_instance(lhs, rhs, inst: Instance, scalar: bool = False) -> tuple[str, object]:
    """("agree", prec) or ("differ", (entry, lhs value, rhs value, prec, lhs, rhs)) at one instance,
    at rising precision; Unevaluable propagates. ``scalar``: the sides are numbers, not matrices."""
    saved = iv.prec
    try:
        for prec in PRECISIONS:
            iv.prec = prec
            if scalar:
                ev = Evaluator(inst, Expectations(inst.kind))
                side = ev.scalar
            else:
                ev = Evaluator(inst)
                side = ev.matrix
            try:
                L, R = side(sp.sympify(lhs)), side(sp.sympify(rhs))
                bad, all_tight, all_exact = _compare(L, R, prec)
            except Undecided:
                if prec == PRECISIONS[-1]:
                    raise Unevaluable(f"{WIDE} at {prec} bits") from None
                continue
            if bad is not None:
                return "differ", (*bad, prec, L, R)
            if all_exact or all_tight or prec == PRECISIONS[-1]:
                return "agree", prec
        return "agree", PRECISIONS[-1]
    finally:
        iv.prec = saved


def _show_matrix(M) -> str:
    if not isinstance(M, list):
        return num.show(M)
    return "[" + "; ".join(", ".join(num.show(x) for x in row) for row in M) + "]"


def _raise(lhs, rhs, prover_trace, method: str, inst: Instance, found) -> None:
    entry, a, b, prec, L, R = found
    claim = f"{sp.sstr(lhs)[:300]}  =  {sp.sstr(rhs)[:300]}"
    if entry == "shape":
        where = f"the sides evaluate to shapes {a} and {b}"
    else:
        where = (f"entry {entry} differs: lhs = {num.show(a)}, rhs = {num.show(b)} "
                 f"({'exactly' if num.is_exact(a) and num.is_exact(b) else f'disjoint enclosures at {prec} bits'})")
    audit_trace = [f"instance: {line}" for line in inst.describe()]
    audit_trace += [where, f"lhs = {_show_matrix(L)[:2000]}", f"rhs = {_show_matrix(R)[:2000]}"]
    prover = list(prover_trace)
    message = "\n".join(
        ["symattn proved a false claim: the audit found the two sides different at an exact instance.",
         f"  claim: {claim}",
         f"  proved by {method}",
         "  prover's trace:"] + [f"    {t}" for t in prover] +
        ["  audit's instance:"] + [f"    {t}" for t in audit_trace])
    raise SoundnessError(message, prover_trace=tuple(prover), audit_trace=tuple(audit_trace),
                         instance={"symbols": {str(k): v for k, v in inst.base.items()},
                                   "inputs": {lab: rows for lab, rows in inst.matrices.values()},
                                   "entry": entry, "lhs": a, "rhs": b})


def run_audit(lhs, rhs, *, prover_trace=(), method: str = "", scalar: bool = False, at=None,
              instances: int = DEFAULT_INSTANCES, seconds: float = DEFAULT_SECONDS) -> AuditRecord:
    """Audit a claim that a strategy proved at ``instances`` random exact instances and return the
    :class:`~symattn.proof.verdict.AuditRecord`; raise SoundnessError when an instance certifies
    the two sides different (``prover_trace`` and ``method`` go into its message). An instance
    whose shapes disagree with its values (:class:`~symattn.proof.audit_numbers.Malformed`) ends
    the audit: the record says why, and the kernel does not report the claim proved."""
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    expectations = scalar and (lhs.has(Expectation) or rhs.has(Expectation))
    try:
        dims, scalars = claim_symbols(lhs, rhs)
    except (Unevaluable, TypeError, ValueError, AttributeError) as exc:
        return AuditRecord(0, (f"the symbols of the claim cannot be read ({exc})",),
                           f"audit: skipped: the symbols of the claim cannot be read ({exc})")
    rng = random.Random(_seed(lhs, rhs))
    budget = Budget(seconds)
    agreed, skipped, precs, closed = 0, [], set(), False
    entries, redraw = ENTRIES, False
    kinds_used = set()
    try:
        with budget.limit(seconds, "the audit"):
            k, draws = -1, 2 * instances + 2
            while draws > 0 and agreed < instances:
                draws -= 1
                k = k + 1 if not redraw else k  # a redrawn instance keeps its number (its sizes)
                redraw = False
                try:
                    inst = draw_instance(rng, k, dims, scalars, at, entries)
                    outcome, info = check_instance(lhs, rhs, inst, scalar)
                except Malformed as exc:
                    why = f"the claim is malformed at an instance: {exc}"
                    return AuditRecord(0, (why,), f"audit: {why}", malformed=True)
                except Unevaluable as exc:
                    skipped.append(str(exc))
                    if "log of" in str(exc):  # the claim assumes positive arguments of its logarithms
                        entries = POSITIVE_ENTRIES
                    elif WIDE in str(exc) and entries not in SMALL.values():
                        # a deep claim, whose values grow with every layer: smaller entries keep its
                        # enclosures narrow; this instance is drawn again with them (once)
                        entries, redraw, draws = SMALL.get(entries, SMALL[ENTRIES]), True, draws + 1
                    continue
                except RecursionError:
                    skipped.append("an expression nested too deeply")
                    continue
                except (TypeError, ValueError, AttributeError, IndexError, KeyError, ZeroDivisionError) as exc:
                    # a node that does not behave as its kind should: never a crash of verify
                    skipped.append(f"the interpreter failed on this claim: {type(exc).__name__}: {exc}"[:200])
                    continue
                if outcome == "differ":
                    _raise(lhs, rhs, prover_trace, method, inst, info)
                agreed += 1
                precs.add(info)
                if not inst.drew_anything() and not expectations:
                    closed = True
                    break
                kinds_used |= {f"{f} as {SCORE_KINDS[v]}" for f, v in inst.scores.items()}
                if expectations:
                    kinds_used.add(f"entries {LAWS[inst.kind % len(LAWS)][0]}")
    except BudgetExceeded:
        skipped.append(f"out of time after {seconds:g} s")
    if closed:
        line = "audit: the claim has nothing to draw; its one exact instance agrees"
        return AuditRecord(agreed, tuple(skipped), line)
    if entries in SMALL.values():
        kinds_used.add(f"entries {SMALL_TEXT} after an enclosure too wide")
    return AuditRecord(agreed, tuple(dict.fromkeys(skipped)), _summary(agreed, skipped, precs, kinds_used))


def _summary(agreed: int, skipped: list, precs: set, kinds: set) -> str:
    why = "; ".join(dict.fromkeys(skipped))
    if not agreed:
        return f"audit: skipped: {why or 'no instance'}"
    line = f"audit: {agreed} random exact instance{'s agree' if agreed > 1 else ' agrees'}"
    if precs - {PRECISIONS[0]}:
        line += f" (enclosures to {max(precs)} bits)"
    if kinds:
        line += f"; {', '.join(sorted(kinds))}"
    if skipped:
        line += f"; {len(skipped)} skipped ({why})"
    return line
