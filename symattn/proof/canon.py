"""Strategy A: rewriting matrix expressions into a canonical form.

The rules, each a true identity of matrix algebra (the trust base):

- ``push_transposes``: (AB)ᵀ = BᵀAᵀ, (A+B)ᵀ = Aᵀ+Bᵀ, (cA)ᵀ = cAᵀ, Aᵀᵀ = A,
  Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1), [e_1; ...; e_H]ᵀ = [e_1ᵀ ... e_Hᵀ], (Σ_h e_h)ᵀ = Σ_h e_hᵀ
  (SymPy's ``doit`` with the ``_eval_transpose`` of each node);
- ``distribute``: A(B+C) = AB+AC, scalars to the front, products flattened
  (associativity), like terms collected (SymPy's ``expand`` and MatAdd canonicalization);
- ``multiply_blocks``: [A B][C; D] = AC + BD when the block sizes match (``block_collapse``);
- ``push_into_head_sums``: M·Σ_h e_h = Σ_h M e_h, (Σ_h e_h)·M = Σ_h e_h M, c·Σ_h e_h = Σ_h c e_h,
  Σ_h (a_h + b_h) = Σ_h a_h + Σ_h b_h, for M and c free of h.
- ``settle_floors_over_heads``: inside a sum, stack or concatenation over h = 1..H, floor(a·h + b)
  = c when a >= 0 and c <= a + b and a·H + b < c + 1 are provable, c = floor(a + b) (the value at
  h = 1): a nondecreasing function of h stays in [c, c + 1) on the whole range. This settles the
  GQA group floor((h - 1)/(H/G)) + 1 = 1 when G = 1.
- ``multiply_block_diagonals``: diag(A_1, ..., A_p) diag(B_1, ..., B_p) = diag(A_1 B_1, ..., A_p B_p)
  when both have p blocks and each A_i has as many columns as B_i has rows;
  diag(B_i)ᵀ = diag(B_iᵀ) (the node's transpose).
- ``split_softmax_over_blocks``: Softmax([B_1 ... B_c], 0) = [Softmax(B_1, 0) ... Softmax(B_c, 0)]
  where B_k is the k-th block column of a block matrix (each column is normalized on its own, so a
  column of the whole is a column of one block column); the row twin Softmax([B_1; ...; B_r], 1) =
  [Softmax(B_1, 1); ...; Softmax(B_r, 1)] for block rows B_k; likewise over heads,
  Softmax([e_1 ... e_H], 0) = [Softmax(e_1, 0) ... Softmax(e_H, 0)] and the row twin for a stack.
  Softmax over the other axis (a column crossing blocks stacked on each other) is never split.
- ``identity_block_diagonals``: diag(I_k, ..., I_k) with p blocks = I_{kp} (the block an Identity
  node or an explicit identity matrix; p symbolic, or concrete with blocks of any sizes each an
  identity: diag(I_a, I_b) = I_{a+b}); diag(0, ..., 0) = 0.
- ``canonical_binder_indices`` (alpha-renaming): a sum, stack or concatenation over heads, or a
  block diagonal, whose index is a user's symbol u rather than one of symattn's bound indices binds
  the canonical index instead (h, h', ... over heads; i, i', ... over blocks: the lowest level not
  occurring in the body, so nothing is captured), e.g. Σ_{u=1}^{H} A_u = Σ_{h=1}^{H} A_h.
- ``constant_head_sums``: Σ_{h=1}^{H} e = H·e when h is not free in e (also when e binds h again).
- ``scalars_into_block_diagonals``: c·diag(B_1, ..., B_p) = diag(c·B_1, ..., c·B_p) for a scalar c
  free of the block index.
- ``slice_block_diagonals``: diag(B_1, ..., B_c)[Ra : Rb, Ca : Cb] = diag(B_{a+1}, ..., B_b) for
  R × C blocks when a and b are provably integers with 0 <= a < b <= c (a slice on block boundaries
  along the diagonal keeps whole blocks and only zeros around them).
- ``ceilings_as_floors``: ceiling(a/r) = floor((a + r - 1)/r) for an integer a and a positive
  integer r (so a group ceiling(h/r) meets GQA's floor((h - 1)/r) + 1).
- ``softmax_across_blocks`` (one shared denominator): Softmax([B_1 ... B_c], 1) =
  [diag(l)⁻¹ Exp(B_1) ... diag(l)⁻¹ Exp(B_c)] with l = Exp(B_1) 1 + ... + Exp(B_c) 1 (a row crossing
  side-by-side blocks is normalized by the sum over all of them), and the column twin
  Softmax([B_1; ...; B_r], 0) = [(diag(l)⁻¹ Exp(B_1ᵀ))ᵀ; ...] with l = Σ_k Exp(B_kᵀ) 1.
- ``split_constant_blocks``: [A B] 1 = [A B] [1; 1] and 1 [C; D] = [1 1] [C; D] (a ones or zero
  matrix beside a block matrix in a product is cut along the blocks' sizes; the row sums of an
  online-softmax block row).
- ``flatten_nested_blocks``: [[A B] C] = [A B C] and [[A; B]; C] = [A; B; C] (a block row whose
  blocks are block rows is one block row; a cache extended twice).
- ``identity_block_grid``: [c I_a 0; 0 c I_b] = c I_{a+b} (a square grid of square blocks with one
  c·I on the diagonal and zero blocks elsewhere; repeat_kv's RᵀR = n_rep I).
- ``power_of_block_diagonal``: diag(B_1, ..., B_p)^k = diag(B_1^k, ..., B_p^k) for an integer
  k >= 1 (SymPy folds R·R into R**2 when the claim is built).
- ``expand_trig_entries``: in explicit matrices and in the scalar coefficients of products,
  cos(x + y) = cos x cos y - sin x sin y and sin(x + y) = sin x cos y + cos x sin y (SymPy's
  ``expand(trig=True)``), cos(-x) = cos x, sin(-x) = -sin x, and sin(x)^2 = 1 - cos(x)^2 (so no
  square of a sine is left).

Two expressions with the same canonical form are equal for every value of the
dimension symbols. Different canonical forms prove nothing.
"""

