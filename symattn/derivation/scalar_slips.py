"""The slips of online softmax derivations, tried one change at a time on a refuted step's right
side: a rescaling factor e^{m(u) - m(v)} dropped, an off-by-one in a running index or a sum's bound."""

from __future__ import annotations

import itertools
import time

import sympy as sp

from ..errors import BudgetExceeded, DerivationError
from . import scalars as S
from .diagnose import Diagnosis
from .scalar_values import Vec, _walk

MAX_CANDIDATES = 40
#: The slips :func:`diagnose` tries, in words (a report says these were tried when none explains a step).
CATALOGUE = ("rescaling factor e^{m(u) - m(v)} dropped (from one term or every term), inverted or of another "
             "block, another block's vector, blocks swapped, a maximum written as a sum, off-by-one in a running "
             "index or a sum's bound")


def _maxima(el, s) -> list:
    """The maxima a rescaling factor e^{a - b} may be built from: m(v) for the vectors v the step
    applies a function to, and the running maxima m_t written in it."""
    out = []
    max_fns = [k for k, d in el.functions.items() if d.body.kind == "maxover"]
    nodes = list(_walk(s.rhs_node)) + list(_walk(s.lhs_node))
    for n in nodes:  # the maxima written in the step first
        if n.kind == "call" and S.name_text(n.parts[0]) in max_fns and n not in out:
            out.append(S.N("call", n.parts))
    for n in nodes:
        if n.kind == "call" and max_fns:
            for a in n.parts[1]:
                c = S.N("call", (S.N("name", (max_fns[0], "")), (a,)))
                if c not in out:
                    out.append(c)
        if n.kind == "sub" and n.parts[0].kind == "name" and n.parts[0].parts[0] in el.recurrences \
                and el.recurrences[n.parts[0].parts[0]][1].kind == "max":
            for m in (n, *(S.N("sub", (n.parts[0], _simplified(_shift(n.parts[1], d)))) for d in (-1, 1))):
                if m not in out:  # a running maximum, and its neighbours m_{j-1}, m_{j+1}
                    out.append(m)
    return out


def _rescales(el, a, b) -> bool:
    """True when e^{a - b} is a rescaling of these papers: from an old running maximum to the next
    (m_{t-1} to m_t), or from the maximum of a block to the maximum of a vector it is part of."""
    if a.kind == "sub" and b.kind == "sub":
        return a.parts[0] == b.parts[0] and _simplified(_shift(a.parts[1], 1)) == _simplified(b.parts[1])
    if a.kind == "call" and b.kind == "call":
        try:
            u, v = el.value(a.parts[1][0], {}), el.value(b.parts[1][0], {})
        except DerivationError:
            return False
        blocks_u, blocks_v = getattr(u, "blocks", None), getattr(v, "blocks", None)
        return (blocks_u is not None and blocks_v is not None and len(blocks_u) < len(blocks_v)
                and all(x in blocks_v for x in blocks_u))
    return False


def _terms(node):
    return list(node.parts) if node.kind == "add" else [node]


def _has_exp(node) -> bool:
    return node.kind == "exp" or (node.kind == "mul" and any(f.kind == "exp" for f in node.parts))


def candidates(el, s):
    """(slip, detail, corrected right side) for single changes of the step's right side."""
    R = s.rhs_node
    terms = _terms(R)
    maxima = _maxima(el, s)
    for t_no, t in enumerate(terms):
        if _has_exp(t) or t.kind == "neg":
            continue
        for a, b in itertools.permutations(maxima, 2):
            if not _rescales(el, a, b):
                continue
            factor = S.N("exp", (S.N("add", (a, S.N("neg", (b,)))),))
            new = S.N("mul", (factor, t))
            fixed = S.N("add", tuple(new if k == t_no else x for k, x in enumerate(terms))) if len(terms) > 1 else new
            yield ("rescaling factor dropped", f"the term {S.latex(t)} lacks the factor {S.latex(factor)}", fixed)
    yield from _factor_and_block_slips(el, R, maxima)
    yield from _whole_side_slips(el, R, terms, maxima)
    for spot, new_index in _index_shifts(R):
        yield ("off-by-one in a running index", f"{S.latex(spot)} should be {S.latex(new_index)}",
               _replace_node(R, spot, new_index))


