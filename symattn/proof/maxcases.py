"""Exact proofs of scalar claims about maxima, finite sums and running sequences.

The claims of online softmax (Milakov & Gimelshein 2018, Dao et al. 2022) are about real
numbers: the entries of vectors x^{(1)}, x^{(2)} of any length B, their maxima m(x), running
maxima m_j and normalizers d_j. A claim L = R is proved here by exact rewriting, then
exact simplification (:func:`~symattn.proof.scalar.exact_zero`, never a float), using only
these identities of real numbers (the rules of this module):

- ``opaque_maxima``: a maximum max_i w_i (:class:`VecMax`) is a real number; a claim that holds
  for every real value of its maxima holds for the actual ones. The maxima are replaced by
  fresh real symbols (one per distinct maximum).
- ``peel_sums``: Σ_{k=lo}^{hi+c} g(k) = Σ_{k=lo}^{hi} g(k) + g(hi+1) + ... + g(hi+c) for an
  integer c in 1..8 when hi >= lo - 1 is provable, so that sums with the same lower limit meet at
  the smaller upper limit. A sum over hi < lo is empty (0), as papers read it; SymPy's own sum
  identities (Karr's convention) are never used: the sums left are opaque symbols.
- ``join_sums`` (:mod:`.join_sums`): Σ_{k=a}^{b} g(k) + Σ_{k=b+1}^{e} g(k) = Σ_{k=a}^{e} g(k) when
  b >= a - 1 and e >= b are provable (a sum split at a bounded position, ``1 \\le c < n``).
- ``merge_sums``: a·Σ_k g(k) + b·Σ_k h(k) = Σ_k (a·g(k) + b·h(k)) over the same limits, for a
  and b free of k (linearity of a finite sum).
- ``max_cases`` (a case split on the maximum entry): the entries of the vectors a claim
  mentions form a finite nonempty set, so some entry v_p is at least every entry; the claim
  holds when it holds in each case "v_p is the largest entry", for every vector v and a
  symbolic p in 1..len(v). In that case a maximum over a vector that has v as a block is v_p,
  and max(v_p, a_1, ...) = v_p when every a_t is an entry, a maximum of entries, or -oo.

>>> import sympy as sp
>>> B = sp.Symbol("B", integer=True, positive=True)
>>> u, w = sp.IndexedBase("u", real=True), sp.IndexedBase("w", real=True)
>>> both = VecMax(block(B, u), block(B, w))
>>> prove_scalar(both, sp.Max(VecMax(block(B, u)), VecMax(block(B, w)))).method
'case split on the maximum entry (2 cases) + exact simplification (S)'
"""

from __future__ import annotations

import time
from dataclasses import replace

import sympy as sp

from ..errors import BudgetExceeded, SoundnessError
from .budget import Budget
from .join_sums import join_sums, single_sum
from .kernel import combine, conclude
from .scalar import exact_zero, parameters
from .verdict import AuditRecord, TraceLine, Verdict, proved, quantified, symbolic_proof, unknown

#: The index of every block's entry inside a :class:`VecMax` (one shared Dummy, so that two
#: maxima of the same vector are the same SymPy expression).
INDEX = sp.Dummy("i", integer=True, positive=True)
MAX_PEEL = 8


def block(length, base) -> sp.Tuple:
    """The block (length, entry at INDEX) of a declared vector ``base`` (an IndexedBase)."""
    return sp.Tuple(sp.sympify(length), base[INDEX])


def instantiate(entry, k):
    """A block's entry at index k: INDEX replaced by k outside the maxima it contains (each
    :class:`VecMax` binds INDEX in its own blocks)."""
    inner = {a: sp.Dummy("M") for a in sp.sympify(entry).atoms(VecMax)}
    out = sp.sympify(entry).xreplace(inner).xreplace({INDEX: k})
    return out.xreplace({v: a for a, v in inner.items()})


class VecMax(sp.Function):
    """max_i w_i: the largest entry of the vector w given by its blocks, each a
    ``Tuple(length, entry at INDEX)``, entries numbered from 1 in each block.

    With concrete lengths and rational entries it is evaluated exactly (SymPy's Max of
    rationals); otherwise it stays a real number (finite: the vector is not empty).
    """

    @classmethod
    def eval(cls, *blocks):
        if not all(b[0].is_Integer for b in blocks):
            return None
        vals = [instantiate(b[1], sp.Integer(t)) for b in blocks for t in range(1, int(b[0]) + 1)]
        if vals and all(v.is_Rational for v in vals):
            return sp.Max(*vals)
        return None

    def _eval_is_real(self):
        return True

    def _eval_is_finite(self):
        return True

    def _sympystr(self, printer):
        parts = ", ".join(f"{printer.doprint(b[1].xreplace({INDEX: sp.Symbol('i')}))} (i<={printer.doprint(b[0])})"
                          for b in self.args)
        return f"max_i[{parts}]"