from __future__ import annotations

import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

from ..defs.heads import Binder, HeadConcat, HeadStack, HeadSum, _OverHeads
from ..defs.numeric_nodes import DivideRows, Exp
from ..defs.softmax import Softmax
from . import dag
from .verdict import TraceLine

MAX_ROUNDS = 6


def _is_matrix(x) -> bool:
    return isinstance(x, (MatrixExpr, sp.MatrixBase))


def bottom_up(rule):
    """A rewrite that applies ``rule(node)`` to every matrix node, children first."""

    def walk(e):
        if not isinstance(e, MatrixExpr) or not e.args:
            return e
        args = [walk(a) if isinstance(a, MatrixExpr) else a for a in e.args]
        if any(a is not b for a, b in zip(args, e.args)):
            e = e.func(*args)
        return rule(e)

    walk.__doc__ = rule.__doc__
    return walk


@bottom_up
def push_into_head_sums(e):
    """Distribute products and scalars into Σ_h, and split Σ_h over sums (bottom-up)."""
    if isinstance(e, HeadSum):
        body = e.body
        if isinstance(body, sp.MatAdd):
            return sp.MatAdd(*[push_into_head_sums(HeadSum(t, e.index, e.count)) for t in body.args])
        return e
    if isinstance(e, sp.MatMul):
        factors = list(e.args)
        for k, f in enumerate(factors):
            if isinstance(f, HeadSum):
                rest_left, rest_right = factors[:k], factors[k + 1:]
                if any(e_.has(f.index) for e_ in rest_left + rest_right):
                    continue
                body = sp.MatMul(*rest_left, f.body, *rest_right).doit(deep=False)
                return push_into_head_sums(HeadSum(body, f.index, f.count))
    return e


def _settle(body, h, count):
    reps = {}
    for f in body.atoms(sp.floor):
        arg = sp.expand(f.args[0])
        a = sp.expand(sp.diff(arg, h))
        if a.has(h) or a.is_nonnegative is not True:
            continue
        c = sp.floor(arg.subs(h, 1))
        if c.has(sp.floor) or c.has(h):
            continue
        if sp.expand(arg.subs(h, count) - c - 1).is_negative is True:
            reps[f] = c
    return body.xreplace(reps) if reps else body


@bottom_up
def settle_floors_over_heads(e):
    """floor(a·h + b) -> its value at h = 1 when it is constant on h = 1..H (see the rules above)."""
    if isinstance(e, _OverHeads) and e.body.has(sp.floor) and not e.rebinds_index():
        body = _settle(e.body, e.index, e.count)
        if body != e.body:
            return type(e)(body, e.index, e.count)
    return e


