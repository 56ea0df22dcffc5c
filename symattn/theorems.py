"""Named theorems: a statement in the seed's notation, the claims that make it, and its verdict.

The theorem library lives in the top-level ``proofs`` package (one module per family);
each module registers its theorems with the :func:`theorem` decorator:

    @theorem("single_head_reduces_to_attention", "MultiHead with H = 1 = W^O Attention(...)")
    def _():
        ...
        return [(lhs, rhs), ...]

A theorem with several claims is proved when every claim is, and general when every
claim is general. Items of the gallery of mistakes (``expect="refuted"``) pass when
they are refuted with a certified counterexample.

A gradient claim ``(candidate, VJP(expr, wrt, cotangent))`` (made by
:func:`symattn.statements.gradient`) is decided by :func:`symattn.verify_gradient`: proved when
the candidate is the vector-Jacobian product, through the gradient audit of the proof kernel.

A claim whose two sides are both scalars (neither is a matrix), such as
``(Expectation(dot(q, k)), 0)``, is decided by :func:`symattn.proof.scalar.verify_scalar`
instead of :func:`symattn.verify`; it returns the same kind of Verdict.

Every claim of the library that is proved is kept in the verdict cache
(:mod:`symattn.proof.verdict_cache`); :func:`claim_verdict` with ``cached=True`` (what the
numeric core and ``lower_theorem`` use) reads a claim's verdict from there when its key matches,
and proves it otherwise. :func:`prove` and :func:`prove_all` prove every claim now unless asked
to use the cache; :func:`prove_all` runs theorems in parallel processes.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import importlib
import multiprocessing
import os
import pkgutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from . import statements
from .displays import show
from .errors import SymattnError, UnknownTheoremError
from .proof import Verdict, verdict_cache, verify
from .proof.scalar import is_scalar_claim, verify_scalar
from .proof.verdict import TraceLine, readable
from .proof.verdict import general_scope as _scope_of
from .statements import REGISTRY as REGISTRY
from .statements import Theorem as Theorem
from .statements import theorem as theorem


@dataclass
class Result:
    theorem: Theorem
    verdicts: list = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""

    @property
    def status(self) -> str:
        if self.error or not self.verdicts:
            return "unknown"
        st = [v.status for v in self.verdicts]
        if "refuted" in st:
            return "refuted"
        return "proved" if all(s == "proved" for s in st) else "unknown"

    @property
    def general(self) -> bool:
        if self.theorem.only_at:
            return False
        return self.status == "proved" and all(v.general for v in self.verdicts)

    @property
    def method(self) -> str:
        seen = []
        for v in self.verdicts:
            # a cached verdict's method names its own key; the theorem's keys are in cache_key
            method = f"{v.proved_by}, cached" if isinstance(v, verdict_cache.CachedVerdict) else v.method
            if v.status == self.status and method not in seen:
                seen.append(method)
        return " + ".join(seen) or "none"

    @property
    def scope(self) -> str:
        if self.error:
            return "error"
        if self.status == "refuted":
            return next(v.scope for v in self.verdicts if v.status == "refuted")
        if self.theorem.only_at and self.status == "proved":
            widest = sorted({v.scope for v in self.verdicts}, key=len)[-1]
            return f"only at {self.theorem.only_at}; {widest}"
        if self.general:
            return general_scope(self.verdicts) + modulo_rules(self.verdicts)
        if self.status == "proved":
            return "; ".join(dict.fromkeys(v.scope for v in self.verdicts if not v.general))
        return "not established"

    @property
    def ok(self) -> bool:
        return self.status == self.theorem.expect

    @property
    def cached(self) -> bool:
        """True when every verdict was read from the verdict cache (none proved in this run)."""
        return bool(self.verdicts) and all(isinstance(v, verdict_cache.CachedVerdict) for v in self.verdicts)

    @property
    def cache_key(self) -> str:
        """One key for the cached verdicts of the theorem: SHA-256 of its claims' keys ('' if not cached)."""
        if not self.cached:
            return ""
        return hashlib.sha256("".join(v.cache_key for v in self.verdicts).encode()).hexdigest()

    def __str__(self) -> str:
        return show("result_text", self, fallback=repr)

    def _repr_markdown_(self):
        return show("result_markdown", self)

    def _repr_html_(self):
        return show("result_html", self)

    def as_dict(self) -> dict:
        return {
            "name": self.theorem.name,
            "statement": self.theorem.statement,
            "status": self.status,
            "general": self.general,
            "scope": self.scope,
            "method": self.method,
            "seconds": round(self.seconds, 3),
            "expect": self.theorem.expect,
            "claims": [v.as_dict() for v in self.verdicts],
            "error": self.error or None,
        }


def general_scope(verdicts) -> str:
    """The scope of a general theorem: every symbol any of its claims quantifies over."""
    over = [set(), set(), set()]
    for v in verdicts:
        for k in range(3):
            over[k] |= set(v.over[k])
    return _scope_of(tuple(tuple(sorted(x)) for x in over))


MODULO = ", modulo the VJP rules "


