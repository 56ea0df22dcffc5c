r"""Backward passes as papers write them: a step ``dX = F`` is a claim about the gradient of the loss.

In a file that defines forward quantities (``S = Q K^\top / \sqrt{d}``, ``P = \mathrm{softmax}(S)``,
``O = P V``) the name ``dX`` (also ``\frac{\partial L}{\partial X}``, ``\nabla_X L``, ``\mathrm{d}X``, read
by :mod:`.grad_notation`) is the gradient of a scalar loss L with respect to X, and ``dX = F`` claims,
in standard reverse mode, that

    F = Σ_Y vjp(def_Y, X, dY)    over the forward definitions Y := def_Y that use X directly,

def_Y read with the names it uses held as inputs, and dY a matrix of Y's shape: the cotangent. Both
sides are then written in the file's inputs (every forward name expanded). The claim is checked first
for every cotangent dY (the gradient names free); where that fails and the file gives dY by a step of
its own (``dP = dO V^\top``), again with those steps substituted, so that ``dS = P \circ (dP - D 1^\top)``
with ``D = \mathrm{rowsum}(dO \circ O)`` is checked as the paper means it. A gradient the file never
defines (dO, of the output) stays a free cotangent.

The right side is :func:`symattn.grad.vjp.vjp_with_rules`'s result, and the equality is decided by
:func:`symattn.verify`: a "proved" is proved modulo the VJP rules it names (each checked exactly at every
size in 1..3, :mod:`symattn.grad.rule_check`), and says so in its scope; a refutation is the certified
counterexample of that equality (the inputs, the cotangent dO among them, and the entry). For a step
that fails, the usual slips of backward passes are tried and named when one, corrected, is proved.
"""

from __future__ import annotations

import time

import sympy as sp

from ..errors import DerivationError, GradientError, ShapeError
from ..grad.rule_check import check_rule
from ..grad.vjp import vjp_with_rules
from ..proof import verify
from . import ast
from .grad_names import gradient_symbol, primal
from .grad_slips import name_slip
from .symbols import is_matrix, key_of

MAX_SUBSTITUTIONS = 32


def _is_gradient_name(n, primals: set) -> bool:
    return (isinstance(n, ast.Name) and len(n.base) > 1 and n.base[0] == "d" and n.base[1].isalpha()
            and key_of(primal(n)) in primals)


def _primal_keys(stmts) -> set:
    out = set()
    for st in stmts:
        if isinstance(st, ast.Declare):
            out.update(key_of(n) for n in st.names)
        elif isinstance(st, ast.Define):
            out.add(key_of(st.target))
        elif isinstance(st, ast.Chain) and isinstance(st.first, ast.Name):
            out.add(key_of(st.first))
    declared = {key_of(n) for st in stmts if isinstance(st, ast.Declare) for n in st.names}
    # dV written first in a chain is a gradient when V is declared or defined; a declared dV is a matrix
    return {k for k in out if k in declared or not (len(k) > 1 and k[0] == "d" and k[1:] in out)}


def split_gradient_claims(scope, stmts):
    """(the statements without the gradient claims, the claims [(dX, F, the chain)]).

    A chain ``dX = F = F'`` leaves ``F = F'`` among the statements, an ordinary step. Sets
    ``scope.gradient_names`` (the keys of every gradient name of the file) when there is a claim."""
    primals = _primal_keys(stmts)
    claims, out = [], []
    for st in stmts:
        first = st.target if isinstance(st, ast.Define) else getattr(st, "first", None)
        if isinstance(st, ast.Define) and not st.params and _is_gradient_name(first, primals):
            claims.append((first, st.body, st))
            continue
        if (isinstance(st, ast.Chain) and st.links and st.links[0][0] in ("=", ":=") and not st.bind
                and _is_gradient_name(first, primals)):
            body = st.links[0][2]
            if isinstance(body, ast.Name) and key_of(body) == key_of(first):
                scope.notes.append(f"{first.text()} = {body.text()}: the notation of the gradient, not a step")
                continue
            claims.append((first, body, st))
            if len(st.links) > 1:
                out.append(ast.Chain(st.links[1][1], body, st.links[1:], st.shape))
            continue
        out.append(st)
    if claims:
        names = {key_of(n) for st in stmts for n in ast.nodes_of(st) if _is_gradient_name(n, primals)}
        scope.gradient_names = names | {key_of(c[0]) for c in claims}
        scope.notes.append("backward pass: d<X> is the gradient of a scalar loss L with respect to X; a step dX = F "
                           "claims F = Σ_Y vjp(def_Y, X, dY) over the definitions Y that use X (reverse mode)")
    return out, claims