def _blockdiag():
    from ..defs.rope import BlockDiag

    return BlockDiag


def multiply_block_diagonals(e):
    """Merge adjacent block-diagonal factors of a product (bottom-up)."""
    BlockDiag = _blockdiag()
    if not isinstance(e, MatrixExpr) or not e.args:
        return e
    args = [multiply_block_diagonals(a) if isinstance(a, MatrixExpr) else a for a in e.args]
    if any(a is not b for a, b in zip(args, e.args)):
        e = e.func(*args)
    if not isinstance(e, sp.MatMul):
        return e
    factors, changed = list(e.args), False
    k = 0
    while k + 1 < len(factors):
        a, b = factors[k], factors[k + 1]
        if (isinstance(a, BlockDiag) and isinstance(b, BlockDiag) and a.count == b.count
                and sp.expand(a.body.cols - b.body.rows) == 0
                and (b.index == a.index or a.index not in b.body.free_symbols)):
            body = a.body * b.body.xreplace({b.index: a.index})
            factors[k:k + 2] = [BlockDiag(body.doit(), a.index, a.count)]
            changed = True
            continue
        k += 1
    return sp.MatMul(*factors).doit(deep=False) if changed else e


def _block_line(B, k: int, axis: int):
    """Block column k (axis 0) or block row k (axis 1) of the block grid B, as one matrix."""
    if axis == 0:
        parts = [B[r, k] for r in range(B.rows)]
        return parts[0] if len(parts) == 1 else sp.BlockMatrix([[b] for b in parts])
    parts = [B[k, c] for c in range(B.cols)]
    return parts[0] if len(parts) == 1 else sp.BlockMatrix([parts])


@bottom_up
def split_softmax_over_blocks(e):
    """Softmax over columns of side-by-side blocks (rows of stacked blocks) -> the blocks' Softmaxes."""
    if not isinstance(e, Softmax):
        return e
    X, axis = e.arg, e.axis
    if isinstance(X, sp.BlockMatrix):
        B = X.blocks
        count = B.cols if axis == 0 else B.rows
        if count < 2:
            return e
        parts = [Softmax(_block_line(B, k, axis), axis) for k in range(count)]
        return sp.BlockMatrix([parts]) if axis == 0 else sp.BlockMatrix([[p] for p in parts])
    if isinstance(X, HeadConcat if axis == 0 else HeadStack):
        return type(X)(Softmax(X.body, axis), X.index, X.count)
    return e


def _shared_denominator_blocks(parts):
    """[diag(l)⁻¹ Exp(B_1) ... diag(l)⁻¹ Exp(B_c)] with l = Σ_k Exp(B_k) 1 (the row-axis softmax)."""
    l = sp.MatAdd(*[sp.MatMul(Exp(b), sp.OneMatrix(b.cols, 1)) for b in parts])
    return [DivideRows(Exp(b), l) for b in parts]


def softmax_across_blocks(e):
    """Softmax over the axis that crosses the blocks -> the blocks over one shared denominator
    (wherever it occurs in e, inside the blocks of a block matrix too)."""
    if not isinstance(e, sp.Basic):
        return e
    return e.replace(lambda x: isinstance(x, Softmax) and isinstance(x.arg, sp.BlockMatrix), _across_blocks)


def _across_blocks(e):
    B, axis = e.arg.blocks, e.axis
    if axis == 1 and B.rows == 1 and B.cols >= 2:
        return sp.BlockMatrix([_shared_denominator_blocks([B[0, k] for k in range(B.cols)])])
    if axis == 0 and B.cols == 1 and B.rows >= 2:
        parts = _shared_denominator_blocks([sp.Transpose(B[k, 0]).doit() for k in range(B.rows)])
        return sp.BlockMatrix([[sp.Transpose(p)] for p in parts])
    return e


def _flat_parts(B, axis: int) -> list:
    """The blocks of a single block row (axis 1) or column (axis 0), nested block rows spliced in."""
    out = []
    for k in range(B.cols if axis == 1 else B.rows):
        b = B[0, k] if axis == 1 else B[k, 0]
        if isinstance(b, sp.BlockMatrix) and (b.blocks.rows == 1 if axis == 1 else b.blocks.cols == 1):
            out += _flat_parts(b.blocks, axis)
        else:
            out.append(b)
    return out


