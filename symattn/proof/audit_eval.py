"""The audit's own interpreter: one walk over a claim's tree with an environment.

:class:`Evaluator` evaluates both sides of a claim at one
:class:`~symattn.proof.audit_instance.Instance`. Its environment maps symbols (dimensions,
scalars, and the indices bound by binders and sums) to integers, and inputs (by object) to the
instance's draws; a binder (HeadSum, HeadStack, HeadConcat, BlockDiag) evaluates its body once per
index value with the index bound in the environment, never by substituting it. Matrices are lists
of rows (:mod:`symattn.proof.audit_matrices`) of the values of :mod:`symattn.proof.audit_numbers`.
It shares nothing with the strategies' evaluation (``evaluate.py``) or substitution
(``instances.py``): a node it does not know raises
:class:`~symattn.proof.audit_numbers.Unevaluable`, and the instance is skipped.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from mpmath import iv
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr

from ..defs.feature_map import FeatureMap, coordinate
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask, Visible
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import PermIndex, Permutation
from ..defs.rope import BlockDiag
from ..defs.score import Score
from ..defs.softmax import Softmax
from ..registry import Registry
from . import audit_matrices as mx
from . import audit_numbers as num
from . import dag
from .audit_instance import Instance
from .audit_numbers import NEG_INF, Malformed, Unevaluable
from .layer_stack import LayerStack
from .moments import StandardVector


def _structured(e, rows):
    """An input with an assumed structure (``structure`` on its class) gets values that have it:
    a symmetric matrix mirrors its upper triangle. An unknown structure is not evaluated."""
    structure = getattr(type(e), "structure", None)
    if structure is None:
        return rows
    if structure == "symmetric" and len(rows) == len(rows[0]):
        return [[rows[min(i, j)][max(i, j)] for j in range(len(rows))] for i in range(len(rows))]
    raise Unevaluable(f"an input with the structure {structure!r}")




class Evaluator:
    """Evaluate matrix and scalar expressions of a claim at one :class:`Instance`."""

    def __init__(self, instance: Instance, expectation=None):
        self.inst = instance
        self.cache: dict = {}
        self.shapes = dag.Shapes()
        #: how an expectation node is evaluated (set by the scalar audit); None: unsupported
        self.expectation = expectation
        #: inside a layer of a stack: the layer's input (its value) and its weights (their keys)
        self.inputs: dict = {}

    # environment: the instance's symbol values plus the bound indices, innermost last
    def lookup(self, s, bound: tuple):
        for sym, val in reversed(bound):
            if sym == s:
                return val
        if s in self.inst.base:
            return self.inst.base[s]
        raise Unevaluable(f"the symbol {s} has no value in the instance")

    def dim(self, e, bound: tuple, what: str) -> int:
        v = num.as_int(self.scalar(sp.sympify(e), bound), what)
        if v < 0:
            raise Unevaluable(f"{what} = {v} is negative")
        return v

    def matrix(self, e, bound: tuple = ()):
        key = (id(e), bound)  # by identity: comparing two equal deep trees built apart walks both
        if key in self.cache:
            return self.cache[key][1]
        out = self._matrix(e, bound)
        if isinstance(e, MatrixExpr):
            shape = self.shapes(e)
            want = (self.dim(shape[0], bound, "rows"), self.dim(shape[1], bound, "columns"))
            if mx.shape(out) != want and not (0 in want and not out):
                raise Malformed(f"{type(e).__name__} {sp.sstr(e)[:60]} evaluated to "
                                  f"{mx.shape(out)} but its shape is {want}")
        self.cache[key] = (e, out)
        return out

    def _matrix(self, e, bound):
        rule = AUDIT.find(e)
        if rule is None:
            raise Unevaluable(f"the audit cannot evaluate a {type(e).__name__} node")
        return rule(self, e, bound)

    def _feature_map(self, e, bound):
        """phi(X), row by row: each coordinate phi[c] of a row is the instance's value of the
        uninterpreted function phi[c] at that row's entries (drawn once per coordinate and row)."""
        X = self.matrix(e.arg, bound)
        fns = [coordinate(e.function, c) for c in range(self.dim(e.features, bound, "the number of features"))]
        if not all(num.is_exact(x) for row in X for x in row):
            raise Unevaluable(f"{e.function} at a row that is not rational")
        return [[self.inst.function_value(f, tuple(row)) for f in fns] for row in X]

    def _score(self, e, bound):
        Q, K = self.matrix(e.args[1], bound), self.matrix(e.args[2], bound)
        d = mx.shape(Q)[0]
        kind = self.inst.score_kind(e.function)
        if kind == 1:
            S = mx.matmul(mx.transpose(K), Q)
            return [[num.mul(x, x) for x in row] for row in S]
        M = self.inst.bilinear_form(e.function, d)
        if kind == 0:
            return mx.matmul(mx.matmul(mx.transpose(K), M), Q)
        M = [[Fraction(x, 4) for x in row] for row in M]  # exp of a small form: enclosures stay narrow
        return mx.elementwise(num.exp, mx.matmul(mx.matmul(mx.transpose(K), M), Q))

    def _slice(self, e, bound):
        A = self.matrix(e.parent, bound)
        (r0, r1, rs), (c0, c1, cs) = ([num.as_int(self.scalar(sp.sympify(x), bound), "a slice bound")
                                       for x in s] for s in (e.rowslice, e.colslice))
        r, c = mx.shape(A)
        if not (0 <= r0 <= r1 <= r and 0 <= c0 <= c1 <= c and rs > 0 and cs > 0):
            raise Unevaluable(f"the slice [{r0}:{r1}, {c0}:{c1}] of a {r}×{c} matrix")
        return [row[c0:c1:cs] for row in A[r0:r1:rs]]

    def _binder(self, e, bound):
        count = self.dim(e.count, bound, f"the count of {type(e).__name__}")
        terms = [self.matrix(e.body, bound + ((e.index, k),)) for k in range(1, count + 1)]
        if isinstance(e, HeadSum):
            if not terms:
                return mx.zeros(self.dim(e.rows, bound, "rows"), self.dim(e.cols, bound, "columns"))
            out = terms[0]
            for t in terms[1:]:
                out = mx.add(out, t)
            return out
        if isinstance(e, HeadStack):
            return mx.blocks([[t] for t in terms])
        if isinstance(e, HeadConcat):
            return mx.blocks([terms])
        if isinstance(e, BlockDiag):
            return mx.block_diag(terms)
        raise Unevaluable(f"the audit cannot evaluate a {type(e).__name__} binder")

    def _mask(self, e, bound):
        """CausalMask(m, n, o): key k visible to query j when k <= j + o; PaddingMask(m, n, L):
        when k <= L - 1 (0-based); visible entries are 0, the others -∞."""
        r, c = self.dim(e.args[0], bound, "rows"), self.dim(e.args[1], bound, "columns")
        if isinstance(e, CausalMask):
            o = num.as_int(self.scalar(e.args[2], bound), "the mask offset")
            return [[0 if k <= j + o else NEG_INF for j in range(c)] for k in range(r)]
        L = self.dim(e.args[2], bound, "the valid length")
        return [[0 if k <= L - 1 else NEG_INF for _ in range(c)] for k in range(r)]

    def _rows(self, e, bound):
        if isinstance(e, ScaleRows):
            d, X = self.matrix(e.args[0], bound), self.matrix(e.args[1], bound)
            return [[num.mul(d[i][0], x) for x in row] for i, row in enumerate(X)]
        X, v = self.matrix(e.args[0], bound), self.matrix(e.args[1], bound)
        op = num.sub if isinstance(e, ShiftRows) else num.div
        return [[op(x, v[i][0]) for x in row] for i, row in enumerate(X)]

    # -- scalars -------------------------------------------------------------------------------

    def scalar(self, e, bound: tuple = ()):  # noqa: C901 (one dispatch over node types)
        s = self.scalar
        if isinstance(e, sp.Integer):
            return int(e)
        if isinstance(e, sp.Rational):
            return Fraction(int(e.p), int(e.q))
        if e is sp.S.NegativeInfinity:
            return NEG_INF
        if e is sp.S.Infinity:
            return num.POS_INF
        if e is sp.pi:
            return +iv.pi  # the constant's enclosure at the working precision
        if e is sp.E:
            return +iv.e
        if isinstance(e, sp.Symbol):
            return self.lookup(e, bound)
        if isinstance(e, sp.Indexed) and not isinstance(e.base, StandardVector):  # random ones: the expectation's
            return self.inst.entry(e.base.label, tuple(num.as_int(s(i, bound), "an index") for i in e.indices))
        if isinstance(e, sp.Add):
            out = 0
            for a in e.args:
                out = num.add(out, s(a, bound))
            return out
        if isinstance(e, sp.Mul):
            out = 1
            for a in e.args:
                out = num.mul(out, s(a, bound))
            return out
        if isinstance(e, sp.Pow):
            return num.power(s(e.base, bound), s(e.exp, bound))
        if isinstance(e, sp.exp):
            return num.exp(s(e.args[0], bound))
        if isinstance(e, sp.log) and len(e.args) == 1:
            return num.log(s(e.args[0], bound))
        if isinstance(e, sp.cos):
            return num.cos(s(e.args[0], bound))
        if isinstance(e, sp.sin):
            return num.sin(s(e.args[0], bound))
        if isinstance(e, sp.floor):
            return num.floor(s(e.args[0], bound))
        if isinstance(e, sp.ceiling):
            return -num.floor(num.neg(s(e.args[0], bound)))
        if isinstance(e, sp.Mod):
            a, b = s(e.args[0], bound), s(e.args[1], bound)
            return num.sub(a, num.mul(b, num.floor(num.div(a, b))))
        if isinstance(e, sp.Abs):
            x = s(e.args[0], bound)
            return num.neg(x) if num.sign(x) < 0 else x
        if isinstance(e, (sp.Min, sp.Max)):
            vals = [s(a, bound) for a in e.args]
            pick = vals[0]
            for v in vals[1:]:
                c = num.compare(v, pick)
                if (c < 0) if isinstance(e, sp.Min) else (c > 0):
                    pick = v
            return pick
        if isinstance(e, sp.KroneckerDelta):
            return int(num.compare(s(e.args[0], bound), s(e.args[1], bound)) == 0)
        if isinstance(e, Visible):
            return 0 if num.compare(s(e.args[0], bound), s(e.args[1], bound)) <= 0 else NEG_INF
        if isinstance(e, PermIndex):
            return self._perm_index(e, bound)
        if isinstance(e, sp.Piecewise):
            for expr, cond in e.args:
                if self.truth(cond, bound):
                    return s(expr, bound)
            raise Unevaluable("no branch of a Piecewise holds")
        if isinstance(e, MatrixElement):
            A = self.matrix(e.parent, bound)
            i = num.as_int(s(e.i, bound), "a row index")
            j = num.as_int(s(e.j, bound), "a column index")
            r, c = mx.shape(A)
            if not (0 <= i < r and 0 <= j < c):
                raise Unevaluable(f"entry ({i}, {j}) of a {r}×{c} matrix")
            return A[i][j]
        if isinstance(e, sp.Determinant):
            return mx.determinant(self.matrix(e.arg, bound))
        if isinstance(e, sp.Trace):
            A = self.matrix(e.arg, bound)
            r, c = mx.shape(A)
            if r != c:
                raise Malformed(f"the trace of a {r}×{c} matrix")
            out = 0
            for k in range(r):
                out = num.add(out, A[k][k])
            return out
        if isinstance(e, (sp.Sum, sp.Product)):
            return self._big_operator(e, bound)
        if isinstance(e, AppliedUndef):
            args = tuple(s(a, bound) for a in e.args)
            if not all(num.is_exact(a) for a in args):
                raise Unevaluable(f"{e.func} at a non-rational argument")
            return self.inst.function_value(e.func, args)
        if self.expectation is not None and self.expectation.handles(e):
            return self.expectation.value(self, e, bound)
        raise Unevaluable(f"the audit cannot evaluate a {type(e).__name__} scalar: {sp.sstr(e)[:60]}")

    def truth(self, cond, bound) -> bool:
        if cond is sp.true or cond is True:
            return True
        if cond is sp.false or cond is False:
            return False
        if isinstance(cond, sp.And):
            return all(self.truth(c, bound) for c in cond.args)
        if isinstance(cond, sp.Or):
            return any(self.truth(c, bound) for c in cond.args)
        if isinstance(cond, sp.Not):
            return not self.truth(cond.args[0], bound)
        if isinstance(cond, sp.core.relational.Relational):
            c = num.compare(self.scalar(cond.lhs, bound), self.scalar(cond.rhs, bound))
            return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0, "==": c == 0, "!=": c != 0}[cond.rel_op]
        raise Unevaluable(f"the audit cannot decide the condition {cond}")

    def _perm_index(self, e, bound):
        sigma, n_expr, k_expr, inverse = e.args
        n = self.dim(n_expr, bound, "the size of a permutation")
        k = num.as_int(self.scalar(k_expr, bound), "a permutation argument")
        p = self.inst.permutation(sigma, n, str(sigma))
        if not 0 <= k < n:
            raise Unevaluable(f"σ({k}) outside 0..{n - 1}")
        return p.index(k) if int(inverse) else p[k]

    def _big_operator(self, e, bound):
        body, limits = e.function, e.limits

        def walk(k, bound):
            if k == len(limits):
                return self.scalar(body, bound)
            var, lo, hi = limits[k]
            a = num.as_int(self.scalar(lo, bound), "a lower limit")
            b = num.as_int(self.scalar(hi, bound), "an upper limit")
            out = 0 if isinstance(e, sp.Sum) else 1
            op = num.add if isinstance(e, sp.Sum) else num.mul
            for v in range(a, b + 1):
                out = op(out, walk(k + 1, bound + ((var, v),)))
            return out

        return walk(0, bound)


