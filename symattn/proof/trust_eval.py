"""Evaluate instances of the trust base by the definitions alone, exactly or in float64.

The checker of the trust base (:mod:`symattn.proof.trust_check`) must not lean on the rules it
checks, so this module evaluates a matrix expression at concrete sizes straight from the
definitions of its nodes, without ``doit``, ``_eval_transpose``, ``block_collapse`` or the
evaluator that the counterexample search uses:

    (AB)_ij = Σ_k A_ik B_kj,   (Aᵀ)_ij = A_ji,   Softmax(X, 0)_ij = exp(X_ij) / Σ_k exp(X_kj),
    Σ_h e_h, [e_1; ...; e_H], [e_1 ... e_H], diag(B_1, ..., B_p) term by term,
    masks: 0 where visible, -oo elsewhere,   (P_σ)_ij = [i = σ(j)],
    Exp(X)_ij = exp(X_ij), Exp2(X)_ij = 2^(X_ij) = exp(X_ij ln 2), Log(X)_ij = log(X_ij),
    ShiftRows(X, c)_ij = X_ij - c_i,
    ScaleRows(d, X)_ij = d_i X_ij, DivideRows(X, d)_ij = X_ij / d_i, RowOf(X, k) = row k of X.

Every leaf (a MatrixSymbol or a family member) gets its own value on first use, keyed by the
object itself, never by its printed name: fresh Dummy entries (``exact``) or standard normal
float64 entries (``float``). Scalars (entries of explicit matrices, sums, σ(k), entries of
leaves) are written out over their concrete ranges and evaluated the same way.

Exact evaluation first tries ``poly`` mode: each entry of a leaf is a generator of a sparse
polynomial (:class:`Poly`, exact coefficients), which is much faster than SymPy expressions and
is exact as well; an instance with exp, Softmax or a mask (not a polynomial) raises
:class:`NotPolynomial` there and is evaluated with SymPy expressions (``exact``) instead.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr

from ..defs.feature_map import FeatureMap
from ..defs.heads import Binder, FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import PermIndex, Permutation
from ..defs.rope import BlockDiag
from ..defs.score import Score
from ..defs.softmax import Softmax
from ..registry import Registry


class NotEvaluable(Exception):
    """An instance holds a node or a symbol that has no concrete value."""


class NotPolynomial(Exception):
    """The instance leaves the polynomials (exp, Softmax, a mask): evaluate it with SymPy instead."""


_GENERATORS = itertools.count()


def _coeff(c):
    c = sp.sympify(c)
    return c if c.is_Rational else sp.expand(c)


class Poly:
    """A sparse polynomial with exact coefficients in generators made by :meth:`generator`.

    ``terms`` maps a monomial (a sorted tuple of (generator id, exponent)) to a nonzero coefficient.
    """

    __slots__ = ("terms",)

    def __init__(self, terms: dict):
        self.terms = terms

    @classmethod
    def const(cls, c):
        c = _coeff(c)
        return cls({} if c == 0 else {(): c})

    @classmethod
    def generator(cls):
        return cls({((next(_GENERATORS), 1),): sp.Integer(1)})

    @staticmethod
    def of(x):
        return x if isinstance(x, Poly) else Poly.const(x)

    def __add__(self, other):
        other = Poly.of(other)
        out = dict(self.terms)
        for m, c in other.terms.items():
            v = _coeff(out.get(m, 0) + c)
            if v == 0:
                out.pop(m, None)
            else:
                out[m] = v
        return Poly(out)

    __radd__ = __add__

    def __neg__(self):
        return Poly({m: -c for m, c in self.terms.items()})

    def __sub__(self, other):
        return self + (-Poly.of(other))

    def __rsub__(self, other):
        return Poly.of(other) - self

    def __mul__(self, other):
        other = Poly.of(other)
        out: dict = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                exps = dict(m1)
                for g, e in m2:
                    exps[g] = exps.get(g, 0) + e
                m = tuple(sorted(exps.items()))
                v = _coeff(out.get(m, 0) + c1 * c2)
                if v == 0:
                    out.pop(m, None)
                else:
                    out[m] = v
        return Poly(out)

    __rmul__ = __mul__

    def __pow__(self, k: int):
        out = Poly.const(1)
        for _ in range(int(k)):
            out = out * self
        return out

    def __eq__(self, other):
        if isinstance(other, (int, sp.Basic, Poly)):
            return (self - Poly.of(other)).terms == {}
        return NotImplemented

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items(), key=str)))

    def __repr__(self):
        return f"Poly({len(self.terms)} terms)"


def _concrete(x, inp: "Inputs", env: dict):
    """An index expression with the bound indices of ``env`` and σ(k) replaced: an Integer."""
    x = _settle_perm_indices(sp.sympify(x).xreplace(env), inp)
    if not x.is_Integer:
        raise NotEvaluable(f"the index {sp.sstr(x)} is not concrete")
    return int(x)


def _to_poly(x, inp: "Inputs", env: dict) -> Poly:
    """A scalar SymPy expression as a :class:`Poly` (leaf entries as generators); ``env`` holds the
    values of the summation indices bound around ``x`` (sums are expanded without rebuilding them)."""
    if isinstance(x, MatrixElement):
        parent = x.parent.xreplace(env) if env else x.parent
        return Poly.of(matrix(parent, inp)[_concrete(x.i, inp, env), _concrete(x.j, inp, env)])
    if isinstance(x, sp.Sum):
        limits = list(x.limits)
        k, lo, hi = limits[-1]
        rest = sp.Sum(x.function, *limits[:-1]) if len(limits) > 1 else x.function
        out = Poly.const(0)
        for v in range(_concrete(lo, inp, env), _concrete(hi, inp, env) + 1):
            out = out + _to_poly(rest, inp, {**env, k: sp.Integer(v)})
        return out
    if isinstance(x, sp.Add):
        out = Poly.const(0)
        for a in x.args:
            out = out + _to_poly(a, inp, env)
        return out
    if isinstance(x, sp.Mul):
        out = Poly.const(1)
        for a in x.args:
            out = out * _to_poly(a, inp, env)
        return out
    if isinstance(x, sp.Pow) and x.exp.is_Integer and x.exp >= 0:
        return _to_poly(x.base, inp, env) ** int(x.exp)
    if x.has(sp.exp, sp.E, sp.oo, -sp.oo, sp.zoo, sp.nan):
        raise NotPolynomial(sp.sstr(x)[:60])
    if x.is_number:
        return Poly.const(x)
    y = _settle_perm_indices(x.xreplace(env), inp)
    if y.is_number and not y.has(sp.exp, sp.E, sp.oo, -sp.oo, sp.zoo, sp.nan):
        return Poly.const(y)  # a delta or a floor of concrete indices
    raise NotPolynomial(f"{type(x).__name__} is not a polynomial operation")


def _to_expr(x, inp: "Inputs", env: dict):
    """A scalar SymPy expression with leaf entries, σ(k) and the summation indices of ``env`` replaced
    by their values, sums written out: one pass, each node rebuilt from its evaluated arguments."""
    if isinstance(x, MatrixElement):
        parent = x.parent.xreplace(env) if env else x.parent
        return matrix(parent, inp)[_concrete(x.i, inp, env), _concrete(x.j, inp, env)]
    if isinstance(x, sp.Sum):
        limits = list(x.limits)
        k, lo, hi = limits[-1]
        rest = sp.Sum(x.function, *limits[:-1]) if len(limits) > 1 else x.function
        return sp.Add(*[_to_expr(rest, inp, {**env, k: sp.Integer(v)})
                        for v in range(_concrete(lo, inp, env), _concrete(hi, inp, env) + 1)])
    if isinstance(x, PermIndex):
        return sp.Integer(_concrete(x, inp, env))
    if x.is_Atom:
        return env.get(x, x)
    args = [_to_expr(a, inp, env) for a in x.args]
    return x.func(*args) if any(a is not b for a, b in zip(args, x.args)) else x


def _to_float(x, inp: "Inputs", env: dict) -> float:
    """A scalar SymPy expression in float64, summation indices bound in ``env`` (as :func:`_to_poly`)."""
    if isinstance(x, MatrixElement):
        parent = x.parent.xreplace(env) if env else x.parent
        return float(matrix(parent, inp)[_concrete(x.i, inp, env), _concrete(x.j, inp, env)])
    if isinstance(x, sp.Sum):
        limits = list(x.limits)
        k, lo, hi = limits[-1]
        rest = sp.Sum(x.function, *limits[:-1]) if len(limits) > 1 else x.function
        return math.fsum(_to_float(rest, inp, {**env, k: sp.Integer(v)})
                         for v in range(_concrete(lo, inp, env), _concrete(hi, inp, env) + 1))
    if isinstance(x, sp.Add):
        return math.fsum(_to_float(a, inp, env) for a in x.args)
    if isinstance(x, sp.Mul):
        out = 1.0
        for a in x.args:
            out *= _to_float(a, inp, env)
        return out
    if isinstance(x, sp.Pow):
        return _to_float(x.base, inp, env) ** _to_float(x.exp, inp, env)
    if isinstance(x, sp.exp):
        return math.exp(_to_float(x.args[0], inp, env))
    if isinstance(x, sp.log):
        return math.log(_to_float(x.args[0], inp, env))
    if x.is_number:
        return float(x)
    y = _settle_perm_indices(x.xreplace(env), inp)
    if y.is_number:
        return float(y)
    if y != x:
        return _to_float(y, inp, {})
    raise NotEvaluable(f"no float value for {sp.sstr(x)[:80]}")


def _int(d) -> int:
    d = sp.sympify(d)
    if not d.is_Integer:
        raise NotEvaluable(f"the size {d} is not a concrete integer")
    return int(d)


class Inputs:
    """Values of the leaves and permutations of one instance, made on first use.

    ``mode`` is ``"exact"`` (each entry a fresh real Dummy), ``"poly"`` (each entry a fresh
    generator of :class:`Poly`) or ``"float"`` (standard normal float64 entries from ``rng``).
    ``perms`` maps a permutation's symbol σ to the tuple (σ(0), ..., σ(n-1)).
    """

    def __init__(self, mode: str, rng=None, perms: dict | None = None, integers: bool = False):
        self.mode = mode
        self.integers = integers
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.perms = dict(perms or {})
        self._values: dict = {}

    def leaf(self, x):
        if x not in self._values:
            if isinstance(x, FamilyMember) and not x.index.is_Integer:
                raise NotEvaluable(f"the family member {sp.sstr(x)} has a symbolic index")
            r, c = _int(x.shape[0]), _int(x.shape[1])
            structure = getattr(x, "structure", None)
            if structure is not None:
                self._values[x] = self._structured(x, structure, r, c)
            elif self.mode == "exact" and self.integers:
                self._values[x] = sp.ImmutableMatrix(self.rng.integers(-3, 4, size=(r, c)).tolist())
            elif self.mode == "exact":
                self._values[x] = sp.ImmutableMatrix(
                    r, c, lambda i, j: sp.Dummy("x", real=True, finite=True))
            elif self.mode == "poly":
                self._values[x] = _table(r, c, lambda i, j: Poly.generator(), "poly")
            else:
                self._values[x] = self.rng.standard_normal((r, c))
        return self._values[x]

    def _structured(self, x, structure: str, r: int, c: int):
        """Values with the structure the leaf assumes: symmetric means one value per pair i <= j."""
        if structure != "symmetric" or r != c:
            raise NotEvaluable(f"the checker has no values for a {structure} leaf {sp.sstr(x)}")
        free = Inputs(self.mode, self.rng)
        upper = free.leaf(sp.MatrixSymbol("upper", r, c))
        return _table(r, c, lambda i, j: upper[min(i, j), max(i, j)], self.mode)

    def sigma(self, s, n: int) -> tuple:
        if s not in self.perms:
            raise NotEvaluable(f"no permutation given for {s}")
        p = tuple(self.perms[s])
        if len(p) != n or sorted(p) != list(range(n)):
            raise NotEvaluable(f"{p} is not a permutation of 0..{n - 1}")
        return p


def substitute_free(x, k, v):
    """x with the free occurrences of the index k replaced by v (a Sum that binds k again keeps
    its own k in its body and in the limits inside that binding)."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return v if x == k else x
    if not any(k in s.variables for s in x.atoms(sp.Sum)):
        return x.xreplace({k: v})
    if isinstance(x, sp.Sum):
        limits = list(x.limits)
        body = x.function
        new = []
        rebound = False
        for var, lo, hi in reversed(limits):  # outermost first
            if rebound:
                new.append((var, lo, hi))
                continue
            new.append((var, substitute_free(lo, k, v), substitute_free(hi, k, v)))
            rebound = var == k
        if not rebound:
            body = substitute_free(body, k, v)
        return sp.Sum(body, *reversed(new))
    args = [substitute_free(a, k, v) for a in x.args]
    return x.func(*args) if args != list(x.args) else x