def _constant_like(Y, sizes, axis: int):
    """The ones or zero matrix Y cut into blocks of ``sizes`` along its rows (axis 0) or columns."""
    cls = type(Y)
    if axis == 0:
        return sp.BlockMatrix([[cls(k, Y.cols)] for k in sizes])
    return sp.BlockMatrix([[cls(Y.rows, k) for k in sizes]])


@bottom_up
def split_constant_blocks(e):
    """[A B] 1 -> [A B] [1; 1] and 1 [C; D] -> [1 1] [C; D]: a ones (zero) matrix next to a block matrix
    in a product is cut along the blocks' sizes, so the product multiplies block by block."""
    if not isinstance(e, sp.MatMul):
        return e
    args, changed = list(e.args), False
    for k in range(len(args) - 1):
        X, Y = args[k], args[k + 1]
        if isinstance(X, sp.BlockMatrix) and isinstance(Y, (sp.OneMatrix, sp.ZeroMatrix)) and X.blocks.cols >= 2:
            args[k + 1], changed = _constant_like(Y, X.colblocksizes, 0), True
        elif isinstance(Y, sp.BlockMatrix) and isinstance(X, (sp.OneMatrix, sp.ZeroMatrix)) and Y.blocks.rows >= 2:
            args[k], changed = _constant_like(X, Y.rowblocksizes, 1), True
    return sp.MatMul(*args) if changed else e


def flatten_nested_blocks(e):
    """[[A B] C] -> [A B C] and [[A; B]; C] -> [A; B; C], wherever a block matrix occurs in e."""

    def rule(x):
        B = x.blocks
        for axis, single in ((1, B.rows == 1), (0, B.cols == 1)):
            if single:
                parts = _flat_parts(B, axis)
                if len(parts) > (B.cols if axis == 1 else B.rows):
                    return sp.BlockMatrix([parts] if axis == 1 else [[p] for p in parts])
        return x

    return e.replace(lambda x: isinstance(x, sp.BlockMatrix), rule) if isinstance(e, sp.Basic) else e


@bottom_up
def power_of_block_diagonal(e):
    """diag(B_i)^k -> diag(B_i^k) for an integer k >= 1."""
    BlockDiag = _blockdiag()
    if (isinstance(e, sp.MatPow) and not isinstance(e, sp.Inverse) and isinstance(e.base, BlockDiag)
            and sp.sympify(e.exp).is_Integer and e.exp >= 1):
        d = e.base
        return BlockDiag(sp.MatPow(d.body, e.exp).doit(), d.index, d.count)
    return e


def _is_identity_block(b) -> bool:
    if isinstance(b, sp.Identity):
        return True
    return isinstance(b, sp.MatrixBase) and b.rows == b.cols and b == sp.eye(b.rows)


def identity_block_diagonals(e):
    """diag(I_k, ..., I_k) -> I_{kp} and diag(0, ..., 0) -> 0 (bottom-up)."""
    BlockDiag = _blockdiag()

    def rule(x):
        if isinstance(x, sp.BlockDiagMatrix) and all(_is_identity_block(b) for b in x.diag):
            return sp.Identity(x.rows)
        if isinstance(x, BlockDiag):
            if _is_identity_block(x.body):
                return sp.Identity(x.rows)
            if isinstance(x.body, sp.ZeroMatrix) or (isinstance(x.body, sp.MatrixBase) and x.body.is_zero_matrix):
                return sp.ZeroMatrix(*x.shape)
        return x

    return bottom_up(rule)(e) if isinstance(e, MatrixExpr) else e


def _scaled_identity(b):
    """c for a block c·I (an Identity node times a scalar), None otherwise."""
    if isinstance(b, sp.Identity):
        return sp.Integer(1)
    if isinstance(b, sp.MatMul):
        coeff, mats = b.as_coeff_matrices()
        if len(mats) == 1 and isinstance(mats[0], sp.Identity):
            return sp.sympify(coeff)
    return None


def identity_block_grid(e):
    """[c I_a 0; 0 c I_b] -> c I_{a+b}: a square grid of square blocks, c·I on the diagonal (one c
    for all) and zero blocks elsewhere, is c times the identity (wherever it occurs in e)."""

    def rule(x):
        B = x.blocks
        if B.rows != B.cols or B.rows < 2:
            return x
        cs = {_scaled_identity(B[k, k]) for k in range(B.rows)}
        off = all(isinstance(B[r, c], sp.ZeroMatrix) for r in range(B.rows) for c in range(B.cols) if r != c)
        if len(cs) == 1 and None not in cs and off:
            (c,) = cs
            return sp.MatMul(c, sp.Identity(x.rows)).doit(deep=False) if c != 1 else sp.Identity(x.rows)
        return x

    return e.replace(lambda x: isinstance(x, sp.BlockMatrix), rule) if isinstance(e, sp.Basic) else e