def write_out_maxima(e, values: dict | None = None):
    """Every :class:`VecMax` whose block lengths are integers, written out as SymPy's Max of its
    entries, each with ``values`` substituted first (to evaluate a claim at concrete values
    exactly: a Max of numbers is a number)."""
    values = values or {}

    def one(x):
        if all(b[0].is_Integer for b in x.args):
            return sp.Max(*(instantiate(b[1], sp.Integer(t)).xreplace(values) for b in x.args
                            for t in range(1, int(b[0]) + 1)))
        return x

    return sp.sympify(e).replace(lambda x: isinstance(x, VecMax), one)


def write_out_short_sums(e):
    """Every sum whose range has a concrete length (at most 64 terms) written out, a sum of 0
    dropped; the others stay (SymPy's ``doit`` is not used: on symbolic sums it can recurse
    without end)."""

    def one(x):
        if len(x.limits) != 1:
            return x
        k, lo, hi = x.limits[0]
        n = hi - lo + 1
        if x.function == 0 or (n.is_Integer and n <= 0):  # a range hi < lo is empty, as papers read it
            return sp.Integer(0)
        if n.is_Integer and 0 <= n <= 64:
            return sp.Add(*(x.function.xreplace({k: lo + t}) for t in range(int(n))))
        return x

    return sp.sympify(e).replace(lambda x: isinstance(x, sp.Sum), one)


def opaque_maxima(*exprs) -> tuple[list, dict]:
    """The expressions with every :class:`VecMax` replaced by a fresh real symbol (rule
    ``opaque_maxima``), and the table symbol -> maximum."""
    table: dict = {}
    for e in exprs:
        for a in sp.sympify(e).atoms(VecMax):
            table.setdefault(a, sp.Dummy("M", real=True))
    out = [sp.sympify(e).xreplace(table) for e in exprs]
    return out, {v: k for k, v in table.items()}


def _sums(e):
    return [s for s in sp.preorder_traversal(e) if isinstance(s, sp.Sum) and len(s.limits) == 1]


def peel_sums(*exprs) -> list:
    """Rule ``peel_sums`` on every sum of the expressions (see the module docstring)."""
    sums = [s for e in exprs for s in _sums(e)]
    low: dict = {}
    for s in sums:
        _, lo, hi = s.limits[0]
        for t in sums:
            d = hi - t.limits[0][2]
            if t.limits[0][1] == lo and d.is_Integer and 0 < d <= MAX_PEEL:
                low[s] = max(low.get(s, d), d)  # down to the smallest upper limit within reach
    rep = {}
    for s, c in low.items():
        k, lo, hi = s.limits[0]
        top = hi - c
        if (top - lo + 1).is_nonnegative is not True:  # the smaller range must be a range (possibly empty)
            continue
        tail = sp.Add(*(s.function.xreplace({k: top + t}) for t in range(1, c + 1)))
        rep[s] = sp.Sum(s.function, (k, lo, top)) + tail
    return [sp.sympify(e).xreplace(rep) for e in exprs]


def merge_sums(e):
    """Rule ``merge_sums``: the sums of ``e`` (an expanded difference) over the same limits as one sum."""
    e = sp.expand(e)
    groups: dict = {}
    rest = []
    for term in sp.Add.make_args(e):
        found = single_sum(term)
        if found is None:
            rest.append(term)
            continue
        coeff, s = found
        k, lo, hi = s.limits[0]
        fresh = groups.setdefault((lo, hi), [sp.Dummy("k", integer=True), []])
        fresh[1].append(coeff * s.function.xreplace({k: fresh[0]}))
    out = [sp.Sum(sp.Add(*body), (k, lo, hi)) for (lo, hi), (k, body) in groups.items()]
    return sp.Add(*out, *rest)


def _combine_exp(e):
    """exp(a)·exp(b) = exp(a + b) (exact), inside sums too."""
    return sp.powsimp(sp.expand(e), combine="exp", deep=True)


