"""Proving the steps of a scalar derivation: for every length, and for running values every j
(the chain as an induction on j; see :mod:`.scalar_check` for what "proved" means)."""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from ..proof.maxcases import instantiate, prove_all, prove_scalar, write_out_short_sums
from ..proof.verdict import Verdict, unknown
from .scalar_values import INITIAL, Elaborator, Vec

MAX_UNFOLD = 6


def _offsets(e, funs, j) -> int:
    """The largest c with some running value s(j - c) in ``e``."""
    out = 0
    for f in sp.sympify(e).atoms(sp.core.function.AppliedUndef):
        if f.func in funs:
            c = j - f.args[0]
            if c.is_Integer:
                out = max(out, int(c))
    return out


class Prover:
    """Proves the steps of a document, for every length and (for running values) every j."""

    def __init__(self, el: Elaborator, budget: float):
        self.el, self.budget = el, budget
        self.funs = {f: name for name, f in el.seqfuns.items()}
        letters = {i for i, _ in el.recurrences.values()}
        if len(letters) > 1:
            raise DerivationError(f"running values with different indices {sorted(letters)}", 0, 0,
                                  "one running index (j) for every \\leftarrow")
        self.j = sp.Symbol(next(iter(letters)), integer=True, positive=True) if letters else None
        self.finite = self.finite_from_one() if self.j is not None else ""
        if self.finite and self.j is not None:
            el.notes.append(self.finite)

    def unfold_top(self, e, maxima: bool = False):
        """Each running value at the index j itself (d_j) replaced by its recurrence (valid for
        j >= 1); a running maximum only when ``maxima``."""
        e = sp.sympify(e)
        rep = {f: self.recurrence_at(f) for f in e.atoms(sp.core.function.AppliedUndef)
               if f.func in self.funs and f.args[0] == self.j and (maxima or not self._is_max(f.func))}
        return e.xreplace(rep)

    def recurrence_at(self, f):
        name = self.funs[f.func]
        letter, body = self.el.recurrences[name]
        return self.el.scalar(body, {letter: f.args[0]})

    def at_index(self, e, c: int, maxima: bool = False):
        """``e`` at j = c: sums written out, running values unfolded down to their initial values
        (used exactly: e^{-oo} = 0, max(-oo, a) = a), except running maxima m_t (t >= 1) unless
        ``maxima``: they stay opaque reals (finite, see :meth:`finite_from_one`)."""
        e = write_out_short_sums(sp.sympify(e).xreplace({self.j: sp.Integer(c)}))
        for _ in range(MAX_UNFOLD):
            rep = {}
            for f in e.atoms(sp.core.function.AppliedUndef):
                if f.func in self.funs and f.args[0].is_Integer:
                    if f.args[0] < 0:  # s_{j-2} at j = 1: below the initial value, nothing defines it
                        name = self.funs[f.func]
                        raise DerivationError(f"{name}_{{{f.args[0]}}} has no value: at {self.j} = {c} the running "
                                              f"values reach below the initial value {name}_0", 0, 0,
                                              f"recurrences that reach back to {name}_0 only (such as {name}_{{j-1}})")
                    if f.args[0] == 0:
                        rep[f] = self.el.initial[self.funs[f.func]]
                    elif maxima or not self._is_max(f.func):
                        rep[f] = self.recurrence_at(f)
            if not rep:
                break
            e = e.xreplace(rep)
        return e

    def _is_max(self, func) -> bool:
        return self.el.recurrences[self.funs[func]][1].kind == "max"

    def finite_from_one(self) -> str:
        """Why every running value is a finite real at every index t >= 1 ("" when it is not shown):
        at t = 1..c (c the largest offset in a recurrence) each is evaluated from the initial values
        and must be finite; beyond, each recurrence is built by +, x, exp and max from entries and
        running values at indices t - c >= 1 (finite by induction)."""
        if self.j is None:
            return "no running values"
        t = self.j
        bodies = {f: self.recurrence_at(f(t)) for f in self.funs}
        c_max = max([1] + [_offsets(b, self.funs, t) for b in bodies.values()])
        for f in self.funs:
            for c in range(1, c_max + 1):
                v = self.at_index(f(t), c, maxima=True)
                if v.has(sp.oo, -sp.oo, sp.zoo, sp.nan) or any(
                        isinstance(g, sp.core.function.AppliedUndef) for g in v.atoms(sp.core.function.AppliedUndef)):
                    return ""

        same = {f: {g.func for g in b.atoms(sp.core.function.AppliedUndef) if g.func in self.funs and g.args[0] == t}
                for f, b in bodies.items()}
        if any(f in same[f] for f in same):
            return ""  # a running value defined by itself at the same index
        try:
            order = sp.utilities.iterables.topological_sort((list(self.funs), [(g, f) for f in same for g in same[f]]),
                                                            key=str)  # functions have no order of their own
        except ValueError:  # a cycle of running values at the same index
            return ""
        first = f"{t} = 1" if c_max == 1 else f"{t} = 1..{c_max}"

        def tame(x) -> bool:
            if x.is_Number:
                return x.is_finite
            if isinstance(x, (sp.Indexed, sp.Symbol)):
                return True
            if isinstance(x, sp.core.function.AppliedUndef):  # an earlier index, or another value at t
                return x.func in self.funs and (t - x.args[0]).is_Integer and (t - x.args[0]) >= 0
            if isinstance(x, sp.Pow):
                return x.exp.is_Integer and x.exp >= 0 and tame(x.base)
            if isinstance(x, (sp.Add, sp.Mul, sp.exp, sp.Max)):
                return all(tame(a) for a in x.args)
            return False

        if all(tame(b) for b in bodies.values()):
            return (f"every running value is finite at {t} >= 1: at {first} from the initial values, "
                    f"beyond by +, x, exp and max of finite values (in the order {', '.join(map(str, order))})")
        return ""

    def written_out(self, *exprs) -> int:
        r"""The last j checked at its value (at least 1): beyond it every running value m_{j-c} has an
        index >= 1 (finite) and every sum's range \sum_{k=lo}^{j+e} is a range (hi >= lo - 1)."""
        c0 = max([1] + [_offsets(e, self.funs, self.j) for e in exprs])
        for e in exprs:
            for s in sp.sympify(e).atoms(sp.Sum):
                for _, lo, hi in s.limits:
                    e_off = hi - self.j
                    if hi.has(self.j) and e_off.is_Integer and lo.is_Integer:
                        c0 = max(c0, int(lo - 1 - e_off) - 1)
        return c0

    def scalar_step(self, L, R, hyp=None, nodes=None) -> tuple[Verdict, str]:
        """(verdict, how) for the scalar claim L = R; ``hyp`` = (value, replacement) is the
        induction hypothesis, used for every j beyond the cases written out. ``nodes``: the two
        sides as written, evaluated again at each j written out with the initial values in place
        from the start (so -oo - (-oo) or e^{-oo} e^{+oo} is undefined there, not cancelled)."""
        if self.j is None or not (sp.sympify(L).has(self.j) or sp.sympify(R).has(self.j)):
            v = prove_scalar(L, R, budget=self.budget)
            if v.proved or self.j is None or not self.finite:
                return v, ""
            # running values at fixed indices (m_1, d_2): unfolded down to the initial values
            a, b = self.at_index(L, 1, maxima=True), self.at_index(R, 1, maxima=True)
            if any(x.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for x in (a, b)):
                return v, ""
            w = prove_scalar(a, b, budget=self.budget)
            return (w, "the running values unfolded to their initial values") if w.proved else (v, "")
        if not self.finite:
            return prove_all([unknown(["the running values are not shown finite for j >= 1, so they cannot be "
                                       "treated as real numbers"])]), ""
        tries = [(L, R, ""), (self.unfold_top(L), self.unfold_top(R), "the recurrence unfolded"),
                 (self.unfold_top(L, True), self.unfold_top(R, True), "the recurrences unfolded")]
        if hyp is not None:
            tries.append((L.xreplace({hyp[0]: hyp[1]}), R.xreplace({hyp[0]: hyp[1]}), "hyp"))
            tries.append((self.unfold_top(L).xreplace({hyp[0]: hyp[1]}), self.unfold_top(R).xreplace({hyp[0]: hyp[1]}),
                          "hyp"))
        generic, used, c0 = None, "", 1
        for a, b, label in tries:
            if label and a == tries[0][0] and b == tries[0][1]:
                continue
            c = self.written_out(a, b)
            J = sp.Dummy(str(self.j), integer=True, positive=True)  # j = J + c >= c + 1
            v = prove_scalar(a.xreplace({self.j: J + c}), b.xreplace({self.j: J + c}), budget=self.budget)
            if v.proved:
                generic, used, c0 = v, label, c
                break
        if generic is None:
            return prove_all([v]), ""
        parts = []
        for c in range(1, c0 + 1):
            Lc, Rc = L, R
            if nodes is not None:
                env = {str(self.j): sp.Integer(c), INITIAL: True}
                Lc, Rc = self.el.scalar(nodes[0], env), self.el.scalar(nodes[1], env)
            for maxima in (False, True):
                a, b = self.at_index(Lc, c, maxima), self.at_index(Rc, c, maxima)
                if any(x.has(sp.nan, sp.zoo, sp.oo, -sp.oo) for x in (a, b)):
                    v = unknown([f"at {self.j} = {c} a side is not a finite number: {a} = {b}"])
                    continue
                v = prove_scalar(a, b, budget=self.budget)
                if v.proved:
                    break
            parts.append(v)
        firsts = ", ".join(f"{self.j} = {c}" for c in range(1, c0 + 1))
        initial = ", ".join(f"{name}_0 = {sp.latex(v)}" for name, v in self.el.initial.items())
        how = f"{firsts} exactly from {initial}; {self.j} >= {c0 + 1} symbolically"
        if used:
            how += ", " + ("from the induction hypothesis" if used == "hyp" else f"with {used}")
        return prove_all(parts + [generic], L, R), how

    def step(self, L, R, hyp=None, nodes=None) -> tuple[Verdict, str]:
        """(verdict, how) for the step L = R (numbers or vectors); ``nodes``: its sides as written."""
        if isinstance(L, Vec) != isinstance(R, Vec):
            raise DerivationError("one side is a vector and the other a number", 0, 0, "two numbers or two vectors")
        if not isinstance(L, Vec):
            return self.scalar_step(L, R, hyp, nodes)
        la, lb = [b[0] for b in L.blocks], [b[0] for b in R.blocks]
        if len(la) != len(lb) or any(sp.simplify(a - b) != 0 for a, b in zip(la, lb)):
            if sp.simplify(L.length - R.length) != 0:
                raise DerivationError(f"the sides are vectors of lengths {L.length} and {R.length}", 0, 0,
                                      "vectors of the same length")
            return prove_all([unknown([f"the blocks {la} and {lb} do not line up"])]), ""
        parts, how = [], ""
        for a, b in zip(L.blocks, R.blocks):
            p = sp.Dummy("p", integer=True, positive=True)
            v, how = self.scalar_step(instantiate(a[1], p), instantiate(b[1], p), hyp)
            parts.append(v)
        return prove_all(parts, L, R), "block by block, at a symbolic index" + (f"; {how}" if how else "")

