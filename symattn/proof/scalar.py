"""verify_scalar(lhs, rhs): the scalar twin of verify(), on the same evidence ladder.

Some claims of the seeds are about numbers, not matrices: E[qᵀk] = 0, Var(qᵀk) = d_k,
softmax([14, 12])_1 = e²/(1 + e²) and that it rounds to 0.88. A claim whose two sides are
both scalars (neither is a matrix) is decided here, and returns the same :class:`Verdict`:

- proved: the difference lhs - rhs becomes exactly 0, after these steps (the trust base):
  expectations of :class:`~symattn.proof.moments.Expectation` nodes by the moment calculus
  of :mod:`symattn.proof.moments`; ⌊x⌋ of a closed number x, certified by enclosing x in an
  interval (mpmath.iv, outward rounding) whose ends have the same floor; ``doit`` (finite
  sums, sympy.stats expectations); then exact simplification (``cancel``, then ``simplify``).
  Proved for all values of the free symbols when there are any ("general"); a claim with
  no free symbols is proved as stated, which is not called general. Numbers are never
  compared in floating point. The method names the step that
  did the work: "moment calculus (S)", "certified floor (S)", "sympy.stats (S)", or
  "exact simplification (S)" when simplification alone sufficed.
- refuted: at small integer values of the free symbols, the difference is an exact number
  certified nonzero by :func:`~symattn.proof.certify.certify_nonzero`.
- unknown: anything else (an undetermined moment, a simplification out of budget, ...).

>>> import sympy as sp
>>> v = verify_scalar(sp.exp(14) / (sp.exp(14) + sp.exp(12)), sp.E**2 / (1 + sp.E**2))
>>> v.status, v.scope
('proved', 'as stated (a closed claim)')
>>> d_k = sp.Symbol("d_k", integer=True, positive=True)
>>> v = verify_scalar(d_k**2, d_k)
>>> v.status, v.counterexample.dims, v.counterexample.difference
('refuted', {'d_k': 2}, 2)
"""

from __future__ import annotations

import itertools
import random
import time

import mpmath
import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr
from sympy.stats.rv import RandomSymbol

from ..errors import BudgetExceeded
from . import dag
from .budget import Budget
from .certify import Uncertifiable, certify_nonzero, enclose
from .instances import admissible, dimension_symbols, matrix_inputs
from .kernel import conclude
from .moments import Expectation, StandardVector, Undetermined, reduce_expectations
from .order_cases import by_cases
from .structural import cyclic_traces
from .verdict import Counterexample, TraceLine, Verdict, quantified, refuted, symbolic_proof, unknown

DEFAULT_BUDGET = 10.0


def is_scalar_claim(lhs, rhs) -> bool:
    """True when neither side is a matrix: the claim goes to :func:`verify_scalar`."""
    return not any(isinstance(x, (MatrixExpr, sp.MatrixBase)) for x in (lhs, rhs))


def parameters(*exprs) -> list:
    """The free symbols a scalar claim is stated for (not bound indices, vectors, random symbols)."""
    labels = {v.label for e in exprs for v in sp.sympify(e).atoms(StandardVector)}
    out = set()
    for e in exprs:
        for s in sp.sympify(e).free_symbols:
            if isinstance(s, sp.Symbol) and not isinstance(s, (sp.Dummy, RandomSymbol)) and s not in labels:
                out.add(s)
    return sorted(out, key=str)


def certify_floors(x) -> tuple[sp.Expr, list[str]]:
    """Replace ⌊c⌋ of every closed number c by its integer value, certified by an interval."""
    trace: list[str] = []

    def value(f):
        arg = f.args[0]
        k = int(sp.floor(sp.N(arg, 30)))  # a candidate only; the interval below certifies it
        for prec in (80, 200):
            try:
                box = enclose(arg, prec)
            except (Uncertifiable, ZeroDivisionError, ValueError):
                return f
            if box.a >= k and box.b < k + 1:
                lo, hi = (mpmath.nstr(mpmath.mpf(v), 15) for v in box._mpi_)
                trace.append(TraceLine(f"⌊{{}}⌋ = {k}: interval arithmetic at {prec} bits encloses "
                                       f"the argument in [{lo}, {hi}] ⊂ [{k}, {k + 1})", arg))
                return sp.Integer(k)
        return f

    x = sp.sympify(x).replace(lambda e: isinstance(e, sp.floor) and not e.free_symbols, value)
    return x, trace