def instantiate(x, index, value):
    """``x`` with the bound ``index`` of a binder given the integer ``value`` in its body: written
    here, not taken from the nodes, so that the check does not lean on their substitution. A binder
    or Sum inside that binds the same index keeps its own (only its range is instantiated)."""
    if x == index:
        return value
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    if isinstance(x, Binder) and x.index == index:
        count = instantiate(x.count, index, value)
        return x if count == x.count else x.func(x.body, x.index, count)
    if isinstance(x, sp.Sum):
        return substitute_free(x, index, value)
    args = [instantiate(a, index, value) for a in x.args]
    if all(a is b for a, b in zip(args, x.args)):
        return x
    return x.func(*args)


def write_out(x):
    """Every Sum with concrete limits written out term by term (outermost limit first)."""
    if not isinstance(x, sp.Basic) or x.is_Atom:
        return x
    if isinstance(x, sp.Sum):
        limits = list(x.limits)
        k, lo, hi = limits[-1]
        rest = sp.Sum(x.function, *limits[:-1]) if len(limits) > 1 else x.function
        lo, hi = _int(write_out(lo)), _int(write_out(hi))
        return sp.Add(*[write_out(substitute_free(rest, k, sp.Integer(v))) for v in range(lo, hi + 1)])
    args = [write_out(a) for a in x.args]
    return x.func(*args) if args != list(x.args) else x


