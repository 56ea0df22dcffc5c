"""The audit's own interpreter: one walk over a claim's tree with an environment.

:class:`Instance` holds one random exact instance of a claim: integer values of the dimension
and scalar symbols (``base``), and, drawn lazily the first time the walk needs them, the integer
entries of every input matrix (keyed by the object: a MatrixSymbol, or a Family with the value of
its index, never by a printed name), a random permutation σ for each symbolic permutation, an
instantiation of each score function, and a small rational for each value of an uninterpreted
scalar function such as RoPE's θ(i).

:class:`Evaluator` walks the tree once. Its environment maps symbols (dimensions, scalars, and
the indices bound by binders and sums) to integers; a binder (HeadSum, HeadStack, HeadConcat,
BlockDiag) evaluates its body once per index value with the index bound in the environment,
never by substituting it. Matrices are lists of rows of the values of
:mod:`symattn.proof.audit_numbers`. It shares nothing with the strategies' evaluation
(``evaluate.py``) or substitution (``instances.py``): a node it does not know raises
:class:`~symattn.proof.audit_numbers.Unevaluable`, and the instance is skipped.
"""

from __future__ import annotations

import random
from fractions import Fraction

import sympy as sp
from mpmath import iv
from sympy.core.function import AppliedUndef
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr

from ..defs.heads import Binder, FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask, Visible
from ..defs.numeric_nodes import DivideRows, Exp, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import PermIndex, Permutation
from ..defs.rope import BlockDiag
from ..defs.score import Score
from ..defs.softmax import Softmax
from . import audit_numbers as num
from .audit_numbers import NEG_INF, Unevaluable

#: the score functions an instance can give an uninterpreted f(Q, K) (m × n from d × n, d × m)
SCORE_KINDS = ("bilinear Kᵀ M Q", "elementwise square of Kᵀ Q", "elementwise exp of Kᵀ M Q / 4")
ENTRIES = range(-3, 4)
#: the entries drawn once an instance showed that the claim takes logarithms of its inputs
POSITIVE_ENTRIES = range(1, 4)


def admissible(symbol, value: int) -> bool:
    """True when the integer ``value`` has every property declared on ``symbol`` (positive, even...)."""
    v = sp.Integer(value)
    for fact, held in symbol.assumptions0.items():
        got = getattr(v, f"is_{fact}", None)
        if got is not None and got is not held:
            return False
    return True


class Instance:
    """One random exact instance: symbol values and lazily drawn inputs (see the module docstring)."""

    def __init__(self, rng: random.Random, base: dict, kind: int = 0, entries=ENTRIES):
        self.rng, self.base, self.kind, self.entries = rng, dict(base), kind, entries
        self.matrices: dict = {}   # key -> (label, rows)
        self.perms: dict = {}      # (sigma symbol, n) -> (label, list σ)
        self.scores: dict = {}     # f -> kind
        self.bilinear: dict = {}   # (f, d) -> rows of M
        self.functions: dict = {}  # (function, argument values) -> Fraction

    def matrix(self, key, label: str, r: int, c: int):
        if key not in self.matrices:
            rows = [[self.rng.choice(self.entries) for _ in range(c)] for _ in range(r)]
            self.matrices[key] = (label, rows)
        label0, rows = self.matrices[key]
        if (len(rows), len(rows[0]) if rows else 0) != (r, c):
            raise Unevaluable(f"{label} is used with two shapes")
        return rows

    def permutation(self, sigma, n: int, label: str) -> list:
        key = (sigma, n)
        if key not in self.perms:
            p = list(range(n))
            self.rng.shuffle(p)
            if self.kind % 2:  # every other instance: an n-cycle, far from the involutions
                p = [p[(p.index(k) + 1) % n] for k in range(n)]
            self.perms[key] = (label, p)
        return self.perms[key][1]

    def score_kind(self, f) -> int:
        if f not in self.scores:
            self.scores[f] = (self.kind + len(self.scores)) % len(SCORE_KINDS)
        return self.scores[f]

    def bilinear_form(self, f, d: int):
        key = (f, d)
        if key not in self.bilinear:
            self.bilinear[key] = [[self.rng.choice((-1, 0, 1, 2)) for _ in range(d)] for _ in range(d)]
        return self.bilinear[key]

    def function_value(self, func, args: tuple) -> Fraction:
        key = (func, args)
        if key not in self.functions:
            self.functions[key] = Fraction(self.rng.randint(1, 6), self.rng.randint(1, 4))
        return self.functions[key]

    def drew_anything(self) -> bool:
        """True when the instance holds a random value (a symbol, an input, a permutation, a function)."""
        return bool(self.base or self.matrices or self.perms or self.scores or self.functions)

    def describe(self) -> list[str]:
        """The instance as text: symbol values, inputs, permutations, functions."""
        out = [", ".join(f"{s}={v}" for s, v in sorted(self.base.items(), key=lambda kv: str(kv[0])))
               or "no symbols"]
        out += [f"{label} = {rows}" for label, rows in self.matrices.values()]
        out += [f"{label}: σ = {p}" for label, p in self.perms.values()]
        out += [f"{f} instantiated as {SCORE_KINDS[k]}" for f, k in self.scores.items()]
        out += [f"  M_{f} ({d}×{d}) = {m}" for (f, d), m in self.bilinear.items()]
        out += [f"{func}{tuple(a)} = {v}" for (func, a), v in self.functions.items()]
        return out


