"""Head-indexed families and the sum, stack and concatenation over h = 1..H.

For a symbolic head count H, seed 000's weights W_h^Q, W_h^K, W_h^V, W_h^O form
families indexed by h, and MultiHead is built from three nodes bound over h:

    HeadSum(e_h, H)    = Σ_{h=1}^{H} e_h                       (shape of e_h)
    HeadStack(e_h, H)  = [e_1; e_2; ...; e_H]   stacked         (H·rows × cols)
    HeadConcat(e_h, H) = [e_1  e_2  ...  e_H]   side by side    (rows × H·cols)

With a concrete H the constructors return plain SymPy sums and block matrices.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.symbol import Str
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..errors import HeadError
from .dims import HeadIndex, bound_index, check_dimension, index_base, index_level
from .dims import h as HEAD
from .shapes import as_matrix


class FamilyMember(MatrixExpr):
    """W_h: the member of a head-indexed weight family with index h."""

    is_commutative = False

    def __new__(cls, name, index, rows, cols):
        # the name is a Str, not a Symbol: substituting a user's scalar symbol never reaches it
        name = Str(name) if isinstance(name, str) else Str(name.name)
        return super().__new__(cls, name, sp.sympify(index), sp.sympify(rows), sp.sympify(cols))

    @property
    def family_name(self) -> str:
        return self.args[0].name

    @property
    def index(self):
        return self.args[1]

    @property
    def shape(self):
        return (self.args[2], self.args[3])

    @property
    def free_symbols(self):
        return self.index.free_symbols | self.args[2].free_symbols | self.args[3].free_symbols

    @property
    def name(self) -> str:
        """The name of this member, e.g. ``W^Q_2`` (used for numeric values)."""
        idx = sp.sstr(self.index)
        return f"{self.family_name}_{idx if self.index.is_Atom else '(' + idx + ')'}"

    def _entry(self, i, j, **kwargs):
        from sympy.matrices.expressions.matexpr import MatrixElement

        return MatrixElement(self, i, j)

    def _sympystr(self, printer):
        return self.name

    def _latex(self, printer):
        base, _, sup = self.family_name.partition("^")
        sup = rf"^{{{sup}}}" if sup else ""
        return rf"\mathbf{{{base}}}_{{{printer._print(self.index)}}}{sup}"


class Family:
    """A head-indexed family of weights, W_h for h = 1..H, each ``rows × cols``.

    >>> from symattn import dims
    >>> d_k, d_model = dims("d_k d_model")
    >>> W_Q = Family("W^Q", d_k, d_model)
    >>> W_Q[2], W_Q[2].shape
    (W^Q_2, (d_k, d_model))
    """

    def __init__(self, name: str, rows, cols, transposed: bool = False):
        self.name = name
        self.rows = check_dimension(rows, f"family {name}: ")
        self.cols = check_dimension(cols, f"family {name}: ")
        self.transposed = transposed

    def __getitem__(self, index):
        idx = sp.sympify(index) if isinstance(index, (int, sp.Basic)) else None
        if idx is None or idx.is_integer is not True or idx.is_positive is False:
            raise HeadError(f"family {self.name}: the head index must be a positive integer or an integer "
                            f"expression such as h or H + 1, got {index!r}")
        member = FamilyMember(self.name, idx, self.rows, self.cols)
        return member.T if self.transposed else member

    @property
    def T(self) -> "Family":
        """The family of transposes, W_hᵀ (for the row convention)."""
        return Family(self.name, self.rows, self.cols, not self.transposed)

    def __repr__(self):
        return f"Family({self.name!r}, {self.rows}, {self.cols}){'.T' if self.transposed else ''}"


def substitute(e, mapping: dict):
    """Capture-avoiding simultaneous substitution of the symbols in ``mapping``.

    Like ``xreplace``, except at a binder (a :class:`Binder` node): its own index is never
    replaced inside its body (it is bound there), and when a replacement value holds a symbol that
    the binder binds, the binder's index is first renamed to a fresh one, so nothing is captured.
    """
    mapping = {k: sp.sympify(v) for k, v in mapping.items() if k != v}
    return _substitute(e, mapping) if mapping else e


def _substitute(e, mapping):
    if not isinstance(e, sp.Basic):
        return e
    if e in mapping:
        return mapping[e]
    if not e.args:
        return e
    if isinstance(e, Binder):
        count = _substitute(e.count, mapping)
        inner = {k: v for k, v in mapping.items() if k != e.index and e.body.has(k)}
        if not inner:
            return e if count == e.count else e.func(e.body, e.index, count)
        index, body = e.index, e.body
        if any(v.has(index) for v in inner.values()):
            index = fresh_index(index, body, *inner.values())
            body = _substitute(body, {e.index: index})
        return e.func(_substitute(body, inner), index, count)
    args = [_substitute(a, mapping) for a in e.args]
    if all(a is b for a, b in zip(args, e.args)):
        return e
    return e.func(*args)


def fresh_index(like, *exprs):
    """A bound index of the kind and base name of ``like`` whose level is above every index of that
    kind and base occurring in ``exprs`` (free or bound): it can be bound over them without capture."""
    kind, base = type(like), index_base(like)
    atoms = [x for e in exprs for x in sp.sympify(e).atoms(sp.Symbol)]
    levels = [index_level(x) for x in atoms if type(x) is kind and index_base(x) == base]
    # a level whose name a user's symbol already has would print alike (h' beside a scalar h'): skip it
    taken = {x.name for x in atoms if type(x) is not kind and not isinstance(x, sp.Dummy)}
    level = max(levels, default=-1) + 1
    while base + "'" * level in taken:
        level += 1
    return bound_index(base, level, kind)


def bind(cls, body, count, base: str = "h", kind: type = HeadIndex, placeholder=HEAD, op: str = ""):
    """``cls(body', index, count)`` with a fresh, canonical bound index.

    ``body`` is a function of the index (called with a fresh Dummy) or an expression in which the
    free ``placeholder`` (:data:`symattn.h` for heads) stands for the index. The index is
    ``base`` with as many primes as needed to be above every index of its kind in the body, so
    nested binders never share an index (no capture) and alpha-equivalent constructions give
    identical trees.
    """
    dummy = sp.Dummy(base, integer=True, positive=True)
    body = body(dummy) if callable(body) else substitute(sp.sympify(body), {placeholder: dummy})
    body = as_matrix(body, "the summand" if cls.__name__ == "HeadSum" else "the body", op or cls.__name__)
    if dummy in set().union(*(sp.sympify(d).free_symbols for d in body.shape)):
        raise HeadError(f"{op or cls.__name__}: the shape of the body may not depend on the index {base}")
    index = fresh_index(bound_index(base, 0, kind), body)
    return cls(substitute(body, {dummy: index}), index, count)


class Binder(MatrixExpr):
    """A matrix built from a body over index = 1..count: args (body, index, count).

    The index is bound: it is not a free symbol, and :meth:`term` substitutes a value for it.
    """

    is_commutative = False

    def __new__(cls, body, index, count):
        return super().__new__(cls, body, index, sp.sympify(count))

    @property
    def body(self):
        return self.args[0]

    @property
    def index(self):
        return self.args[1]

    @property
    def count(self):
        return self.args[2]

    def rebinds_index(self) -> bool:
        """True when a node inside the body binds the same index (a tree not built by :func:`bind`)."""
        return any(isinstance(x, Binder) and x.index == self.index for x in sp.preorder_traversal(self.body))

    def term(self, value):
        """The body with the index replaced by ``value`` (capture-avoiding, see :func:`substitute`)."""
        return substitute(self.body, {self.index: sp.sympify(value)})

    @property
    def free_symbols(self):
        return (self.body.free_symbols - {self.index}) | self.count.free_symbols

    def _xreplace(self, rule):
        """``xreplace`` respects the binder: the bound index is never replaced, nothing is captured."""
        if self in rule:
            return rule[self], True
        out = substitute(self, rule)
        return out, out is not self

    def _eval_subs(self, old, new):
        """``subs`` likewise (SymPy's own walk would rename the bound index too)."""
        return substitute(self, {old: new})

    @property
    def T(self):
        """The transpose as written (an unevaluated transpose, as for Softmax), so that a claim shows
        ``(Σ_h e_h)ᵀ``, ``[e_1; …; e_H]ᵀ`` or ``R_aᵀ`` as typed; each node's transpose law
        (``_eval_transpose``) is applied by rewriting (``doit``, ``transpose``, the engine's normal forms)."""
        return sp.Transpose(self)


class _OverHeads(Binder):
    """Common part of HeadSum, HeadStack and HeadConcat: args (body, h, H)."""

    op = ""

    def peel(self):
        """Split off the last head: the node over H - 1 heads and the term for h = H."""
        raise NotImplementedError

    def expand_heads(self):
        """For a concrete H, the explicit sum or block matrix of the H terms."""
        return self.from_terms([self.term(k) for k in range(1, int(self.count) + 1)])

    def doit(self, **hints):
        body = self.body.doit(**hints) if hints.get("deep", True) else self.body
        node = type(self)(body, self.index, self.count)
        if self.count.is_Integer:
            return node.expand_heads()
        return node

    def _print_with(self, printer, what):
        idx = printer._print(self.index)
        return f"{what}({printer._print(self.body)}, {idx}=1..{printer._print(self.count)})"


class HeadSum(_OverHeads):
    """Σ_{h=1}^{H} e_h."""

    @property
    def shape(self):
        return self.body.shape

    @staticmethod
    def from_terms(terms):
        return sp.MatAdd(*terms).doit(deep=False)

    def peel(self):
        return sp.MatAdd(HeadSum(self.body, self.index, self.count - 1), self.term(self.count))

    def _eval_transpose(self):
        return HeadSum(self.body.T, self.index, self.count)

    def _sympystr(self, printer):
        return self._print_with(printer, "HeadSum")

    def _latex(self, printer):
        return rf"\sum_{{h=1}}^{{{printer._print(self.count)}}} {printer._print(self.body)}"


class HeadStack(_OverHeads):
    """[e_1; e_2; ...; e_H], stacked vertically."""

    @property
    def shape(self):
        return (self.count * self.body.rows, self.body.cols)

    @staticmethod
    def from_terms(terms):
        return sp.BlockMatrix([[t] for t in terms])

    def peel(self):
        return sp.BlockMatrix([[HeadStack(self.body, self.index, self.count - 1)], [self.term(self.count)]])

    def _eval_transpose(self):
        return HeadConcat(self.body.T, self.index, self.count)

    def _sympystr(self, printer):
        return self._print_with(printer, "HeadStack")

    def _latex(self, printer):
        b = printer._print
        return (rf"\begin{{bmatrix}} {b(self.term(1))} \\ \vdots \\ "
                rf"{b(self.term(self.count))} \end{{bmatrix}}")


class HeadConcat(_OverHeads):
    """[e_1  e_2  ...  e_H], side by side."""

    @property
    def shape(self):
        return (self.body.rows, self.count * self.body.cols)

    @staticmethod
    def from_terms(terms):
        return sp.BlockMatrix([list(terms)])

    def peel(self):
        return sp.BlockMatrix([[HeadConcat(self.body, self.index, self.count - 1), self.term(self.count)]])

    def _eval_transpose(self):
        return HeadStack(self.body.T, self.index, self.count)

    def _sympystr(self, printer):
        return self._print_with(printer, "HeadConcat")

    def _latex(self, printer):
        b = printer._print
        return (rf"\begin{{bmatrix}} {b(self.term(1))} & \cdots & "
                rf"{b(self.term(self.count))} \end{{bmatrix}}")


def _over_heads(cls, body, H, op):
    H = check_dimension(H, f"{op}: head count H: ")
    if H.is_Integer and callable(body):
        terms = [as_matrix(body(sp.Integer(k)), f"term {k}", op) for k in range(1, int(H) + 1)]
        return cls.from_terms(terms)
    node = bind(cls, body, H, op=op)
    return node.expand_heads() if H.is_Integer else node


def head_sum(body, H):
    """Σ_{h=1}^{H} body_h; ``body`` is an expression in :data:`symattn.h` or a function of h."""
    return _over_heads(HeadSum, body, H, "head_sum")


def head_stack(body, H):
    """[body_1; ...; body_H] (stacked vertically)."""
    return _over_heads(HeadStack, body, H, "head_stack")


def head_concat(body, H):
    """[body_1 ... body_H] (side by side)."""
    return _over_heads(HeadConcat, body, H, "head_concat")