def _settle_perm_indices(x, inp: Inputs):
    for _ in range(16):
        found = [p for p in x.atoms(PermIndex) if p.args[2].is_Integer]
        if not found:
            return x
        reps = {}
        for p in found:
            s, n, k, inv = p.args
            sig = inp.sigma(s, _int(n))
            kk = _int(k)
            reps[p] = sp.Integer(sig.index(kk) if int(inv) else sig[kk])
        x = x.xreplace(reps)
    return x


def scalar(x, inp: Inputs):
    """The value of a scalar expression: sums written out, σ(k) and leaf entries substituted."""
    if inp.mode == "poly":
        return _to_poly(sp.sympify(x), inp, {})
    if inp.mode == "float":
        return _to_float(sp.sympify(x), inp, {})
    x = _to_expr(sp.sympify(x), inp, {})
    if x.atoms(MatrixElement) or x.atoms(PermIndex):
        raise NotEvaluable(f"an entry with a symbolic index is left in {sp.sstr(x)[:120]}")
    return x


def _exact_softmax(X: sp.ImmutableMatrix, axis: int):
    E = X.applyfunc(sp.exp)
    if axis == 0:
        sums = [sp.Add(*[E[k, j] for k in range(E.rows)]) for j in range(E.cols)]
        return sp.ImmutableMatrix(E.rows, E.cols, lambda i, j: E[i, j] / sums[j])
    sums = [sp.Add(*[E[i, k] for k in range(E.cols)]) for i in range(E.rows)]
    return sp.ImmutableMatrix(E.rows, E.cols, lambda i, j: E[i, j] / sums[i])