def expand_definitions(x) -> tuple[sp.Expr, list[str], list[str]]:
    """Apply the trust-base steps to one side: (expression, trace, names of the steps used)."""
    x = sp.sympify(x)
    trace, used = [], []
    if x.has(Expectation):
        x, t = reduce_expectations(x)
        trace += t
        used.append("moment calculus")
    if any(isinstance(f, sp.floor) and not f.free_symbols for f in x.atoms(sp.floor)):
        x, t = certify_floors(x)
        trace += t
        used.append("certified floor")
    if x.atoms(RandomSymbol):
        used.append("sympy.stats")
    y = x.doit()
    if y != x:
        trace.append(TraceLine("doit: {} -> {}", x, y, limit=100))
        x = y
    return x, trace, used


def exact_zero(d, budget: Budget) -> bool:
    """True when ``d`` simplifies to exactly 0 (cancel first, then simplify)."""
    with budget.limit(budget.left() * 0.5, "cancelling lhs - rhs"):
        if sp.cancel(sp.together(sp.expand(d, power_exp=True))) == 0:
            return True
    with budget.limit(budget.left() * 0.7, "simplifying lhs - rhs"):
        return sp.simplify(d) == 0


def _grid(params, limit: int = 64):
    """Small integer values for the parameters, each allowed by the symbol's assumptions."""
    choices = [[v for v in (1, 2, 3, -1, 0, -2) if admissible(s, v)] for s in params]
    return itertools.islice(itertools.product(*choices), limit)


def _matrix_values(matrices, at, rng) -> dict:
    """Integer matrices in -2..2 for the matrix symbols of a scalar claim (Trace(AB), det A), at the
    concrete dimensions ``at``; {} when the claim has none or a shape is not concrete."""
    out = {}
    for X in matrices:
        r, c = (sp.sympify(x).xreplace(at) for x in X.shape)
        if not (r.is_Integer and c.is_Integer) or r * c > 64:
            return {}
        out[X.xreplace(at)] = sp.ImmutableMatrix(int(r), int(c), [rng.randint(-2, 2) for _ in range(int(r * c))])
    return out


def search_scalar(L, R, params, budget: Budget) -> tuple[Counterexample | None, list[str]]:
    """Small integer values of ``params`` where L - R is certified nonzero; the matrix symbols of a
    claim about traces or determinants get random integer matrices at those sizes."""
    rng = random.Random(sp.sstr(L) + " = " + sp.sstr(R))
    matrices = sorted((sp.sympify(L) - sp.sympify(R)).atoms(sp.MatrixSymbol), key=lambda s: s.name)
    for combo in _grid(params):
        budget.check("scalar counterexample search")
        at = dict(zip(params, map(sp.Integer, combo)))
        mats = _matrix_values(matrices, at, rng)
        try:
            a, b = (sp.sympify(x).xreplace(at).xreplace(mats).doit() for x in (L, R))
        except (ValueError, TypeError):  # SymPy's ShapeError is a ValueError: sizes that do not fit
            continue
        d = a - b
        if d.free_symbols:
            return None, [f"cannot evaluate lhs - rhs at {at}: {sp.sstr(d)[:80]}"]
        with budget.limit(what="certifying a scalar counterexample"):
            cert = certify_nonzero(d)
        if cert is None:
            continue
        try:
            floats = np.array([[float(a)]]), np.array([[float(b)]])
        except TypeError:
            return None, [f"a side is not a real number at {at}"]
        dims = {str(s): int(v) for s, v in at.items() if s.is_integer and s.is_positive}
        values = {str(s): np.asarray(int(v)) for s, v in at.items() if not (s.is_integer and s.is_positive)}
        values.update({X.name: np.array(M.tolist(), dtype=object) for X, M in mats.items()})
        cex = Counterexample(
            dims=dims, values=values, lhs=floats[0], rhs=floats[1],
            lhs_exact=sp.ImmutableMatrix([[a]]), rhs_exact=sp.ImmutableMatrix([[b]]), entry=(0, 0),
            difference=d, certificate=cert,
        )
        return cex, [f"counterexample at {at}: {cert}"]
    return None, ["no certified counterexample at small integer values"]


