"""Every local VJP rule checked exactly at small sizes, by differentiating explicit entries.

For each rule of :mod:`symattn.grad.rules`, :data:`FAMILIES` gives instances (an expression, the
input to differentiate, at concrete sizes in 1..3) that exercise it; :func:`check_rule` computes
the rule-based VJP with a symbolic cotangent and shows it equal, entry by entry and exactly, to
Σ_ij G_ij ∂E_ij/∂W_kl formed with ``sympy.diff`` on symbolic entries. A general gradient proof
(:mod:`symattn.grad.verify`) is general modulo these rules, and its trace says at which sizes each
was checked.

>>> check_rule("transpose").ok
True
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import sympy as sp

from ..defs.dims import h as HEAD
from ..defs.heads import Family, HeadConcat, HeadStack, HeadSum, bind
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, ScaleRows, ShiftRows
from ..defs.softmax import Softmax
from .explicit import derivative, explicit, inputs_of, is_zero, symbols_for
from .rules import RULES

SIZES = (1, 2, 3)


def _m(name, r, c):
    return sp.MatrixSymbol(name, r, c)


def _matmul(a, b, c):
    A, B, C = _m("A", a, b), _m("B", b, c), _m("C", c, a)
    return [(A * B, A), (A * B, B), (sp.MatMul(sp.Rational(2, 3), A, B, C), B), (sp.MatMul(3, A, B), A)]


def _add(r, c):
    A, B = _m("A", r, c), _m("B", r, c)
    return [(A + B, A), (sp.MatAdd(A, A, B), A)]


def _transpose(r, c):
    A = _m("A", r, c)
    return [(sp.Transpose(A), A)]


def _hadamard(r, c):
    A, B = _m("A", r, c), _m("B", r, c)
    return [(sp.HadamardProduct(A, B), A), (sp.HadamardProduct(A, B, B), B)]


def _hadamard_power(r, c):
    A = _m("A", r, c)
    return [(sp.HadamardPower(A, 3), A), (sp.HadamardPower(A, 2), A)]


def _inverse(r):
    A = _m("A", r, r)
    return [(sp.Inverse(A), A)]


def _softmax(axis):
    def family(r, c):
        X = _m("X", r, c)
        return [(Softmax(X, axis), X)]
    return family


def _entrywise(node):
    def family(r, c):
        X = _m("X", r, c)
        return [(node(X), X)]
    return family


def _rows(node):
    def family(r, c):
        X, v = _m("X", r, c), _m("v", r, 1)
        e = node(v, X) if node is ScaleRows else node(X, v)
        return [(e, X), (e, v)]
    return family


def _head_sum(member: bool):
    """Σ_{h=1}^{H} over H = 1..3 heads, as a node (not expanded): W_h A W_h^T B (the head k = 1..H of a
    family, read twice by its term) or X W_h Softmax(X) (X read by every head, twice per term)."""
    def family(H, r):
        W, A, B = Family("W", r, r), _m("A", r, r), _m("B", r, r)
        X = _m("X", r, r)
        node = lambda body: bind(HeadSum, body, sp.Integer(H))  # noqa: E731
        if member:
            e = node(W[HEAD] * A * W[HEAD].T * B)
            return [(e, W[k]) for k in range(1, H + 1)]
        return [(node(X * W[HEAD] * Softmax(X)), X), (node(W[HEAD] * X.T), X)]
    return family


def _head_group(G, c):
    """Σ over H = G c heads (G, c in 1..3) whose head h reads W_{g(h)}, g(h) = ⌊(h−1)/c⌋ + 1 (GQA's
    key/value weights), and a per-head V_h: the gradient of every group's W_g."""
    W, V, A = Family("W", 2, 2), Family("V", 2, 2), _m("A", 2, 2)
    gh = sp.floor((HEAD - 1) / sp.Integer(c)) + 1
    e = bind(HeadSum, V[HEAD] * Softmax(W[gh] * A) * W[gh].T, sp.Integer(G * c))
    return [(e, W[k]) for k in range(1, G + 1)]


def _stack(cls, member: bool):
    """A stack or concatenation of H = 1..3 heads, as a node (not expanded), of bodies r × r: W_h A W_hᵀ
    (the member W_k, read twice by its head) or X W_h Xᵀ (X read by every head, twice per head)."""
    def family(H, r):
        W, A, X = Family("W", r, r), _m("A", r, r), _m("X", r, r)
        if member:
            e = bind(cls, W[HEAD] * A * W[HEAD].T, sp.Integer(H))
            return [(e, W[k]) for k in range(1, H + 1)]
        return [(bind(cls, X * W[HEAD] * X.T, sp.Integer(H)), X)]
    return family


FAMILIES = {
    "matmul": (_matmul, 3), "matadd": (_add, 2), "transpose": (_transpose, 2), "hadamard": (_hadamard, 2),
    "hadamard_power": (_hadamard_power, 2), "inverse": (_inverse, 1),
    "softmax_columns": (_softmax(0), 2), "softmax_rows": (_softmax(1), 2),
    "exp": (_entrywise(Exp), 2), "exp2": (_entrywise(Exp2), 2), "log": (_entrywise(Log), 2),
    "shift_rows": (_rows(ShiftRows), 2), "scale_rows": (_rows(ScaleRows), 2),
    "divide_rows": (_rows(DivideRows), 2),
    "head_sum_member": (_head_sum(True), 2), "head_sum_shared": (_head_sum(False), 2),
    "head_sum_group": (_head_group, 2),
    "head_stack_member": (_stack(HeadStack, True), 2), "head_stack_shared": (_stack(HeadStack, False), 2),
    "head_concat_member": (_stack(HeadConcat, True), 2), "head_concat_shared": (_stack(HeadConcat, False), 2),
}


@dataclass(frozen=True)
class RuleCheck:
    """How one rule was checked: its name, the sizes, the instances, and the failures (if any)."""

    name: str
    sizes: tuple
    instances: int
    failures: tuple = field(default=())

    @property
    def ok(self) -> bool:
        return self.instances > 0 and not self.failures

    def line(self) -> str:
        rule = RULES[self.name]
        state = "checked" if self.ok else f"FAILED ({self.failures[0]})"
        return (f"rule {self.name} [{rule.statement}]: {state} exactly at {self.instances} instances, "
                f"every size in {min(self.sizes)}..{max(self.sizes)}")


def _one(expr, wrt) -> bool:
    from .vjp import vjp  # the rule under test, applied by the same walk as every VJP

    G = sp.MatrixSymbol("G", *expr.shape)
    env = {x: symbols_for(x, x.name) for x in inputs_of(expr, G)}
    want = derivative(explicit(expr, env), env[G], env[wrt])
    got = explicit(vjp(expr, wrt, G), env)
    return all(is_zero(want[i] - got[i]) for i in range(len(want)))


@lru_cache(maxsize=None)
def check_rule(name: str) -> RuleCheck:
    """Check rule ``name`` at every combination of sizes in 1..3 (exact, symbolic entries)."""
    family, arity = FAMILIES[name]
    count, failures = 0, []
    for sizes in itertools.product(SIZES, repeat=arity):
        for expr, wrt in family(*sizes):
            count += 1
            if not _one(expr, wrt):
                failures.append(f"{sp.sstr(expr)} with respect to {wrt} at sizes {sizes}")
    return RuleCheck(name, SIZES, count, tuple(failures))
