"""The independent audit of a proved gradient: the claimed VJP checked against a derivative taken
at random exact instances.

A gradient claim is (E, W, C, G): "C is the VJP of E with respect to W at the cotangent G", i.e.
C_kl = Σ_ij G_ij ∂E_ij/∂W_kl for every (k, l). :func:`run_gradient_audit` draws instances like the
claim audit (dimensions from 2..3 and 1..3 in turn, or exactly ``at``; integer entries in -3..3 for
every input and for G) and a random integer direction U of W's shape, evaluates E at W0 + t U with
its own interpreter (nested lists of SymPy values; it shares no code with the gradient strategies
of :mod:`symattn.grad`), differentiates Σ_ij G_ij E_ij(t) symbolically in t at t = 0, and compares
it with ⟨C, U⟩ = Σ_kl C_kl U_kl, evaluated by the same interpreter. Two values at least 10⁻³⁰
apart (SymPy's evalf at 60 digits, which tracks its accuracy) mean a bug of symattn: SoundnessError.
Each distinct transcendental value (an exp, log, sin, cos or irrational power of exact numbers) is
evaluated once, to 100 digits, before the sum is (:func:`_values_once`): evalf would evaluate it
again at every occurrence, and the derivative of an attention head repeats each exp thousands of
times. Values within 10⁻⁵⁰ agree; anything between, or a node the interpreter does not know, skips the
instance. The result is an :class:`~symattn.proof.verdict.AuditRecord`.
"""

from __future__ import annotations

import random

import sympy as sp

from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, ScaleRows, ShiftRows
from ..defs.permutation import Permutation
from ..defs.rope import BlockDiag
from ..defs.softmax import Softmax
from ..errors import SoundnessError
from .audit import _seed, claim_symbols
from .verdict import AuditRecord

DEFAULT_INSTANCES = 3
DIMENSIONS = ((2, 3), (1, 2, 3))
DIGITS = 60
DIFFER, AGREE = sp.Rational(1, 10**30), sp.Rational(1, 10**50)
GUARD = 100  # the digits of each transcendental value, 40 beyond DIGITS


def _values_once(e):
    """``e`` with each distinct transcendental subexpression of exact numbers replaced by its value
    to GUARD digits (evaluated once, not at each of its occurrences)."""
    found = {a for a in e.atoms(sp.exp, sp.log, sp.sin, sp.cos, sp.Pow) if a.is_number
             and not (isinstance(a, sp.Pow) and a.exp.is_Integer and a.base.is_Rational)}
    return e.xreplace({a: sp.Float(sp.N(a, GUARD), GUARD) for a in found})


class _Skip(Exception):
    """An instance the interpreter cannot evaluate (the reason is the message)."""


