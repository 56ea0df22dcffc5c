"""The proof kernel: the one place where a proved :class:`~symattn.proof.verdict.Verdict` is made.

A strategy (rewriting, induction, entrywise, instances, exact simplification, case splits) returns
a :class:`~symattn.proof.verdict.Candidate`. :func:`conclude` hands it to the independent audit
(:func:`symattn.proof.audit.run_audit`), and only when the audit evaluated at least one exact
instance, every one it evaluated agreed, and none was malformed, does it seal a proved verdict
with the audit's record. Otherwise the claim is "unknown", with the audit's reason in the trace:
an audit that cannot look at a claim never lets it pass. A certified disagreement raises
:class:`~symattn.errors.SoundnessError` (a bug of the strategy, never a verdict).

:func:`combine` seals a claim proved part by part (each part a sealed verdict),
:func:`conclude_by_induction` a claim proved by induction (its base case and step sealed verdicts,
the claim audited again at a few concrete values), and
:func:`from_cache` a verdict read back from the verdict cache with the audit record stored beside it.
"""

from __future__ import annotations

from dataclasses import replace

from ._seal import SEAL
from .audit import DEFAULT_INSTANCES, run_audit
from .audit_gradient import run_gradient_audit
from .verdict import AuditRecord, Candidate, InductionVerdict, Verdict, unknown


def _sealed(found: Candidate, record: AuditRecord, cls=Verdict, **changes) -> Verdict:
    """The proved verdict of ``found`` with the audit's ``record`` (which must have passed). Private:
    only :func:`conclude` and :func:`combine` call it (a test checks); :func:`from_cache` seals the
    cached verdict's own class with the stored record."""
    fields = {"general": found.general, "method": found.method, "scope": found.scope,
              "trace": tuple(found.trace), "seconds": found.seconds, "lhs": found.lhs, "rhs": found.rhs,
              "over": found.over, **changes}
    return cls("proved", fields.pop("general"), fields.pop("method"), fields.pop("scope"),
               fields.pop("trace"), None, audit=record, seal=SEAL, **fields)


def refused(found: Candidate, record: AuditRecord, trace, **changes) -> Verdict:
    """"unknown" for a candidate whose audit did not pass, saying why."""
    why = ("its shapes disagree with its values" if record.malformed
           else "the audit could not evaluate it at any instance")
    v = unknown(tuple(trace) + (f"not reported as proved: {why} ({found.method} found a proof)",))
    return replace(v, **{"seconds": found.seconds, "lhs": found.lhs, "rhs": found.rhs, **changes})


def conclude(lhs, rhs, found, /, *, scalar: bool = False, at=None, instances: int = DEFAULT_INSTANCES,
             also=None, **changes) -> Verdict:
    """The verdict on lhs = rhs for what a strategy found.

    ``found``: a :class:`Candidate` (audited here) or a verdict that is not proved (returned with
    ``changes`` applied). ``at``: the dimensions a proof at given dimensions holds at (the audit
    draws exactly those). ``also``: a second, independent audit ``(lhs, rhs, found) ->
    AuditRecord`` (the maxima's audit of a claim as stated); the instances both evaluated count
    together, and a disagreement in either raises SoundnessError. ``changes``:
    fields of the verdict to set (seconds, lhs, rhs, scope, ...)."""
    if isinstance(found, Verdict):
        if found.proved:
            raise TypeError("conclude: pass the strategy's Candidate, not a verdict already made")
        return replace(found, **changes) if changes else found
    if not isinstance(found, Candidate):
        raise TypeError(f"conclude: expected a Candidate or a Verdict, got {type(found).__name__}")
    record = run_audit(lhs, rhs, prover_trace=found.trace, method=found.method, scalar=scalar, at=at,
                       instances=instances)
    trace = tuple(found.trace) + (record.line,)
    if also is not None and not record.malformed:
        second = also(lhs, rhs, found)  # e.g. the maxima's audit, which evaluates what the first cannot
        trace += (second.line,)
        record = AuditRecord(record.agreed + second.agreed, record.skipped + second.skipped,
                             record.line + "; " + second.line, second.malformed)
    if not record.passed:
        return refused(found, record, trace, **changes)
    return _sealed(replace(found, trace=trace), record, **changes)


