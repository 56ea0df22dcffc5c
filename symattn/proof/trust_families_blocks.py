"""Instance families of the trust base for the block rules of strategy A that meet online softmax,
the KV cache, RoPE and repeat_kv: a softmax over the axis crossing the blocks (one shared
denominator), nested block rows, powers of block diagonals and c·I block grids (see
:mod:`symattn.proof.trust_families`).

Each right side is written independently of the code that rewrites the left one: the column twin
of the shared denominator as the transpose of the row form, a power as the product it stands for.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..defs.heads import FamilyMember
from ..defs.numeric_nodes import DivideRows, Exp
from ..defs.rope import BlockDiag
from ..defs.rope import i as BLOCK_INDEX
from ..defs.softmax import Softmax
from . import canon, entrywise
from .trust_check import Case
from .trust_families import _dim, _leaf


def _row_sums_of_exp(*parts):
    return sp.MatAdd(*[sp.MatMul(Exp(b), sp.OneMatrix(b.cols, 1)) for b in parts])


def _softmax_across_blocks(m, a, b):
    A, B, C = _leaf("A", m, a), _leaf("B", m, b), _leaf("C", m, a + b)
    side = sp.BlockMatrix([[A, B]])
    l2 = _row_sums_of_exp(A, B)
    three = sp.BlockMatrix([[A, B, C]])
    l3 = _row_sums_of_exp(A, B, C)
    At, Bt = _leaf("D", a, m), _leaf("E", b, m)
    stacked = sp.BlockMatrix([[At], [Bt]])
    lt = _row_sums_of_exp(sp.Transpose(At), sp.Transpose(Bt))
    pairs = [
        (Softmax(side, 1), sp.BlockMatrix([[DivideRows(Exp(A), l2), DivideRows(Exp(B), l2)]])),
        (Softmax(three, 1), sp.BlockMatrix([[DivideRows(Exp(A), l3), DivideRows(Exp(B), l3), DivideRows(Exp(C), l3)]])),
        # the column twin, stated as the transpose of the row form
        (Softmax(stacked, 0), sp.Transpose(sp.BlockMatrix([[DivideRows(Exp(sp.Transpose(At)), lt),
                                                             DivideRows(Exp(sp.Transpose(Bt)), lt)]]))),
        # the axis that does not cross the blocks is split_softmax_over_blocks', not this rule's
        (Softmax(side, 0), None), (Softmax(stacked, 1), None),
    ]
    return [Case(lhs, rhs, canon.softmax_across_blocks(lhs)) for lhs, rhs in pairs]


def _flatten_nested_blocks(r, a, b):
    X, Y, Z = _leaf("X", r, a), _leaf("Y", r, b), _leaf("Z", r, a)
    U, V, W = _leaf("U", a, r), _leaf("V", b, r), _leaf("W", a, r)
    pairs = [
        (sp.BlockMatrix([[sp.BlockMatrix([[X, Y]]), Z]]), sp.BlockMatrix([[X, Y, Z]])),
        (sp.BlockMatrix([[X, sp.BlockMatrix([[Y, Z]])]]), sp.BlockMatrix([[X, Y, Z]])),
        (sp.BlockMatrix([[sp.BlockMatrix([[U], [V]])], [W]]), sp.BlockMatrix([[U], [V], [W]])),
        # a nested grid of two block rows inside a block row is not a block row: left alone
        (sp.BlockMatrix([[sp.BlockMatrix([[X], [_leaf("T", b, a)]]), _leaf("S", r + b, a)]]), None),
    ]
    cases = [Case(lhs, rhs, canon.flatten_nested_blocks(lhs)) for lhs, rhs in pairs]
    # strategy B's merge of slices splices nested block rows first: [[K[:, :a] K[:, a:a+b]] K[:, a+b:]] = K
    K = _leaf("K", r, 2 * a + b)
    nested = sp.BlockMatrix([[sp.BlockMatrix([[K[:, :a], K[:, a:a + b]]]), K[:, a + b:]]])
    cases.append(Case(nested, K, entrywise.merge_slices(nested)))
    return cases


@lru_cache(maxsize=None)
def _power_symbolic():
    P, R = _dim("p"), _dim("r")
    B = FamilyMember("B", BLOCK_INDEX, R, R)
    forms = [(k, sp.MatPow(BlockDiag(B, BLOCK_INDEX, P), k)) for k in (1, 2, 3)]
    return P, R, B, [(k, x, canon.power_of_block_diagonal(x)) for k, x in forms]


def _power_of_block_diagonal(p, r):
    P, R, B, forms = _power_symbolic()
    at = {P: p, R: r}
    cases = []
    for k, x, got in forms:
        D = BlockDiag(B, BLOCK_INDEX, P).xreplace(at)
        cases.append(Case(x.xreplace(at), sp.MatMul(*[D] * k), got.xreplace(at), changed=got != x))
    # a power of a matrix that is no block diagonal is left alone
    A = _leaf("A", r, r)
    cases.append(Case(sp.MatPow(A, 2), None, canon.power_of_block_diagonal(sp.MatPow(A, 2))))
    return cases


def _identity_block_grid(a, b):
    Ia, Ib = sp.Identity(a), sp.Identity(b)
    Zab, Zba = sp.ZeroMatrix(a, b), sp.ZeroMatrix(b, a)
    pairs = [
        (sp.BlockMatrix([[3 * Ia, Zab], [Zba, 3 * Ib]]), 3 * sp.Identity(a + b)),
        (sp.BlockMatrix([[Ia, Zab], [Zba, Ib]]), sp.Identity(a + b)),
        (sp.BlockMatrix([[3 * Ia, Zab], [Zba, 2 * Ib]]), None),          # two different scalars
        (sp.BlockMatrix([[Ia, Zab], [_leaf("T", b, a), Ib]]), None),     # a block off the diagonal
    ]
    return [Case(lhs, rhs, canon.identity_block_grid(lhs)) for lhs, rhs in pairs]


def _split_constant_blocks(r, a, b):
    A, B = _leaf("A", r, a), _leaf("B", r, b)
    C, D = _leaf("C", a, r), _leaf("D", b, r)
    one, zero = sp.OneMatrix, sp.ZeroMatrix
    side, stacked = sp.BlockMatrix([[A, B]]), sp.BlockMatrix([[C], [D]])
    pairs = [
        (sp.MatMul(side, one(a + b, 2)), sp.MatAdd(sp.MatMul(A, one(a, 2)), sp.MatMul(B, one(b, 2)))),
        (sp.MatMul(one(2, a + b), stacked), sp.MatAdd(sp.MatMul(one(2, a), C), sp.MatMul(one(2, b), D))),
        (sp.MatMul(side, zero(a + b, 2)), zero(r, 2)),
        (sp.MatMul(_leaf("X", r, a + b), one(a + b, 2)), None),  # no block matrix beside it: left alone
    ]
    return [Case(lhs, rhs, canon.split_constant_blocks(lhs)) for lhs, rhs in pairs]
