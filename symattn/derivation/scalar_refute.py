"""Counterexamples to a step of a scalar derivation: small exact instances, certified; and the
independent exact evaluation of proved steps (:meth:`Refuter.agree`)."""

from __future__ import annotations

import itertools
import random
import time

import numpy as np
import sympy as sp

from ..errors import DerivationError, SoundnessError
from ..proof.certify import certify_nonzero
from ..proof.maxcases import instantiate, write_out_maxima, write_out_short_sums
from ..proof.verdict import Counterexample
from .scalar_prove import MAX_UNFOLD, Prover
from .scalar_values import Elaborator, Vec

VALUES = (0, 1, -1, 2, -2, 3)
#: Entries far apart too: a claim false only when entries differ by more than a constant of the
#: claim (max(x_1, x_2 - 10) = x_1 fails only when x_2 > x_1 + 10) is missed by VALUES alone.
WIDE = (0, 1, -1, 3, -3, 12, -12, 25, -25, 100, -100)
MAX_INSTANCES = 400
WIDE_INSTANCES = 60


def stable_seed(L, R=None) -> str:
    """A seed for the claim L = R that is the same in every process: the printed claim (a Dummy
    prints as its name, never its process-dependent number, as srepr would show)."""
    def side(x):
        return repr(x.blocks) if isinstance(x, Vec) else sp.sstr(x)

    return (side(L) + " = " + (side(R) if R is not None else ""))[:4000]


def _exactly_equal(a, b) -> bool:
    """a = b for exact numbers, shown by rewriting (powers of e combined, expanded, then simplify)."""
    if a == b:
        return True
    d = sp.expand(sp.powsimp(a - b, combine="exp"))
    return d == 0 or sp.simplify(d) == 0


