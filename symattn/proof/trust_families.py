"""Instance families of the trust base: for each rule, a function of concrete sizes returning the
:class:`~symattn.proof.trust_check.Case` objects whose equality is the rule, with what the engine's
own implementation makes of each left side.

A rule that the engine applies to symbolic sizes (a symbolic number of heads H, of blocks p, a
symbolic range N) is applied here the same way, once per process (``lru_cache``), and its result is
then instantiated at each size; products are built with ``MatMul(...)``, not ``*``, which would call
doit and expand a node over a concrete number of heads before the rule sees it.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from ..defs.dims import HeadIndex
from ..defs.dims import h as H_INDEX
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import Visible
from ..defs.numeric_nodes import Exp, Exp2, Log
from ..defs.permutation import PermIndex, Permutation
from ..defs.rope import BlockDiag
from ..defs.rope import i as BLOCK_INDEX
from ..defs.softmax import Softmax
from . import canon, entrywise, sums
from .trust_check import Case
from .trust_eval import substitute_free


def _dim(name: str):
    return sp.Dummy(name, integer=True, positive=True)


def _index(name: str):
    return sp.Dummy(name, integer=True)


def _leaf(name, r, c):
    return sp.MatrixSymbol(name, r, c)


def _doit_once(e):
    return e.doit(deep=False)


def _canon_step(e):
    """One step of strategy A on SymPy's own rules: doit (transposes), then expand."""
    return e.doit().expand()


# --- strategy A: canon.py and the nodes' transpose rules ------------------------------------

def _transpose_of_product(a, b, c):
    A, B, C = _leaf("A", a, b), _leaf("B", b, c), _leaf("C", c, a)
    cases = []
    for lhs, rhs in ((sp.Transpose(A * B), B.T * A.T), (sp.Transpose(A * B * C), C.T * B.T * A.T)):
        cases.append(Case(lhs, rhs, lhs.doit()))
    return cases


def _transpose_of_sum(a, b):
    A, B = _leaf("A", a, b), _leaf("B", a, b)
    c = sp.Rational(3, 2) + sp.sqrt(2)
    pairs = ((sp.Transpose(A + B), A.T + B.T), (sp.Transpose(c * A), c * A.T), (sp.Transpose(sp.Transpose(A)), A))
    return [Case(lhs, rhs, lhs.doit()) for lhs, rhs in pairs]


def _entrywise_of_blocks(n, m, d):
    """Exp, Exp2 and Log act entry by entry, so block by block: of a stack, a block row, a 2 × 2 grid."""
    A, B, C, D = _leaf("A", n, m), _leaf("B", d, m), _leaf("C", n, d), _leaf("D", d, d)
    grids = ([[A], [B]], [[A, C]], [[A, C], [B, D]])
    positive = [[[Exp(b) for b in row] for row in grid] for grid in grids]  # Log's blocks: positive entries
    out = []
    for node, gs in ((Exp, grids), (Exp2, grids), (Log, positive)):
        for grid in gs:
            lhs = node(sp.BlockMatrix(grid))
            out.append(Case(lhs, sp.BlockMatrix([[node(b) for b in row] for row in grid]), _doit_once(lhs)))
    return out


def _dag_normal_forms(n, m):
    """The normal forms on the DAG (structural.py): transposes pushed to the leaves, a 1 × 1 product
    that is its own transpose, a symmetric input, products of products and sums of sums flattened."""
    from ..defs.structured import Symmetric
    from .structural import _Normalizer

    A, B, C = _leaf("A", n, m), _leaf("B", m, n), _leaf("C", n, n)
    x, y, S = _leaf("x", n, 1), _leaf("y", n, 1), Symmetric("S", n)
    pairs = ((sp.Transpose(sp.MatMul(x.T, C, y)), sp.MatMul(y.T, C.T, x)),
             (sp.Transpose(sp.MatMul(x.T, S, y)), sp.MatMul(x.T, S, y)),
             (sp.Transpose(sp.MatMul(A, sp.MatMul(B, C))), sp.MatMul(C.T, B.T, A.T)),
             (sp.MatAdd(sp.Transpose(C), sp.MatAdd(C, sp.Transpose(sp.MatMul(A, B)))), C.T + C + B.T * A.T),
             (sp.Transpose(Softmax(sp.MatMul(A, B), 0)), Softmax(sp.MatMul(B.T, A.T), 1)))
    return [Case(lhs, rhs, _Normalizer().normal(lhs)) for lhs, rhs in pairs]


def _transpose_of_softmax(m, n):
    X = _leaf("X", m, n)
    return [Case(sp.Transpose(Softmax(X, ax)), Softmax(X.T, 1 - ax), _doit_once(sp.Transpose(Softmax(X, ax))))
            for ax in (0, 1)]