# -- matrices as lists of rows ---------------------------------------------------------------

def _shape(M):
    return len(M), (len(M[0]) if M else 0)


def _zeros(r, c, value=0):
    return [[value] * c for _ in range(r)]


def _add(A, B):
    if _shape(A) != _shape(B):
        raise Unevaluable(f"adding {_shape(A)} and {_shape(B)} matrices")
    return [[num.add(a, b) for a, b in zip(ra, rb)] for ra, rb in zip(A, B)]


def _matmul(A, B):
    (r, k), (k2, c) = _shape(A), _shape(B)
    if k != k2:
        raise Unevaluable(f"multiplying {r}×{k} by {k2}×{c}")
    cols = list(zip(*B)) if B else []
    out = []
    for row in A:
        line = []
        for col in cols:
            acc = 0
            for a, b in zip(row, col):
                acc = num.add(acc, num.mul(a, b))
            line.append(acc)
        out.append(line if cols else [0] * c)
    return out


def _scale(s, A):
    return [[num.mul(s, a) for a in row] for row in A]


def _transpose(A):
    return [list(col) for col in zip(*A)] if A and A[0] else _zeros(_shape(A)[1], _shape(A)[0])


def _elementwise(fn, A):
    return [[fn(a) for a in row] for row in A]


def _inverse(A):
    """Gauss-Jordan over exact rationals; a singular or non-rational matrix is skipped."""
    n, c = _shape(A)
    if n != c:
        raise Unevaluable("the inverse of a non-square matrix")
    if not all(num.is_exact(a) for row in A for a in row):
        raise Unevaluable("the inverse of a matrix with irrational entries")
    M = [[Fraction(a) for a in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(A)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if M[r][col] != 0), None)
        if pivot is None:
            raise Unevaluable("a singular matrix has no inverse")
        M[col], M[pivot] = M[pivot], M[col]
        p = M[col][col]
        M[col] = [x / p for x in M[col]]
        for r in range(n):
            if r != col and M[r][col] != 0:
                f = M[r][col]
                M[r] = [x - f * y for x, y in zip(M[r], M[col])]
    return [row[n:] for row in M]


def _softmax(A, axis: int):
    """exp of every entry over its column sum (axis 0) or row sum (axis 1); exp(-∞) = 0."""
    if axis == 1:
        return _transpose(_softmax(_transpose(A), 0))
    E = _elementwise(num.exp, A)
    r, c = _shape(E)
    out = _zeros(r, c)
    for j in range(c):
        total = 0
        for i in range(r):
            total = num.add(total, E[i][j])
        if num.is_exact(total) and total == 0:
            raise Unevaluable("a softmax column with every entry masked")
        for i in range(r):
            out[i][j] = num.div(E[i][j], total)
    return out


def _blocks(grid):
    """A block matrix from a grid of evaluated blocks, checking that the blocks fit."""
    rows = []
    for line in grid:
        heights = {_shape(b)[0] for b in line}
        if len(heights) != 1:
            raise Unevaluable("blocks of one block row have different heights")
        for k in range(heights.pop()):
            rows.append([x for b in line for x in b[k]])
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise Unevaluable("block rows have different widths")
    return rows


