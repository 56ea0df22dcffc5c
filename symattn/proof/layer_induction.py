"""Claims about a stack of L layers, for every L: the node :class:`LayerStack` and an induction on L.

A deep model applies one layer map L times: S_0 = start, S_l = layer_l(S_{l-1}), where layer l has
weights of its own (``W^Q`` of the layer map is ``W^Q_l`` in layer l). :func:`layer_stack` states
such a stack with a symbolic depth L, and a claim relating stacks of the same depth, e.g. "the
row-convention stack on Xᵀ is the transpose of the column-convention stack", is one ``verify``
call. :func:`verify_layers` (which :func:`symattn.verify` calls on such a claim) decides it:

- base case: the claim at L = 1 (every stack one layer), proved by ``verify``;
- step: the claim at L is assumed as an opaque hypothesis, each stack after L layers a fresh matrix
  symbol: when one side of the claim is a stack S (or Sᵀ) that the other side does not hold, the
  hypothesis says S = (the other side), and that is substituted; the claim after one more layer
  (each stack S_{L+1} = layer(S_L), with the weights of layer L + 1) is then proved by ``verify``
  for every value of those symbols and of the weights, which is stronger than needed; a claim
  without such a side (S + S = 2 S) is proved for every value of the stacks instead;
- then the claim holds for every L >= 1, and the proof kernel
  (:func:`symattn.proof.kernel.conclude_by_induction`) audits it again at L = 1, 2, 3 unfolded,
  at random exact instances, before sealing the verdict, which carries both sub-verdicts
  (``base`` and ``step``).

When the base case is refuted, or the step is not proved and the claim unfolded at L = 2 or 3 is
refuted, the verdict is that refutation, at that concrete L. Agreement at a few L is never reported
as a proof for every L: a step that is not proved leaves the claim unknown.

>>> import sympy as sp, symattn as sa
>>> n, L = sa.dims("n L")
>>> X, S, A = (sp.MatrixSymbol(s, n, n) for s in "XSA")
>>> col = sa.layer_stack(A * S, S, X, L, weights=[A])     # S_l = A_l S_{l-1}
>>> row = sa.layer_stack(S * A.T, S, X.T, L, weights=[A])  # S_l = S_{l-1} A_lᵀ
>>> v = sa.verify(row, col.T)
>>> v.status, v.scope, v.base.status, v.step.status
('proved', 'all dimensions (n) and every L >= 1', 'proved', 'proved')
>>> I = sp.Identity(n)  # the layers in the wrong order: A_1 A_2 ≠ A_2 A_1, though A_1 = A_1
>>> sa.verify(sa.layer_stack(S * A, S, I, L, weights=[A]), sa.layer_stack(A * S, S, I, L, weights=[A])).scope
'counterexample at L = 2, n=2'
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from functools import partial

import sympy as sp

from ..errors import ClaimError
from . import dag
from .kernel import conclude_by_induction
from .layer_stack import LayerStack, stacks_of, unfold
from .verdict import Candidate, general_scope, quantified, unknown

#: the depths at which a claim proved for every L is audited again, and searched for a counterexample
AUDITED_DEPTHS = (1, 2, 3)


def _check_claim(lhs, rhs, stacks):
    """The depth symbol L of a claim, after checking that every stack has it and that nothing else does."""
    for s in stacks:
        inner = [x for x in dag.nodes(s.layer, s.start) if isinstance(x, LayerStack)]
        if inner:
            raise ClaimError("verify: a layer stack inside the layer map or the start of another "
                             f"({sp.sstr(inner[0])[:80]}) is not supported; state the inner stack as its own claim")
    depths = {s.depth for s in stacks}
    if len(depths) != 1:
        shown = ", ".join(sorted(map(str, depths)))
        raise ClaimError(f"verify: the layer stacks of a claim must have the same depth, got {shown}")
    (L,) = depths
    if L.is_Symbol:
        outside = [s for s in stacks for x in (s.layer, s.start, s.placeholder) if L in dag.free_symbols(x)]
        bare = (lhs.xreplace({s: s.placeholder for s in stacks}), rhs.xreplace({s: s.placeholder for s in stacks}))
        if outside or L in dag.free_symbols(*bare):
            raise ClaimError(f"verify: the depth {L} of the layer stacks may occur nowhere else in the claim "
                             "(not in a shape, a layer map or a start)")
    weights = {W for s in stacks for W in s.weights}
    for s in stacks:
        held = [W for W in weights if W in dag.atoms(s.layer, sp.MatrixSymbol) and W not in s.weights]
        if held:
            raise ClaimError(f"verify: {held[0]} is a weight of one layer stack (each layer has its own) but a "
                             f"matrix shared by every layer of another ({sp.sstr(s)[:80]}); list it in the "
                             "weights of both or of neither")
    bare = [x.xreplace({s: s.placeholder for s in stacks}) for x in (lhs, rhs)] + [s.start for s in stacks]
    outside = set().union(*(weights & dag.atoms(x, sp.MatrixSymbol) for x in bare))
    if outside:
        W = sorted(outside, key=str)[0]
        raise ClaimError(f"verify: the weight {W} of a layer stack (each layer has its own) occurs outside the "
                         "layer maps too; name that matrix otherwise")
    names = _names(lhs, rhs)
    for W in weights:
        clash = sorted(x for x in names if re.fullmatch(re.escape(W.name) + r"_\d+", x))
        if clash:
            raise ClaimError(f"verify: the matrix {clash[0]} is named like the weight {W} of a layer of the stack "
                             f"({W}_1, {W}_2, ... once unfolded), which it would be confused with; rename it")
    return L


def _fresh(shape, taken: set, stem: str = "S_L"):
    """A matrix symbol named ``stem`` (primed until its name is free): a stack after L layers."""
    name = stem
    while name in taken:
        name += "'"
    taken.add(name)
    return sp.MatrixSymbol(name, *shape)


def _names(*exprs) -> set:
    return {x.name for x in dag.nodes(*exprs) if isinstance(x, sp.MatrixSymbol)}


def _solved(lhs, rhs, symbols):
    """(P, e): the hypothesis lhs = rhs solved as P = e, for a symbol P of ``symbols`` that is one
    side (maybe transposed) and occurs nowhere in the other; or None."""
    for a, b in ((lhs, rhs), (rhs, lhs)):
        flips = 0
        while isinstance(a, sp.Transpose):
            a, flips = a.arg, flips + 1
        if a in symbols and a not in dag.atoms(b, sp.MatrixSymbol):
            return a, (sp.Transpose(b) if flips % 2 else b)
    return None


def step_claim(lhs, rhs, stacks):
    """(what the step assumes, step lhs, step rhs). Each stack after L layers is a fresh symbol S_L;
    the step's sides are the claim after layer L + 1, with the hypothesis substituted. When the
    hypothesis cannot be solved for a stack, the step is the claim with each stack a fresh symbol
    (for every value of the stacks), which holds at L + 1 when it holds for all values."""
    taken = _names(lhs, rhs, *[s.unfold(1) for s in stacks])
    after = {s: _fresh(s.shape, taken, "S_L" if len(stacks) == 1 else f"S{k + 1}_L") for k, s in enumerate(stacks)}
    hyp_l, hyp_r = lhs.xreplace(after), rhs.xreplace(after)
    solved = _solved(hyp_l, hyp_r, set(after.values()))
    if solved is None:  # no hypothesis to use: the claim must hold whatever the stacks are
        named = "; ".join(f"{after[s]} = {sp.sstr(s)}" for s in stacks)
        return (f"the stacks after L + 1 layers are fresh matrices ({named}); the claim (not of the form S = E "
                "with a stack S, or Sᵀ, on one side only) is shown for every value of them"), hyp_l, hyp_r
    P, value = solved
    nxt = {s: s.layer.xreplace({s.placeholder: after[s]}) for s in stacks}  # layer L + 1 on S_L
    step_l = lhs.xreplace(nxt).xreplace({P: value})
    step_r = rhs.xreplace(nxt).xreplace({P: value})
    named = "; ".join(f"{after[s]} = {sp.sstr(s)}" for s in stacks)
    text = (f"the stacks after L layers are fresh matrices ({named}); hypothesis (the claim at L): "
            f"{sp.sstr(P)} = {sp.sstr(value)}")
    return text, step_l, step_r


def verify_layers(lhs, rhs, *, budget: float, at=None, verify=None, search_counterexample: bool = True):
    """The verdict on a claim about layer stacks (see the module docstring); ``verify``: the
    engine's verify, for the sub-claims (``search_counterexample`` is passed on to it)."""
    start = time.perf_counter()
    verify = partial(verify, search_counterexample=search_counterexample)
    stacks = stacks_of(lhs, rhs)
    L = _check_claim(lhs, rhs, stacks)
    if not L.is_Symbol:  # a concrete depth: the claim unfolded is an ordinary claim
        return verify(unfold(lhs, 0, stacks), unfold(rhs, 0, stacks), at=at, budget=budget)
    if at is not None:
        raise ClaimError("verify: at= is not supported on a claim for every L; verify the claim unfolded at a "
                         "concrete depth (LayerStack.unfold) with at=")
    share = budget / 4
    trace = [f"induction on the number of layers {L}"]
    base = verify(unfold(lhs, 1, stacks), unfold(rhs, 1, stacks), budget=share)
    trace += [f"base {L} = 1: {base.status} ({base.scope}) by {base.method}"]
    trace += ["  base: " + t for t in base.trace]  # a TraceLine stays one (its readable form)
    if base.status == "refuted":
        return _at_depth(base, L, 1, trace, start)
    step = None
    if base.proved:
        why, step_l, step_r = step_claim(lhs, rhs, stacks)
        trace.append(f"step: {why}")
        if step_l is not None:
            step = verify(step_l, step_r, budget=share)
            trace += [f"step: the claim after layer {L} + 1: {step.status} ({step.scope}) by {step.method}"]
            trace += ["  step: " + t for t in step.trace]
    if base.proved and step is not None and step.proved:
        dims = set().union(*(set(v.over[0]) for v in (base, step)))
        scalars = set().union(*(set(v.over[2]) for v in (base, step)))
        over = quantified(sorted(dims), {L}, sorted(scalars))
        found = Candidate(True, "induction on the number of layers", general_scope(over),
                          tuple(trace), over=over)
        # the claim as stated at L = k: the audit's interpreter unfolds the stacks on its own
        concrete = [(k, lhs.xreplace({L: k}), rhs.xreplace({L: k})) for k in AUDITED_DEPTHS]
        return conclude_by_induction(found, base, step, concrete, L,
                                     seconds=time.perf_counter() - start, lhs=lhs, rhs=rhs)
    trace.append(f"not proved for every {L}: the " + ("base case" if not base.proved else "step")
                 + " is not proved")
    for k in AUDITED_DEPTHS[1:]:
        v = verify(unfold(lhs, k, stacks), unfold(rhs, k, stacks), budget=share / 2)
        trace.append(f"at {L} = {k}: {v.status} ({v.scope}) by {v.method}")
        if v.status == "refuted":
            trace += [f"  {L} = {k}: " + t for t in v.trace]
            return _at_depth(v, L, k, trace, start)
    return replace(unknown(trace), seconds=time.perf_counter() - start, lhs=lhs, rhs=rhs)


def _at_depth(v, L, k: int, trace, start):
    """A refutation of the claim unfolded at ``L`` = ``k``, as the verdict on the claim for every L."""
    return replace(v, scope=f"counterexample at {L} = {k}, " + v.scope.removeprefix("counterexample at "),
                   trace=tuple(trace), seconds=time.perf_counter() - start)
