"""Strategy A on the DAG: a normal form computed once per distinct subexpression.

The rules are a subset of strategy A's (:mod:`symattn.proof.canon`), each a true identity:

- transposes pushed to the leaves: (AB)ᵀ = BᵀAᵀ, (A + B)ᵀ = Aᵀ + Bᵀ, (cA)ᵀ = cAᵀ, Aᵀᵀ = A,
  Softmax(X, a)ᵀ = Softmax(Xᵀ, 1 - a);
- products flattened (associativity), their scalar factors multiplied in front;
- sums flattened and their terms ordered (associativity and commutativity of +);
- P⁻¹ = Pᵀ for a permutation P;
- a 1 × 1 matrix is its own transpose (of its two normal forms the one with the smaller digest is
  kept), and a structured input states its own transpose (Sᵀ = S for a symmetric S);
- every other node rebuilt from the normal forms of its arguments (equals for equals);
- in a scalar claim, a trace is linear, a trace of a product is the trace of its cyclic rotation
  with the smallest digest, and Trace(Xᵀ) = Trace(X) (:func:`cyclic_traces`).

Nothing is distributed or collected, so a normal form is never larger than the expression: each
distinct subexpression of the claim is normalized once (memoized) and every normal form is
interned (one object per structure), so the cost follows the claim's DAG. Two sides with the same
normal form are equal for every value of the dimension symbols; different normal forms prove
nothing, and the full rewriting of :mod:`symattn.proof.canon` is tried next.

This is what makes a claim about a deep model provable: the row and column conventions of L
stacked residual self-attention layers have a tree of about 4^L nodes and a DAG of about 10 L
(``benchmarks/deep_layers.py``).
"""

from __future__ import annotations

import hashlib

import sympy as sp
from sympy.core.basic import Basic
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.permutation import Permutation
from ..defs.softmax import Softmax
from . import dag


def _built(cls, *args):
    """cls(*args) without SymPy's shape validation, which asks each argument for its shape and so
    walks the depth of a deep model at every node (quadratic or worse in the number of layers).
    The arguments are normal forms of operands whose shapes the claim's check_shapes accepted, in
    the same order or reversed with each transposed, so the product or sum fits as the original did."""
    return Basic.__new__(cls, *[sp.sympify(a) for a in args])


