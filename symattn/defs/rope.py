"""Rotary position embedding (RoPE, seed 002's Llama ``apply_rotary_emb``) as a block-diagonal
rotation R_t acting on queries and keys.

For a head dimension d = 2p and position t, with frequencies θ_1, ..., θ_p,

    R_t = diag(ρ(t θ_1), ..., ρ(t θ_p)) ∈ M^{d×d},   ρ(x) = [[cos x, -sin x], [sin x, cos x]],

and Llama's θ_i = base^{-2(i-1)/d} (base = 10000) rotates the consecutive pairs (x_{2i-1}, x_{2i}),
which is the complex product (x_{2i-1} + i x_{2i}) e^{i t θ_i} of ``freqs_cis``. Column convention:
q ↦ R_t q; row convention (Llama's rows): q ↦ q R_tᵀ.

:class:`BlockDiag` is the block-diagonal matrix diag(B_1, ..., B_p) of blocks indexed by i = 1..p.
"""

from __future__ import annotations

import numbers

import sympy as sp

from ..errors import ClaimError, ShapeError
from .attention import check_convention
from .dims import BoundIndex, check_dimension
from .heads import Binder, bind
from .shapes import as_matrix, require_equal, show_shape

#: The block index i of a block-diagonal matrix (the outermost BlockDiag binds it; nested ones i', i'').
i = BoundIndex("i", integer=True, positive=True)


class BlockDiag(Binder):
    """diag(B_1, ..., B_p): the blocks B_i (all of one shape) on the diagonal, zeros elsewhere.

    >>> from symattn import dims
    >>> p = dims("p")
    >>> B = BlockDiag(rotation(i), i, p)
    >>> B.shape
    (2*p, 2*p)
    >>> BlockDiag(rotation(i), i, 2).doit().shape
    (4, 4)
    """

    def __new__(cls, body, index, count):
        count = check_dimension(count, "BlockDiag: number of blocks: ")
        body = as_matrix(body, "the block", "BlockDiag")
        if any(sp.sympify(d).has(index) for d in body.shape):
            raise ShapeError(f"BlockDiag: the block shape {show_shape(body)} may not depend on {index}")
        return super().__new__(cls, body, index, count)

    @property
    def shape(self):
        return (self.count * self.body.rows, self.count * self.body.cols)

    def _eval_transpose(self):
        return BlockDiag(self.body.T, self.index, self.count)

    def doit(self, **hints):
        body = self.body.doit(**hints) if hints.get("deep", True) else self.body
        node = BlockDiag(body, self.index, self.count)
        if self.count.is_Integer:
            return sp.BlockDiagMatrix(*[node.term(k) for k in range(1, int(self.count) + 1)])
        return node

    def _sympystr(self, printer):
        return f"BlockDiag({printer._print(self.body)}, {self.index}=1..{printer._print(self.count)})"


def rotation(x) -> sp.ImmutableMatrix:
    """ρ(x) = [[cos x, -sin x], [sin x, cos x]], the rotation of the plane by the angle x.

    >>> rotation(sp.pi / 2)
    Matrix([
    [0, -1],
    [1,  0]])
    """
    return sp.ImmutableMatrix([[sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]])


def llama_theta(p, base=10000):
    """Llama's frequencies θ_i = base^{-2(i-1)/d} with d = 2p, as a function of the block index i."""
    return lambda k: sp.Integer(base) ** (-(k - 1) / sp.sympify(p))


def position(t, op: str) -> sp.Expr:
    """``t`` as a SymPy integer expression, after checking that it can be a position: an integer, or
    an expression not known to be a non-integer (a symbol declared ``integer=True`` is the usual one).
    A float, a fraction and a non-integer expression are refused with a :class:`ClaimError`."""
    if isinstance(t, bool) or not isinstance(t, (numbers.Real, sp.Expr)):
        raise ClaimError(f"{op}: the position t = {t!r} ({type(t).__name__}) is not a number or a symbol; "
                            "give an integer or an integer symbol (sp.Symbol('t', integer=True))")
    e = sp.sympify(int(t) if isinstance(t, numbers.Integral) else t)
    if e.has(sp.Float) or e.is_integer is False:
        shown = repr(t) if isinstance(t, numbers.Real) and not isinstance(t, sp.Basic) else str(e)
        raise ClaimError(f"{op}: the position t = {shown} is not an integer; RoPE rotates by whole positions "
                            "(give an integer, or an integer symbol: sp.Symbol('t', integer=True))")
    return e


def rope(t, p, theta=None) -> BlockDiag:
    """R_t = diag(ρ(t θ_1), ..., ρ(t θ_p)), a (2p) × (2p) rotation; θ defaults to Llama's.

    ``theta`` is a function of the block index i (e.g. ``sympy.Function("theta")`` for arbitrary
    frequencies).

    >>> from symattn import dims
    >>> p = dims("p")
    >>> a = sp.Symbol("a", integer=True)
    >>> rope(a, p, sp.Function("theta")).body
    Matrix([
    [cos(a*theta(i)), -sin(a*theta(i))],
    [sin(a*theta(i)),  cos(a*theta(i))]])
    """
    p = check_dimension(p, "rope: number of pairs p = d/2: ")
    theta = llama_theta(p) if theta is None else theta
    t = position(t, "rope")
    return bind(BlockDiag, lambda k: rotation(t * theta(k)), p, base="i", kind=BoundIndex, op="rope")


def apply_rope(x, t, p, theta=None, convention: str = "column"):
    """The rotated query or key at position t: R_t x (column, x is 2p × n) or x R_tᵀ (row)."""
    check_convention(convention)
    x = as_matrix(x, "x", "apply_rope(x, t)")
    R = rope(t, p, theta)
    if convention == "column":
        require_equal(x.rows, R.cols, "apply_rope(x, t)", "x needs d = 2p rows", [("R_t", R), ("x", x)])
        return R * x
    require_equal(x.cols, R.rows, "apply_rope(x, t)", "x needs d = 2p columns", [("x", x), ("R_t", R)])
    return x * R.T
