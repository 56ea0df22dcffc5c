"""``symattn.verify_gradient``: is a candidate formula the VJP of an expression? A verdict on the
evidence ladder, made by the proof kernel after the gradient audit.

Strategies, in order:

1. **general, modulo the VJP rules**: the rule-based VJP R (:func:`symattn.grad.vjp.vjp_with_rules`)
   is proved equal to the candidate by :func:`symattn.verify` for all dimensions, and every rule R
   used is checked exactly at every size in 1..3 (:mod:`symattn.grad.rule_check`). The trace names
   the rules and says so: the proof is general modulo those rules (and the chain rule of reverse
   accumulation), each checked at those sizes, not proved for all sizes.
2. **refuted**: an exact random instance (inputs and cotangent) where the candidate differs from the
   derivative, certified nonzero at a named entry (:mod:`symattn.grad.refute`).
3. **at dims** (``at=``, or the claim's own sizes when it has no dimension symbols): with symbolic
   entries, Σ_ij G_ij ∂E_ij/∂W_kl by ``sympy.diff`` equals the candidate's entries exactly
   (:mod:`symattn.grad.explicit`).

Numeric agreement is never a proof. Every "proved" passes the gradient audit of
:func:`symattn.proof.kernel.conclude_gradient` first.
"""

from __future__ import annotations

import time

import sympy as sp

from ..defs.shapes import as_matrix, same_dim, show_shape
from ..errors import GradientError, SymattnError
from ..proof.engine import verify
from ..proof.instances import dimension_symbols
from ..proof.kernel import conclude_gradient
from ..proof.verdict import Candidate, TraceLine, Verdict, refuted, unknown
from .explicit import at_dims, derivative, explicit, inputs_of, is_zero, symbols_for
from .refute import search
from .rule_check import check_rule
from .vjp import check_request, reads, unfold_stacks, vjp_with_rules


def _general(expr, wrt, candidate, cotangent, budget, trace):
    """A general Candidate, or None (the reason goes to ``trace``)."""
    try:
        R, used = vjp_with_rules(expr, wrt, cotangent)
    except GradientError as exc:
        trace.append(f"general: no rule-based VJP ({str(exc).splitlines()[0]})")
        return None
    v = verify(R, candidate, budget=budget, search_counterexample=False)
    if not (v.proved and v.general):
        trace.append(TraceLine("general: the candidate is not proved equal to the rule-based VJP {} "
                               f"({v.status}, {v.scope})", R, limit=300))
        return None
    checks = [check_rule(name) for name in used]
    bad = [c for c in checks if not c.ok]
    if bad:
        trace.append(f"general: a VJP rule failed its check: {bad[0].line()}")
        return None
    lines = [TraceLine("rule-based VJP: {}", R, limit=400),
             f"candidate = rule-based VJP: proved, general ({v.method}; {v.scope})",
             *("  " + line for line in v.trace),  # a TraceLine stays one (its expressions print readably)
             *(c.line() for c in checks),
             "general modulo the VJP rules " + ", ".join(used) + " (and the chain rule of reverse "
             "accumulation), each checked exactly at every size in 1..3, not proved for all sizes"]
    scope = v.scope
    seen = set(dimension_symbols(R, candidate)) | R.free_symbols | candidate.free_symbols
    rest = sorted(set(dimension_symbols(expr, cotangent)) - seen, key=str)
    if rest:  # a head count H = k + r: the head-sum rule took its term h = k, for every r
        scope += f" and all values of {', '.join(map(str, rest))}"
        lines.append(f"the head-sum rule holds for every value of {', '.join(map(str, rest))} (only 1 ≤ k ≤ H is used)")
    return Candidate(True, "VJP rules + verify (general)", scope + ", modulo the VJP rules " + ", ".join(used),
                     tuple(lines), over=v.over)


def _at_dims(expr, wrt, candidate, cotangent, at):
    """True when the candidate equals the derivative exactly at every dims of ``at``."""
    for dims in at:
        e, w, c, g = (at_dims(x, dims) for x in (expr, wrt, candidate, cotangent))
        env = {x: symbols_for(x, x.name) for x in inputs_of(e, c, g)}
        want = derivative(explicit(e, env), explicit(g, env), env[w])
        got = explicit(c, env)
        if not all(is_zero(want[i] - got[i]) for i in range(len(want))):
            return False
    return True