def rename_sum_indices(e):
    """Every sum's index renamed to one Dummy per nesting depth (a bound index is a name only),
    so that two sums that differ only in the name of their index are the same expression."""

    def walk(x, depth):
        if not x.args:
            return x
        if isinstance(x, sp.Sum) and len(x.limits) == 1:
            k, lo, hi = x.limits[0]
            fresh = _SUM_INDICES[depth] if depth < len(_SUM_INDICES) else sp.Dummy("k", integer=True)
            return sp.Sum(walk(x.function.xreplace({k: fresh}), depth + 1), (fresh, walk(lo, depth), walk(hi, depth)))
        return x.func(*(walk(a, depth) for a in x.args))

    return walk(sp.sympify(e), 0)


_SUM_INDICES = tuple(sp.Dummy(f"k{t}", integer=True) for t in range(8))


def nonzero_somewhere(d) -> str:
    """A certificate that ``d`` is not identically 0 (then it cannot simplify to 0), or "".

    Every symbol gets a small integer its assumptions allow (lengths and indices 3 or 1, other
    numbers 1, -1, 2, 0, ... in turn), every entry x[k] and running value m(t) too, finite sums
    are written out; the exact number left is certified nonzero by interval arithmetic."""
    from .certify import certify_nonzero

    pool = iter([1, -1, 2, 0, 3, -2, 4, -3, 5, -4] * 40)
    vals: dict = {}

    def value(a):
        if a not in vals:
            if getattr(a, "is_integer", False) and getattr(a, "is_positive", False):
                vals[a] = sp.Integer(3 if not isinstance(a, sp.Dummy) else 1)
            else:
                v = next(pool)
                vals[a] = sp.Integer(abs(v) + 1 if getattr(a, "is_positive", False) else v)
        return vals[a]

    try:
        e = sp.sympify(d)
        e = e.xreplace({a: value(a) for a in e.free_symbols if a.is_integer})
        e = write_out_maxima(write_out_short_sums(e))
        for _ in range(3):
            atoms = [a for a in e.atoms(sp.Indexed, sp.core.function.AppliedUndef, sp.Symbol) if not a.is_number]
            if not atoms:
                break
            e = write_out_short_sums(e.xreplace({a: value(a) for a in atoms}))
        if e.free_symbols or not e.is_number or e.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
            return ""
        cert = certify_nonzero(e)
    except (TypeError, ValueError, ZeroDivisionError, RecursionError):
        return ""
    return f"at an instance it is {sp.sstr(e)[:60]}, {cert}" if cert else ""


def sums_as_symbols(d, budget: float):
    """Every sum left in ``d`` as an opaque symbol (the same sum, the same symbol), or 0 when its
    body is exactly 0: simplification then uses no identity of sums but the rules above (SymPy's
    own sum rules follow Karr's convention, where a sum over hi < lo - 1 is not empty)."""
    table: dict = {}

    def one(x):
        if x not in table:
            body = x.function
            zero = body == 0 or (not body.has(sp.Sum) and exact_zero(body, Budget(budget * 0.25)))
            table[x] = sp.Integer(0) if zero else sp.Dummy("S", real=True)
        return table[x]

    return sp.sympify(d).replace(lambda x: isinstance(x, sp.Sum), one)


def _by_sums(L, R, budget: float, claim=None):
    """L - R after the sum rules, shown exactly 0 by :func:`~symattn.proof.scalar.exact_zero`
    (expand, cancel, then simplify; never a float): a :class:`~symattn.proof.verdict.Candidate`
    (the caller has the kernel audit the claim as stated); else "unknown". ``claim``: the claim
    as stated (before the maxima were made opaque), whose symbols the proof is for."""
    L, R = rename_sum_indices(L), rename_sum_indices(R)
    d = merge_sums(join_sums(_combine_exp(sp.Add(*peel_sums(L, -R)))))
    d = sp.Add(*[sp.Sum(_combine_exp(t.function), t.limits) if isinstance(t, sp.Sum) else t
                 for t in sp.Add.make_args(d)])
    trace = [TraceLine("lhs - rhs after the sum rules: {}", d, limit=200)]
    witness = nonzero_somewhere(d)
    if witness:  # then no simplification can reach 0: spare the expensive attempt
        return unknown(trace + [f"does not simplify to 0: {witness}"])
    try:
        zero = d == 0 or exact_zero(sums_as_symbols(write_out_short_sums(d), budget), Budget(budget))
    except (BudgetExceeded, RecursionError) as exc:  # SymPy's symbolic summation can recurse without end
        return unknown(trace + [f"simplification gave up ({type(exc).__name__}: {str(exc)[:80]})"])
    if not zero:
        return unknown(trace + ["does not simplify to 0"])
    params = parameters(*(claim or (L, R)))
    dims = [x for x in params if x.is_integer and x.is_positive]
    return symbolic_proof("exact simplification (S)", trace + ["simplifies to 0 exactly"],
                          quantified(dims, (), set(params) - set(dims)))


