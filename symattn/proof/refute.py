"""Strategy E: search for a counterexample, then certify it exactly.

Each sample draws exact inputs (integers of several magnitudes, non-integer rationals), an
instance of every score function f (bilinear or not) and of every undefined scalar function
(RoPE's θ_i), and evaluates both sides in float64 first. Floats only choose the order in which
entries are examined: both sides are then evaluated exactly, and an entry refutes the claim only
when its exact difference is certified nonzero (an exact rational, or interval arithmetic at
rising precision). A sample agrees only when every entry is shown exactly equal; a sample that is
neither certified nor shown equal is undecided and counts for nothing.

A positive integer symbol that occurs only in the index of a family member (G in W^K_{⌈iG/h⌉}) is
a size in all but name: the search draws it with the dimensions (every value, divisor of another
size or not, since the claim states no relation), and the members a side reads are collected after
every symbol has its value, so each one gets entries.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..defs.heads import FamilyMember
from ..defs.permutation import Permutation
from ..errors import BudgetExceeded
from .certify import certify_nonzero, proves_zero
from .evaluate import EvaluationError, evaluate
from .instances import (
    admissible,
    dimension_grid,
    dimension_symbols,
    random_permutation_matrix,
    scalar_symbols,
    score_functions,
    specialize,
)
from .samples import (
    SCORE_KINDS,
    function_instance,
    instantiate_functions,
    sampler,
    scalar_functions,
    scalar_values,
    score_instance,
)
from .verdict import Counterexample

#: a search over fewer dimension assignments than this many samples repeats trials to reach it
MIN_SAMPLES = 24
#: share of the time left that the search may use (the rest stays for strategy D)
TIME_SHARE = 0.6
#: seconds for the exact evaluation of one sample, and for deciding one entry
EXACT_SECONDS, ENTRY_SECONDS = 4.0, 1.0
#: undecided samples shown one by one in the trace (the rest are counted)
MAX_UNDECIDED_LINES = 3
#: a relative float difference above this is decided first (only an order: every sample is decided exactly)
SCREEN = 1e-9


class _Slow(Exception):
    """One exact step exceeded its own limit while the budget still has time."""


def _limited(budget, seconds, what, fn, *args):
    """``fn(*args)`` under a limit of ``seconds``; _Slow if only that limit (not the whole budget) ran out."""
    try:
        with budget.limit(min(seconds, budget.left()), what=what):
            return fn(*args)
    except BudgetExceeded:
        if budget.left() <= 0:
            raise
        raise _Slow(what) from None


def _order(A, B):
    """Entries by decreasing relative float difference, the exactly-equal ones last (non-finite ones first)."""
    with np.errstate(all="ignore"):
        diff = np.abs(A - B) / (1.0 + np.maximum(np.abs(A), np.abs(B)))
    diff = np.where(np.isfinite(A) & np.isfinite(B), diff, np.inf)
    flat = np.argsort(-diff, axis=None, kind="stable")
    return [tuple(int(k) for k in np.unravel_index(f, diff.shape)) for f in flat]


def _decide(Ax, Bx, order, budget):
    """("differ", entry, d, certificate) | ("agree",) | ("undecided", why), entry by entry, exactly."""
    pending = []
    for i, j in order:
        budget.check("certifying an entry")
        d = Ax[i, j] - Bx[i, j]
        try:
            cert = _limited(budget, ENTRY_SECONDS, "certifying an entry", certify_nonzero, d, (80,))
        except _Slow:
            cert = None
        if cert is not None:
            return "differ", (i, j), d, cert
        if not sp.sympify(d).is_Rational:
            pending.append(((i, j), d))
    for (i, j), d in pending:
        try:
            if _limited(budget, ENTRY_SECONDS, "showing an entry is 0", proves_zero, d):
                continue
            cert = _limited(budget, ENTRY_SECONDS, "certifying an entry", certify_nonzero, d, (200, 600))
        except _Slow:
            return ("undecided", f"entry ({i}, {j}) took too long to decide exactly")
        if cert is not None:
            return "differ", (i, j), d, cert
        return ("undecided", f"entry ({i}, {j}) is neither certified nonzero nor shown 0 exactly")
    return ("agree",)


def _exact_floats(e):
    """``e`` (an explicit matrix made immutable) with every Float read as the exact binary rational it is."""
    if isinstance(e, sp.MatrixBase):
        e = sp.ImmutableMatrix(e)
    floats = e.atoms(sp.Float)
    return e.xreplace({f: sp.Rational(f) for f in floats}) if floats else e


@dataclass
class _Sample:
    """One instance of the claim: inputs, scalar values, score functions and undefined functions."""

    label: str  # how the entries were drawn
    env: dict  # input matrix (the object) -> array of ints or Rationals, permutations included
    scalars: dict  # scalar symbol -> an Integer or Rational
    scores: dict  # score function name -> (float f, exact f, text)
    functions: dict  # undefined function -> (Lambda, text)
    lhs: object  # both sides with the scalars and functions substituted
    rhs: object

    def floats(self, budget):
        fns = {nm: m[0] for nm, m in self.scores.items()}
        with np.errstate(all="ignore"), budget.limit(what="evaluating a sample"):
            return (np.asarray(evaluate(self.lhs, self.env, "float", fns), dtype=float),
                    np.asarray(evaluate(self.rhs, self.env, "float", fns), dtype=float))

    def exact(self):
        fns = {nm: m[1] for nm, m in self.scores.items()}
        return evaluate(self.lhs, self.env, "exact", fns), evaluate(self.rhs, self.env, "exact", fns)

    def texts(self) -> dict:
        out = {nm: m[2]() for nm, m in self.scores.items()}
        out.update({str(F): text for F, (_, text) in self.functions.items()})
        return out


def _draw(L, R, parts, t: int, kind: int, rng, allowed: dict) -> _Sample:
    """Sample ``t`` of the claim L = R whose inputs, permutations, score and undefined functions are ``parts``.

    ``allowed`` maps each free scalar to (integer values, values with non-integers) that satisfy its
    assumptions; a sample with rational entries draws from the second.
    """
    names, perms, fn_names, undefined = parts
    label, draw = sampler(t)
    pick = 1 if label.startswith("rationals") else 0
    svals = {s: vals[pick][int(rng.integers(len(vals[pick])))] for s, vals in allowed.items()}
    if svals:  # a scalar in a member's index (W_{c+1}) names the member only once it has its value
        names, perms = _inputs(L.xreplace(svals), R.xreplace(svals))
    env = {x: draw(rng, shape) for x, shape in names.items()}
    env = {x: x.impose(v) if hasattr(x, "impose") else v for x, v in env.items()}  # e.g. symmetric inputs
    env.update({P: random_permutation_matrix(rng, k) for P, k in perms.items()})
    scores = {nm: score_instance(kind, nm, int(rng.integers(1 << 30))) for nm in fn_names}
    functions = {F: inst for F, k in undefined.items() if (inst := function_instance(F, k, rng)) is not None}
    lams = {F: lam for F, (lam, _) in functions.items()}
    Ls, Rs = (instantiate_functions(x.xreplace(svals), lams) for x in (L, R))
    return _Sample(label, env, svals, scores, functions, Ls, Rs)


def _compare(sample, A, B, budget):
    """Evaluate ``sample`` exactly and decide it entry by entry (entries ordered by the float screen)."""
    try:
        Ax, Bx = _limited(budget, EXACT_SECONDS, "exact evaluation of a sample", sample.exact)
        return _decide(Ax, Bx, _order(A, B), budget), Ax, Bx
    except _Slow as exc:
        return ("undecided", f"{exc} took too long"), None, None
    except (EvaluationError, ArithmeticError, IndexError, ValueError, TypeError,
            sp.polys.polyerrors.PolynomialError) as exc:
        return ("undecided", f"{type(exc).__name__}: {exc}"), None, None


def _inputs(*exprs):
    """The input matrices (object -> (rows, cols)) and permutation matrices (object -> size), keyed by the
    objects themselves, never by their printed names."""
    mats, perms = {}, {}
    for e in exprs:
        for x in sp.preorder_traversal(e):
            if isinstance(x, (sp.MatrixSymbol, FamilyMember)):
                mats[x] = (int(x.shape[0]), int(x.shape[1]))
            elif isinstance(x, Permutation):
                perms[x] = int(x.size)
    return mats, perms


def index_dimensions(scalars, *exprs) -> list:
    """The positive integer symbols among ``scalars`` that occur in the index of a family member."""
    seen = set()
    for e in exprs:
        for x in sp.preorder_traversal(e):
            if isinstance(x, FamilyMember):
                seen |= x.index.free_symbols
    return [s for s in scalars if s in seen and s.is_integer is True and s.is_positive is True]


def with_index_sizes(grid: list, sized: list, sizes=(1, 2, 3), limit: int = 64) -> list:
    """Each assignment of ``grid`` with every combination of ``sizes`` for the index dimensions
    ``sized`` that satisfy their assumptions (so G = 3 meets h = 2 early, not only after every other
    size has been varied)."""
    if not sized:
        return grid
    combos = [dict(zip(sized, c)) for c in itertools.product(sizes, repeat=len(sized))
              if all(admissible(sym, v) for sym, v in zip(sized, c))]  # e.g. a G declared even
    out = [{**a, **c} for a in grid for c in combos]
    out = [{k: a[k] for k in sorted(a, key=str)} for a in out]
    return out[:max(limit, len(combos))]


def _parts(lhs, rhs, assignment, budget):
    """Both sides at ``assignment`` and what a sample must instantiate in them."""
    with budget.limit(what="instantiating the claim"):
        L, R = specialize(lhs, assignment), specialize(rhs, assignment)
    if tuple(L.shape) != tuple(R.shape):
        return L, R, None
    return L, R, (*_inputs(L, R), score_functions(L, R), scalar_functions(L, R))


def _visible(A, B) -> bool:
    """True when the float screen shows a difference above rounding (or a non-finite value): such a
    sample is decided exactly first. The others are decided exactly afterwards; none is skipped."""
    with np.errstate(all="ignore"):
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
            return True
        return bool(np.any(np.abs(A - B) > SCREEN * (1.0 + np.maximum(np.abs(A), np.abs(B)))))


class _Tally:
    """What the search has seen: samples equal exactly, undecided ones, and the trace."""

    def __init__(self):
        self.trace, self.agreed, self.undecided, self.drawn = [], 0, 0, set()

    def decide(self, assignment, sample, A, B, budget):
        """Decide ``sample`` exactly; a Counterexample when it refutes the claim, else None."""
        outcome, Ax, Bx = _compare(sample, A, B, budget)
        if outcome[0] == "agree":
            self.agreed += 1
            return None
        if outcome[0] == "undecided":
            self.undecided += 1
            if self.undecided <= MAX_UNDECIDED_LINES:
                self.trace.append(f"sample undecided at {assignment} ({sample.label}): {outcome[1]}")
            return None
        _, (i, j), d, cert = outcome
        values = {x.name: np.asarray(v) for x, v in sample.env.items()}
        values.update({str(s): np.asarray(int(v) if v.is_Integer else v) for s, v in sample.scalars.items()})
        self.trace.append(f"counterexample at {assignment} ({sample.label}), entry ({i}, {j}): {cert}")
        return Counterexample(
            dims={str(k): v for k, v in assignment.items()}, values=values, lhs=A, rhs=B,
            lhs_exact=Ax, rhs_exact=Bx, entry=(i, j), difference=d,
            certificate=cert, functions=sample.texts(),
        )

    def stopped(self, where: str):
        self.trace.append(f"search stopped {where} after its share of the time budget "
                          f"({self.agreed} samples equal exactly, {self.undecided} undecided)")
        return None, self.trace, self.agreed


def search(lhs, rhs, budget, trials: int = 3, seed: int = 0, grid: list | None = None):
    """Return (Counterexample or None, trace lines, number of samples shown exactly equal).

    ``trials`` samples are drawn at each dimension assignment of ``grid`` (more when the grid is
    small, so that at least MIN_SAMPLES are drawn). The samples of the first assignment, and every
    sample whose floats differ visibly, are decided exactly at once; the others are decided exactly
    after the whole grid has been screened, so a counterexample deep in the grid is found early.
    The search stops when its share of the budget is used.
    """
    scalars = scalar_symbols(lhs, rhs)
    sized = index_dimensions(scalars, lhs, rhs)
    scalars = [s for s in scalars if s not in sized]
    base = grid if grid is not None else dimension_grid(dimension_symbols(lhs, rhs))
    grid = with_index_sizes(base, [s for s in sized if not all(s in a for a in base)])
    per_point = max(trials, -(-MIN_SAMPLES // max(len(grid), 1)))
    stop_at = budget.elapsed() + TIME_SHARE * max(budget.left(), 0.0)
    tally, later = _Tally(), []
    allowed = {s: (scalar_values(s, False), scalar_values(s, True)) for s in scalars}
    if any(not vals[0] for vals in allowed.values()):
        return None, ["no small integer satisfies the assumptions of " +
                      ", ".join(str(s) for s, v in allowed.items() if not v[0])], 0
    lhs, rhs = _exact_floats(lhs), _exact_floats(rhs)
    for a_idx, assignment in enumerate(grid):
        try:
            budget.check("counterexample search")
            L, R, parts = _parts(lhs, rhs, assignment, budget)
        except BudgetExceeded:
            raise
        except Exception as exc:  # the claim may not be well-formed at these sizes
            tally.trace.append(f"skipped {assignment}: {exc}")
            continue
        if parts is None:
            continue
        for t in range(per_point):
            if budget.elapsed() > stop_at:
                return tally.stopped(f"while screening {assignment}")
            rng = np.random.default_rng([seed, a_idx, t])
            try:
                sample = _draw(L, R, parts, t, (a_idx + t) % SCORE_KINDS, rng, allowed)
                tally.drawn.add(sample.label)
                A, B = sample.floats(budget)
            except EvaluationError as exc:
                tally.trace.append(f"cannot evaluate at {assignment}: {exc}")
                return None, tally.trace, tally.agreed
            except (ArithmeticError, IndexError, ValueError, TypeError, np.linalg.LinAlgError) as exc:
                tally.trace.append(f"sample skipped at {assignment}: {type(exc).__name__}: {exc}")
                continue
            if a_idx > 0 and not _visible(A, B):
                later.append((assignment, sample, A, B))
                continue
            cex = tally.decide(assignment, sample, A, B, budget)
            if cex is not None:
                return cex, tally.trace, tally.agreed
    for assignment, sample, A, B in later:
        if budget.elapsed() > stop_at:
            return tally.stopped("while deciding the samples whose floats agree")
        budget.check("counterexample search")
        cex = tally.decide(assignment, sample, A, B, budget)
        if cex is not None:
            return cex, tally.trace, tally.agreed
    tally.trace.append(f"{tally.agreed} samples equal exactly, {tally.undecided} undecided; inputs drawn as "
                       + "; ".join(sorted(tally.drawn)))
    return None, tally.trace, tally.agreed