def _float_softmax(X, axis: int):
    E = np.exp(X - np.max(X, axis=axis, keepdims=True))
    return E / E.sum(axis=axis, keepdims=True)


def _table(r, c, f, mode):
    if mode == "exact":
        return sp.ImmutableMatrix(r, c, f)
    poly = mode == "poly"
    out = np.empty((r, c), dtype=object if poly else float)
    for i in range(r):
        for j in range(c):
            out[i, j] = Poly.of(f(i, j)) if poly else float(f(i, j))
    return out


def _stack(rows, mode):
    """A block matrix of evaluated blocks (a list of rows of blocks)."""
    if mode == "exact":
        return sp.ImmutableMatrix(sp.Matrix.vstack(*[sp.Matrix.hstack(*row) for row in rows]))
    dtype = object if mode == "poly" else float
    return np.block([[np.asarray(b, dtype=dtype) for b in row] for row in rows])


def matrix(e, inp: Inputs):
    """The explicit value of the matrix expression ``e`` (ImmutableMatrix or float64 array)."""
    rule = TRUST_EVAL.find(e)
    if rule is None:
        raise NotEvaluable(f"no definition to evaluate a {type(e).__name__} node: {sp.sstr(e)[:80]}")
    return rule(e, inp)


# -- the trust base's rules, one per node class (the registry is the dispatch) -----------------