def modulo_rules(verdicts) -> str:
    """", modulo the VJP rules r1, r2" naming every local VJP rule a gradient claim's proof rests on
    ('' when no verdict is such a proof): a general gradient theorem says so in its scope."""
    rules: list = []
    for v in verdicts:
        if MODULO in (v.scope or ""):
            rules += [r for r in v.scope.split(MODULO, 1)[1].split(", ") if r not in rules]
    return MODULO + ", ".join(rules) if rules else ""


def load_library() -> dict[str, Theorem]:
    """Import every module of the bundled ``proofs`` package and return the registry."""
    from . import proofs

    for mod in pkgutil.iter_modules(proofs.__path__):
        importlib.import_module(f"symattn.proofs.{mod.name}")
    return REGISTRY


def library() -> dict[str, Theorem]:
    """Every theorem of the library by name: the bundled theorems, the gallery of mistakes
    (``expect="refuted"``) and any registered with :func:`theorem`; a new dict, in the order the
    library states them. ``symattn.library()`` is this function."""
    return dict(load_library())


def named(name: str) -> Theorem:
    """The theorem of the library called ``name`` (``symattn.theorem(name)``); raises
    :class:`UnknownTheoremError` naming the closest names when there is none.

    >>> th = named("column_row_transpose")
    >>> th.expect, len(th.claims()) > 0
    ('proved', True)
    """
    lib = load_library()
    if isinstance(name, str) and name in lib:
        return lib[name]
    close = difflib.get_close_matches(str(name), list(lib), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise UnknownTheoremError(f"no theorem named {name!r} in the library; {hint}symattn.library() lists the "
                              f"{len(lib)} theorems (symattn prove and symattn prove --gallery print them)")


def _library_sources(th: Theorem) -> tuple | None:
    """The source files that state a theorem of the bundled library (its module, this one and the
    statements'), or None for a theorem defined elsewhere (its verdicts are not cached)."""
    module = getattr(th.build, "__module__", "") or ""
    if REGISTRY.get(th.name) is not th or not module.startswith("symattn.proofs."):
        return None
    path = getattr(sys.modules.get(module), "__file__", None)
    return (path, __file__, statements.__file__) if path else None


def claim_key(th: Theorem, k: int, claims: list | None = None) -> str | None:
    """The verdict-cache key of claim ``k`` of a library theorem (None for other theorems)."""
    sources = _library_sources(th)
    if sources is None:
        return None
    lhs, rhs = (claims if claims is not None else th.claims())[k]
    return verdict_cache.claim_key(lhs, rhs, at=th.at, label=f"theorem {th.name}, claim {k}", sources=sources)


def _decide(th: Theorem, lhs, rhs) -> Verdict:
    if statements.is_gradient_claim(lhs, rhs):
        from .grad import verify_gradient

        v = verify_gradient(rhs.expr, rhs.wrt, lhs, rhs.cotangent, at=th.at, budget=th.budget)
        return dataclasses.replace(v, lhs=lhs, rhs=rhs)  # the claim as stated: candidate = vjp(...)
    if is_scalar_claim(lhs, rhs):
        return verify_scalar(lhs, rhs, budget=th.budget)
    return verify(lhs, rhs, at=th.at, budget=th.budget)


def claim_verdict(th: Theorem, k: int, claims: list | None = None, *, cached: bool = True,
                  save: bool = True) -> Verdict:
    """The verdict on claim ``k`` of the theorem ``th``.

    With ``cached``, a proved verdict stored under the claim's key is returned (a
    :class:`~symattn.proof.verdict_cache.CachedVerdict`, which says so); otherwise, or when there
    is none, the claim is proved now, and a proved verdict of a library theorem is kept in the
    cache (``save``: written to the user's cache file at once)."""
    claims = claims if claims is not None else th.claims()
    lhs, rhs = claims[k]
    key = claim_key(th, k, claims)
    if cached and key is not None:
        found = verdict_cache.lookup(key, lhs, rhs)
        if found is not None:
            return found
    v = _decide(th, lhs, rhs)
    if key is not None:
        verdict_cache.remember(key, v, save=save, theorem=th.name, claim=k)
    return v


def prove(th: Theorem, *, cached: bool = False, save: bool = True) -> Result:
    """Prove every claim of ``th`` in order (stopping at the first one not proved). With
    ``cached``, claims whose proved verdicts are in the verdict cache are not proved again; with
    ``save``, the verdicts proved are written to the user's cache file (once, at the end)."""
    start = time.perf_counter()
    res = Result(th)
    try:
        claims = th.claims()
        for k in range(len(claims)):
            v = claim_verdict(th, k, claims, cached=cached, save=False)
            res.verdicts.append(v)
            if v.status != "proved":
                break
    except SymattnError as exc:
        res.error = f"{type(exc).__name__}: {exc}"
    res.seconds = time.perf_counter() - start
    if save:
        verdict_cache.flush()
    return res


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _light(v: Verdict) -> Verdict:
    """A proved verdict without its sides and with its trace as plain text (the same text): what a
    table or JSON shows, and cheap to send from a worker process."""
    if not v.proved:
        return v
    return dataclasses.replace(v, lhs=None, rhs=None, trace=tuple(str(t) for t in v.trace))


class _ShownLine(TraceLine):
    """A trace line as a worker process showed it: its text, its readable form and its HTML (the
    ``trace_html`` display, where one is registered), kept as text (an expression rebuilt from a
    pickle may be evaluated further by SymPy and print otherwise)."""

    def __new__(cls, text: str, shown: str, html: str | None = None):
        line = str.__new__(cls, text)
        line.template, line.exprs, line.limit = text.replace("{", "{{").replace("}", "}}"), (), None
        line.shown, line.html = shown, html
        return line

    def __reduce__(self):
        return (_ShownLine, (str(self), self.shown, self.html))

    def readable(self) -> str:
        return self.shown


def _shown(v: Verdict, html: bool = False) -> Verdict:
    """The verdict with each trace line kept as the text it shows here (see :class:`_ShownLine`), and
    with ``html`` its HTML as well."""
    lines = tuple(_ShownLine(str(t), readable(t), show("trace_html", t) if html else None)
                  if isinstance(t, TraceLine) else t for t in v.trace)
    return dataclasses.replace(v, trace=lines)


def _own_sides(th: Theorem, verdicts) -> list:
    """Verdicts from a worker, with the sides they kept replaced by this process's own claims: the
    same expressions, as built here (SymPy evaluates an unpickled expression further, so the worked
    example's floor(1/2 + ...) = 88 would come back as 88 = 88)."""
    import sympy as sp

    claims = th.claims()
    if len(claims) != len(verdicts):
        return list(verdicts)
    return [v if v.lhs is None else dataclasses.replace(v, lhs=sp.sympify(lhs), rhs=sp.sympify(rhs))
            for v, (lhs, rhs) in zip(verdicts, claims)]


def _prove_named(name: str, cached: bool, expressions: bool, html: bool = False):
    """In a worker process: prove the library theorem ``name``; return what the parent needs (the
    verdicts, the time, the error, and the cache entries proved here)."""
    before = set(verdict_cache.pending())
    res = prove(REGISTRY[name], cached=cached, save=False)
    new = {k: e for k, e in verdict_cache.pending().items() if k not in before}
    verdicts = [_shown(v, html) for v in res.verdicts] if expressions else [_light(v) for v in res.verdicts]
    return verdicts, res.seconds, res.error, new


def prove_all(theorems: list, *, jobs: int | None = None, cached: bool = False,
              expressions: bool = True, html: bool = False) -> list[Result]:
    """:func:`prove` each theorem, in ``jobs`` processes at once (default: one per core); the results
    come back in the order of ``theorems``, the same as one after another. Processes are forked
    from this one (the library is loaded once); where fork is not available, or with one job or
    one theorem, they run here one after another. The verdicts proved are written to the user's
    cache file once, at the end.

    ``expressions=False``: proved verdicts that come from a worker keep no sides (``lhs``, ``rhs``
    are None) and their trace lines are plain text (the same text), which spares sending and
    rebuilding the expressions; a verdict that is not proved keeps everything. Trace lines from a
    worker keep their text and readable form as shown there.

    ``html``: trace lines from a worker also keep their HTML as shown there (the ``trace_html``
    display, for :mod:`symattn.teach.report`), so a page made in N processes equals one made in one.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"prove_all: jobs must be at least 1, got {jobs}")
    registered = all(REGISTRY.get(th.name) is th for th in theorems)
    fork = "fork" in multiprocessing.get_all_start_methods()
    if jobs == 1 or len(theorems) < 2 or not fork or not registered:
        results = [prove(th, cached=cached, save=False) for th in theorems]
        verdict_cache.flush()
        return results
    # longest first (as the cache remembers them), so the slow ones do not start last
    hint = _time_hints()
    order = sorted(range(len(theorems)), key=lambda i: -hint.get(theorems[i].name, 0.0))
    results: list = [None] * len(theorems)
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(jobs, len(theorems)), mp_context=ctx) as pool:
        futures = {i: pool.submit(_prove_named, theorems[i].name, cached, expressions, html) for i in order}
        for i in range(len(theorems)):
            verdicts, seconds, error, new = futures[i].result()
            results[i] = Result(theorems[i], _own_sides(theorems[i], verdicts), seconds, error)
            verdict_cache.adopt(new)
    verdict_cache.flush()
    return results


def _time_hints() -> dict:
    """{theorem: seconds its claims took when last proved}, from the verdict cache files (the
    newest entry of each claim)."""
    newest: dict = {}
    for f in verdict_cache.files():
        for e in verdict_cache.entries(f).values():
            claim = (e.get("theorem"), e.get("claim"))
            if isinstance(claim[0], str) and float(e.get("written", 0) or 0) >= newest.get(claim, (-1.0, 0.0))[0]:
                newest[claim] = (float(e.get("written", 0) or 0), float(e.get("seconds", 0.0) or 0.0))
    out: dict = {}
    for (name, _), (_, seconds) in newest.items():
        out[name] = out.get(name, 0.0) + seconds
    return out