class _Graph:
    """The forward definitions, each with its body read two ways: with the names it uses held as inputs
    (local) and with every name expanded (full)."""

    def __init__(self, scope):
        self.scope = scope
        grads = {scope.matrices[k] for k in getattr(scope, "gradient_names", ()) if k in scope.matrices}
        self.full, self.held, self.local = {}, {}, {}
        for k, d in scope.defs.items():
            if d.params or d.open or d.index is not None:
                continue
            try:
                v = scope.expr(d.target)
            except DerivationError:
                continue
            if is_matrix(v) and not (v.free_symbols & grads):  # D = rowsum(dO ∘ O) is not forward
                self.full[k] = v
                self.held[k] = sp.MatrixSymbol(k, v.rows, v.cols)
        saved = dict(scope.matrices)
        try:
            scope.matrices.update(self.held)
            for k in self.full:
                body = scope.defs[k].body
                scope.matrices.pop(k)
                try:
                    self.local[k] = scope.expr(body)
                finally:
                    scope.matrices[k] = self.held[k]
        finally:
            scope.matrices.clear()
            scope.matrices.update(saved)
        self.back = {self.held[k]: v for k, v in self.full.items()}


def _substitute(expr, formulas):
    for _ in range(MAX_SUBSTITUTIONS):
        new = expr.xreplace(formulas)
        if new == expr:
            return expr
        expr = new
    raise DerivationError("the gradient steps refer to each other in a circle", 0, 0, "steps from the output back")


def _scope_text(v, used, checks, documented):
    out = v.scope + ", modulo the VJP rules " + ", ".join(used) + " (each checked exactly at every size in 1..3)"
    if documented:
        out += "; with " + ", ".join(documented) + " as the file's steps give them"
    return out


def gradient_steps(scope, claims, make_step, offset: int, chain: int) -> list:
    """One step per claim, numbered from ``offset + 1`` (``make_step`` builds a Step): its left side the
    claim's formula, its right side the expected gradient, both in the file's inputs (or the error that
    makes one ill-formed); :func:`decide_gradient` checks it."""
    if not claims:
        return []
    graph = _Graph(scope)
    formulas, texts = {}, {}
    for target, body, _ in claims:
        try:
            g = gradient_symbol(scope, target, {})
            if g not in formulas:
                formulas[g] = scope.expr(body)
                texts[g] = f"{target.text()} = {body.text()}"
        except DerivationError:
            continue
    steps = []
    for j, (target, body, st) in enumerate(claims):
        pos = st.links[0][1] if isinstance(st, ast.Chain) else st.pos
        s = make_step(offset + j + 1, target.text(), body.text(), target.latex(), body.latex(), "=", pos,
                      lhs_node=target, rhs_node=body)
        s.chain, s.scope_obj = chain + j, scope
        own = scope.matrices.get(key_of(target))
        info = {"target": target, "graph": graph, "used": [], "users": [], "texts": texts,
                "subs": {g: f for g, f in formulas.items() if g is not own}}
        try:
            s.rhs_expr, info["used"], info["users"] = expected_gradient(scope, graph, target)
        except (DerivationError, ShapeError, GradientError) as exc:
            s.rhs_expr = exc
        try:
            s.lhs_expr = _candidate(scope, target, body, s.rhs_expr)
        except (DerivationError, ShapeError) as exc:
            s.lhs_expr = exc
        s.gradient = info
        steps.append(s)
    for s in steps:
        s.gradient["formulas"] = formulas
    return steps


def give_gradients(steps, gradient_steps_) -> None:
    """An ordinary step that uses a gradient the file gives by a step of its own (``dP = dO V^\top``)
    means that quantity, not a free cotangent: the formula is put into its sides, and the step's
    ``given`` lists the steps used (said in its scope). FlashAttention-2's ``rowsum(dO ∘ O) =
    rowsum(P ∘ dP)`` holds only for dP = dO Vᵀ; with dP free it would be refuted, a true step."""
    if not gradient_steps_:
        return
    formulas, texts = gradient_steps_[0].gradient["formulas"], gradient_steps_[0].gradient["texts"]
    for s in steps:
        given = []
        for side in ("lhs_expr", "rhs_expr"):
            e = getattr(s, side)
            if not is_matrix(e):
                continue
            used = [g for g in formulas if e.has(g)]
            if used:
                setattr(s, side, _substitute(e, formulas))
                given += [texts[g] for g in used if texts[g] not in given]
        s.given = tuple(given)