def combine(verdicts, method: str, scope: str, trace, general: bool, **changes) -> Verdict:
    """One proved verdict for a claim proved part by part: every part must be a proved (sealed)
    verdict; its record sums the parts' audited instances."""
    verdicts = list(verdicts)
    if not verdicts or not all(isinstance(v, Verdict) and v.proved for v in verdicts):
        raise ValueError("combine: every part must be a proved verdict")
    agreed = sum(v.audit.agreed for v in verdicts)
    skipped = tuple(s for v in verdicts for s in v.audit.skipped)
    record = AuditRecord(agreed, skipped, f"audit: {agreed} exact instances agree over {len(verdicts)} parts")
    return _sealed(Candidate(general, method, scope, tuple(trace)), record, **changes)


def conclude_by_induction(found: Candidate, base: Verdict, step: Verdict, concrete, variable,
                          **changes) -> InductionVerdict:
    """The verdict on a claim proved by induction on ``variable`` (e.g. the number of layers L):
    ``base`` and ``step`` must be proved (sealed) verdicts; the claim is audited again at each
    concrete value, ``concrete`` = [(value, lhs, rhs), ...] (the claim unfolded there), at random
    exact instances. Sealed only when every one of those audits passed; the verdict carries
    ``base`` and ``step``. A certified disagreement raises SoundnessError."""
    if not all(isinstance(v, Verdict) and v.proved for v in (base, step)):
        raise ValueError("conclude_by_induction: the base case and the step must be proved verdicts")
    concrete = list(concrete)
    if not concrete:
        raise ValueError("conclude_by_induction: the claim must be audited at one concrete value at least")
    agreed, skipped, lines, trace = 0, [], [], tuple(found.trace)
    for value, lhs, rhs in concrete:
        record = run_audit(lhs, rhs, prover_trace=found.trace, method=found.method)
        line = f"{record.line.removeprefix('audit: ')} at {variable} = {value}"
        trace += (f"audit at {variable} = {value}: {record.line.removeprefix('audit: ')}",)
        if not record.passed:
            return refused(found, replace(record, line=line), trace, **changes)
        agreed, skipped = agreed + record.agreed, skipped + list(record.skipped)
        lines.append(line)
    record = AuditRecord(agreed, tuple(dict.fromkeys(skipped)), "audit: " + "; ".join(lines))
    return _sealed(replace(found, trace=trace), record, InductionVerdict, base=base, step=step, **changes)


def from_cache(found: dict, cls, **fields) -> Verdict | None:
    """A proved verdict of class ``cls`` (a Verdict subclass) from a cache entry, or None when the
    entry carries no audit record that passed (then the claim is proved again)."""
    try:
        record = AuditRecord.from_dict(found.get("audit"))
    except ValueError:
        return None
    if not record.passed:
        return None
    return cls("proved", audit=record, seal=SEAL, **fields)


def conclude_gradient(expr, wrt, candidate, cotangent, found, /, *, at=None, **changes) -> Verdict:
    """The verdict on "candidate is the VJP of expr with respect to wrt at cotangent" for what a
    gradient strategy found: the gradient audit (:mod:`symattn.proof.audit_gradient`, which
    differentiates random exact instances) must evaluate one instance at least and agree at every
    one it evaluated; otherwise "unknown". A certified disagreement raises SoundnessError."""
    if isinstance(found, Verdict):
        if found.proved:
            raise TypeError("conclude_gradient: pass the strategy's Candidate, not a verdict already made")
        return replace(found, **changes) if changes else found
    if not isinstance(found, Candidate):
        raise TypeError(f"conclude_gradient: expected a Candidate or a Verdict, got {type(found).__name__}")
    record = run_gradient_audit(expr, wrt, candidate, cotangent, at=at, prover_trace=found.trace,
                                method=found.method)
    trace = tuple(found.trace) + (record.line,)
    if not record.passed:
        return refused(found, record, trace, **changes)
    return _sealed(replace(found, trace=trace), record, **changes)