def _transpose_of_head_nodes(H, r, c):
    E = FamilyMember("E", H_INDEX, r, c)
    Et = sp.Transpose(E)
    pairs = ((HeadStack(E, H_INDEX, H), HeadConcat(Et, H_INDEX, H)),
             (HeadConcat(E, H_INDEX, H), HeadStack(Et, H_INDEX, H)),
             (HeadSum(E, H_INDEX, H), HeadSum(Et, H_INDEX, H)))
    return [Case(sp.Transpose(x), rhs, _doit_once(sp.Transpose(x))) for x, rhs in pairs]


def _transpose_of_block_diagonal(p, r, c):
    B = FamilyMember("B", BLOCK_INDEX, r, c)
    lhs = sp.Transpose(BlockDiag(B, BLOCK_INDEX, p))
    return [Case(lhs, BlockDiag(sp.Transpose(B), BLOCK_INDEX, p), _doit_once(lhs))]


def _distribute(a, b, c):
    A, B, C, D = _leaf("A", a, b), _leaf("B", b, c), _leaf("C", b, c), _leaf("D", c, a)
    pairs = ((A * (B + C), A * B + A * C), ((B + C) * D, B * D + C * D),
             (sp.MatMul(A, 3 * B, evaluate=False), 3 * (A * B)),
             (sp.MatMul(A * B, D, evaluate=False), sp.MatMul(A, B * D, evaluate=False)),
             (sp.MatAdd(B, B, C, -C, evaluate=False), 2 * B))
    return [Case(lhs, rhs, _canon_step(lhs)) for lhs, rhs in pairs]


def _multiply_blocks(a, b1, b2, c):
    A, B = _leaf("A", a, b1), _leaf("B", a, b2)
    C, D = _leaf("C", b1, c), _leaf("D", b2, c)
    row, col = sp.BlockMatrix([[A, B]]), sp.BlockMatrix([[C], [D]])
    pairs = ((row * col, A * C + B * D), (sp.Transpose(row), sp.BlockMatrix([[A.T], [B.T]])),
             (col * sp.Transpose(col), sp.BlockMatrix([[C * C.T, C * D.T], [D * C.T, D * D.T]])))
    return [Case(lhs, rhs, sp.block_collapse(lhs)) for lhs, rhs in pairs]


@lru_cache(maxsize=None)
def _push_symbolic():
    """The rule applied as the engine applies it: to nodes over a symbolic number of heads H.

    Products are built with MatMul(...) and not with ``*``, which would call doit and expand a
    node over a concrete number of heads before the rule sees it.
    """
    h = H_INDEX
    h2 = HeadIndex("h'", integer=True, positive=True)
    H, R, A, C = _dim("H"), _dim("r"), _dim("a"), _dim("c")
    M, N = _leaf("M", R, A), _leaf("N", C, R)
    E, F = FamilyMember("E", h, A, C), FamilyMember("F", h, A, C)
    E2 = FamilyMember("E", h2, A, C)
    W = FamilyMember("W", h, R, A)
    S = HeadSum(E, h, H)
    pairs = [(sp.MatMul(M, S), HeadSum(sp.MatMul(M, E), h, H)), (sp.MatMul(S, N), HeadSum(sp.MatMul(E, N), h, H)),
             (sp.MatMul(3, S), HeadSum(sp.MatMul(3, E), h, H)),
             (HeadSum(sp.MatAdd(E, F), h, H), sp.MatAdd(S, HeadSum(F, h, H))),
             # W_h depends on the outer index: pushed only into a sum over another index
             (HeadSum(sp.MatMul(W, HeadSum(E2, h2, H)), h, H), HeadSum(HeadSum(sp.MatMul(W, E2), h2, H), h, H)),
             # the same index bound twice: W_h may not move into the inner sum (capture)
             (HeadSum(sp.MatMul(W, HeadSum(E, h, H)), h, H), None)]
    return (H, R, A, C), [(lhs, rhs, canon.push_into_head_sums(lhs)) for lhs, rhs in pairs]


def _push_into_head_sums(H, r, a, c):
    dims, forms = _push_symbolic()
    at = dict(zip(dims, (H, r, a, c)))
    return [Case(lhs.xreplace(at), None if rhs is None else rhs.xreplace(at), got.xreplace(at), changed=got != lhs)
            for lhs, rhs, got in forms]


@lru_cache(maxsize=None)
def _settled_symbolic():
    Hs = _dim("H")
    lhs = HeadSum(FamilyMember("W", sp.floor((H_INDEX - 1) / Hs) + 1, 2, 2), H_INDEX, Hs)
    return Hs, lhs, canon.settle_floors_over_heads(lhs)


