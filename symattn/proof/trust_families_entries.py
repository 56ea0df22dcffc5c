"""Instance families of the trust base for the entry rules of strategy B (entrywise.py): the entry
of each node at concrete indices, and its entry at symbolic indices and sizes instantiated, each
compared with the node's definition (see :mod:`symattn.proof.trust_families`)."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..defs.dims import h as H_INDEX
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask
from ..defs.numeric_nodes import DivideRows, Exp, Exp2, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import Permutation
from ..defs.softmax import Softmax
from . import canon, entrywise
from .trust_check import Case
from .trust_families import _dim, _doit_once, _index, _leaf


@lru_cache(maxsize=None)
def _symbolic_entry(e):
    i, j = _index("i"), _index("j")
    return entrywise.entry(e, i, j), i, j


def _entry_cases(e_sym, at: dict, symbolic: bool = True):
    """Case(e, its matrix of entries by ``entry``): at concrete indices, and (``symbolic``) from the
    entry at symbolic i, j and symbolic sizes, with the sizes and then i, j substituted."""
    e = e_sym.xreplace(at)
    r, c = int(e.rows), int(e.cols)
    cases = [Case(e, None, sp.ImmutableMatrix(r, c, lambda i, j: entrywise.entry(e, sp.Integer(i), sp.Integer(j))))]
    if symbolic:
        x, I, J = _symbolic_entry(e_sym)
        x = x.xreplace(at)
        cases.append(Case(e, None, sp.ImmutableMatrix(r, c, lambda i, j: x.xreplace({I: i, J: j}))))
    return cases


@lru_cache(maxsize=None)
def _dims3():
    return _dim("a"), _dim("b"), _dim("c")


def _entry_of_product(a, b, c):
    A_, B_, C_ = _dims3()
    A, B, C = _leaf("A", A_, B_), _leaf("B", B_, C_), _leaf("C", C_, A_)
    at = {A_: a, B_: b, C_: c}
    return _entry_cases(A * B, at) + _entry_cases(3 * A * B * C, at)


def _entry_of_elementwise(a, b):
    A_, B_, _ = _dims3()
    A, B = _leaf("A", A_, B_), _leaf("B", A_, B_)
    at = {A_: a, B_: b}
    out = []
    for e in (A + 2 * B, sp.Transpose(A), sp.HadamardProduct(A, B), sp.Identity(A_) * A, sp.OneMatrix(A_, B_),
              sp.ZeroMatrix(A_, B_) + A):
        out += _entry_cases(e, at)
    return out


def _entry_of_softmax(m, n):
    M_, N_, _ = _dims3()
    X, Y = _leaf("X", M_, N_), _leaf("Y", M_, N_)
    at = {M_: m, N_: n}
    return _entry_cases(Softmax(X, 0), at) + _entry_cases(Softmax(X + 2 * Y, 1), at)


def _entry_of_slice(r, c):
    R_, C_, _ = _dims3()
    X = _leaf("X", 2 * R_, C_ + 1)
    at = {R_: r, C_: c}
    out = []
    for e in (sp.MatrixSlice(X, (R_, 2 * R_, 1), (1, C_ + 1, 1)), sp.MatrixSlice(X, (0, 2 * R_, 2), (0, C_ + 1, 1))):
        out += _entry_cases(e, at)
    return out


def _merge_slices(r, a, b):
    R_, A_, B_ = _dims3()
    X = _leaf("X", R_, A_ + B_)
    Y = _leaf("Y", A_ + B_, R_)
    at = {R_: r, A_: a, B_: b}
    out = []
    side_by_side = [sp.MatrixSlice(X, (0, R_, 1), (0, A_, 1)), sp.MatrixSlice(X, (0, R_, 1), (A_, A_ + B_, 1))]
    stacked = [[sp.MatrixSlice(Y, (0, A_, 1), (0, R_, 1))], [sp.MatrixSlice(Y, (A_, A_ + B_, 1), (0, R_, 1))]]
    for e in (sp.BlockMatrix([side_by_side]), sp.BlockMatrix(stacked)):
        conc = e.xreplace(at)
        out.append(Case(conc, None, entrywise.merge_slices(conc)))
        out += _entry_cases(e, at)
    return out


def _entry_of_head_nodes(H, r, c):
    H_, R_, C_ = _dims3()
    E = FamilyMember("E", H_INDEX, R_, C_)
    at = {H_: H, R_: r, C_: c}
    out = []
    for node in (HeadSum, HeadStack, HeadConcat):
        out += _entry_cases(node(E, H_INDEX, H_), at)
    return out


def _entry_of_blocks(a, b, c):
    A, B = _leaf("A", a, b), _leaf("B", a, c)
    C, D = _leaf("C", b, b), _leaf("D", b, c)
    out = _entry_cases(sp.BlockMatrix([[A, B], [C, D]]), {}, symbolic=False)
    out += _entry_cases(sp.BlockMatrix([[A.T, C.T], [B.T, D.T]]), {}, symbolic=False)
    return out


def _entry_of_masks(m, n, t):
    M_, N_, T_ = _dims3()
    at = {M_: m, N_: n, T_: t}
    out = []
    for e in (CausalMask(M_, N_, T_ - 2), PaddingMask(M_, N_, T_)):
        out += _entry_cases(e, at)
    return out


def _entry_of_permutation(n):
    N_, _, _ = _dims3()
    P = Permutation("P", N_)
    X = _leaf("X", 2, N_)
    out = []
    for e in (P, sp.Transpose(P), X * P):
        out += _entry_cases(e, {N_: n})
    return out


def _entry_of_numeric_nodes(m, n):
    M_, N_, K_ = _dims3()
    X, Y = _leaf("X", M_, N_), _leaf("Y", M_, N_)
    c, d = _leaf("c", M_, 1), _leaf("d", M_, 1)
    positive = Exp(Y)  # Log is defined where every entry is positive
    at = {M_: m, N_: n}
    out = []
    # Exp2(X / ln 2): the entry exp((x / ln 2) ln 2) is exp(x) (SymPy cancels ln 2 in the product)
    for e in (Exp(X), Exp2(X), Exp2(X / sp.log(2)), Log(positive), ShiftRows(X, c), ScaleRows(d, X),
              DivideRows(X, Exp(d))):
        out += _entry_cases(e, at)
    for k in range(m):
        out += _entry_cases(RowOf(X, k), at, symbolic=False)
    return out


def _numeric_nodes_blockwise(m, a, b):
    A, B = _leaf("A", m, a), _leaf("B", m, b)
    c = _leaf("c", m, 1)
    row = sp.BlockMatrix([[A, B]])
    pairs = ((Exp(row), sp.BlockMatrix([[Exp(A), Exp(B)]])),
             (Exp2(row), sp.BlockMatrix([[Exp2(A), Exp2(B)]])),
             (Log(Exp(row)), sp.BlockMatrix([[Log(Exp(A)), Log(Exp(B))]])),
             (ShiftRows(row, c), sp.BlockMatrix([[ShiftRows(A, c), ShiftRows(B, c)]])))
    return [Case(lhs, rhs, lhs.doit()) for lhs, rhs in pairs]


def _symmetric(n):
    from ..defs.structured import Symmetric

    S, X = Symmetric("S", n), _leaf("X", n, n)
    entries = sp.ImmutableMatrix(n, n, lambda i, j: S[i, j])
    cases = [Case(sp.Transpose(S), S, _doit_once(sp.Transpose(S))),
             Case(sp.Transpose(sp.MatMul(S, X)), sp.MatMul(X.T, S), canon.canon(sp.Transpose(sp.MatMul(S, X)))),
             Case(S, None, sp.ImmutableMatrix(n, n, lambda i, j: S._entry(sp.Integer(i), sp.Integer(j))),
                  changed=n > 1),
             Case(S, None, Symmetric.impose(entries), changed=n > 1)]
    return cases + _entry_cases(S, {}, symbolic=False)