class Refuter:
    """Small exact instances where the two sides of a step differ, certified."""

    def __init__(self, el: Elaborator, prover: Prover):
        self.el, self.pr = el, prover

    def instances(self):
        # the symbols of the lengths (a length bounded by another, n = c + (n - c), has two)
        dims = sorted(set().union(*(sp.sympify(v).free_symbols for v in self.el.dims.values())), key=str)
        j = self.pr.j
        sizes = [1, 2, 3]
        for size in sizes:
            at = {d: sp.Integer(size) for d in dims}
            if j is not None:
                at[j] = sp.Integer(size if size > 1 else 1)
                for d in dims:
                    at[d] = at[j]
            entries = []
            for name, (base, length) in {**self.el.vectors, **self.el.reals}.items():
                n = int(length.xreplace(at))
                entries += [(name, base, t) for t in range(1, n + 1)]
            entries += [(name, v, None) for name, v in self.el.values.items() if isinstance(v, sp.Symbol)]
            count = 0
            for combo in itertools.product(VALUES, repeat=len(entries)):
                count += 1
                if count > MAX_INSTANCES // len(sizes):
                    break
                yield at, entries, combo

    def wide_instances(self, seed: str):
        """Instances whose entries are drawn from WIDE (far apart), at every size of
        :meth:`instances`, by a generator seeded with ``seed`` (the same in every process)."""
        rng = random.Random(seed)
        seen = set()
        for at, entries, combo in self.instances():
            key = tuple(sorted(at.items(), key=str)), len(entries)
            if key in seen:
                continue
            seen.add(key)
            for _ in range(WIDE_INSTANCES // 3):
                yield at, entries, tuple(rng.choice(WIDE) for _ in combo)

    def evaluate(self, e, at, vals):
        e = write_out_maxima(write_out_short_sums(sp.sympify(e).xreplace(at)), vals)
        e = self.pr.at_index(e, int(at[self.pr.j])) if self.pr.j is not None else e
        e = write_out_maxima(write_out_short_sums(e), vals)
        if self.pr.j is not None:  # the running maxima too, now that the entries are numbers
            for _ in range(MAX_UNFOLD):
                rep = {f: self.pr.recurrence_at(f) for f in e.atoms(sp.core.function.AppliedUndef)
                       if f.func in self.pr.funs and f.args[0].is_Integer and f.args[0] > 0}
                rep.update({f: self.el.initial[self.pr.funs[f.func]] for f in e.atoms(sp.core.function.AppliedUndef)
                            if f.func in self.pr.funs and f.args[0] == 0})
                if not rep:
                    break
                e = e.xreplace(rep)
        return e.xreplace(vals)

    def sides_at(self, L, R, at, entries, combo):
        """Both sides at one instance, entry by entry, exact; None when they cannot be evaluated."""
        vals = {(base if t is None else base[t]): sp.Integer(v) for (_, base, t), v in zip(entries, combo)}
        ls, rs = [L], [R]
        if isinstance(L, Vec):
            ls = [instantiate(b[1], sp.Integer(t)) for b in L.blocks for t in range(1, int(b[0].xreplace(at)) + 1)]
            rs = [instantiate(b[1], sp.Integer(t)) for b in R.blocks for t in range(1, int(b[0].xreplace(at)) + 1)]
        try:
            lv = [self.evaluate(x, at, vals) for x in ls]
            rv = [self.evaluate(x, at, vals) for x in rs]
        except (TypeError, ValueError, DerivationError):
            return None
        return (lv, rv) if len(lv) == len(rv) else None

    def differ(self, a, b):
        """The certificate that a - b is not 0 (exact numbers), or None."""
        if a.free_symbols or b.free_symbols or any(x.has(sp.oo, -sp.oo, sp.zoo, sp.nan) for x in (a, b)):
            return None
        return certify_nonzero(a - b)

    def agree(self, L, R, count: int = 6) -> int:
        """A proved step evaluated exactly at ``count`` instances drawn at random (seeded by the
        claim), by the refuter's own evaluation (the recurrences run, the maxima written out);
        the number of instances where every entry is shown equal exactly (half of them with
        entries far apart, from WIDE). Two sides certified
        different mean a bug in the prover: SoundnessError."""
        rng = random.Random(stable_seed(L, R))
        pool = list(itertools.islice(self.instances(), MAX_INSTANCES))
        agreed = 0
        wide = count // 2
        drawn = [(at, e, tuple(rng.choice(VALUES if t >= wide else WIDE) for _ in c))
                 for t, (at, e, c) in enumerate(rng.sample(pool, min(count, len(pool))))]
        for at, entries, combo in drawn:
            got = self.sides_at(L, R, at, entries, combo)
            if got is None:
                continue
            ok = True
            for a, b in zip(*got):
                cert = self.differ(a, b)
                if cert is not None:
                    raise SoundnessError(f"a proved step differs at {at}, entries {combo}: {a} != {b} ({cert})")
                ok = ok and _exactly_equal(a, b)
            agreed += ok
        return agreed

    def search(self, L, R, deadline):
        for at, entries, combo in itertools.chain(self.instances(), self.wide_instances(stable_seed(L, R))):
            if time.perf_counter() > deadline:
                return None
            got = self.sides_at(L, R, at, entries, combo)
            if got is None:
                continue
            lv, rv = got
            for k, (a, b) in enumerate(zip(lv, rv)):
                cert = self.differ(a, b)
                if cert is None:
                    continue
                d = a - b
                used = set().union(*(sp.sympify(x).free_symbols for x in (L, R) if not isinstance(x, Vec)))
                dims = {str(s): int(v) for s, v in at.items() if s in used and not any(
                    sp.sympify(x).has(s) for x in self.el.dims.values())}
                dims.update({name: int(sp.sympify(v).xreplace(at)) for name, v in self.el.dims.items()})
                values = {}
                for (name, _, _), v in zip(entries, combo):
                    values.setdefault(name, []).append(v)
                return Counterexample(
                    dims=dims, values={n: np.array(v) for n, v in values.items()},
                    lhs=np.array([float(x) for x in lv]), rhs=np.array([float(x) for x in rv]),
                    lhs_exact=sp.ImmutableMatrix([lv]), rhs_exact=sp.ImmutableMatrix([rv]), entry=(0, k),
                    difference=d, certificate=cert)
        return None