def _check(expr, wrt, candidate, cotangent):
    expr, wrt, cotangent = check_request(expr, wrt, cotangent, "verify_gradient(expr, wrt, candidate, cotangent)")
    expr = unfold_stacks(expr, wrt, "verify_gradient")  # a stack at a concrete depth: its layers written out
    candidate = as_matrix(candidate, "candidate", "verify_gradient")
    for k, what in enumerate(("rows", "columns")):
        if not same_dim(candidate.shape[k], wrt.shape[k]):
            raise GradientError(f"verify_gradient: the candidate must have the shape of wrt ({what} differ).\n"
                                f"  wrt {wrt}: {show_shape(wrt)}\n  candidate: {show_shape(candidate)}")
    if not reads(expr, wrt):
        raise GradientError(f"verify_gradient: {wrt} is not an input of the expression {sp.sstr(expr)[:80]}")
    return expr, wrt, candidate, cotangent


def verify_gradient(expr, wrt, candidate, cotangent, at=None, budget: float = 20.0, general: bool = True) -> Verdict:
    """Decide whether ``candidate`` is the VJP Σ_ij cotangent_ij ∂expr_ij/∂wrt_kl; a Verdict.

    ``at``: a dict or list of dicts {dimension: int} where, without a general proof or a
    counterexample, the claim is checked exactly; ``general=False`` skips the general strategy.

    >>> import sympy as sp, symattn as sa
    >>> n, m, d = sa.dims("n m d")
    >>> Q, K, V = sp.MatrixSymbol("Q", n, d), sp.MatrixSymbol("K", m, d), sp.MatrixSymbol("V", m, d)
    >>> G = sp.MatrixSymbol("G", n, d)
    >>> O = sa.attention(Q, K, V, convention="row")
    >>> P = sa.softmax(Q * K.T / sp.sqrt(d), axis=1)
    >>> sa.verify_gradient(O, V, P.T * G, G).scope
    'all dimensions (d, m, n), modulo the VJP rules matmul'
    >>> sa.verify_gradient(O, V, 2 * P.T * G, G).status
    'refuted'
    """
    start = time.perf_counter()
    expr, wrt, candidate, cotangent = _check(expr, wrt, candidate, cotangent)
    dims = dimension_symbols(expr, candidate, cotangent)
    if at is not None:
        by_name = {str(d): d for d in dims}
        at = [{by_name.get(k, k) if isinstance(k, str) else k: int(v) for k, v in a.items()}
              for a in (at if isinstance(at, (list, tuple)) else [at])]
        missing = [d for d in dims if not all(d in a for a in at)]
        if missing:
            raise GradientError(f"verify_gradient: at= gives no value for {', '.join(map(str, missing))}")
    trace: list = []
    done = lambda v: v if v.seconds else _timed(v, start)  # noqa: E731
    found = _general(expr, wrt, candidate, cotangent, budget, trace) if general else None
    if found is not None:
        v = conclude_gradient(expr, wrt, candidate, cotangent, found, lhs=candidate, rhs=expr)
        if v.proved:
            return done(v)
        trace.extend(v.trace)
    cex = search(expr, wrt, candidate, cotangent, dims, at)
    if cex is not None:
        k, l = cex.entry
        trace.append(f"the candidate's entry ({k}, {l}) differs from Σ_ij G_ij ∂E_ij/∂{wrt}_kl at an exact "
                     f"random instance (derivative by sympy.diff)")
        return done(refuted(cex, trace, lhs=candidate, rhs=expr))
    exact_at = at if at is not None else ([{}] if not dims else None)
    if exact_at is None:
        trace.append("no general proof and no counterexample; pass at=[{...}] to check exactly at dimensions")
        return done(unknown(trace, lhs=candidate, rhs=expr))
    try:
        ok = _at_dims(expr, wrt, candidate, cotangent, exact_at)
    except SymattnError as exc:
        trace.append(f"at dims: {exc}")
        ok = False
    if not ok:
        trace.append("at dims: the candidate is not shown equal to the derivative (not a refutation)")
        return done(unknown(trace, lhs=candidate, rhs=expr))
    where = "; ".join(", ".join(f"{d}={v}" for d, v in a.items()) for a in exact_at) or "the given sizes"
    trace.append(f"at {where}: Σ_ij G_ij ∂E_ij/∂{wrt}_kl by sympy.diff on symbolic entries equals the "
                 f"candidate exactly (exp atoms as generators, cancelled)")
    scope = f"at {where}" if dims else "as stated (sizes given)"
    found = Candidate(False, "explicit derivative at dims (D)", scope, tuple(trace))
    return done(conclude_gradient(expr, wrt, candidate, cotangent, found, at=at, lhs=candidate, rhs=expr))


def _timed(v: Verdict, start: float) -> Verdict:
    from dataclasses import replace

    return replace(v, seconds=time.perf_counter() - start)