def _add(A, B):
    return [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _mul(A, B):
    cols = list(zip(*B))
    return [[sp.Add(*[a * b for a, b in zip(row, col)]) for col in cols] for row in A]


def _t(A):
    return [list(r) for r in zip(*A)]


def _map(f, A):
    return [[f(a) for a in r] for r in A]


def _entrywise(A, B, f):
    return [[f(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _softmax_cols(A):
    E = _map(sp.exp, A)
    sums = [sp.Add(*c) for c in zip(*E)]
    return [[x / s for x, s in zip(r, sums)] for r in E]


class _Interpreter:
    """Explicit values of matrix expressions, with the inputs given as nested lists."""

    def __init__(self, values: dict, dims: dict):
        self.values, self.dims, self.memo = values, dims, {}

    def size(self, d) -> int:
        v = sp.sympify(d).xreplace(self.dims)
        if not v.is_Integer:
            raise _Skip(f"a dimension {d} without a value")
        return int(v)

    def __call__(self, e):
        if e not in self.memo:
            out = self._eval(e)
            if (len(out), len(out[0]) if out else 0) != tuple(self.size(x) for x in e.shape):
                raise _Skip(f"the value of {type(e).__name__} has another shape than the node")
            self.memo[e] = out
        return self.memo[e]

    def _eval(self, e):  # noqa: C901 (one dispatch over node types)
        if e in self.values:
            return self.values[e]
        if isinstance(e, sp.MatAdd):
            out = self(e.args[0])
            for a in e.args[1:]:
                out = _add(out, self(a))
            return out
        if isinstance(e, sp.MatMul):
            c = sp.Integer(1)
            out = None
            for a in e.args:
                if a.is_Matrix:
                    out = self(a) if out is None else _mul(out, self(a))
                else:
                    c *= a
            c = c.xreplace(self.dims)
            return _map(lambda x: c * x, out)
        if isinstance(e, sp.Transpose):
            return _t(self(e.arg))
        if isinstance(e, sp.HadamardProduct):
            out = self(e.args[0])
            for a in e.args[1:]:
                out = _entrywise(out, self(a), lambda x, y: x * y)
            return out
        if isinstance(e, sp.HadamardPower):
            k = e.exp.xreplace(self.dims)
            return _map(lambda x: x ** k, self(e.base))
        if isinstance(e, sp.Inverse):
            return sp.Matrix(self(e.arg)).inv().tolist()
        if isinstance(e, Softmax):
            X = self(e.arg)
            return _softmax_cols(X) if e.axis == 0 else _t(_softmax_cols(_t(X)))
        if isinstance(e, Exp):
            return _map(sp.exp, self(e.args[0]))
        if isinstance(e, Exp2):
            return _map(lambda x: sp.Integer(2) ** x, self(e.args[0]))
        if isinstance(e, Log):
            return _map(sp.log, self(e.args[0]))
        if isinstance(e, (ShiftRows, ScaleRows, DivideRows)):
            return self._rows(e)
        if isinstance(e, sp.MatrixSlice):  # a head's block of a stack's cotangent
            (r0, r1, rs), (c0, c1, cs) = ([self.size(b) for b in t] for t in (e.rowslice, e.colslice))
            return [row[c0:c1:cs] for row in self(e.parent)[r0:r1:rs]]
        if isinstance(e, sp.BlockMatrix):  # a head stack or concatenation, written out
            rows = []
            for blocks in e.blocks.tolist():
                parts = [self(b) for b in blocks]
                rows += [[x for p in parts for x in p[i]] for i in range(len(parts[0]))]
            return rows
        return self._leaf(e)

    def _rows(self, e):
        if isinstance(e, ScaleRows):
            d, X = self(e.args[0]), self(e.args[1])
            return [[d[i][0] * x for x in r] for i, r in enumerate(X)]
        X, c = self(e.args[0]), self(e.args[1])
        if isinstance(e, ShiftRows):
            return [[x - c[i][0] for x in r] for i, r in enumerate(X)]
        return [[x / c[i][0] for x in r] for i, r in enumerate(X)]

    def _leaf(self, e):
        r, c = (self.size(x) for x in e.shape)
        if isinstance(e, sp.ZeroMatrix):
            return [[sp.Integer(0)] * c for _ in range(r)]
        if isinstance(e, sp.OneMatrix):
            return [[sp.Integer(1)] * c for _ in range(r)]
        if isinstance(e, sp.Identity):
            return [[sp.Integer(int(i == j)) for j in range(c)] for i in range(r)]
        if isinstance(e, CausalMask):
            o = self.size(e.offset) if e.offset != 0 else 0
            return [[sp.Integer(0) if i <= j + o else -sp.oo for j in range(c)] for i in range(r)]
        if isinstance(e, PaddingMask):
            L = self.size(e.length)
            return [[sp.Integer(0) if i <= L - 1 else -sp.oo for _ in range(c)] for i in range(r)]
        if isinstance(e, sp.MatrixBase):
            return [[sp.sympify(x).xreplace(self.dims) for x in row] for row in e.tolist()]
        if isinstance(e, Permutation):
            raise _Skip("a symbolic permutation")
        raise _Skip(f"the node {type(e).__name__}")


def _draw(rng, k, dims, at):
    given = at[k % len(at)] if at else {}
    return {d: sp.Integer(int(given[d]) if d in given else rng.choice(DIMENSIONS[k % 2])) for d in dims}


def _integers(rng, r, c):
    return [[sp.Integer(rng.randint(-3, 3)) for _ in range(c)] for _ in range(r)]


def _inputs(*exprs):
    found = set()
    for e in exprs:
        found |= {a for a in sp.preorder_traversal(e) if isinstance(a, (sp.MatrixSymbol, FamilyMember))}
    return sorted(found, key=str)


def _ground(e, base: dict):
    """e at the instance: every dimension and scalar given its value, and every head sum, stack or
    concatenation, whose count H then has a value, written out as its H terms (W_h becomes W_1..W_H),
    and every block diagonal diag(B_1, ..., B_p) (RoPE's R_t), whose p then has a value, written out
    as its p blocks."""
    def expand(x):
        if isinstance(x, (HeadSum, HeadStack, HeadConcat)):
            if not x.count.is_Integer:
                raise _Skip(f"a head count {x.count} without a value")
            return expand(x.expand_heads())
        if isinstance(x, BlockDiag):
            if not x.count.is_Integer:
                raise _Skip(f"a number of blocks {x.count} without a value")
            return expand(x.doit())
        if not isinstance(x, sp.Basic) or not x.args:
            return x
        args = [expand(a) for a in x.args]
        return x if all(a is b for a, b in zip(args, x.args)) else x.func(*args)
    return expand(e.xreplace(base))


def _instance(expr, wrt, candidate, cotangent, dims, scalars, rng):
    """(directional derivative, ⟨C, U⟩, the instance as text) at one instance."""
    t = sp.Dummy("t", real=True)
    base = dict(dims)
    base.update({s: sp.Integer(rng.randint(1, 3)) for s in scalars})
    expr, wrt, candidate, cotangent = (_ground(x, base) for x in (expr, wrt, candidate, cotangent))
    values = {}
    for x in _inputs(expr, candidate, cotangent):
        r, c = (int(sp.sympify(n).xreplace(base)) for n in x.shape)
        values[x] = _integers(rng, r, c)
    W0 = values[wrt]
    U = _integers(rng, len(W0), len(W0[0]))
    moved = dict(values)
    moved[wrt] = [[w + t * u for w, u in zip(rw, ru)] for rw, ru in zip(W0, U)]
    E = _Interpreter(moved, base)(expr)
    G = values[cotangent] if cotangent in values else _Interpreter(values, base)(cotangent)
    f = sp.Add(*[g * x for rg, rx in zip(G, E) for g, x in zip(rg, rx)])
    directional = sp.diff(f, t).subs(t, 0)
    C = _Interpreter(values, base)(candidate)
    # unevaluated: SymPy would distribute each integer u over c's terms, deciding the sign of every
    # exact transcendental product on the way (RoPE's cos(a θ_i) times exp(...)); the value is the same
    paired = sp.Add(*[sp.Mul(c, u, evaluate=False) for rc, ru in zip(C, U) for c, u in zip(rc, ru)],
                    evaluate=False)
    shown = ", ".join(f"{k}={v}" for k, v in base.items())
    return directional, paired, f"at {shown or 'the given sizes'} with {wrt} = {W0}, direction {U}"


def run_gradient_audit(expr, wrt, candidate, cotangent, *, at=None, prover_trace=(), method="",
                       instances: int = DEFAULT_INSTANCES) -> AuditRecord:
    """Audit the claim "candidate is the VJP of expr with respect to wrt at cotangent" at random
    exact instances; raise SoundnessError when an instance certifies it false."""
    dims, scalars = claim_symbols(expr, candidate, cotangent)
    rng = random.Random(_seed(expr, wrt, candidate, cotangent))
    agreed, skipped = 0, []
    for k in range(2 * instances + 2):
        if agreed == instances:
            break
        try:
            d, c, where = _instance(expr, wrt, candidate, cotangent, _draw(rng, k, dims, at), scalars, rng)
            gap = abs(sp.N(_values_once(sp.Add(d, sp.Mul(-1, c, evaluate=False), evaluate=False)), DIGITS))
        except (_Skip, ZeroDivisionError, ValueError, TypeError) as exc:
            skipped.append(str(exc))
            continue
        if gap.is_Number and gap > DIFFER:
            raise SoundnessError(
                f"audit: {method} proved a gradient that is false {where}: the derivative along the "
                f"direction is {sp.N(d, 15)}, the candidate gives {sp.N(c, 15)}",
                prover_trace=tuple(prover_trace), audit_trace=(where,), instance={"where": where})
        if gap.is_Number and gap < AGREE:
            agreed += 1
        else:
            skipped.append(f"undecided {where}")
    line = (f"audit: {agreed} random exact instances agree (the derivative along a random direction, "
            f"by sympy.diff at the instance)")
    if skipped:
        line += f"; {len(skipped)} skipped ({skipped[0]})"
    return AuditRecord(agreed, tuple(skipped), line)