def _settle_floors(H, r, s):
    h = H_INDEX
    cases = []
    constant = (H - 1 + s) // r == s // r
    for node in (HeadSum, HeadStack):
        lhs = node(FamilyMember("W", sp.floor((h - 1 + s) / r) + 1, 2, 2), h, H)
        rhs = node(FamilyMember("W", sp.Integer(s // r + 1), 2, 2), h, H) if constant else None
        cases.append(Case(lhs, rhs, canon.settle_floors_over_heads(lhs)))
    Hs, lhs, rew = _settled_symbolic()  # the group of GQA with G = 1: floor((h - 1)/H) + 1 = 1
    cases.append(Case(lhs.xreplace({Hs: H}), HeadSum(FamilyMember("W", 1, 2, 2), h, H), rew.xreplace({Hs: H})))
    return cases


@lru_cache(maxsize=None)
def _block_diagonals_symbolic():
    i = BLOCK_INDEX
    P, A_, B_, C_ = _dim("p"), _dim("a"), _dim("b"), _dim("c")
    A, B = FamilyMember("A", i, A_, B_), FamilyMember("B", i, B_, C_)
    lhs = BlockDiag(A, i, P) * BlockDiag(B, i, P)
    return (P, A_, B_, C_), lhs, BlockDiag(A * B, i, P), canon.multiply_block_diagonals(lhs)


def _multiply_block_diagonals(p, a, b, c):
    dims, lhs, rhs, got = _block_diagonals_symbolic()  # the rule acts on a symbolic number of blocks
    at = dict(zip(dims, (p, a, b, c)))
    return [Case(lhs.xreplace(at), rhs.xreplace(at), got.xreplace(at), changed=got != lhs)]


@lru_cache(maxsize=None)
def _trig_symbolic():
    x, y = sp.Dummy("x", real=True), sp.Dummy("y", real=True)
    M = sp.ImmutableMatrix([[sp.cos(x + y), sp.sin(x + y), sp.cos(-x), sp.sin(-x), sp.sin(x) ** 2, sp.sin(x) ** 3]])
    return x, y, M, canon.expand_trig_entries(M)


def _trig(a, b):
    x, y, M, rew = _trig_symbolic()
    X, Y = a * sp.pi / 12, b * sp.pi / 12
    rhs = sp.ImmutableMatrix([[sp.cos(X) * sp.cos(Y) - sp.sin(X) * sp.sin(Y), sp.sin(X) * sp.cos(Y)
                               + sp.cos(X) * sp.sin(Y), sp.cos(X), -sp.sin(X), 1 - sp.cos(X) ** 2,
                               (1 - sp.cos(X) ** 2) * sp.sin(X)]])
    at = {x: X, y: Y}
    A = sp.MatrixSymbol("A", 2, 2)  # a coefficient of a product: cos(x + y) A + sin(x)^2 A
    lhs = sp.cos(x + y) * A + sp.sin(x) ** 2 * A
    coefficient = (sp.cos(X) * sp.cos(Y) - sp.sin(X) * sp.sin(Y)) * A + (1 - sp.cos(X) ** 2) * A
    return [Case(M.xreplace(at), rhs, rew.xreplace(at)),
            Case(lhs.xreplace(at), coefficient, canon.expand_trig_entries(lhs).xreplace(at))]


def _split_softmax_over_blocks(m, a, b):
    A, B = _leaf("A", m, a), _leaf("B", m, b)
    C, D = _leaf("C", a, m), _leaf("D", b, m)
    E = FamilyMember("E", H_INDEX, m, a)
    Et = FamilyMember("E", H_INDEX, a, m)
    side, stacked = sp.BlockMatrix([[A, B]]), sp.BlockMatrix([[C], [D]])
    pairs = [(Softmax(side, 0), sp.BlockMatrix([[Softmax(A, 0), Softmax(B, 0)]])),
             (Softmax(stacked, 1), sp.BlockMatrix([[Softmax(C, 1)], [Softmax(D, 1)]])),
             (Softmax(HeadConcat(E, H_INDEX, b), 0), HeadConcat(Softmax(E, 0), H_INDEX, b)),
             (Softmax(HeadStack(Et, H_INDEX, b), 1), HeadStack(Softmax(Et, 1), H_INDEX, b)),
             # the other axis crosses the blocks: never split
             (Softmax(stacked, 0), None), (Softmax(side, 1), None)]
    return [Case(lhs, rhs, canon.split_softmax_over_blocks(lhs)) for lhs, rhs in pairs]


@lru_cache(maxsize=None)
def _identity_diagonals_symbolic():
    P, K = _dim("p"), _dim("k")
    i = BLOCK_INDEX
    forms = [BlockDiag(sp.Identity(K), i, P), BlockDiag(sp.ZeroMatrix(K, K), i, P),
             BlockDiag(FamilyMember("B", i, K, K), i, P)]
    return P, K, [(x, canon.identity_block_diagonals(x)) for x in forms]


def _identity_block_diagonals(p, k):
    P, K, forms = _identity_diagonals_symbolic()
    at = {P: p, K: k}
    rhs = [sp.Identity(p * k), sp.ZeroMatrix(p * k, p * k), None]
    cases = [Case(x.xreplace(at), r, got.xreplace(at), changed=got != x) for (x, got), r in zip(forms, rhs)]
    for x, r in ((sp.BlockDiagMatrix(sp.Identity(p), sp.Identity(k)), sp.Identity(p + k)),
                 (sp.BlockDiagMatrix(sp.ImmutableMatrix(sp.eye(k)), sp.Identity(p)), sp.Identity(p + k)),
                 (sp.BlockDiagMatrix(sp.Identity(p), _leaf("B", k, k)), None)):
        cases.append(Case(x, r, canon.identity_block_diagonals(x)))
    return cases


@lru_cache(maxsize=None)
def _canonical_binders_symbolic():
    H, R, C = _dim("H"), _dim("r"), _dim("c")
    u = sp.Symbol("u", integer=True, positive=True)  # a user's index
    h = H_INDEX
    E = FamilyMember("E", u, R, C)
    F = FamilyMember("F", h, C, C)
    forms = [HeadSum(E, u, H), HeadStack(E, u, H),
             # the body holds the canonical h, bound outside: the renamed index must not capture it
             HeadSum(HeadSum(sp.MatMul(E, F), u, H), h, H),
             BlockDiag(FamilyMember("B", u, R, C), u, H)]
    return (H, R, C), [(x, canon.canonical_binder_indices(x)) for x in forms]


def _canonical_binder_indices(H, r, c):
    dims, forms = _canonical_binders_symbolic()
    at = dict(zip(dims, (H, r, c)))
    return [Case(x.xreplace(at), None, got.xreplace(at), changed=got != x) for x, got in forms]


@lru_cache(maxsize=None)
def _constant_sums_symbolic():
    H, R, C = _dim("H"), _dim("r"), _dim("c")
    h = H_INDEX
    M = _leaf("M", R, C)
    E = FamilyMember("E", h, R, C)
    forms = [(HeadSum(M, h, H), sp.MatMul(H, M)),
             (HeadSum(HeadSum(E, h, 2), h, H), sp.MatMul(H, HeadSum(E, h, 2))),  # the inner sum binds h again
             (HeadSum(sp.MatAdd(M, E), h, H), None)]                              # h is free: not constant
    return (H, R, C), [(x, rhs, canon.constant_head_sums(x)) for x, rhs in forms]


def _constant_head_sums(H, r, c):
    dims, forms = _constant_sums_symbolic()
    at = dict(zip(dims, (H, r, c)))
    return [Case(x.xreplace(at), None if rhs is None else rhs.xreplace(at), got.xreplace(at), changed=got != x)
            for x, rhs, got in forms]


@lru_cache(maxsize=None)
def _scalars_into_diagonals_symbolic():
    P, R, C = _dim("p"), _dim("r"), _dim("c")
    i = BLOCK_INDEX
    B = FamilyMember("B", i, R, C)
    s = _leaf("s", 1, 1)
    forms = [(sp.MatMul(3, BlockDiag(B, i, P)), BlockDiag(sp.MatMul(3, B), i, P)),
             (sp.MatMul(s[0, 0] + sp.sqrt(2), BlockDiag(B, i, P)), BlockDiag(sp.MatMul(s[0, 0] + sp.sqrt(2), B), i, P))]
    return (P, R, C), [(x, rhs, canon.scalars_into_block_diagonals(x)) for x, rhs in forms]


def _scalars_into_block_diagonals(p, r, c):
    dims, forms = _scalars_into_diagonals_symbolic()
    at = dict(zip(dims, (p, r, c)))
    return [Case(x.xreplace(at), rhs.xreplace(at), got.xreplace(at), changed=got != x) for x, rhs, got in forms]


@lru_cache(maxsize=None)
def _ceilings_symbolic():
    A, R = sp.Dummy("a", integer=True), _dim("r")
    forms = [sp.ceiling(A / R), sp.ceiling((A + 1) / R), sp.ceiling(A / 2)]
    return A, R, [(x, canon.ceilings_as_floors(x)) for x in forms]


def _ceilings_as_floors(a, r):
    A, R, forms = _ceilings_symbolic()
    at = {A: a, R: r}
    return [Case(x.xreplace(at), None, got.xreplace(at), changed=got != x) for x, got in forms]


@lru_cache(maxsize=None)
def _slice_diagonals_symbolic():
    P, R, C = _dim("p"), _dim("r"), _dim("c")
    i = BLOCK_INDEX
    D = BlockDiag(FamilyMember("B", i, R, C), i, P)
    last = sp.MatrixSlice(D, (R * (P - 1), R * P, 1), (C * (P - 1), C * P, 1))
    return (P, R, C), last, canon.slice_block_diagonals(last)


def _slice_block_diagonals(p, r, c):
    i = BLOCK_INDEX
    D = BlockDiag(FamilyMember("B", i, r, c), i, p)
    cases = []
    for a in range(p):
        for b in range(a + 1, p + 1):
            x = sp.MatrixSlice(D, (r * a, r * b, 1), (c * a, c * b, 1))
            cases.append(Case(x, None, canon.slice_block_diagonals(x)))
    x = sp.MatrixSlice(D, (1, r * p, 1), (0, c * p - 1, 1)) if r * p > 1 and c * p > 1 else None
    if x is not None:  # off the block boundaries: the rule must leave it (or keep its value)
        cases.append(Case(x, None, canon.slice_block_diagonals(x)))
    dims, last, got = _slice_diagonals_symbolic()
    at = dict(zip(dims, (p, r, c)))
    cases.append(Case(last.xreplace(at), None, got.xreplace(at), changed=got != last))
    return cases


# --- sums.py -------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _delta_symbolic():
    N, U, k = _dim("N"), _index("u"), _index("k")
    a = _leaf("a", N + 1, 1)
    sigma = sp.Dummy("sigma")
    plain = sp.KroneckerDelta(k, U) * a[k, 0]
    permuted = sp.KroneckerDelta(PermIndex(sigma, N, k, 0), U) * a[k, 0]
    inside = {U: (0, N - 1)}
    maybe_outside = {U: (0, N)}
    return N, U, k, a, [
        (plain, sums.eliminate_delta(plain, k, 0, N - 1, inside), 0),
        (plain, sums.eliminate_delta(plain, k, 0, N - 1, maybe_outside), 1),
        (permuted, sums.eliminate_delta(permuted, k, 0, N - 1, inside), 0),
        (permuted, sums.eliminate_delta(permuted, k, 0, N - 1, maybe_outside), 1)]


def _eliminate_delta(n):
    N, U, k, a, forms = _delta_symbolic()
    cases = []
    for term, got, extra in forms:
        for u in range(n + extra):
            at = {N: n, U: u}
            lhs = sp.Sum(term, (k, 0, N - 1)).xreplace(at)
            sigma = [x for x in term.atoms(PermIndex)]
            if sigma:
                s = sigma[0].args[0]
                rhs = a[PermIndex(s, N, U, 1), 0].xreplace(at) if u < n else None
            else:
                rhs = a[U, 0].xreplace(at) if u < n else None
            cases.append(Case(lhs, rhs, None if got is None else got.xreplace(at)))
    return cases


@lru_cache(maxsize=None)
def _reindex_symbolic():
    N, k = _dim("N"), _index("k")
    a, b = _leaf("a", N, 1), _leaf("b", N, 1)
    s = sp.Dummy("sigma")
    sk = PermIndex(s, N, k, 0)
    only = a[sk, 0] * b[sk, 0] + a[sk, 0] ** 2
    mixed = a[sk, 0] * b[k, 0]
    return N, k, a, b, [(only, sums.reindex_permutation(only, k, 0, N - 1)),
                        (mixed, sums.reindex_permutation(mixed, k, 0, N - 1))]


def _reindex_permutation(n):
    N, k, a, b, forms = _reindex_symbolic()
    cases = []
    for body, got in forms:
        lhs = sp.Sum(body, (k, 0, N - 1)).xreplace({N: n})
        new = None if got is None else sp.Sum(got, (k, 0, N - 1)).xreplace({N: n})
        rhs = sp.Sum(a[k, 0] * b[k, 0] + a[k, 0] ** 2, (k, 0, N - 1)).xreplace({N: n}) if got is not None else None
        cases.append(Case(lhs, rhs, new))
    return cases


@lru_cache(maxsize=None)
def _visible_symbolic():
    N, U, k = _dim("N"), _index("u"), _index("k")
    a = _leaf("a", N, 1)
    term = a[k, 0] * sp.exp(Visible(k, U))
    forms = []
    for ranges, us in (({U: (0, N - 1)}, lambda n: range(n)), ({U: (N - 1, N + 2)}, lambda n: range(n - 1, n + 3)),
                       ({U: (0, N)}, lambda n: range(n + 1))):
        forms.append((us, sums.restrict_to_visible(term, k, 0, N - 1, ranges)))
    return N, U, k, a, term, forms


def _restrict_to_visible(n):
    N, U, k, a, term, forms = _visible_symbolic()
    cases = []
    for us, got in forms:
        for u in us(n):
            at = {N: n, U: u}
            lhs = sp.Sum(term, (k, 0, N - 1)).xreplace(at)
            rhs = sp.Sum(a[k, 0], (k, 0, min(u, n - 1))).xreplace(at)
            new = None if got is None else sp.Sum(got[0], (k, 0, got[1])).xreplace(at)
            cases.append(Case(lhs, rhs, new))
    return cases


@lru_cache(maxsize=None)
def _lower_symbolic():
    N, U, k = _dim("N"), _index("u"), _index("k")
    a = _leaf("a", N, 1)
    term = a[k, 0] * sp.exp(Visible(U, k + 2))
    forms = []
    for ranges, us in (({U: (2, N + 2)}, lambda n: range(2, n + 3)), ({U: (-3, 2)}, lambda n: range(-3, 3)),
                       ({U: (0, N + 2)}, lambda n: range(0, n + 3))):
        forms.append((us, sums.restrict_from_visible(term, k, 0, N - 1, ranges)))
    return N, U, k, a, term, forms


def _restrict_from_visible(n):
    """Σ_{k=0}^{n-1} a_k exp(Visible(u, k + 2)) = Σ_{k=max(0, u-2)}^{n-1} a_k."""
    N, U, k, a, term, forms = _lower_symbolic()
    cases = []
    for us, got in forms:
        for u in us(n):
            at = {N: n, U: u}
            lhs = sp.Sum(term, (k, 0, N - 1)).xreplace(at)
            rhs = sp.Sum(a[k, 0], (k, max(u - 2, 0), n - 1)).xreplace(at)
            new = None if got is None else sp.Sum(got[0], (k, got[1], N - 1)).xreplace(at)
            cases.append(Case(lhs, rhs, new))
    return cases


@lru_cache(maxsize=None)
def _blocks_symbolic():
    R, N, k = _dim("R"), _dim("N"), _index("k")
    a, b = _leaf("a", R * N, 1), _leaf("b", N, 1)
    body = a[k, 0] * b[sp.floor(k / R), 0]
    split = sums.split_into_blocks
    return R, N, k, body, split(body, k, 0, R * N - 1)


def _split_into_blocks(R, N):
    Rs, Ns, k, body, got = _blocks_symbolic()
    at = {Rs: R, Ns: N}
    lhs = sp.Sum(body, (k, 0, Rs * Ns - 1)).xreplace(at)
    return [Case(lhs, None, None if got is None else got.xreplace(at))]


@lru_cache(maxsize=None)
def _merge_symbolic():
    R, N, q, s = _dim("R"), _dim("N"), _index("q"), _index("s")
    a = _leaf("a", R * N + R, 1)
    inner = sp.Sum(a[R * q + s, 0] * (R * q + s), (s, 0, R - 1))
    return R, N, q, s, a, inner, sums.merge_blocks(inner, q, 1, N)


def _merge_blocks(R, N):
    """Σ_{q=1}^{N} Σ_{s=0}^{R-1} f(Rq + s) = Σ_{k=R}^{RN+R-1} f(k)."""
    Rs, Ns, q, s, a, inner, got = _merge_symbolic()
    at = {Rs: R, Ns: N}
    k = _index("k")
    lhs = sp.Sum(inner, (q, 1, Ns)).xreplace(at)
    rhs = sp.Sum(a[k, 0] * k, (k, Rs, Rs * Ns + Rs - 1)).xreplace(at)
    return [Case(lhs, rhs, None if got is None else got.xreplace(at))]


@lru_cache(maxsize=None)
def _shift_symbolic():
    """Bodies the shift must move (k in an entry index and a power) and must leave (k in a delta, a floor)."""
    L, N, k = _index("l"), _index("n"), _index("k")
    a = _leaf("a", 36, 1)  # k + 12 stays in 0..35 for lo in -9..9 and n <= 12
    forms = [(a[k + 12, 0] * k + k ** 2, True), (a[k + 12, 0] * sp.KroneckerDelta(k, 1), False),
             (a[sp.floor(k / 2) + 12, 0], False)]
    return L, N, k, [(body, ok, sums.shift_to_zero(body, k, L, L + N - 1)) for body, ok in forms]


def _shift_to_zero(n, lo):
    """Σ_{k=lo}^{lo+n-1} f(k) = Σ_{m=0}^{n-1} f(m + lo), n <= 0 (an empty range) included."""
    L, N, k, forms = _shift_symbolic()
    at = {L: lo, N: n}
    m = _index("m")
    cases = []
    for body, ok, got in forms:
        lhs = sp.Sum(body, (k, L, L + N - 1)).xreplace(at)
        rhs = sp.Sum(body.xreplace({k: m + L}), (m, 0, N - 1)).xreplace(at) if ok else None
        cases.append(Case(lhs, rhs, None if got is None else got.xreplace(at), changed=got is not None))
    return cases


@lru_cache(maxsize=None)
def _pull_symbolic():
    N, k, l = _dim("N"), _index("k"), _index("l")
    a, b, c = _leaf("a", N, 1), _leaf("b", N, 1), _leaf("c", 1, 1)
    flat = sp.Sum(c[0, 0] * a[k, 0] + b[k, 0] + 3, (k, 0, N - 1))
    rhs = c[0, 0] * sp.Sum(a[k, 0], (k, 0, N - 1)) + sp.Sum(b[k, 0], (k, 0, N - 1)) + 3 * N
    nested = sp.Sum(a[k, 0] * b[l, 0], (k, 0, l), (l, 0, N - 1))
    nested_rhs = sp.Sum(sp.Sum(a[k, 0] * b[l, 0], (k, 0, l)), (l, 0, N - 1))
    return N, [(flat, rhs, sums.simplify_sums(flat)), (nested, nested_rhs, sums.simplify_sums(nested))]


def _pull_constants(n):
    N, forms = _pull_symbolic()
    return [Case(lhs.xreplace({N: n}), rhs.xreplace({N: n}), got.xreplace({N: n})) for lhs, rhs, got in forms]


def _write_out_short_sums(n):
    k = _index("k")
    a = _leaf("a", n, 1)
    lhs = sp.Sum(a[k, 0] ** 2, (k, 0, n - 1))
    return [Case(lhs, sp.Add(*[a[j, 0] ** 2 for j in range(n)]), sums.simplify_sums(lhs))]


@lru_cache(maxsize=None)
def _cancel_permutation_symbolic():
    N, A, B = _dim("N"), _index("a"), _index("b")
    sigma = sp.Dummy("sigma")
    forms = []
    for inv in (0, 1):
        x = sp.KroneckerDelta(PermIndex(sigma, N, A, inv), PermIndex(sigma, N, B, inv), evaluate=False)
        forms.append((x, sums.cancel_permutation(x, {A: (0, N - 1), B: (0, N - 1)}), 0))
        forms.append((x, sums.cancel_permutation(x, {A: (0, N), B: (0, N - 1)}), 1))
    return N, A, B, forms


def _cancel_permutation(n):
    N, A, B, forms = _cancel_permutation_symbolic()
    cases = []
    for x, got, extra in forms:
        for a in range(n + extra):
            for b in range(n):
                if a >= n:  # σ(n) is outside the domain: the rule must not have fired
                    cases.append(Case(sp.Integer(0), None, None if got is None else sp.Integer(1)))
                    continue
                at = {N: n, A: a, B: b}
                cases.append(Case(x.xreplace(at), sp.KroneckerDelta(a, b),
                                  None if got is None else got.xreplace(at), changed=got is not None))
    return cases


@lru_cache(maxsize=None)
def _linearize_symbolic():
    A, B = _index("a"), _index("b")
    s = _leaf("s", 1, 1)
    forms = [sp.exp(s[0, 0] * sp.KroneckerDelta(A, B)), sp.exp((2 + s[0, 0] ** 2) * sp.KroneckerDelta(A, B)),
             sp.exp(-3 * sp.KroneckerDelta(A, B))]
    return A, B, [(x, sums.linearize_delta(x)) for x in forms]


def _linearize_delta(a, b):
    A, B, forms = _linearize_symbolic()
    at = {A: a, B: b}
    return [Case(x.xreplace(at), None, None if got is None else got.xreplace(at), changed=got is not None)
            for x, got in forms]


@lru_cache(maxsize=None)
def _absorb_symbolic():
    K, U, C = _index("k"), _index("u"), _dim("c")
    s = _leaf("s", 1, 1)
    forms = [(C * Visible(K, U), True), (sp.Rational(1, 3) * Visible(K, U), True),
             ((s[0, 0] - 2) * Visible(K, U), False)]
    return K, U, C, [(x, sums.absorb_mask_scale(x), ok) for x, ok in forms]


def _absorb_mask_scale(k, u, c):
    K, U, C, forms = _absorb_symbolic()
    at = {K: k, U: u, C: c}
    cases = []
    for x, got, ok in forms:
        rew = None if got is None else got.xreplace(at)
        lhs = x.xreplace(at)
        if not ok and k > u:
            continue  # (s - 2)·(-oo) has no sign: no statement, and the rule must not have fired
        cases.append(Case(sp.exp(lhs), sp.exp(Visible(k, u)) if ok else None,
                          None if rew is None else sp.exp(rew), changed=got is not None))
    return cases


@lru_cache(maxsize=None)
def _pull_sums_symbolic():
    N, k, l = _dim("N"), _index("k"), _index("l")
    a, b = _leaf("a", N, 1), _leaf("b", N, 1)
    forms = [sp.Sum(a[k, 0], (k, 0, N - 1)) * sp.Sum(b[k, 0], (k, 0, N - 1)) * a[0, 0],
             sp.Sum(a[k, 0], (k, 0, N - 1)) * b[k, 0],  # the k of b is free: no capture
             sp.Sum(sp.Sum(a[k, 0] * b[l, 0], (k, 0, l)) + b[l, 0], (l, 0, N - 1)),
             sp.Sum(a[k, 0] * sp.Sum(b[l, 0], (l, 0, k)), (k, 0, N - 1)) ** 2]
    return N, k, [(x, sums.pull_sums_out(x), sums.prenex(x)) for x in forms]


def _pull_sums_out(n):
    N, k, forms = _pull_sums_symbolic()
    cases = []
    for x, pulled, pre in forms:
        for v in range(n) if x.free_symbols & {k} else [0]:
            def at(e, v=v):
                return substitute_free(e.xreplace({N: n}), k, sp.Integer(v))

            cases.append(Case(at(x), None, at(pulled), changed=pulled != x))
            cases.append(Case(at(x), None, at(pre), changed=pre != x))
    return cases


@lru_cache(maxsize=None)
def _order_limits_symbolic():
    N, M, k, l = _dim("N"), _dim("M"), _index("k"), _index("l")
    a, b = _leaf("a", N, 1), _leaf("b", M, 1)
    body = a[k, 0] * b[l, 0] ** 2
    forms = [sp.Sum(body, (k, 0, N - 1), (l, 0, M - 1)), sp.Sum(body, (l, 0, M - 1), (k, 0, N - 1)),
             sp.Sum(a[k, 0] * b[l, 0], (k, 0, sp.Min(l, N - 1)), (l, 0, M - 1))]
    return N, M, [(x, sums.order_limits(x)) for x in forms]


def _order_limits(n, m):
    N, M, forms = _order_limits_symbolic()
    at = {N: n, M: m}
    return [Case(x.xreplace(at), None, got.xreplace(at), changed=got != x) for x, got in forms]


def _permutation_inverse(n):
    sigma = Permutation("P", n).args[0]
    cases = []
    for k in range(n):
        for inv in (0, 1):
            inner = PermIndex(sigma, n, k, 1 - inv, evaluate=False)
            lhs = PermIndex(sigma, n, inner, inv, evaluate=False)
            cases.append(Case(lhs, sp.Integer(k), PermIndex(sigma, n, inner, inv)))
    return cases


@lru_cache(maxsize=None)
def _visible_symbolic_forms():
    K, D = _index("k"), _dim("d")
    args = [((K, K + D - 1), sp.Integer(0)), ((K, K - D), sp.S.NegativeInfinity), ((K, K + D - 2), None)]
    return K, D, [(a, Visible(*a), r) for a, r in args]


def _visible_decided(k, d):
    """Visible decided on symbolic arguments (by their assumptions) against its value at integers."""
    K, D, forms = _visible_symbolic_forms()
    at = {K: k, D: d}
    return [Case(Visible(*[a.xreplace(at) for a in args]), rhs, got.xreplace(at),
                 changed=not isinstance(got, Visible)) for args, got, rhs in forms]


def _exp_of_a_sum(n):
    s = _leaf("s", 1, n)
    x = sp.Add(*[(k + 1) * s[0, k] for k in range(n)]) + sp.Rational(1, 2)
    lhs = sp.exp(x)
    rhs = sp.exp(sp.Rational(1, 2)) * sp.Mul(*[sp.exp(s[0, k]) ** (k + 1) for k in range(n)])
    return [Case(lhs, rhs, sp.expand(lhs, power_exp=True))]


@lru_cache(maxsize=None)
def _nested_floor_symbolic():
    y, r = sp.Dummy("y", real=True), _dim("r")
    return y, r, entrywise.merge_nested_floors(sp.floor(sp.floor(y) / r))


def _merge_nested_floors(p, q, r):
    y, R, got = _nested_floor_symbolic()
    x = sp.Rational(p, q)
    lhs = sp.floor(sp.floor(x) / r)
    concrete = entrywise.merge_nested_floors(sp.floor(sp.floor(y) / r))
    changed = concrete != sp.floor(sp.floor(y) / r)
    concrete = concrete.xreplace({y: x})
    sym = sp.floor(sp.floor(y) / R)
    return [Case(lhs, sp.floor(x / r), got.xreplace({y: x, R: r}), changed=got != sym),
            Case(lhs, None, concrete, changed=changed)]


def _floor_shift(p, q, n):
    y = sp.Dummy("y", real=True)
    x = sp.Rational(p, q)
    got = sp.floor(y + n)  # SymPy moves the integer out when it builds the floor
    return [Case(sp.floor(x + n), sp.floor(x) + n, got.xreplace({y: x}), changed=got == sp.floor(y) + n)]


@lru_cache(maxsize=None)
def _rename_symbolic():
    N, k, l = _dim("N"), _index("k"), _index("l")
    a, b = _leaf("a", N, 1), _leaf("b", N, 1)
    inner = sp.Sum(a[k, 0] * b[l, 0], (k, 0, l))
    x = sp.Sum(inner * sp.Sum(a[l, 0], (l, 0, N - 1)), (l, 0, N - 1)) + sp.Sum(b[k, 0], (k, 0, N - 1)) ** 2
    once = entrywise.rename_bound(x)
    return N, x, once, entrywise.rename_bound(once, fresh=False)


def _rename_bound(n):
    N, x, once, twice = _rename_symbolic()
    at = {N: n}
    return [Case(x.xreplace(at), None, once.xreplace(at)), Case(x.xreplace(at), None, twice.xreplace(at))]
