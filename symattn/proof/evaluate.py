"""Explicit evaluation of a matrix expression at concrete dimensions and inputs.

Two backends share one walk over the tree: ``exact`` (SymPy matrices, exact entries)
and ``float`` (NumPy float64). Each node type has an evaluation rule in ``RULES``;
modules that add nodes register theirs with :func:`rule` (``symattn.proof`` imports ``evaluate_nodes``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixElement, MatrixExpr

from ..defs.feature_map import FeatureMap
from ..defs.heads import FamilyMember, _OverHeads
from ..defs.mask import CausalMask, PaddingMask
from ..defs.permutation import Permutation
from ..defs.rope import BlockDiag
from ..defs.score import Score
from ..defs.softmax import Softmax, softmax_explicit
from ..errors import SymattnError
from ..registry import Registry
from .layer_stack import LayerStack


class EvaluationError(SymattnError):
    """The expression has a node or a free symbol that cannot be evaluated."""


class Exact:
    name = "exact"

    @staticmethod
    def scalar(c):
        """A number as an exact value: a float is the binary rational it is (never a guess such as 1/10)."""
        return sp.Rational(c) if isinstance(c, (float, sp.Float)) else c

    @staticmethod
    def matrix(rows):
        return sp.ImmutableMatrix(rows)

    @staticmethod
    def convert(value):
        if isinstance(value, sp.MatrixBase):
            return value
        return sp.ImmutableMatrix(np.asarray(value).tolist())

    @staticmethod
    def matmul(a, b):
        return a * b

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def scale(c, a):
        return a * c

    @staticmethod
    def transpose(a):
        return a.T

    @staticmethod
    def softmax(a, axis):
        return softmax_explicit(a, axis)

    @staticmethod
    def hadamard(a, b):
        return a.multiply_elementwise(b)

    @staticmethod
    def blocks(rows):
        return sp.ImmutableMatrix(sp.BlockMatrix(rows).as_explicit())

    @staticmethod
    def full(r, c, value):
        return sp.ImmutableMatrix(r, c, [value] * (r * c))

    @staticmethod
    def eye(k):
        return sp.ImmutableMatrix(sp.eye(k))

    @staticmethod
    def inverse(a):
        return a.inv()

    @staticmethod
    def power(a, k):
        return a**k

    @staticmethod
    def slice(a, rows, cols):
        return sp.ImmutableMatrix(a[rows, cols])

    @staticmethod
    def table(r, c, fn):
        return sp.ImmutableMatrix(r, c, lambda i, j: fn(i, j))


class Float:
    name = "float"

    @staticmethod
    def scalar(c):
        try:
            return float(c)
        except TypeError as exc:
            raise EvaluationError(f"scalar {c} does not evaluate to a number") from exc

    @staticmethod
    def convert(value):
        try:
            if isinstance(value, sp.MatrixBase):
                return np.array(value.evalf(), dtype=float)
            return np.asarray(value, dtype=float)
        except TypeError as exc:
            raise EvaluationError(f"entries that are not numbers: {sp.sstr(value)[:80]}") from exc

    @staticmethod
    def matmul(a, b):
        return a @ b

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def scale(c, a):
        return c * a

    @staticmethod
    def transpose(a):
        return np.swapaxes(a, -1, -2)

    @staticmethod
    def softmax(a, axis):
        ax = -2 if axis == 0 else -1
        z = a - np.max(a, axis=ax, keepdims=True)
        e = np.exp(z)
        return e / np.sum(e, axis=ax, keepdims=True)

    @staticmethod
    def hadamard(a, b):
        return a * b

    @staticmethod
    def blocks(rows):
        return np.block(rows)

    @staticmethod
    def full(r, c, value):
        return np.full((r, c), float(value))

    @staticmethod
    def eye(k):
        return np.eye(k)

    @staticmethod
    def inverse(a):
        return np.linalg.inv(a)

    @staticmethod
    def power(a, k):
        return np.linalg.matrix_power(a, k)

    @staticmethod
    def slice(a, rows, cols):
        return a[..., rows, cols]

    @staticmethod
    def table(r, c, fn):
        return np.array([[float(fn(i, j)) for j in range(c)] for i in range(r)], dtype=float)


BACKENDS = {"exact": Exact, "float": Float}

#: node type -> rule(expr, evaluate_child, backend, env, functions) -> value, found along the MRO
EVALUATE = Registry("the strategies' evaluator", __name__)
RULES: dict[type, Callable] = EVALUATE.rules
rule = EVALUATE.rule
EVALUATE.omit(FeatureMap, "a feature map is written out first (FeatureMap.doit: an uninterpreted function of "
                          "each row's entries, trust rule feature_map_row_by_row), then evaluated")


def leaf_name(e) -> str | None:
    if isinstance(e, sp.MatrixSymbol):
        return e.name
    if isinstance(e, FamilyMember):
        return e.name
    return None


def lookup(table: dict, key, name: str):
    """``table[key]`` for the object itself, else ``table[name]`` (tables keyed by name); KeyError if neither."""
    if key in table:
        return table[key]
    return table[name]


def evaluate(expr, env: dict, backend: str = "float", functions: dict | None = None):
    """Evaluate ``expr`` with the matrices in ``env`` (input matrix or its name -> array) at concrete sizes.

    ``functions`` maps each uninterpreted score function (or its name) to a Python
    callable (Q, K) -> matrix in the backend's type. An explicit matrix may hold entries of
    the inputs (``X[i, j]``, as ``as_explicit()`` writes them): each is replaced by the value
    of that entry of X.
    """
    be = BACKENDS[backend]
    functions = functions or {}
    cache: dict = {}

    def ev(e):
        if e in cache:
            return cache[e]
        out = _ev(e)
        cache[e] = out
        return out

    def _ev(e):
        fn = EVALUATE.find(e)
        if fn is None:
            raise EvaluationError(f"cannot evaluate a {type(e).__name__} node: {sp.sstr(e)[:80]}")
        return fn(e, ev, be, env, functions)

    return ev(expr)


@rule(sp.MatrixSymbol, FamilyMember)
def _leaf(e, ev, be, env, fns):
    name = leaf_name(e)
    try:
        value = be.convert(lookup(env, e, name))
    except KeyError:
        raise EvaluationError(f"no value given for {name}") from None
    # a structured input (Symmetric) takes the values its assumption allows
    return e.impose(value) if hasattr(e, "impose") else value


@rule(sp.MatrixBase)
def _explicit_rule(e, ev, be, env, fns):
    return _explicit(e, ev, be)


def _explicit(M, ev, be):
    """An explicit matrix whose entries may hold entries X[i, j] of other matrices: substitute their values.

    Sums and products over concrete ranges (``as_explicit()`` of a Softmax writes Σ_k exp(X[k, j]))
    are expanded first, so that every entry X[i, j] left has concrete indices.
    """
    entries = [a.doit() if a.has(sp.Sum, sp.Product) else a for a in (sp.sympify(a) for a in M)]
    elements = set().union(*(a.atoms(MatrixElement) for a in entries))
    if not elements:
        M = sp.ImmutableMatrix(M.rows, M.cols, entries)
        return be.convert(M) if be.name == "float" else M
    values = {}
    for x in elements:
        if not (x.i.is_Integer and x.j.is_Integer):
            raise EvaluationError(f"the entry {x} of an explicit matrix has an index that is not concrete")
        v = ev(x.parent)[int(x.i), int(x.j)]
        values[x] = v if be.name == "exact" else sp.Float(float(v), 30)
    entries = [a.xreplace(values) for a in entries]
    if be.name == "exact":
        return sp.ImmutableMatrix(M.rows, M.cols, entries)
    return be.convert(sp.ImmutableMatrix(M.rows, M.cols, entries))


def _int(d):
    d = sp.sympify(d)
    if not d.is_Integer:
        raise EvaluationError(f"dimension {d} is not concrete")
    return int(d)


@rule(sp.MatMul)
def _matmul(e, ev, be, env, fns):
    coeff, mats = e.as_coeff_matrices()
    out = ev(mats[0])
    for m in mats[1:]:
        out = be.matmul(out, ev(m))
    return out if coeff == 1 else be.scale(be.scalar(coeff), out)


@rule(sp.MatAdd)
def _matadd(e, ev, be, env, fns):
    out = ev(e.args[0])
    for a in e.args[1:]:
        out = be.add(out, ev(a))
    return out


@rule(sp.Transpose)
def _transpose(e, ev, be, env, fns):
    return be.transpose(ev(e.arg))


@rule(Softmax)
def _softmax(e, ev, be, env, fns):
    return be.softmax(ev(e.arg), e.axis)


@rule(sp.HadamardProduct)
def _hadamard(e, ev, be, env, fns):
    out = ev(e.args[0])
    for a in e.args[1:]:
        out = be.hadamard(out, ev(a))
    return out


@rule(sp.BlockMatrix)
def _blocks(e, ev, be, env, fns):
    B = e.blocks
    return be.blocks([[ev(B[i, j]) for j in range(B.cols)] for i in range(B.rows)])


@rule(sp.ZeroMatrix)
def _zero(e, ev, be, env, fns):
    return be.full(_int(e.rows), _int(e.cols), 0)


@rule(sp.OneMatrix)
def _one(e, ev, be, env, fns):
    return be.full(_int(e.rows), _int(e.cols), 1)


@rule(sp.Identity)
def _identity(e, ev, be, env, fns):
    return be.eye(_int(e.rows))


@rule(sp.Inverse)
def _inverse(e, ev, be, env, fns):
    return be.inverse(ev(e.arg))


@rule(sp.MatPow)
def _matpow(e, ev, be, env, fns):
    k = sp.sympify(e.exp)
    if not k.is_Integer:
        raise EvaluationError(f"matrix power {e} has a non-integer exponent")
    return be.power(ev(e.base), int(k))


@rule(_OverHeads)
def _over_heads(e, ev, be, env, fns):
    if not e.count.is_Integer:
        raise EvaluationError(f"head count {e.count} is not concrete")
    return ev(e.expand_heads())


@rule(Score)
def _score(e, ev, be, env, fns):
    name = str(e.function)
    try:
        f = lookup(fns, e.function, name)
    except KeyError:
        raise EvaluationError(f"no instantiation given for the score function {name}") from None
    return f(ev(e.args[1]), ev(e.args[2]))


@rule(sp.MatrixSlice)
def _slice(e, ev, be, env, fns):
    (r0, r1, rs), (c0, c1, cs) = e.rowslice, e.colslice
    return be.slice(ev(e.parent), slice(_int(r0), _int(r1), _int(rs)), slice(_int(c0), _int(c1), _int(cs)))


def _mask_rule(e, ev, be, env, fns):
    """Masks: 0 where visible, -inf elsewhere (exact: -oo, so that exp(-oo) = 0 exactly)."""
    r, c = _int(e.rows), _int(e.cols)
    return be.table(r, c, lambda i, j: sp.sympify(e._entry(sp.Integer(i), sp.Integer(j))))


EVALUATE.add(CausalMask, _mask_rule)
EVALUATE.add(PaddingMask, _mask_rule)


@rule(BlockDiag)
def _block_diag(e, ev, be, env, fns):
    if not e.count.is_Integer:
        raise EvaluationError(f"number of blocks {e.count} is not concrete")
    return ev(e.doit())


@rule(LayerStack)
def _layer_stack(e, ev, be, env, fns):
    """A stack at a concrete depth, layer by layer: layer l reads each weight W as the matrix W_l."""
    if not e.depth.is_Integer:
        raise EvaluationError(f"the number of layers {e.depth} is not concrete")
    return ev(e.unfold(int(e.depth)))


@rule(Permutation)
def _permutation(e, ev, be, env, fns):
    try:
        P = np.asarray(lookup(env, e, e.name))
    except KeyError:
        raise EvaluationError(f"no value given for the permutation {e.name}") from None
    n = _int(e.size)
    ok = (P.shape == (n, n) and np.isin(P, (0, 1)).all()
          and (P.sum(axis=0) == 1).all() and (P.sum(axis=1) == 1).all())
    if not ok:
        raise EvaluationError(f"{e.name} must be an {n} × {n} permutation matrix")
    return be.convert(P)


def is_matrix_expr(e) -> bool:
    return isinstance(e, (MatrixExpr, sp.MatrixBase))