TRUST_EVAL = Registry("the trust base's evaluator", __name__)
rule = TRUST_EVAL.rule
TRUST_EVAL.omit(Score, "no rule of the trust base states a claim with an uninterpreted score function or map "
                       "(Apply is a Score): the rules' instances are explicit matrices")
TRUST_EVAL.omit(FeatureMap, "no rule of the trust base states a claim with an uninterpreted feature map")


@rule(sp.MatrixSymbol, FamilyMember)
def _leaf(e, inp):
    return inp.leaf(e)


@rule(sp.MatrixBase)
def _explicit(e, inp):
    return _table(e.rows, e.cols, lambda i, j: scalar(e[i, j], inp), inp.mode)


@rule(sp.MatMul)
def _matmul(e, inp):
    exact = inp.mode == "exact"
    coeff, mats = e.as_coeff_matrices()
    out = matrix(mats[0], inp)
    for m in mats[1:]:
        out = out * matrix(m, inp) if exact else out @ matrix(m, inp)
    c = scalar(coeff, inp)
    return out if c == 1 else (out * c)


@rule(sp.MatAdd)
def _matadd(e, inp):
    parts = [matrix(a, inp) for a in e.args]
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


@rule(sp.Transpose)
def _transpose(e, inp):
    return matrix(e.arg, inp).T


@rule(Softmax)
def _softmax(e, inp):
    if inp.mode == "poly":
        raise NotPolynomial("Softmax")
    X = matrix(e.arg, inp)
    return _exact_softmax(X, e.axis) if inp.mode == "exact" else _float_softmax(X, e.axis)


@rule(sp.Identity, sp.ZeroMatrix, sp.OneMatrix)
def _constant(e, inp):
    r, c = _int(e.rows), _int(e.cols)
    value = {sp.Identity: lambda i, j: int(i == j), sp.ZeroMatrix: lambda i, j: 0,
             sp.OneMatrix: lambda i, j: 1}[type(e)]
    return _table(r, c, lambda i, j: sp.Integer(value(i, j)), inp.mode)


@rule(sp.HadamardProduct)
def _hadamard(e, inp):
    parts = [matrix(a, inp) for a in e.args]
    out = parts[0]
    for p in parts[1:]:
        out = out.multiply_elementwise(p) if inp.mode == "exact" else out * p
    return out


@rule(HeadSum, HeadStack, HeadConcat)
def _over_heads(e, inp):
    terms = [matrix(instantiate(e.body, e.index, sp.Integer(k)), inp) for k in range(1, _int(e.count) + 1)]
    if isinstance(e, HeadSum):
        out = terms[0]
        for t in terms[1:]:
            out = out + t
        return out
    return _stack([[t] for t in terms] if isinstance(e, HeadStack) else [terms], inp.mode)


@rule(BlockDiag)
def _block_diag(e, inp):
    blocks = [matrix(instantiate(e.body, e.index, sp.Integer(k)), inp) for k in range(1, _int(e.count) + 1)]
    return _block_diagonal(blocks, inp.mode)


@rule(sp.BlockDiagMatrix)
def _block_diag_matrix(e, inp):
    return _block_diagonal([matrix(b, inp) for b in e.args], inp.mode)


@rule(sp.BlockMatrix)
def _block_matrix(e, inp):
    B = e.blocks
    return _stack([[matrix(B[i, j], inp) for j in range(B.cols)] for i in range(B.rows)], inp.mode)