def _exp_difference(n):
    """(a, b) when the node is e^{a - b}, else None."""
    if n.kind != "exp" or n.parts[0].kind != "add" or len(n.parts[0].parts) != 2:
        return None
    a, nb = n.parts[0].parts
    return (a, nb.parts[0]) if nb.kind == "neg" else None


def _factor_and_block_slips(el, R, maxima):
    r"""Dao et al.'s slips, one change of R each: a rescaling factor e^{a - b} inverted (e^{b - a}),
    the factor of another block (e^{a' - b} with a' the maximum of another block), a block's
    vector written for another of the same length (\ell(x^{(1)}) for \ell(x^{(2)})), and the
    blocks of a bmatrix swapped."""
    for n in _walk(R):
        ab = _exp_difference(n)
        if ab is not None:
            a, b = ab
            flipped = S.N("exp", (S.N("add", (b, S.N("neg", (a,)))),), n.pos)
            yield ("rescaling factor inverted", f"{S.latex(n)} should be {S.latex(flipped)}",
                   _replace_node(R, n, flipped))
            for a2 in maxima:
                if a2 != a and a2 != b and _rescales(el, a2, b):
                    other = S.N("exp", (S.N("add", (a2, S.N("neg", (b,)))),), n.pos)
                    yield ("rescaling factor of another block", f"{S.latex(n)} should be {S.latex(other)}",
                           _replace_node(R, n, other))
    vectors = {k: v[1] for k, v in el.vectors.items()}
    for n in _walk(R):
        if n.kind == "call":
            for t, arg in enumerate(n.parts[1]):
                if arg.kind != "name" or S.name_text(arg) not in vectors:
                    continue
                for other in vectors:
                    if other != S.name_text(arg) and vectors[other] == vectors[S.name_text(arg)]:
                        base, _, sup = other.partition("^{")
                        args = tuple(S.N("name", (base, sup[:-1])) if u == t else x for u, x in enumerate(n.parts[1]))
                        new = S.N("call", (n.parts[0], args), n.pos)
                        yield ("another block's vector", f"{S.latex(n)} should be {S.latex(new)}",
                               _replace_node(R, n, new))
        if n.kind == "vec" and len(n.parts) == 2 and not any(c.kind == "dots" for c in n.parts):
            new = S.N("vec", (n.parts[1], n.parts[0]), n.pos, n.ops)
            yield ("blocks swapped", f"the blocks of {S.latex(n)} are in the other order", _replace_node(R, n, new))


def _whole_side_slips(el, R, terms, maxima):
    r"""Slips of the whole right side: the rescaling factors dropped from every term at once
    (\ell(x^{(1)}) + \ell(x^{(2)}) for the rescaled sum), and a maximum written as a sum
    (m(x^{(1)}) + m(x^{(2)}) for \max(m(x^{(1)}), m(x^{(2)})))."""
    max_fns = {k for k, d in el.functions.items() if d.body.kind == "maxover"}
    if len(terms) > 1 and all(t.kind == "call" for t in terms):
        if all(S.name_text(t.parts[0]) in max_fns for t in terms):
            fixed = S.N("max", tuple(terms), R.pos)
            yield ("a maximum written as a sum", f"{S.latex(R)} should be {S.latex(fixed)}", fixed)
        for b in sorted(maxima, key=lambda b: not (b.kind == "call" and b.parts[1][0].kind == "name")):  # m(x) first
            new = []
            for t in terms:
                a = next((a for a in maxima if a.kind == "call" and a.parts[1] == t.parts[1] and _rescales(el, a, b)),
                         None)
                if a is None:
                    break
                new.append(S.N("mul", (S.N("exp", (S.N("add", (a, S.N("neg", (b,)))),)), t)))
            else:
                fixed = S.N("add", tuple(new), R.pos)
                yield ("rescaling factors dropped", f"every term lacks its factor e^{{m(u) - {S.latex(b)}}}", fixed)


def _shift(index, d):
    return S.N("add", (index, S.N("num", (d,)))) if d > 0 else S.N("add", (index, S.N("neg", (S.N("num", (-d,)),))))