def _candidate(scope, target, body, R):
    cand = scope.expr(body)
    if not is_matrix(cand):
        scope.fail(body, f"{body.text()} is a number; {target.text()} is a matrix", "a matrix of the shape of "
                   f"{primal(target).text()}")
    if is_matrix(R) and cand.shape != R.shape:
        scope.fail(body, f"{body.text()} is {sp.sstr(cand.rows)} × {sp.sstr(cand.cols)}; the gradient "
                   f"{target.text()} has the shape of {primal(target).text()}, {sp.sstr(R.rows)} × {sp.sstr(R.cols)}",
                   f"a formula of {primal(target).text()}'s shape")
    return cand


def expected_gradient(scope, graph, target):
    """(Σ_Y vjp(def_Y, X, dY) in the file's inputs, the rules used, X's users) for the name dX."""
    X = key_of(primal(target))
    Xsym = graph.held.get(X, scope.matrices.get(X))
    if Xsym is None:
        scope.fail(target, f"{target.text()}: {primal(target).text()} is neither declared nor defined by a forward "
                   "definition", "the gradient of a declared input or of a defined forward quantity")
    users = [Y for Y, e in graph.local.items() if Y != X and e.has(Xsym)]
    if not users:
        scope.fail(target, f"{target.text()}: no definition of the file uses {primal(target).text()}, so its gradient "
                   "is the cotangent the loss gives (a free matrix), not a step to check",
                   "steps for the gradients of the quantities that the forward definitions use")
    parts, used = [], []
    for Y in users:
        gY = scope.matrices.get("d" + Y) or sp.MatrixSymbol("d" + Y, *graph.held[Y].shape)
        R, rules = vjp_with_rules(graph.local[Y], Xsym, gY)
        parts.append(R)
        used += [r for r in rules if r not in used]
    total = parts[0] if len(parts) == 1 else sp.MatAdd(*parts)
    return total.xreplace(graph.back), used, users


def decide_gradient(s, budget: float, diagnose: bool = True) -> None:
    """Check the gradient step ``s`` (from :func:`gradient_steps`): set its status, scope and diagnosis."""
    info, start = s.gradient, time.perf_counter()
    cand, R = s.lhs_expr, s.rhs_expr
    if isinstance(R, Exception) or isinstance(cand, Exception):
        s.status, s.error = "ill-formed", str(R if isinstance(R, Exception) else cand)
    else:
        try:
            _decide(s, info, cand, R, budget)
        except (DerivationError, ShapeError, GradientError) as exc:
            s.status, s.error = "ill-formed", str(exc)
    if diagnose and s.status in ("refuted", "ill-formed") and not isinstance(R, Exception):
        s.diagnosis = name_slip(s.scope_obj, info["graph"], s, info["subs"], budget)
    s.seconds = time.perf_counter() - start


def _decide(s, info, cand, R, budget):
    target, used = info["target"], info["used"]
    v = verify(cand, R, budget=budget)
    documented = []
    if not v.proved:
        subs = info["subs"]
        c2, r2 = _substitute(cand, subs), _substitute(R, subs)
        if (c2, r2) != (cand, R):
            documented = [info["texts"][g] for g in subs if cand.has(g) or R.has(g)]
            v = verify(c2, r2, budget=budget)
    s.verdict, s.status, s.general, s.method = v, v.status, v.general, v.method
    s.scope = v.scope
    if v.proved:
        checks = [check_rule(r) for r in used]
        bad = [c for c in checks if not c.ok]
        if bad:
            s.status, s.general = "unknown", False
            s.error = f"a VJP rule failed its check: {bad[0].line()}"
        s.scope = _scope_text(v, used, checks, documented)
    elif v.status == "refuted":
        s.error = (f"{target.text()} is not the gradient: the right side differs from Σ_Y vjp(def_Y, "
                   f"{primal(target).text()}, dY) over {', '.join(info['users'])} (the counterexample gives the "
                   "inputs, the cotangent and the entry)")