# -- the audit's rules, one per node class (the registry is the dispatch) ----------------------

AUDIT = Registry("the audit's evaluator", __name__)
rule = AUDIT.rule


@rule(sp.MatrixBase)
def _explicit(ev, e, bound):
    return [[ev.scalar(e[i, j], bound) for j in range(e.cols)] for i in range(e.rows)]


@rule(sp.MatrixSymbol)
def _symbol(ev, e, bound):
    if e in ev.inputs and not isinstance(ev.inputs[e], tuple):
        return ev.inputs[e]  # the input of a layer of a stack: the layer below's value
    r, c = ev.dim(e.rows, bound, "rows"), ev.dim(e.cols, bound, "columns")
    key, label = ev.inputs.get(e, (e, e.name))  # a layer's weight: the instance's draw for that layer
    return _structured(e, ev.inst.matrix(key, label, r, c))


@rule(LayerStack)
def _layer_stack(ev, e, bound):
    """The stack layer by layer at the depth the instance gives: layer l evaluates the layer map with
    its input bound to layer l - 1's value and each weight W drawn as the matrix W_l (the same draw in
    every stack of the claim), never by substituting into the expression."""
    depth = ev.dim(e.depth, bound, "the number of layers")
    value = ev.matrix(e.start, bound)
    for layer in range(1, depth + 1):
        inner = Evaluator(ev.inst, ev.expectation)
        named = {W: sp.MatrixSymbol(f"{W.name}_{layer}", *W.shape) for W in e.weights}  # W is W_l in layer l
        inner.inputs = {**ev.inputs, **{W: (Wl, Wl.name) for W, Wl in named.items()}, e.placeholder: value}
        value = inner.matrix(e.layer, bound)
    return value


