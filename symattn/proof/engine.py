"""verify(lhs, rhs): the one kernel through which every proof and refutation flows.

Strategies, tried in this order, each within the budget:

A. rewriting to a canonical form                     -> proved for all dimensions
C. induction on the head count H                     -> proved for all dimensions and every H
   (a claim about stacks of L layers: induction on L, symattn.proof.layer_induction)
B. entrywise with symbolic indices                   -> proved for all dimensions
   (then on the canonical forms of A: blocks split, softmaxes over blocks written out)
E. counterexample search, certified exactly          -> refuted
D. exact instances at the dimensions given in ``at`` -> proved at those dimensions only

Anything else is "unknown"; numeric agreement is reported in the trace, never trusted.
"""

from __future__ import annotations

import time
from dataclasses import replace

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.dims import check_dimension
from ..defs.mask_placement import check_mask_placement
from ..defs.shapes import as_matrix, check_shapes, same_dim, show, show_shape
from ..errors import BudgetExceeded, ClaimError, ShapeError
from . import dag
from .budget import Budget, guarded
from .canon import canon, same_by_rewriting, undefined
from .entrywise import same_entrywise
from .evaluate import EvaluationError
from .generalize import generalized
from .induction import by_induction, head_counts, induction_variable
from .instances import dimension_symbols, equal_at, matrix_inputs, scalar_symbols
from .inverses import inverted
from .inverses import notes as inverse_notes
from .kernel import conclude
from .layer_induction import verify_layers
from .layer_stack import has_stacks
from .names import check_distinct_names
from .refute import search
from .structural import same_on_the_dag
from .verdict import Candidate, Verdict, proved, quantified, refuted, symbolic_proof, unknown

DEFAULT_BUDGET = 20.0