@rule(sp.MatrixSlice)
def _slice(e, inp):
    (r0, r1, rs), (c0, c1, cs) = e.rowslice, e.colslice
    P = matrix(e.parent, inp)
    rows = range(_int(r0), _int(r1), _int(rs))
    cols = range(_int(c0), _int(c1), _int(cs))
    return _table(len(rows), len(cols), lambda i, j: sp.sympify(P[rows[i], cols[j]]), inp.mode) \
        if inp.mode == "exact" else np.asarray(P)[_int(r0):_int(r1):_int(rs), _int(c0):_int(c1):_int(cs)]


@rule(CausalMask, PaddingMask)
def _mask(e, inp):
    if inp.mode == "poly":
        raise NotPolynomial("a mask of -oo entries")
    m, n = _int(e.shape[0]), _int(e.shape[1])
    if isinstance(e, CausalMask):
        o = _int(e.offset)
        visible = lambda k, j: k <= j + o  # noqa: E731
    else:
        L = _int(e.length)
        visible = lambda k, j: k <= L - 1  # noqa: E731
    inf = sp.S.NegativeInfinity if inp.mode == "exact" else -np.inf
    return _table(m, n, lambda k, j: sp.Integer(0) if visible(k, j) else inf, inp.mode)


@rule(Permutation)
def _permutation(e, inp):
    n = _int(e.size)
    sig = inp.sigma(e.args[0], n)
    return _table(n, n, lambda i, j: sp.Integer(int(i == sig[j])), inp.mode)


@rule(Exp, Exp2, Log, ShiftRows, ScaleRows, DivideRows, RowOf)
def _numeric_node(e, inp: Inputs):
    """The elementwise and row-wise nodes of the numeric kernels, entry by entry."""
    mode = inp.mode
    if mode == "poly" and isinstance(e, (Exp, Exp2, Log, DivideRows)):
        raise NotPolynomial(type(e).__name__)
    if isinstance(e, RowOf):
        X, k = matrix(e.args[0], inp), _int(e.args[1])
        return _table(1, X.shape[1], lambda i, j: X[k, j], mode)
    if isinstance(e, (Exp, Log)):
        X = matrix(e.args[0], inp)
        if mode == "exact":
            f = sp.exp if isinstance(e, Exp) else sp.log
        else:
            f = math.exp if isinstance(e, Exp) else math.log
        return _table(X.shape[0], X.shape[1], lambda i, j: f(X[i, j]), mode)
    if isinstance(e, Exp2):  # exactly exp(x ln 2), the definition of 2^x; in float64 Python's 2.0 ** x
        X = matrix(e.args[0], inp)
        if mode == "exact":
            return _table(X.shape[0], X.shape[1], lambda i, j: sp.exp(X[i, j] * sp.log(2)), mode)
        return _table(X.shape[0], X.shape[1], lambda i, j: 2.0 ** X[i, j], mode)
    if isinstance(e, ScaleRows):
        d, X = matrix(e.args[0], inp), matrix(e.args[1], inp)
        return _table(X.shape[0], X.shape[1], lambda i, j: d[i, 0] * X[i, j], mode)
    X, c = matrix(e.args[0], inp), matrix(e.args[1], inp)
    if isinstance(e, ShiftRows):
        return _table(X.shape[0], X.shape[1], lambda i, j: X[i, j] - c[i, 0], mode)
    return _table(X.shape[0], X.shape[1], lambda i, j: X[i, j] / c[i, 0], mode)


def _block_diagonal(blocks, mode):
    rows = []
    for r, b in enumerate(blocks):
        row = []
        for c, other in enumerate(blocks):
            shape = (b.shape[0], other.shape[1])
            zero = sp.zeros(*shape) if mode == "exact" else _table(*shape, lambda i, j: 0, mode)
            row.append(b if r == c else zero)
        rows.append(row)
    return _stack(rows, mode)