@rule(FamilyMember)
def _member(ev, e, bound):
    k = ev.dim(e.index, bound, f"the index of {e.family_name}")
    if k < 1:
        raise Unevaluable(f"{e.family_name} at index {k} < 1")
    r, c = ev.dim(e.rows, bound, "rows"), ev.dim(e.cols, bound, "columns")
    return ev.inst.matrix((FamilyMember, e.args[0], e.args[2], e.args[3], k), f"{e.family_name}_{k}", r, c)


@rule(Permutation)
def _permutation(ev, e, bound):
    n = ev.dim(e.size, bound, "the size of a permutation")
    p = ev.inst.permutation(e.args[0], n, e.name)
    return [[int(i == p[j]) for j in range(n)] for i in range(n)]


@rule(Score)  # Apply too: a Score with a constant second argument
def _score_rule(ev, e, bound):
    return ev._score(e, bound)


@rule(sp.MatMul)
def _matmul(ev, e, bound):
    coeff, mats = 1, []
    for a in e.args:
        if isinstance(a, (MatrixExpr, sp.MatrixBase)):
            mats.append(ev.matrix(a, bound))
        else:
            coeff = num.mul(coeff, ev.scalar(a, bound))
    out = mats[0]
    for M in mats[1:]:
        out = mx.matmul(out, M)
    return out if num.is_exact(coeff) and coeff == 1 else mx.scale(coeff, out)