def _canonical_kind(e):
    """(base, kind) of the canonical bound index of a binder node, or None for other binders."""
    from ..defs.dims import BoundIndex, HeadIndex

    if isinstance(e, _OverHeads):
        return "h", HeadIndex
    if isinstance(e, _blockdiag()):
        return "i", BoundIndex
    return None


@bottom_up
def canonical_binder_indices(e):
    """Rename the index of a binder bound by a user's symbol to the canonical fresh index (bottom-up)."""
    from ..defs.dims import BoundIndex, bound_index
    from ..defs.heads import fresh_index, substitute

    kind = _canonical_kind(e)
    if kind is None or isinstance(e.index, BoundIndex):
        return e
    new = fresh_index(bound_index(kind[0], 0, kind[1]), e.body)
    return type(e)(substitute(e.body, {e.index: new}), new, e.count)


@bottom_up
def constant_head_sums(e):
    """Σ_{h=1}^{H} e -> H·e when h is not free in e."""
    if isinstance(e, HeadSum) and not _occurs_free(e.index, e.body):
        return sp.MatMul(e.count, e.body).doit(deep=False)
    return e


def _occurs_free(x, body) -> bool:
    """True when the symbol x occurs free in body (a capture-avoiding substitution would change it)."""
    from ..defs.heads import substitute

    return substitute(body, {x: sp.Dummy("probe")}) != body


@bottom_up
def scalars_into_block_diagonals(e):
    """c·diag(B_i) -> diag(c·B_i) for a scalar c free of i."""
    BlockDiag = _blockdiag()
    if isinstance(e, sp.MatMul):
        coeff, mats = e.as_coeff_matrices()
        if (len(mats) == 1 and isinstance(mats[0], BlockDiag) and coeff != 1
                and mats[0].index not in sp.sympify(coeff).free_symbols):
            d = mats[0]
            return BlockDiag((coeff * d.body).doit(), d.index, d.count)
    return e


def _nonneg(x) -> bool:
    return sp.expand(x).is_nonnegative is True


@bottom_up
def slice_block_diagonals(e):
    """diag(B_1..B_c)[Ra:Rb, Ca:Cb] -> diag(B_{a+1}..B_b) on block boundaries (see the rules above)."""
    from ..defs.heads import substitute

    BlockDiag = _blockdiag()
    if not (isinstance(e, sp.MatrixSlice) and isinstance(e.parent, BlockDiag)):
        return e
    d = e.parent
    (r0, r1, rs), (c0, c1, cs) = e.rowslice, e.colslice
    if rs != 1 or cs != 1:
        return e
    R, C = d.body.rows, d.body.cols
    a, b = sp.simplify(r0 / R), sp.simplify(r1 / R)
    if sp.expand(c0 / C - a) != 0 or sp.expand(c1 / C - b) != 0:
        return e
    if not (a.is_integer is True and b.is_integer is True and _nonneg(a) and _nonneg(b - a - 1)
            and _nonneg(d.count - b)):
        return e
    return BlockDiag(substitute(d.body, {d.index: d.index + a}), d.index, b - a)


def _ceiling_parts(c):
    """(a, r) for ceiling(a/r) with a an integer and r a positive integer; None otherwise."""
    a, r = sp.fraction(sp.together(c.args[0]))
    if a.is_integer is True and r.is_integer is True and r.is_positive is True:
        return a, r
    return None


def ceilings_as_floors(e):
    """ceiling(a/r) -> floor((a + r - 1)/r) for an integer a and a positive integer r."""
    return e.replace(lambda x: isinstance(x, sp.ceiling) and _ceiling_parts(x) is not None,
                     lambda x: sp.floor(sp.expand((_ceiling_parts(x)[0] + _ceiling_parts(x)[1] - 1)
                                                  / _ceiling_parts(x)[1])))


def _lower_sine_powers(y):
    """sin(u)^n = (1 - cos(u)^2) sin(u)^(n-2) for n >= 2 (Pythagoras), until no square of a sine is left."""
    for _ in range(8):
        new = sp.expand(y.replace(
            lambda z: z.is_Pow and isinstance(z.base, sp.sin) and z.exp.is_Integer and z.exp >= 2,
            lambda z: (1 - sp.cos(z.base.args[0]) ** 2) * sp.sin(z.base.args[0]) ** (z.exp - 2)))
        if new == y:
            return y
        y = new
    return y