def _block_diag(blocks):
    r = sum(_shape(b)[0] for b in blocks)
    c = sum(_shape(b)[1] for b in blocks)
    out, i0, j0 = _zeros(r, c), 0, 0
    for b in blocks:
        br, bc = _shape(b)
        for i in range(br):
            out[i0 + i][j0:j0 + bc] = b[i]
        i0, j0 = i0 + br, j0 + bc
    return out


def _structured(e, rows):
    """An input with an assumed structure (``structure`` on its class) gets values that have it:
    a symmetric matrix mirrors its upper triangle. An unknown structure is not evaluated."""
    structure = getattr(type(e), "structure", None)
    if structure is None:
        return rows
    if structure == "symmetric" and len(rows) == len(rows[0]):
        return [[rows[min(i, j)][max(i, j)] for j in range(len(rows))] for i in range(len(rows))]
    raise Unevaluable(f"an input with the structure {structure!r}")


# -- the walk ------------------------------------------------------------------------------------

class Evaluator:
    """Evaluate matrix and scalar expressions of a claim at one :class:`Instance`."""

    def __init__(self, instance: Instance, expectation=None):
        self.inst = instance
        self.cache: dict = {}
        #: how an expectation node is evaluated (set by the scalar audit); None: unsupported
        self.expectation = expectation

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
        key = (e, bound)
        if key in self.cache:
            return self.cache[key]
        out = self._matrix(e, bound)
        if isinstance(e, MatrixExpr):
            want = (self.dim(e.shape[0], bound, "rows"), self.dim(e.shape[1], bound, "columns"))
            if _shape(out) != want and not (0 in want and not out):
                raise Unevaluable(f"{type(e).__name__} {sp.sstr(e)[:60]} evaluated to "
                                  f"{_shape(out)} but its shape is {want}")
        self.cache[key] = out
        return out

    def _matrix(self, e, bound):  # noqa: C901 (one dispatch over node types)
        m = self.matrix
        if isinstance(e, sp.MatrixBase):
            return [[self.scalar(e[i, j], bound) for j in range(e.cols)] for i in range(e.rows)]
        if isinstance(e, sp.MatrixSymbol):
            r, c = self.dim(e.rows, bound, "rows"), self.dim(e.cols, bound, "columns")
            return _structured(e, self.inst.matrix(e, e.name, r, c))
        if isinstance(e, FamilyMember):
            k = self.dim(e.index, bound, f"the index of {e.family_name}")
            if k < 1:
                raise Unevaluable(f"{e.family_name} at index {k} < 1")
            r, c = self.dim(e.rows, bound, "rows"), self.dim(e.cols, bound, "columns")
            return self.inst.matrix((FamilyMember, e.args[0], e.args[2], e.args[3], k),
                                    f"{e.family_name}_{k}", r, c)
        if isinstance(e, Permutation):
            n = self.dim(e.size, bound, "the size of a permutation")
            p = self.inst.permutation(e.args[0], n, e.name)
            return [[int(i == p[j]) for j in range(n)] for i in range(n)]
        if isinstance(e, Score):
            return self._score(e, bound)
        if isinstance(e, sp.MatMul):
            coeff, mats = 1, []
            for a in e.args:
                if isinstance(a, (MatrixExpr, sp.MatrixBase)):
                    mats.append(m(a, bound))
                else:
                    coeff = num.mul(coeff, self.scalar(a, bound))
            out = mats[0]
            for M in mats[1:]:
                out = _matmul(out, M)
            return out if num.is_exact(coeff) and coeff == 1 else _scale(coeff, out)
        if isinstance(e, sp.MatAdd):
            out = m(e.args[0], bound)
            for a in e.args[1:]:
                out = _add(out, m(a, bound))
            return out
        if isinstance(e, (sp.Transpose, sp.Adjoint)):
            return _transpose(m(e.arg, bound))
        if isinstance(e, Softmax):
            return _softmax(m(e.arg, bound), e.axis)
        if isinstance(e, sp.HadamardProduct):
            out = m(e.args[0], bound)
            for a in e.args[1:]:
                B = m(a, bound)
                if _shape(B) != _shape(out):
                    raise Unevaluable("a Hadamard product of different shapes")
                out = [[num.mul(x, y) for x, y in zip(ra, rb)] for ra, rb in zip(out, B)]
            return out
        if isinstance(e, sp.HadamardPower):
            k = self.scalar(e.exp, bound)
            return _elementwise(lambda x: num.power(x, k), m(e.base, bound))
        if isinstance(e, sp.BlockDiagMatrix):
            return _block_diag([m(b, bound) for b in e.args])
        if isinstance(e, sp.BlockMatrix):
            B = e.blocks
            return _blocks([[m(B[i, j], bound) for j in range(B.cols)] for i in range(B.rows)])
        if isinstance(e, sp.Identity):
            n = self.dim(e.rows, bound, "rows")
            return [[int(i == j) for j in range(n)] for i in range(n)]
        if isinstance(e, (sp.ZeroMatrix, sp.OneMatrix)):
            r, c = self.dim(e.rows, bound, "rows"), self.dim(e.cols, bound, "columns")
            return _zeros(r, c, int(isinstance(e, sp.OneMatrix)))
        if isinstance(e, sp.Inverse):
            return _inverse(m(e.arg, bound))
        if isinstance(e, sp.MatPow):
            k = num.as_int(self.scalar(e.exp, bound), "a matrix power")
            A = m(e.base, bound)
            n = _shape(A)[0]
            out = [[int(i == j) for j in range(n)] for i in range(n)]
            for _ in range(abs(k)):
                out = _matmul(out, A)
            return _inverse(out) if k < 0 else out
        if isinstance(e, sp.MatrixSlice):
            return self._slice(e, bound)
        if isinstance(e, Binder):
            return self._binder(e, bound)
        if isinstance(e, (CausalMask, PaddingMask)):
            return self._mask(e, bound)
        if isinstance(e, Exp):
            return _elementwise(num.exp, m(e.args[0], bound))
        if isinstance(e, Log):
            return _elementwise(num.log, m(e.args[0], bound))
        if isinstance(e, (ShiftRows, ScaleRows, DivideRows)):
            return self._rows(e, bound)
        if isinstance(e, RowOf):
            X = m(e.args[0], bound)
            k = num.as_int(self.scalar(e.args[1], bound), "a row index")
            if not 0 <= k < len(X):
                raise Unevaluable(f"row {k} of a matrix with {len(X)} rows")
            return [list(X[k])]
        raise Unevaluable(f"the audit cannot evaluate a {type(e).__name__} node")

    def _score(self, e, bound):
        Q, K = self.matrix(e.args[1], bound), self.matrix(e.args[2], bound)
        d = _shape(Q)[0]
        kind = self.inst.score_kind(e.function)
        if kind == 1:
            S = _matmul(_transpose(K), Q)
            return [[num.mul(x, x) for x in row] for row in S]
        M = self.inst.bilinear_form(e.function, d)
        if kind == 0:
            return _matmul(_matmul(_transpose(K), M), Q)
        M = [[Fraction(x, 4) for x in row] for row in M]  # exp of a small form: enclosures stay narrow
        return _elementwise(num.exp, _matmul(_matmul(_transpose(K), M), Q))

    def _slice(self, e, bound):
        A = self.matrix(e.parent, bound)
        (r0, r1, rs), (c0, c1, cs) = ([num.as_int(self.scalar(sp.sympify(x), bound), "a slice bound")
                                       for x in s] for s in (e.rowslice, e.colslice))
        r, c = _shape(A)
        if not (0 <= r0 <= r1 <= r and 0 <= c0 <= c1 <= c and rs > 0 and cs > 0):
            raise Unevaluable(f"the slice [{r0}:{r1}, {c0}:{c1}] of a {r}×{c} matrix")
        return [row[c0:c1:cs] for row in A[r0:r1:rs]]

    def _binder(self, e, bound):
        count = self.dim(e.count, bound, f"the count of {type(e).__name__}")
        terms = [self.matrix(e.body, bound + ((e.index, k),)) for k in range(1, count + 1)]
        if isinstance(e, HeadSum):
            if not terms:
                return _zeros(self.dim(e.rows, bound, "rows"), self.dim(e.cols, bound, "columns"))
            out = terms[0]
            for t in terms[1:]:
                out = _add(out, t)
            return out
        if isinstance(e, HeadStack):
            return _blocks([[t] for t in terms])
        if isinstance(e, HeadConcat):
            return _blocks([terms])
        if isinstance(e, BlockDiag):
            return _block_diag(terms)
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
            r, c = _shape(A)
            if not (0 <= i < r and 0 <= j < c):
                raise Unevaluable(f"entry ({i}, {j}) of a {r}×{c} matrix")
            return A[i][j]
        if isinstance(e, sp.Trace):
            A = self.matrix(e.arg, bound)
            out = 0
            for k in range(min(_shape(A))):
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