@rule(sp.MatAdd)
def _matadd(ev, e, bound):
    out = ev.matrix(e.args[0], bound)
    for a in e.args[1:]:
        out = mx.add(out, ev.matrix(a, bound))
    return out


@rule(sp.Transpose, sp.Adjoint)
def _transpose(ev, e, bound):
    return mx.transpose(ev.matrix(e.arg, bound))


@rule(Softmax)
def _softmax(ev, e, bound):
    return mx.softmax(ev.matrix(e.arg, bound), e.axis)


@rule(sp.HadamardProduct)
def _hadamard(ev, e, bound):
    out = ev.matrix(e.args[0], bound)
    for a in e.args[1:]:
        B = ev.matrix(a, bound)
        if mx.shape(B) != mx.shape(out):
            raise Malformed("a Hadamard product of different shapes")
        out = [[num.mul(x, y) for x, y in zip(ra, rb)] for ra, rb in zip(out, B)]
    return out


@rule(sp.HadamardPower)
def _hadamard_power(ev, e, bound):
    k = ev.scalar(e.exp, bound)
    return mx.elementwise(lambda x: num.power(x, k), ev.matrix(e.base, bound))


@rule(sp.BlockDiagMatrix)
def _block_diag_matrix(ev, e, bound):
    return mx.block_diag([ev.matrix(b, bound) for b in e.args])