def _trig_entry(y):
    return _lower_sine_powers(sp.expand(y, trig=True))


def _trig_coefficient(m) -> bool:
    return isinstance(m, sp.MatMul) and m.as_coeff_matrices()[0].has(sp.cos, sp.sin)


def _expand_coefficient(m):
    c, mats = m.as_coeff_matrices()
    new = _trig_entry(c)
    return m if new == c else sp.MatMul(new, *mats)


def expand_trig_entries(e):
    """Expand cos and sin of sums in every explicit matrix inside ``e``, in the scalar coefficient of every
    product (cos(a - b) A, cosFormer's re-weighting) and in a scalar ``e``; sin^2 = 1 - cos^2."""
    if isinstance(e, sp.MatrixBase):
        return sp.ImmutableMatrix(e.applyfunc(_trig_entry))
    if not _is_matrix(e):
        return _trig_entry(e) if isinstance(e, sp.Expr) and not e.has(MatrixExpr) else e
    e = e.replace(lambda x: isinstance(x, sp.ImmutableMatrix) and x.has(sp.cos, sp.sin),
                  lambda x: x.applyfunc(_trig_entry))
    return e.replace(_trig_coefficient, _expand_coefficient)


def _round(e):
    e = e.doit()
    if e.has(Binder):
        e = constant_head_sums(canonical_binder_indices(e))
    if e.has(sp.ceiling):
        e = ceilings_as_floors(e)
    if _is_matrix(e):
        e = e.expand()
    if e.has(sp.BlockMatrix):
        e = sp.block_collapse(split_constant_blocks(flatten_nested_blocks(e)))
        if isinstance(e, sp.BlockMatrix) and e.blockshape == (1, 1):
            e = e.blocks[0, 0]
        if e.has(sp.Identity):
            e = identity_block_grid(e)
    if e.has(HeadSum):
        e = push_into_head_sums(e)
    if e.has(Softmax) and e.has(sp.BlockMatrix, HeadConcat, HeadStack):
        e = softmax_across_blocks(split_softmax_over_blocks(e))
    if e.has(sp.floor):
        e = settle_floors_over_heads(e)
    if e.has(_blockdiag()):
        if e.has(sp.MatPow):
            e = power_of_block_diagonal(e)
        if e.has(sp.MatrixSlice):
            e = slice_block_diagonals(e)
        e = multiply_block_diagonals(scalars_into_block_diagonals(e))
    if e.has(_blockdiag(), sp.BlockDiagMatrix):
        e = identity_block_diagonals(e)
    if e.has(sp.cos, sp.sin):
        e = expand_trig_entries(e)
    return e


def canon(e):
    """The canonical form of a matrix (or scalar) expression under the rules above."""
    for _ in range(MAX_ROUNDS):
        new = _round(e)
        if new == e:
            return new
        e = new
    return e


def is_zero_matrix(e) -> bool:
    if isinstance(e, sp.ZeroMatrix):
        return True
    if isinstance(e, sp.MatrixBase):
        return all(x == 0 for x in e)
    return e == 0


def undefined(e) -> bool:
    """True when ``e`` holds a value that is no number (nan, complex infinity ``zoo``): such a
    form equals nothing, not even itself."""
    return isinstance(e, sp.Basic) and dag.has(e, sp.nan, sp.zoo)


def same_by_rewriting(lhs, rhs) -> tuple[bool, list[str]]:
    """Try to show lhs = rhs by rewriting both sides (and their difference) to canonical form."""
    cl, cr = canon(lhs), canon(rhs)
    trace = [TraceLine("canonical lhs: {}", cl), TraceLine("canonical rhs: {}", cr)]
    if undefined(cl) or undefined(cr):
        trace.append("a canonical form holds an undefined value (nan or zoo), which equals nothing")
        return False, trace
    if cl == cr:
        trace.append("the canonical forms coincide")
        return True, trace
    diff = canon(sp.MatAdd(cl, -cr))
    if is_zero_matrix(diff):
        trace.append("lhs - rhs rewrites to the zero matrix")
        return True, trace
    trace.append(TraceLine("lhs - rhs rewrites to {}, not to zero", diff, limit=300))
    return False, trace