def _simplified(index):
    """j - 1 + 1 written j: the shifted index as a paper would write it."""
    def val(n):
        if n.kind == "num":
            return 0, n.parts[0]
        if n.kind == "neg" and n.parts[0].kind == "num":
            return 0, -n.parts[0].parts[0]
        return n, 0

    parts = _terms(index) if index.kind == "add" else [index]
    flat = []
    for p in parts:
        flat.extend(_terms(p) if p.kind == "add" else [p])
    const = sum(val(p)[1] for p in flat)
    rest = [p for p in flat if val(p)[0] != 0]
    if not rest:
        return S.N("num", (const,))
    head = rest[0] if len(rest) == 1 else S.N("add", tuple(rest))
    if const == 0:
        return head
    return S.N("add", (*rest, S.N("num", (const,)) if const > 0 else S.N("neg", (S.N("num", (-const,)),))))


def _index_shifts(R):
    for n in _walk(R):
        if n.kind == "sub" and any(x.kind == "name" for x in _walk(n.parts[1])):
            for d in (1, -1):
                yield n, S.N("sub", (n.parts[0], _simplified(_shift(n.parts[1], d))), n.pos)
        if n.kind == "sum" and n.parts[2] is not None:
            index, lo, hi, body = n.parts
            for d in (1, -1):
                yield n, S.N("sum", (index, lo, _simplified(_shift(hi, d)), body), n.pos)


def _replace_node(node, old, new):
    if node is old:
        return new
    if isinstance(node, S.N):
        return S.N(node.kind, tuple(_replace_node(x, old, new) for x in node.parts), node.pos, node.ops)
    if isinstance(node, tuple):
        return tuple(_replace_node(x, old, new) for x in node)
    return node


def _by_induction(el, pr, s, R, deadline) -> str:
    """With the right side of step ``s`` corrected to R: "" or the induction that proves it. The
    chain (``s.chain_steps``, about the running value ``s.chain_subject`` at j) is re-read with R
    in place; for an expression e of the corrected chain at or after this step, the hypothesis
    d_{j-1} = e(j-1) is used when every step up to e is then proved: as in the chain's own check,
    those steps show d_j = e(j) at j = 1 without it and at j >= 2 from j - 1."""
    subject, steps = getattr(s, "chain_subject", None), getattr(s, "chain_steps", None)
    if subject is None or not steps or pr.j is None or s not in steps:
        return ""
    k = steps.index(s)
    vals = [steps[0].lhs_expr] + [t.rhs_expr for t in steps]
    vals[k + 1] = R
    if any(isinstance(v, Exception) for v in vals):
        return ""
    for h in range(len(vals) - 1, k, -1):
        e = vals[h]
        if isinstance(e, Vec) or sp.sympify(e).has(subject.func):
            continue
        hyp = (subject.func(pr.j - 1), sp.sympify(e).xreplace({pr.j: pr.j - 1}))
        ok = True
        for t in range(h):
            if time.perf_counter() > deadline:
                return ""
            try:
                v, _ = pr.step(vals[t], vals[t + 1], hyp)
            except (DerivationError, BudgetExceeded, TypeError, ValueError):
                v = None
            if v is None or not v.proved:
                ok = False
                break
        if ok:
            return (f"proved for every {pr.j} by induction: steps 1..{h} of the corrected chain, with the hypothesis "
                    f"{S.latex(steps[0].lhs_node)} at {pr.j} - 1 equal to expression {h} at {pr.j} - 1")
    return ""


def diagnose(el, pr, s):
    """The slip whose correction makes the step hold (proved), or None. A correction is tried
    first on the step alone, then (for a chain about a running value) with the induction
    hypothesis the corrected chain provides."""
    deadline = time.perf_counter() + 30.0
    tried = []
    for count, (slip, detail, fixed) in enumerate(candidates(el, s)):
        if count >= MAX_CANDIDATES or time.perf_counter() > deadline:
            break
        try:
            R = el.value(fixed, {})
            v, how = pr.step(s.lhs_expr, R, None, (s.lhs_node, fixed))
        except (DerivationError, BudgetExceeded, TypeError, ValueError):
            continue
        if v.proved:
            return Diagnosis(slip, detail, S.latex(fixed), f"proved ({v.method})", True)
        tried.append((slip, detail, fixed, R))
    for slip, detail, fixed, R in tried:
        if time.perf_counter() > deadline:
            break
        how = _by_induction(el, pr, s, R, deadline)
        if how:
            return Diagnosis(slip, detail, S.latex(fixed), how, True)
    return None