#: Entries of the exact instances of :func:`audit_maxima`: small and far apart, so that a claim
#: false only when two entries differ by more than a constant of the claim is caught.
AUDIT_ENTRIES = (0, 1, -1, 2, -2, 3, 12, -12, 25, -25, 100, -100)
AUDIT_INSTANCES = 24


def audit_maxima(L, R, found=None, instances: int = AUDIT_INSTANCES) -> AuditRecord:
    """The claim L = R as stated (its maxima and sums as written) evaluated exactly at random
    instances: lengths 1..3, entries and free reals from AUDIT_ENTRIES, drawn by a generator
    seeded with the printed claim (the same in every process). An instance where the two sides
    are certified different raises SoundnessError (a bug of the rules above); otherwise the
    audit's record is returned (``found``: the candidate proof, named in the error). Independent
    of the proof: it uses no rule of this module, only the definitions (a maximum of numbers is
    their maximum)."""
    import random

    from .certify import certify_nonzero

    method = getattr(found, "method", "a proof")
    L, R = sp.sympify(L), sp.sympify(R)
    rng = random.Random(sp.sstr(L) + " = " + sp.sstr(R))
    labels = {b.label for b in (L - R).atoms(sp.IndexedBase)}
    free = (L - R).free_symbols - labels - {INDEX}
    ints = sorted((a for a in free if a.is_integer and a.is_positive), key=str)
    agreed, skipped = 0, 0
    for k in range(instances):
        at = {a: sp.Integer(1 + (k + t) % 3) for t, a in enumerate(ints)}
        vals: dict = {}

        def value(a, vals=vals):
            if a not in vals:
                vals[a] = sp.Integer(rng.choice(AUDIT_ENTRIES))
            return vals[a]

        try:
            e = write_out_maxima(write_out_short_sums(sp.sympify(L - R).xreplace(at)))
            for _ in range(4):
                atoms = [a for a in e.atoms(sp.Indexed) if not a.is_number and not a.has(INDEX)]
                atoms += [a for a in e.free_symbols - labels - {INDEX} if a not in atoms]
                if not atoms:
                    break
                e = write_out_maxima(write_out_short_sums(e.xreplace({a: value(a) for a in atoms})))
            if e.free_symbols or e.has(sp.oo, -sp.oo, sp.zoo, sp.nan):
                skipped += 1
                continue
            cert = certify_nonzero(e)
        except (TypeError, ValueError, ZeroDivisionError, RecursionError):
            skipped += 1
            continue
        if cert:
            shown = ", ".join(f"{a} = {x}" for a, x in {**at, **vals}.items())
            raise SoundnessError(f"symattn proved a false claim: {sp.sstr(L)[:200]} = {sp.sstr(R)[:200]} "
                                 f"({method}) differs at {shown}: lhs - rhs = {e} ({cert})")
        agreed += 1
    line = f"audit of the claim as stated: {agreed} random exact instances agree (entries up to ±100)"
    line += f"; {skipped} not evaluable" if skipped else ""
    return AuditRecord(agreed, (f"{skipped} not evaluable",) if skipped else (), line)


def _entries_only(a, vectors) -> bool:
    """True when ``a`` is an entry of a declared vector, a maximum of such entries, -oo, or a
    Max of these: a value that the largest entry bounds from above."""
    if a == -sp.oo:
        return True
    if isinstance(a, sp.Indexed):
        return a.base in vectors
    if isinstance(a, VecMax):
        return all(_plain_block(b, vectors) for b in a.args)
    if isinstance(a, sp.Max):
        return all(_entries_only(x, vectors) for x in a.args)
    return False


def _plain_block(b, vectors) -> bool:
    """True when the block ``b`` of a :class:`VecMax` is a declared vector itself (entry w_i)."""
    return isinstance(b[1], sp.Indexed) and b[1].base in vectors and b[1].indices == (INDEX,)