@rule(sp.BlockMatrix)
def _block_matrix(ev, e, bound):
    B = e.blocks
    return mx.blocks([[ev.matrix(B[i, j], bound) for j in range(B.cols)] for i in range(B.rows)])


@rule(sp.Identity)
def _identity(ev, e, bound):
    n = ev.dim(e.rows, bound, "rows")
    return [[int(i == j) for j in range(n)] for i in range(n)]


@rule(sp.ZeroMatrix, sp.OneMatrix)
def _constant(ev, e, bound):
    r, c = ev.dim(e.rows, bound, "rows"), ev.dim(e.cols, bound, "columns")
    return mx.zeros(r, c, int(isinstance(e, sp.OneMatrix)))


@rule(sp.Inverse)
def _inverse(ev, e, bound):
    return mx.inverse(ev.matrix(e.arg, bound))


@rule(sp.MatPow)
def _matpow(ev, e, bound):
    A = ev.matrix(e.base, bound)
    # a power SymPy folded while the claim was built, M**(-1 + 1) from M⁻¹M, is evaluated as written
    # (M⁻¹ then M), so a singular M has no value here instead of the identity
    parts = e.exp.args if isinstance(e.exp, sp.Add) and e.exp.is_number else (e.exp,)
    n = mx.shape(A)[0]
    out = [[int(i == j) for j in range(n)] for i in range(n)]
    for part in parts:
        k = num.as_int(ev.scalar(part, bound), "a matrix power")
        power = [[int(i == j) for j in range(n)] for i in range(n)]
        for _ in range(abs(k)):
            power = mx.matmul(power, A)
        out = mx.matmul(out, mx.inverse(power) if k < 0 else power)
    return out


@rule(sp.MatrixSlice)
def _slice_rule(ev, e, bound):
    return ev._slice(e, bound)


@rule(HeadSum, HeadStack, HeadConcat, BlockDiag)
def _binder_rule(ev, e, bound):
    return ev._binder(e, bound)


@rule(CausalMask, PaddingMask)
def _mask_rule(ev, e, bound):
    return ev._mask(e, bound)


@rule(Exp)
def _exp(ev, e, bound):
    return mx.elementwise(num.exp, ev.matrix(e.args[0], bound))


@rule(Exp2)
def _exp2(ev, e, bound):
    return mx.elementwise(num.exp2, ev.matrix(e.args[0], bound))


@rule(Log)
def _log(ev, e, bound):
    return mx.elementwise(num.log, ev.matrix(e.args[0], bound))


@rule(ShiftRows, ScaleRows, DivideRows)
def _rows_rule(ev, e, bound):
    return ev._rows(e, bound)


@rule(RowOf)
def _row_of(ev, e, bound):
    X = ev.matrix(e.args[0], bound)
    k = num.as_int(ev.scalar(e.args[1], bound), "a row index")
    if not 0 <= k < len(X):
        raise Unevaluable(f"row {k} of a matrix with {len(X)} rows")
    return [list(X[k])]


@rule(FeatureMap)
def _feature_map_rule(ev, e, bound):
    return ev._feature_map(e, bound)
