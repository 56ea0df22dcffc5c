"""Verdicts on the evidence ladder, and the counterexamples that back refutations.

| status    | general | meaning                                                       |
|-----------|---------|---------------------------------------------------------------|
| proved    | True    | holds for every value of the dimension symbols (and H)        |
| proved    | False   | exact symbolic equality at the listed concrete dimensions,    |
|           |         | or a claim with no dimension symbols, proved as stated        |
| refuted   | False   | a concrete counterexample, certified exactly                  |
| unknown   | False   | none of the above (agreement at samples is reported, not trusted)|

A proved verdict is made in one place, :mod:`symattn.proof.kernel`, and only after the
independent audit (:mod:`symattn.proof.audit`) has evaluated the claim at one exact instance at
least: the strategies return a :class:`Candidate` (what they found, not yet a verdict), and
:class:`Verdict` refuses the status "proved" without the kernel's seal and an :class:`AuditRecord`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..displays import show
from ..printing import plain as distinct_str
from ._seal import SEAL

STATUSES = ("proved", "refuted", "unknown")


class TraceLine(str):
    """A line of a proof trace that keeps the expressions it shows.

    As a string it is the engine's form (``sympy.sstr`` of each expression, cut at ``limit``
    characters; two different bound indices never print alike: ``K[_k', _k]``, not ``K[_k, _k]``),
    which JSON and the verdict cache keep; :meth:`readable` and :meth:`latex`
    show the same line in math notation (Σ, subscripts, ᵀ; readable index names, no bracket left
    open), through :mod:`symattn.printing`.
    """

    def __new__(cls, template: str, *exprs, limit: int | None = None):
        plain = template.format(*(e[:limit] if limit else e for e in distinct_str(*exprs)))
        line = super().__new__(cls, plain)
        line.template, line.exprs, line.limit = template, exprs, limit
        return line

    def __reduce__(self):
        return (_trace_line, (self.template, self.exprs, self.limit, str(self)))

    def __radd__(self, prefix):
        if isinstance(prefix, str) and not isinstance(prefix, TraceLine):
            escaped = prefix.replace("{", "{{").replace("}", "}}")
            line = str.__new__(TraceLine, str.__add__(prefix, self))  # the expressions are printed once, not again
            line.template, line.exprs, line.limit = escaped + self.template, self.exprs, self.limit
            return line
        return NotImplemented

    def readable(self) -> str:
        from ..printing import dummy_names, text

        limit = None if self.limit is None else max(self.limit, 400)
        names = dummy_names(*self.exprs)  # one index keeps one name across the line's expressions
        return self.template.format(*(text(e, limit, names) for e in self.exprs))

    def latex(self) -> str:
        from ..printing import dummy_names, latex

        names = dummy_names(*self.exprs)
        return self.template.format(*(f"${latex(e, names)}$" for e in self.exprs))


def _trace_line(template, exprs, limit, plain=None):
    """A trace line back from a pickle, with the text it had (SymPy may evaluate an unpickled
    expression further, e.g. a floor of a number, so printing it again could change the line)."""
    if plain is None:
        return TraceLine(template, *exprs, limit=limit)
    line = str.__new__(TraceLine, plain)
    line.template, line.exprs, line.limit = template, exprs, limit
    return line


def readable(line) -> str:
    """A trace line in math notation (plain strings are returned as they are)."""
    return line.readable() if isinstance(line, TraceLine) else str(line)


@dataclass(frozen=True)
class Counterexample:
    """A concrete instance where the two sides differ, certified exactly.

    dims: dimension symbol -> integer; values: input name -> ndarray (exact integers or rationals);
    lhs, rhs: both sides as float arrays; lhs_exact, rhs_exact: exact SymPy matrices;
    entry: (row, column) of the certified entry; difference: its exact value;
    certificate: how the difference was shown to be nonzero; functions: how each
    uninterpreted score function was instantiated.
    """

    dims: dict
    values: dict
    lhs: Any
    rhs: Any
    lhs_exact: Any
    rhs_exact: Any
    entry: tuple
    difference: Any
    certificate: str
    functions: dict = field(default_factory=dict)

    def describe(self) -> str:
        d = ", ".join(f"{k}={v}" for k, v in self.dims.items()) or "the values shown"  # no dimension to choose
        i, j = self.entry
        from ..printing import text

        out = [f"at {d}: entry ({i}, {j}) differs: lhs - rhs = {text(self.difference)}",
               f"  certificate: {self.certificate}"]
        for name, how in self.functions.items():
            out.append(f"  {name} instantiated as {how}")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.describe()

    def __repr__(self) -> str:
        d = ", ".join(f"{k}={v}" for k, v in self.dims.items()) or "as given"
        return f"<Counterexample at {d}, entry {tuple(self.entry)}>"

    def _repr_markdown_(self):
        return show("counterexample_markdown", self)

    def _repr_html_(self):
        return show("counterexample_html", self)


@dataclass(frozen=True)
class AuditRecord:
    """What the independent audit did with a claim: ``agreed`` instances at which both sides were
    evaluated exactly (or by certified enclosures) and agree; ``skipped``: why the other instances
    were not evaluated; ``line``: the trace line that says so. A proved verdict carries one with
    ``agreed >= 1`` (a closed claim has one instance, its own)."""

    agreed: int
    skipped: tuple = ()
    line: str = ""
    #: an instance's shapes disagreed with its values: the claim is never reported proved
    malformed: bool = False

    @property
    def passed(self) -> bool:
        """At least one instance evaluated and agreed, and none was malformed."""
        return self.agreed >= 1 and not self.malformed

    def as_dict(self) -> dict:
        return {"agreed": self.agreed, "skipped": list(self.skipped), "line": self.line,
                "malformed": self.malformed}

    @classmethod
    def from_dict(cls, d) -> "AuditRecord":
        """A record read back from the verdict cache (ValueError when it is not one)."""
        if not (isinstance(d, dict) and isinstance(d.get("agreed"), int) and isinstance(d.get("line"), str)
                and isinstance(d.get("skipped", []), list)):
            raise ValueError(f"not an audit record: {d!r}")
        return cls(d["agreed"], tuple(map(str, d.get("skipped", []))), d["line"], bool(d.get("malformed", False)))


@dataclass(frozen=True)
class Candidate:
    """What a strategy found: a proof of lhs = rhs that is not yet a verdict. Only
    :func:`symattn.proof.kernel.conclude` turns it into a proved :class:`Verdict`, after the audit."""

    general: bool
    method: str
    scope: str
    trace: tuple
    over: tuple = ((), (), ())
    seconds: float = 0.0
    lhs: Any = None
    rhs: Any = None
    counterexample = None
    status = "proved"
    proved = True

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`symattn.verify`: status, scope, method and a readable trace."""

    status: str
    general: bool
    method: str
    scope: str
    trace: tuple
    counterexample: Counterexample | None = None
    seconds: float = 0.0
    lhs: Any = None
    rhs: Any = None
    #: the symbols a general proof quantifies over: dimensions, head counts, other scalars (names)
    over: tuple = ((), (), ())
    #: a proved verdict: what the independent audit evaluated (see :class:`AuditRecord`)
    audit: AuditRecord | None = None
    seal: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"unknown verdict status {self.status!r}")
        if self.status == "proved":
            if self.seal is not SEAL:
                raise ValueError("a proved Verdict is made only by symattn.proof.kernel.conclude, after the audit")
            if not isinstance(self.audit, AuditRecord) or not self.audit.passed:
                raise ValueError("a proved Verdict needs the audit's record of at least one evaluated instance")
        if self.general and self.status != "proved":
            raise ValueError("only a proved verdict can be general")
        if self.status == "refuted" and self.counterexample is None:
            raise ValueError("a refutation needs its counterexample")

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    def __bool__(self) -> bool:
        return self.proved

    def explain(self) -> str:
        """The verdict and its trace in math notation (Σ, subscripts, ᵀ; see :mod:`symattn.printing`)."""
        lines = [f"{self.status} ({self.scope}) by {self.method} in {self.seconds:.2f} s"]
        lines += [f"  {readable(t)}" for t in self.trace]
        if self.counterexample is not None:
            lines.append(self.counterexample.describe())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.explain()

    def __repr__(self) -> str:
        return f"<Verdict {self.status}: {self.scope}, by {self.method}>"

    def _repr_markdown_(self):
        return show("verdict_markdown", self)

    def _repr_html_(self):
        return show("verdict_html", self)

    def as_dict(self) -> dict:
        return {
            "status": self.status,
            "general": self.general,
            "method": self.method,
            "scope": self.scope,
            "seconds": round(self.seconds, 4),
            "trace": list(self.trace),
            "counterexample": None if self.counterexample is None else self.counterexample.describe(),
            "audit": None if self.audit is None else self.audit.as_dict(),
        }


