r"""The closed form of a recurrence with a decay, ``x_k = \sum_{j=0}^{k} \bar{A}^{k-j} \bar{B} u_j``, by induction.

A recurrence that scales its previous member, ``x_k = \bar{A} x_{k-1} + \bar{B} u_k`` (Gu et al. 2022) or
``S_n = \gamma S_{n-1} + K_n^\top V_n`` (Sun et al. 2023), unrolls into a sum whose terms decay with the
distance between positions: the summand depends on the position t (``\gamma^{t-j}``), which the plain
induction of ``position_induction.py`` does not read. The claim ``E(x_t) = \sum_{j=a}^{t} F(t, j)``, with
``x_a-1 = 0`` the initial condition and a the next position, is read as an induction on t whose step is
checked in three parts, each by the ordinary engine:

- the recurrence's body is ``M x_{t-1} + c_t`` with M the factor written before the previous member (a scalar,
  or a matrix on the left), and ``E(M P + c_t) = M E(P) + E(c_t)`` for a free P (E: the left side as a map of
  the recurrent member, the identity when the left side is that member);
- each earlier term decays by M: ``M F(t-1, j) = F(t, j)`` for a symbolic j before t, the power at the
  distance g = t - 1 - j read as a free value W standing for X^g (``index_powers.py``);
- the new term is the input: ``E(c_t) = F(t, t)``.

With the base (E(0) = 0, the empty sum) they prove the claim at every t. A left side ``\bar{C} x_k`` whose
summand starts with the same factors, ``\bar{C} \bar{A}^{k-j} \bar{B} u_j``, is proved through the stronger
claim about x_k (the common factor applied to both sides). A part not proved refutes nothing: the claim is
then checked at the positions after the initial condition, unrolled, as ``position_induction.py`` does.
"""

from __future__ import annotations

import sympy as sp

from ..errors import DerivationError
from . import ast, closed_forms, decay_products
from .position_induction import Induction, _at, _zero, recurrent_claim
from .position_induction import attach as plain_attach
from .recurrence_step import previous_members
from .sequences import index_value, initial_index, letter, recurrence_of, sequence_shape
from .symbols import is_matrix, key_of


class DecayInduction(Induction):
    """The induction of the module: ``parts`` are the step's other two identities, (what, lhs, rhs)."""

    def __init__(self, c, first, hypothesis, lhs_node, rhs_node, parts, unread=""):
        super().__init__(c, first, hypothesis, lhs_node, rhs_node)
        self.parts, self.unread = parts, unread

    def conclude(self, scope, s, verify) -> None:
        if self.unread:
            s.status = f"not read ({self.unread})"
        if s.status == "proved":
            for _what, L, R in self.parts:
                try:
                    v = verify(s, L, R)
                except Exception:  # an engine failure proves nothing: the positions decide below
                    s.status = "unknown"
                    break
                if v.status != "proved":
                    s.status = v.status if v.status != "refuted" else "not proved"
                    break
        scope.decay_rows = True  # Q_n, K_m at the given positions: rows, as in the induction (read)
        try:
            super().conclude(scope, s, verify)
        finally:
            scope.decay_rows = False

    def value_at(self, scope, node, q):  # the sum up to the position written out (decay_products)
        return decay_products.unrolled(scope, node, self.letter, q)


def _factors(node):
    return list(node.factors) if isinstance(node, ast.Mul) else [node]


def _text(factors):
    return " ".join(f.text() for f in factors)


def _letters(node):
    return {n.base for n in ast.nodes_of(node) if isinstance(n, ast.Name)}


def _strip(lhs, x, summand, index):
    """``C x_k`` against ``C A^{k-j} B u_j``: (x_k, A^{k-j} B u_j) when the summand starts with the factors
    before the member; else (lhs, summand)."""
    fl, fs = _factors(lhs), _factors(summand)
    if len(fl) < 2 or fl[-1] is not x or len(fs) <= len(fl) - 1:
        return lhs, summand
    if any(a.text() != b.text() or index in _letters(a) for a, b in zip(fl[:-1], fs)):
        return lhs, summand
    rest = fs[len(fl) - 1:]
    return x, rest[0] if len(rest) == 1 else ast.Mul(rest[0].pos, tuple(rest))