def value(x, inp: Inputs):
    """A matrix or a scalar expression, evaluated (a float64 array is already a value)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (MatrixExpr, sp.MatrixBase)):
        return matrix(x, inp)
    return scalar(x, inp)


def _atomize_exp(x, table: dict):
    """Each exp(t) of a term t (after exp(a + b) = exp(a) exp(b)) replaced by a positive Dummy."""

    def repl(arg):
        out = sp.Integer(1)
        for t in sp.Add.make_args(sp.expand(arg)):
            if t not in table:
                table[t] = sp.Dummy("e", positive=True)
            out *= table[t]
        return out

    return x.replace(sp.exp, repl)


def _is_exact_zero(d) -> bool:
    """True only when ``d`` is exactly 0: rational cancellation with the exp atoms as independent
    positive symbols (which can miss a zero, never invent one), then, for a closed algebraic
    number, its minimal polynomial."""
    d = sp.sympify(d)
    if d == 0:
        return True
    if d.has(sp.nan, sp.zoo) or d.has(sp.oo, -sp.oo):
        return False
    d = d.doit() if d.has(sp.floor, sp.ceiling) else d
    table: dict = {}
    e = sp.expand(_atomize_exp(sp.expand(d, power_exp=True), table))
    if e == 0:
        return True
    num, den = sp.fraction(sp.together(e))
    if den != 0 and sp.expand(num) == 0:
        return True
    if not d.free_symbols and not d.has(sp.exp, sp.log, sp.E, sp.pi):
        try:
            y = sp.Dummy("y")
            return sp.minimal_polynomial(d, y) == y
        except Exception:  # not algebraic, or beyond SymPy: not shown to be zero
            return False
    return False


def exactly_equal(a, b) -> tuple[bool, str]:
    """(True, "") when the exact values ``a`` and ``b`` (matrices or scalars) are equal."""
    if isinstance(a, sp.MatrixBase) != isinstance(b, sp.MatrixBase):
        return False, "one side is a matrix, the other a scalar"
    if isinstance(a, sp.MatrixBase):
        if a.shape != b.shape:
            return False, f"shapes {a.shape} and {b.shape} differ"
        for i in range(a.rows):
            for j in range(a.cols):
                if a[i, j] == b[i, j]:
                    continue
                if not _is_exact_zero(a[i, j] - b[i, j]):
                    return False, f"entry ({i}, {j}): {sp.sstr(a[i, j])[:100]} vs {sp.sstr(b[i, j])[:100]}"
        return True, ""
    if a == b or _is_exact_zero(sp.sympify(a) - sp.sympify(b)):
        return True, ""
    return False, f"{sp.sstr(a)[:100]} vs {sp.sstr(b)[:100]}"


RTOL = 1e-9


def close(a, b, rtol: float = RTOL) -> tuple[bool, str]:
    """(True, "") when the float64 values agree to ``rtol`` relative to the largest entry."""
    a, b = np.atleast_2d(np.asarray(a, dtype=float)), np.atleast_2d(np.asarray(b, dtype=float))
    if a.shape != b.shape:
        return False, f"shapes {a.shape} and {b.shape} differ"
    finite = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(np.isnan(a), np.isnan(b)) or not np.array_equal(a[np.isinf(a)], b[np.isinf(a)]):
        return False, "the non-finite entries (nan, ±inf) differ"
    if not np.array_equal(finite, np.isfinite(a)):
        return False, "an entry is finite on one side only"
    a, b = a[finite], b[finite]
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)))
    err = float(np.max(np.abs(a - b), initial=0.0))
    if err <= rtol * scale:
        return True, ""
    return False, f"max |lhs - rhs| = {err:.3g} exceeds {rtol:g} × {scale:.3g}"


def polys_equal(a, b) -> tuple[bool, str]:
    """(True, "") when two values of ``poly`` mode (arrays of Poly, or Poly) are equal."""
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return False, "one side is a matrix, the other a scalar"
    if not isinstance(a, np.ndarray):
        return (True, "") if Poly.of(a) == Poly.of(b) else (False, "the polynomials differ")
    if a.shape != b.shape:
        return False, f"shapes {a.shape} and {b.shape} differ"
    for (i, j), x in np.ndenumerate(a):
        if not Poly.of(x) == Poly.of(b[i, j]):
            return False, f"entry ({i}, {j}): the polynomials differ"
    return True, ""


__all__ = ["Inputs", "NotEvaluable", "NotPolynomial", "Poly", "close", "exactly_equal", "matrix", "polys_equal",
           "scalar", "substitute_free", "value", "write_out"]