def verify_scalar(lhs, rhs, *, budget: float = DEFAULT_BUDGET) -> Verdict:
    """Decide the scalar claim lhs = rhs on the evidence ladder (see the module docstring).

    A proof is audited before it is returned (:mod:`symattn.proof.kernel`): checked at random
    exact instances by the independent audit; a disagreement raises SoundnessError."""
    start = time.perf_counter()
    B = Budget(budget)
    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    params = parameters(lhs, rhs)
    trace = [TraceLine("lhs: {}", lhs, limit=160), TraceLine("rhs: {}", rhs, limit=160)]

    def done(v) -> Verdict:
        return conclude(lhs, rhs, v, scalar=True, seconds=time.perf_counter() - start, lhs=lhs, rhs=rhs)

    try:
        if dag.has(lhs, sp.Trace) or dag.has(rhs, sp.Trace):
            cl, cr = cyclic_traces(lhs, rhs)
            if (cl, cr) != (lhs, rhs):
                trace.append(TraceLine("traces rotated cyclically to one form (Trace(AB) = Trace(BA)): {} = {}",
                                       cl, cr, limit=160))
        else:
            cl, cr = lhs, rhs
        L, tl, ul = expand_definitions(cl)
        R, tr, ur = expand_definitions(cr)
    except Undetermined as exc:
        trace.append(f"undetermined: {exc}")
        return done(unknown(trace))
    trace += tl + tr
    used = list(dict.fromkeys(ul + ur))
    try:
        zero = exact_zero(L - R, B)
    except BudgetExceeded as exc:
        trace.append(f"simplification gave up ({exc})")
        zero = False
    if zero:
        trace.append(TraceLine("lhs - rhs = {} simplifies to 0 exactly", L - R, limit=120))
        method = " + ".join(f"{u} (S)" for u in used) or "exact simplification (S)"
        dims = {s for s in params if s.is_integer and s.is_positive} | set(dimension_symbols(lhs, rhs))
        over = quantified(dims, (), set(params) - dims, matrix_inputs(lhs, rhs))
        return done(symbolic_proof(method, trace, over))
    trace.append(TraceLine("lhs - rhs = {} does not simplify to 0", L - R, limit=160))
    try:
        ok, t, method = by_cases(L - R, lambda e: exact_zero(e, B))
    except BudgetExceeded as exc:
        ok, t = False, [f"cases: gave up ({exc})"]
    trace += t
    if ok:
        dims = {s for s in params if s.is_integer and s.is_positive} | set(dimension_symbols(lhs, rhs))
        return done(symbolic_proof(method, trace, quantified(dims, (), set(params) - dims, matrix_inputs(lhs, rhs))))
    labels = {b.label for e in (L, R) for b in sp.sympify(e).atoms(sp.IndexedBase)}
    entries = sorted({a for e in (L, R) for a in sp.sympify(e).atoms(sp.Indexed) if a.free_symbols - {a} <= labels},
                     key=str)
    try:  # an entry x[1] gets a value, never the name x of its vector
        sizes = [d for d in dimension_symbols(lhs, rhs) if d not in params]  # the shapes of its matrices
        cex, t = search_scalar(L, R, [p for p in params if p not in labels] + sizes + entries, B)
    except BudgetExceeded as exc:
        cex, t = None, [f"counterexample search gave up ({exc})"]
    trace += t
    if cex is not None:
        return done(refuted(cex, trace))
    return done(unknown(trace))