def _decay(d, prev):
    """The body ``M x_{t-1} + c`` (or ``M \\odot x_{t-1} + c``) of the recurrence: (how, M's factors), or None."""
    body = d.body.body if isinstance(d.body, ast.Group) else d.body
    terms = body.terms if isinstance(body, ast.Add) else ((1, body),)
    keys = {key_of(n) for n in prev}

    def uses(n):
        return any(isinstance(m, ast.Name) and key_of(m) in keys for m in ast.nodes_of(n))

    with_prev = [(s, t) for s, t in terms if uses(t)]
    if len(with_prev) != 1 or with_prev[0][0] != 1:
        return None
    term = with_prev[0][1]
    how = "hadamard" if isinstance(term, ast.Hadamard) else "mul"
    f = list(term.factors) if how == "hadamard" else _factors(term)
    if how == "hadamard":  # e^{-w} \odot a_{t-1}: the member one factor of the entrywise product
        f = [g for g in f if not uses(g)] + [g for g in f if uses(g)]
    if len(f) < 2 or not (isinstance(f[-1], ast.Name) and key_of(f[-1]) in keys) or any(uses(g) for g in f[:-1]):
        return None
    return how, f[:-1]


def _z_members(lhs, summand, x, c, inputs):
    """Members at t of sequences the recurrence does not use (Q_n of Q_n S_n): any value, the same throughout."""
    members = [n for n in ast.nodes_of((lhs, summand)) if isinstance(n, ast.Name) and n.sub is not None
               and (n.base, n.sup) != (x.base, x.sup)]
    out = [n for n in members if _at(n, c)]
    families = {(n.base, n.sup) for n in out}
    if families & inputs or any((n.base, n.sup) in families and not _at(n, c) for n in members):
        return None  # q_t beside q_{t-1}, or an input of the recurrence at t: not any value
    return out


def read(scope, st):
    """The induction step's first identity and its :class:`DecayInduction`, or None (read as before); K_m and
    Q_n of declared matrices at the symbolic positions are their rows (``vectors.row_vector``)."""
    scope.decay_rows = True
    try:
        return _read(scope, st)
    finally:
        scope.decay_rows = False