@dataclass(frozen=True)
class InductionVerdict(Verdict):
    """A verdict proved by an induction (e.g. on the number of layers): ``base`` and ``step`` are
    the sealed verdicts on the base case and on the step (see
    :func:`symattn.proof.kernel.conclude_by_induction`)."""

    base: Verdict | None = None
    step: Verdict | None = None


def proved(method: str, scope: str, trace, general: bool, **kw) -> Candidate:
    """A candidate proof (the kernel makes it a verdict after the audit)."""
    return Candidate(general, method, scope, tuple(trace), **kw)


def quantified(dims=(), heads=(), scalars=(), inputs=()) -> tuple:
    """The names a symbolic proof quantifies over, sorted: (dimensions, head counts, scalars).

    ``inputs``: the names of the claim's input matrices; they stand in the third place when there
    is nothing else to quantify over, so that a claim about A and B at fixed sizes is "for all
    values of A, B" and only a claim with no free symbol at all is closed."""
    heads = {str(x) for x in heads}
    if not (dims or heads or scalars) and inputs:
        return (), (), tuple(sorted({str(x) for x in inputs}))
    return (tuple(sorted({str(d) for d in dims} - heads)), tuple(sorted(heads)),
            tuple(sorted({str(x) for x in scalars})))


def general_scope(over: tuple) -> str:
    """The scope of a symbolic proof: 'all dimensions (n, m) and every H >= 1', 'all values of
    x, y', or 'as stated (a closed claim)' when there is nothing to quantify over."""
    dims, heads, scalars = over
    parts = []
    if dims or heads:
        parts.append(f"all dimensions ({', '.join(dims)})" if dims else "all dimensions")
        parts += [f"every {c} >= 1" for c in heads]
    if scalars:
        parts.append(f"all values of {', '.join(scalars)}")
    return " and ".join(parts) if parts else "as stated (a closed claim)"


def symbolic_proof(method: str, trace, over: tuple, **kw) -> Candidate:
    """A candidate proof by a symbolic strategy: general unless the claim is closed (no symbols at all)."""
    general = any(over)
    return Candidate(general, method, general_scope(over), tuple(trace), over=over, **kw)


def refuted(cex: Counterexample, trace, **kw) -> Verdict:
    dims = ", ".join(f"{k}={v}" for k, v in cex.dims.items()) or "the given dimensions"
    return Verdict("refuted", False, "counterexample (E)", f"counterexample at {dims}", tuple(trace),
                   counterexample=cex, **kw)


def unknown(trace, scope: str = "not established", **kw) -> Verdict:
    return Verdict("unknown", False, "none", scope, tuple(trace), **kw)