def resolve_in_case(e, top, vectors):
    """Rule ``max_cases`` in the case "top is the largest entry of every vector in ``vectors``".

    A maximum is replaced by ``top`` only when EVERY one of its blocks is a plain entry of a
    vector in ``vectors`` and one of them is top's vector: a block such as x_i - 10 or -x_i is
    not bounded by the largest entry, so a maximum with such a block stays as it is."""

    def one(x):
        if (isinstance(x, VecMax) and all(_plain_block(b, vectors) for b in x.args)
                and any(b[1] == top.base[INDEX] for b in x.args)):
            return top
        if isinstance(x, sp.Max) and top in x.args and all(_entries_only(a, vectors) for a in x.args if a != top):
            return top
        return x

    return sp.sympify(e).replace(lambda x: isinstance(x, (VecMax, sp.Max)), one)


def _vectors(*exprs) -> list:
    out = []
    for e in exprs:
        for a in sp.sympify(e).atoms(VecMax):
            for b in a.args:
                if isinstance(b[1], sp.Indexed) and b[1].base not in [v for v, _ in out]:
                    out.append((b[1].base, b[0]))
    return out


def prove_scalar(L, R, *, budget: float = 10.0, cases: bool = True) -> Verdict:
    """Prove L = R exactly with the rules of this module; "unknown" when they do not suffice.

    Tried in order: the maxima as opaque reals, then (``cases``) a case split on the maximum
    entry. A proved verdict says which; it is general in every symbol of the claim."""
    start = time.perf_counter()
    trace = [TraceLine("lhs: {}", L, limit=200), TraceLine("rhs: {}", R, limit=200)]
    (Lo, Ro), _ = opaque_maxima(L, R)
    v = _by_sums(Lo, Ro, budget, (L, R))
    if v.proved:
        trace += ["maxima read as opaque real numbers; sums peeled and merged"] + list(v.trace)
        found = proved("exact simplification (S)", v.scope, trace, v.general, over=v.over)
        return conclude(L, R, found, scalar=True, also=audit_maxima, seconds=time.perf_counter() - start,
                        lhs=L, rhs=R)
    vectors = _vectors(L, R)
    if not (cases and vectors):
        return replace(unknown(trace + list(v.trace)), seconds=time.perf_counter() - start, lhs=L, rhs=R)
    bases = {b for b, _ in vectors}
    for base, length in vectors:
        p = sp.Dummy("p", integer=True, positive=True)
        top = base[p]
        Lc, Rc = resolve_in_case(L, top, bases), resolve_in_case(R, top, bases)
        if Lc.has(sp.Max) or Rc.has(sp.Max):
            trace.append(TraceLine("case {} largest: a maximum stays unresolved", top))
            return replace(unknown(trace), seconds=time.perf_counter() - start, lhs=L, rhs=R)
        (Lo, Ro), _ = opaque_maxima(Lc, Rc)
        w = _by_sums(Lo, Ro, budget, (L, R))
        trace.append(TraceLine("case {} >= every entry (1 <= p <= {}): {} = {}: " + w.status, top, length, Lc, Rc,
                               limit=160))
        if not w.proved:
            return replace(unknown(trace), seconds=time.perf_counter() - start, lhs=L, rhs=R)
    found = proved(f"case split on the maximum entry ({len(vectors)} cases) + exact simplification (S)",
                   "every value of the entries", trace, True)
    # audited as stated: a wrong case split is caught
    return conclude(L, R, found, scalar=True, also=audit_maxima, seconds=time.perf_counter() - start, lhs=L, rhs=R)


def prove_all(verdicts, L=None, R=None) -> Verdict:
    """One verdict for a claim proved part by part (a vector claim, block by block; a claim
    about every j, case by case): proved when every part is, general when every part is."""
    verdicts = list(verdicts)
    trace = [line for k, v in enumerate(verdicts, 1) for line in [f"part {k}: {v.status} by {v.method}", *v.trace]]
    seconds = sum(v.seconds for v in verdicts)
    if verdicts and all(v.proved for v in verdicts):
        methods = list(dict.fromkeys(v.method for v in verdicts))
        return combine(verdicts, " + ".join(methods), "every part", trace, all(v.general for v in verdicts),
                       seconds=seconds, lhs=L, rhs=R)
    return replace(unknown(trace), seconds=seconds, lhs=L, rhs=R)