def _read(scope, st):
    claim = recurrent_claim(scope, st)
    if claim is None:
        return None
    shown, lhs, rhs, x, c, d = claim
    rec = (c, d)
    at = index_value(scope, x.sub, {}, x, strict=False)  # t, or t - 1 of a_{t-1} = \sum_{i=1}^{t-1} ...
    shift = sp.expand(at - letter(c)) if at is not None else None
    if shift is None or not shift.is_Integer or rhs.index == c or sp.expand(
            (index_value(scope, rhs.upper, {}, rhs, strict=False) or sp.nan) - at) != 0:
        return None
    if any(recurrence_of(scope, n) is not None for n in ast.nodes_of(rhs.body) if isinstance(n, ast.Name)):
        return None
    first = initial_index(scope, x)
    prev = previous_members(d, c)
    if first is None or not prev or len({key_of(n) for n in prev}) != 1:
        return None
    if any(index_value(scope, n.sub, {}, n, strict=False) != letter(c) - 1 for n in prev):
        return None
    initial = scope.defs.get(key_of(ast.Name(x.pos, x.base, ast.Num(x.pos, first), x.sup, x.font)))
    if initial is None or not _zero(initial.body):
        return None
    low = sp.Integer(1) if rhs.lower is None else index_value(scope, rhs.lower, {}, rhs, strict=False)
    if low is None or low != first + 1:
        return None
    key, own = key_of(prev[0]), key_of(x)
    if {key, own} & (set(scope.matrices) | set(scope.scalars)):
        return None
    found = _decay(d, prev)
    if found is None:
        return None
    how, decay = found
    lhs2, summand = _strip(lhs, x, rhs.body, rhs.index)
    inputs = {(n.base, n.sup) for n in ast.nodes_of(d.body) if isinstance(n, ast.Name)}
    zs = _z_members(lhs2, summand, x, c, inputs)
    if zs is None or (shift != 0 and (zs or lhs2 is not x)):
        return None
    t, j = letter(c), letter(rhs.index)

    def with_value(k, value, node, env):
        scope.matrices[k] = value
        try:
            return scope.expr(node, env)
        finally:
            del scope.matrices[k]

    try:
        shape = sequence_shape(scope, x, rec)
        P = sp.MatrixSymbol(key, *shape)
        M = scope.expr(decay[0] if len(decay) == 1 else ast.Mul(decay[0].pos, tuple(decay)), {})
        if is_matrix(M) and lhs2 is not x:
            return None  # E(M P) is M E(P) only for a scalar M or E the identity

        def scaled(Y):
            return sp.HadamardProduct(M, Y) if how == "hadamard" else M * Y
        base = with_value(own, sp.ZeroMatrix(*shape), lhs2, {})
        step_lhs = with_value(own, with_value(key, P, d.body, {}), lhs2, {})
        EP = with_value(own, P, lhs2, {})
        c_t = with_value(key, sp.ZeroMatrix(*shape), d.body, {})
        new = with_value(own, c_t, lhs2, {})
    except DerivationError:
        return None
    if not isinstance(base, sp.MatrixExpr) or not base.doit().is_ZeroMatrix:
        return None
    unread, last = "", new
    try:
        last = scope.expr(summand, {rhs.index: t, c: t - shift})
        scope.power_gap = t - 1 - j
        now = scope.expr(summand, {rhs.index: j, c: t - shift})
        before = scope.expr(summand, {rhs.index: j, c: t - 1 - shift})
        before = before.xreplace({scope.expr(z, {c: t - 1}): scope.expr(z, {c: t}) for z in zs})
    except DerivationError as exc:  # the summand at a symbolic j: checked at given positions only
        unread = exc.detail
    finally:
        scope.power_gap = None
    if c in scope.positions:  # Q_n read at the position n of the rows: the same (positive) n throughout
        same = {t: scope.positions[c][0]}
        last = last.xreplace(same)
        if not unread:
            now, before = now.xreplace(same), before.xreplace(same)
    hyp = (f"the claim at {c} - 1 (each earlier term times the decay {_text(decay)} is the term at {c}, and the new "
           f"term is the input)")
    note = (f"{shown.text()} = {rhs.text()} is read as an induction on {c} with the decay "
            f"{_text(decay)}: each earlier term times the decay is the term at {c}, and the "
            f"new term is the input")
    if note not in scope.notes:
        scope.notes.append(note)
    parts = [("the body", step_lhs, scaled(EP) + new), ("the new term", new, last)]
    first = int(first - shift)  # the letter's value at the initial condition (t = 1 for a_{t-1}, a_0 = 0)
    if unread:
        return new, last, DecayInduction(c, first, hyp, shown, rhs, parts, unread)
    return scaled(before), now, DecayInduction(c, first, hyp, shown, rhs, parts)


def attach(scope, st, steps) -> None:
    """``position_induction.attach``, then this module's induction for a claim it did not read; a step between the
    masked row of retention's parallel form and a sum (``decay_products``)."""
    decay_products.attach(scope, st, steps)
    plain_attach(scope, st, steps)
    if len(steps) == 1 and getattr(steps[0], "induction", None) is not None:
        closed_forms.register(scope, st, steps[0])
        return
    if not steps or not (isinstance(steps[0].lhs_expr, Exception) or isinstance(steps[0].rhs_expr, Exception)):
        return
    if len(steps) > 1:  # Q_n S_n = \sum_{m=1}^{n} ... = [...]: the chain's first link is the closed form
        found = read(scope, ast.Chain(st.pos, st.first, st.links[:1]))
        if found is not None:
            steps[0].lhs_expr, steps[0].rhs_expr, steps[0].induction = found
        return
    found = read(scope, st)
    if found is not None:
        steps[0].lhs_expr, steps[0].rhs_expr, steps[0].induction = found
    if getattr(steps[0], "induction", None) is not None:
        closed_forms.register(scope, st, steps[0])  # for later steps that use it
        return
    found = closed_forms.read(scope, st)
    if found is not None:
        steps[0].lhs_expr, steps[0].rhs_expr, steps[0].induction = found