def check_request(lhs, rhs, dims, at, budget):
    """Reject what would make a verdict meaningless: floats, two objects that print alike, a bad
    ``at`` (keys must be the claim's dimension symbols, values positive integers), a bad budget."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
        raise ClaimError(f"verify: budget must be a positive number of seconds, got {budget!r}")
    for side, e in (("lhs", lhs), ("rhs", rhs)):
        check_mask_placement(e, where=f"verify: the {side}: ")
        if undefined(e):
            raise ClaimError(
                f"verify: the {side} holds an undefined value (nan or zoo: SymPy computed 0/0, ∞ - ∞ or 1/0 while "
                f"building it): {show(e, 80)}; such a claim has no meaning to prove or refute")
        floats = dag.atoms(e, sp.Float)
        if floats:
            raise ClaimError(
                f"verify: the {side} holds the floating-point number {min(floats, key=abs)}; write exact "
                "numbers (sympy.Rational(1, 3), sympy.sqrt(2)) so that a proof means something")
    check_distinct_names(lhs, rhs)
    if at is None:
        return None
    if isinstance(at, dict):
        at = [at]
    if not isinstance(at, (list, tuple)):
        raise ClaimError(f"verify: at must be a list of dicts {{dimension: int}}, got {at!r}")
    out = []
    for values in at:
        if not isinstance(values, dict):
            raise ClaimError(f"verify: each entry of at must be a dict {{dimension: int}}, got {values!r}")
        values = {_at_key(k, dims, values): v for k, v in values.items()}
        keys = set(values)
        if keys != set(dims):
            missing = ", ".join(sorted(str(d) for d in set(dims) - keys)) or "none"
            raise ClaimError(
                f"verify: at={values!r} must give every dimension of the claim "
                f"({', '.join(map(str, dims)) or 'there are none'}); missing: {missing}")
        out.append({d: int(check_dimension(v, f"verify: at {d}: ")) for d, v in values.items()})
    return out


def _at_key(key, dims, values):
    """The claim's dimension that a key of ``at`` names: the symbol itself, or its name as a string.
    A plain Symbol that only shares a dimension's name (made without ``symattn.dims``) is refused
    with the reason, since it is a different symbol to SymPy."""
    if key in dims:
        return key
    by_name = {str(d): d for d in dims}
    if isinstance(key, str) and key in by_name:
        return by_name[key]
    if isinstance(key, sp.Symbol) and key.name in by_name:
        raise ClaimError(
            f"verify: at={values!r}: the key {key.name} is a Symbol with other assumptions than the claim's "
            f"dimension {key.name} (made by symattn.dims); pass that symbol, or the string {key.name!r}")
    names = ", ".join(sorted(by_name)) or "there are none"
    raise ClaimError(f"verify: at={values!r}: {key!r} is not a dimension of the claim (its dimensions: {names})")


def _attempt(budget, share, what, fn, trace):
    """Run one strategy with a share of the budget; a timeout makes it fail, not hang."""
    try:
        with budget.limit(budget.seconds * share, what):
            return fn()
    except BudgetExceeded as exc:
        trace.append(f"{what}: gave up ({exc})")
        return False, []


def _worth_rewriting_first(lhs, rhs) -> bool:
    """Entrywise comparison of the canonical forms can succeed where the raw one cannot when a block
    matrix (no entry rule at symbolic block sizes) or a matrix power is rewritten away."""
    return dag.has(lhs, sp.BlockMatrix, sp.MatPow) or dag.has(rhs, sp.BlockMatrix, sp.MatPow)


def _is_scalar(x) -> bool:
    """A number or a scalar SymPy expression (not a matrix, not a Python container)."""
    return isinstance(x, (int, sp.Expr)) and not isinstance(x, (bool, MatrixExpr, sp.MatrixBase))


def _verify_scalar_claim(lhs, rhs, at, budget):
    """Scalar claims go to :func:`symattn.proof.scalar.verify_scalar` after the same request checks."""
    from .scalar import verify_scalar

    lhs, rhs = sp.sympify(lhs), sp.sympify(rhs)
    if at is not None:
        raise ClaimError("verify: at= is for matrix claims; a scalar claim is decided for all values of its "
                         "symbols, or refuted at small integer values")
    check_request(lhs, rhs, [], None, budget)
    for x in dag.nodes(lhs, rhs):  # the matrices inside a scalar claim (Trace(AB), det A) fit too
        if isinstance(x, MatrixExpr):
            check_shapes(x, "verify(lhs, rhs)")
    return verify_scalar(lhs, rhs, budget=budget)


def verify(lhs, rhs, *, at=None, budget: float = DEFAULT_BUDGET, search_counterexample: bool = True) -> Verdict:
    """Decide lhs = rhs on the evidence ladder and return a :class:`Verdict`.

    ``at``: a list of dicts {dimension symbol: int}; where no general proof is found
    and no counterexample either, the claim is checked exactly at these dimensions
    (a verdict "proved" with ``general=False`` whose scope lists them).

    Every proof is audited before it is returned (:mod:`symattn.proof.kernel`): the claim is
    evaluated at random exact instances by an independent interpreter; a disagreement raises
    SoundnessError, and a claim the audit cannot evaluate at any instance is "unknown".

    >>> import sympy as sp, symattn as sa
    >>> n, m = sa.dims("n m")
    >>> A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    >>> sa.verify((A * B).T, B.T * A.T).status
    'proved'
    >>> C, D = sp.MatrixSymbol("C", n, n), sp.MatrixSymbol("D", n, n)
    >>> v = sa.verify((C * D).T, C.T * D.T)
    >>> v.status, v.counterexample.dims
    ('refuted', {'n': 2})
    """
    start = time.perf_counter()
    if _is_scalar(lhs) and _is_scalar(rhs):
        return _verify_scalar_claim(lhs, rhs, at, budget)
    lhs = as_matrix(lhs, "lhs", "verify(lhs, rhs)")
    rhs = as_matrix(rhs, "rhs", "verify(lhs, rhs)")
    for k, dim in enumerate(("rows", "columns")):
        if not same_dim(lhs.shape[k], rhs.shape[k]):
            raise ShapeError(
                f"verify(lhs, rhs): the two sides have different shapes ({dim} differ).\n"
                f"  lhs: {show_shape(lhs)}   {show(lhs, 50)}\n  rhs: {show_shape(rhs)}   {show(rhs, 50)}"
            )
    if has_stacks(lhs, rhs):  # a claim about a stack of L layers: by induction on L
        return verify_layers(lhs, rhs, budget=budget, at=at, verify=verify, search_counterexample=search_counterexample)
    dims = dimension_symbols(lhs, rhs)
    at = check_request(lhs, rhs, dims, at, budget)
    B = Budget(budget)
    H = induction_variable(lhs, rhs)
    heads = {c for c in head_counts(lhs, rhs) if isinstance(c, sp.Symbol)}
    trace: list[str] = []

    over = quantified(dims, heads, scalar_symbols(lhs, rhs), matrix_inputs(lhs, rhs))

    inverses = bool(inverted(lhs, rhs))

    def done(v, proved_at=None) -> Verdict:
        if isinstance(v, Candidate) and inverses:
            said = "".join(f"; {s}" for s in inverse_notes(lhs, rhs))
            v = replace(v, scope=v.scope + "; assuming every inverse in the claim exists (where invertible)" + said)
        return conclude(lhs, rhs, v, at=proved_at, seconds=time.perf_counter() - start, lhs=lhs, rhs=rhs)

    def decide() -> Verdict:
        ok, t = _attempt(B, 0.2, "rewriting on the DAG (A)", lambda: same_on_the_dag(lhs, rhs), trace)
        trace.extend(["A: " + s for s in t])
        if ok:
            return done(symbolic_proof("rewriting (A)", trace, over))
        ok, t = _attempt(B, 0.4, "rewriting (A)", lambda: same_by_rewriting(lhs, rhs), trace)
        trace.extend(["A: " + s for s in t])
        if ok:
            return done(symbolic_proof("rewriting (A)", trace, over))

        if H is not None:
            ok, t = _attempt(B, 0.4, "induction on H (C)", lambda: by_induction(lhs, rhs, H), trace)
            trace.extend(["C: " + s for s in t])
            if ok:
                return done(symbolic_proof("induction on H (C)", trace, over))

        ok, t = _attempt(B, 0.3, "entrywise (B)", lambda: same_entrywise(lhs, rhs, B), trace)
        trace.extend(["B: " + s for s in t])
        if ok:
            return done(symbolic_proof("entrywise (B)", trace, over))
        if (general := generalized(lhs, rhs)) is not None:  # each softmax an arbitrary matrix (generalize)
            ok, t = _attempt(B, 0.2, "entrywise, each softmax an arbitrary matrix (B)",
                             lambda: same_entrywise(*general, B), trace)
            if ok:  # a failure says nothing about the claim: only the lines of a proof are kept
                trace.extend(["B, general: " + s for s in t])
                return done(symbolic_proof("entrywise, each softmax an arbitrary matrix (B)", trace, over))
            trace.append("B, general: not shown with each softmax an arbitrary matrix")
        if _worth_rewriting_first(lhs, rhs):
            ok, t = _attempt(B, 0.3, "entrywise on the canonical forms (A, B)",
                             lambda: same_entrywise(canon(lhs), canon(rhs), B), trace)
            trace.extend(["A, B: " + s for s in t])
            if ok:
                return done(symbolic_proof("rewriting, then entrywise (A, B)", trace, over))

        agreed = 0
        if search_counterexample:
            try:
                cex, t, agreed = search(lhs, rhs, B)
                trace.extend(["E: " + s for s in t])
                if cex is not None:
                    return done(refuted(cex, trace))
            except BudgetExceeded as exc:
                trace.append(f"E: gave up ({exc})")

        if at:
            where = []
            for values in at:
                try:
                    ok, why = equal_at(lhs, rhs, values, B)
                except BudgetExceeded as exc:
                    ok, why = False, f"gave up ({exc})"
                except EvaluationError as exc:
                    ok, why = False, f"cannot evaluate the claim exactly ({exc})"
                label = ", ".join(f"{k}={v}" for k, v in values.items())
                trace.append(f"D at {label}: {why}")
                if not ok:
                    break
                where.append(label)
            else:
                scope = "only at " + "; ".join(where)
                return done(proved("exact instances (D)", scope, trace, False), proved_at=at)

        if agreed:
            trace.append(f"the two sides were equal exactly at {agreed} sampled instances (not a proof for all values)")
        return done(unknown(trace))

    try:
        with guarded():
            return decide()
    except BudgetExceeded as exc:  # an alarm that escaped every strategy's own limit
        trace.append(f"gave up ({exc})")
        return done(unknown(trace))