class _Normalizer:
    def __init__(self):
        self.memo: dict = {}     # (id of the expression, transposed) -> (expression, normal form)
        self.table: dict = {}    # normal form -> its one interned object
        self.shapes = dag.Shapes()  # each node's shape once (SymPy's walks the depth each time)
        self.digests: dict = {}  # interned normal form -> a digest that orders sums' terms

    def intern(self, e):
        return self.table.setdefault(e, e)

    def digest(self, e) -> bytes:
        if e in self.digests:
            return self.digests[e]
        if isinstance(e, sp.Basic) and e.args and isinstance(e, MatrixExpr):
            parts = [type(e).__name__.encode()] + [self.digest(a) for a in e.args]
        else:
            parts = [type(e).__name__.encode(), sp.srepr(e).encode()]
        out = hashlib.sha256(b"\0".join(parts)).digest()
        self.digests[e] = out
        return out

    def normal(self, e, transposed: bool = False):
        key = (id(e), transposed)  # by identity: equality of two deep trees built apart walks both
        if key not in self.memo:
            if isinstance(e, MatrixExpr) and self.shapes(e) == (1, 1):
                # a 1 × 1 matrix is its own transpose: of the two forms, the one with the smaller digest
                forms = [self.intern(self._normal(e, t)) for t in (False, True)]
                self.memo[key] = (e, min(forms, key=self.digest))
            else:
                self.memo[key] = (e, self.intern(self._normal(e, transposed)))
        return self.memo[key][1]

    def _normal(self, e, t):
        if not isinstance(e, MatrixExpr):
            return e
        if isinstance(e, sp.Transpose):
            return self.normal(e.arg, not t)
        if isinstance(e, sp.MatMul):
            coeff, mats = e.as_coeff_matrices()
            factors = [self.normal(m, t) for m in (reversed(mats) if t else mats)]
            flat = []
            for f in factors:
                if isinstance(f, sp.MatMul):
                    c, ms = f.as_coeff_matrices()
                    coeff, flat = coeff * c, flat + list(ms)
                else:
                    flat.append(f)
            if coeff == 1 and len(flat) == 1:
                return flat[0]
            return _built(sp.MatMul, *([coeff] if coeff != 1 else []), *flat)
        if isinstance(e, sp.MatAdd):
            terms = []
            for a in e.args:
                f = self.normal(a, t)
                terms.extend(f.args if isinstance(f, sp.MatAdd) else [f])
            terms.sort(key=self.digest)
            return terms[0] if len(terms) == 1 else _built(sp.MatAdd, *terms)
        if isinstance(e, Softmax):
            return Softmax(self.normal(e.arg, t), 1 - e.axis if t else e.axis)
        if isinstance(e, sp.Inverse) and isinstance(e.arg, Permutation):
            return self.normal(e.arg, not t)  # P⁻¹ = Pᵀ for a permutation
        if not e.args or isinstance(e, (sp.MatrixSymbol, sp.MatrixBase, sp.BlockMatrix)):
            # leaves, explicit matrices and block matrices (whose argument is their grid of blocks)
            return (e.T if getattr(e, "structure", None) else sp.Transpose(e)) if t else e
        args = [self.normal(a) if isinstance(a, MatrixExpr) else a for a in e.args]
        try:
            rebuilt = e.func(*args) if any(a is not b for a, b in zip(args, e.args)) else e
        except (TypeError, ValueError):  # a node that cannot be rebuilt from its arguments stays as it is
            rebuilt = e
        return sp.Transpose(rebuilt) if t else rebuilt


def cyclic_traces(*exprs) -> list:
    """``exprs`` with every Trace(M) written as the trace of M's normal form, rotated cyclically
    (Trace(ABC) = Trace(BCA) = Trace(CAB)) to the rotation with the smallest digest; one normalizer
    for all, so equal traces in two sides become the same object."""
    norm = _Normalizer()

    def forms(M):
        """M itself, or every cyclic rotation of a product (each square, so each has a trace)."""
        if not isinstance(M, sp.MatMul):
            return [M]
        coeff, mats = M.as_coeff_matrices()
        out = []
        for k in range(len(mats)):
            r = list(mats[k:] + mats[:k])
            if sp.expand(r[0].rows - r[-1].cols) == 0:
                out.append(norm.intern(sp.MatMul(*([coeff] if coeff != 1 else []), *r)))
        return out

    def one(tr):
        M = norm.normal(tr.arg)
        if isinstance(M, sp.MatAdd):  # the trace is linear
            return sp.Add(*(one(sp.Trace(t)) for t in M.args))
        if isinstance(M, sp.MatMul):
            coeff, mats = M.as_coeff_matrices()
            if coeff != 1:
                return coeff * one(sp.Trace(mats[0] if len(mats) == 1 else sp.MatMul(*mats)))
        # Trace(M) = Trace(Mᵀ): the forms of both, and of their rotations, and the smallest digest
        candidates = forms(M) + forms(norm.normal(tr.arg, True))
        return sp.Trace(min(candidates, key=norm.digest))

    return [sp.sympify(e).replace(lambda x: isinstance(x, sp.Trace), one) for e in exprs]


def same_on_the_dag(lhs, rhs) -> tuple[bool, list[str]]:
    """Try to show lhs = rhs by the normal forms above; (proved?, trace)."""
    norm = _Normalizer()
    a, b = norm.normal(lhs), norm.normal(rhs)
    if a is b or a == b:
        return True, [f"the normal forms on the DAG coincide (transposes at the leaves, products and sums "
                      f"flattened; {len(norm.table)} distinct nodes)"]
    return False, [f"the normal forms on the DAG differ ({len(norm.table)} distinct nodes)"]
