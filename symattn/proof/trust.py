"""The trust base: every rewrite rule and axiom the proof engine relies on, listed and checked.

Each entry (a :class:`~symattn.proof.trust_check.Rule`) names the rule, the function that
implements it, its statement, and an instance family whose equality IS the rule at concrete
sizes; :func:`check_trust_base` checks each one exactly at every size combination up to 4 and
numerically at random sizes 5..12 (:mod:`symattn.proof.trust_check`). ``symattn prove --trust``
prints the table.

Every public function of the rule modules (:data:`RULE_MODULES`) is either named by an entry or
listed in :data:`DRIVERS` with the reason it is not a rule of its own (it applies rules, or
decides when to), so a new rule cannot enter the engine without an entry here
(:func:`unlisted_rule_functions`).
"""

from __future__ import annotations

import importlib
import inspect
import math
from functools import lru_cache

import sympy as sp

from ..defs.dims import HeadIndex
from ..defs.dims import h as H_INDEX
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask, PaddingMask, Visible
from ..defs.numeric_nodes import DivideRows, Exp, Log, RowOf, ScaleRows, ShiftRows
from ..defs.permutation import PermIndex, Permutation
from ..defs.rope import BlockDiag
from ..defs.rope import i as BLOCK_INDEX
from ..defs.softmax import Softmax
from . import canon, entrywise, sums
from .certify import certify_nonzero, enclose
from .induction import peel
from .instances import expand_heads
from .moments import StandardVector, dot, expectation, reduce_expectations, variance
from .scalar import certify_floors
from .trust_check import Case, Rule, RuleCheck, check_rule
from .trust_eval import substitute_free, write_out

#: The modules whose public functions are rewrite rules (or drivers of rules).
RULE_MODULES = ("symattn.proof.canon", "symattn.proof.sums", "symattn.proof.entrywise")

#: Public functions of the rule modules that are not rules themselves, with the reason.
DRIVERS = {
    "symattn.proof.canon.bottom_up": "applies a rule to every node, children first",
    "symattn.proof.canon.canon": "applies the canon rules until nothing changes",
    "symattn.proof.canon.is_zero_matrix": "recognizes a zero matrix (no rewriting)",
    "symattn.proof.canon.same_by_rewriting": "compares canonical forms (strategy A)",
    "symattn.proof.sums.bounds": "reads index ranges for the side conditions",
    "symattn.proof.sums.in_range": "decides the side condition lo <= u <= hi",
    "symattn.proof.sums.simplify_sums": "applies the sum rules bottom-up",
    "symattn.proof.sums.local_rules": "applies cancel_permutation, linearize_delta, absorb_mask_scale to one node",
    "symattn.proof.sums.prenex": "composes expand, pull_sums_out and order_limits (checked with pull_sums_out)",
    "symattn.proof.entrywise.interchanged": "prenex, rename_bound and cancel of a difference (checked with them)",
    "symattn.proof.entrywise.normalize": "applies the sum and floor rules, renames, cancels",
    "symattn.proof.entrywise.same_entrywise": "compares entries (strategy B)",
}


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
    return [Case(M.xreplace(at), rhs, rew.xreplace(at))]


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


# --- entrywise.py ----------------------------------------------------------------------------

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
    for e in (Exp(X), Log(positive), ShiftRows(X, c), ScaleRows(d, X), DivideRows(X, Exp(d))):
        out += _entry_cases(e, at)
    for k in range(m):
        out += _entry_cases(RowOf(X, k), at, symbolic=False)
    return out


def _numeric_nodes_blockwise(m, a, b):
    A, B = _leaf("A", m, a), _leaf("B", m, b)
    c = _leaf("c", m, 1)
    row = sp.BlockMatrix([[A, B]])
    pairs = ((Exp(row), sp.BlockMatrix([[Exp(A), Exp(B)]])),
             (Log(Exp(row)), sp.BlockMatrix([[Log(Exp(A)), Log(Exp(B))]])),
             (ShiftRows(row, c), sp.BlockMatrix([[ShiftRows(A, c), ShiftRows(B, c)]])))
    return [Case(lhs, rhs, lhs.doit()) for lhs, rhs in pairs]


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


# --- induction.py and the nodes over heads ---------------------------------------------------

@lru_cache(maxsize=None)
def _peel_symbolic():
    """Peeling as the induction step does it: at a symbolic H + 1."""
    H, R, C = _dim("H"), _dim("r"), _dim("c")
    E = FamilyMember("E", H_INDEX, R, C)
    M = _leaf("M", C, R)
    last = E.xreplace({H_INDEX: H + 1})
    forms = [(HeadSum(E, H_INDEX, H + 1), sp.MatAdd(HeadSum(E, H_INDEX, H), last)),
             (HeadStack(E, H_INDEX, H + 1), sp.BlockMatrix([[HeadStack(E, H_INDEX, H)], [last]])),
             (HeadConcat(E, H_INDEX, H + 1), sp.BlockMatrix([[HeadConcat(E, H_INDEX, H), last]]))]
    out = [(x, rhs, x.peel()) for x, rhs in forms]
    x = sp.MatMul(M, HeadSum(E, H_INDEX, H + 1))
    out.append((x, sp.MatMul(M, sp.MatAdd(HeadSum(E, H_INDEX, H), last)), peel(x)))
    return (H, R, C), out


def _peel(H, r, c):
    dims, forms = _peel_symbolic()
    at = dict(zip(dims, (H, r, c)))
    return [Case(x.xreplace(at), rhs.xreplace(at), got.xreplace(at), changed=got != x) for x, rhs, got in forms]


def _heads_at_concrete_count(H, r, c):
    E = FamilyMember("E", H_INDEX, r, c)
    terms = [E.xreplace({H_INDEX: sp.Integer(k)}) for k in range(1, H + 1)]
    pairs = ((HeadSum(E, H_INDEX, H), sp.MatAdd(*terms)),
             (HeadStack(E, H_INDEX, H), sp.BlockMatrix([[t] for t in terms])),
             (HeadConcat(E, H_INDEX, H), sp.BlockMatrix([terms])))
    out = []
    for x, rhs in pairs:
        out.append(Case(x, rhs, x.doit()))
        out.append(Case(x, rhs, expand_heads(x)))
    # nested binders: over another index, and over the same index (the inner one keeps its own h)
    h2 = HeadIndex("h'", integer=True, positive=True)
    W = FamilyMember("W", H_INDEX, r, r)
    inner_other = HeadSum(sp.MatMul(FamilyMember("E", h2, r, c), FamilyMember("F", H_INDEX, c, c)), h2, 2)
    inner_same = HeadSum(E, H_INDEX, 2)
    for inner, body_of in ((inner_other, lambda k: HeadSum(sp.MatMul(FamilyMember("E", h2, r, c),
                                                                     FamilyMember("F", k, c, c)), h2, 2)),
                           (inner_same, lambda k: inner_same)):
        x = HeadSum(sp.MatMul(W, inner), H_INDEX, H)
        rhs = sp.MatAdd(*[sp.MatMul(FamilyMember("W", k, r, r), body_of(sp.Integer(k))) for k in range(1, H + 1)])
        out.append(Case(x, rhs, expand_heads(x)))
    return out


def _block_diag_doit(p, r, c):
    B = FamilyMember("B", BLOCK_INDEX, r, c)
    x = BlockDiag(B, BLOCK_INDEX, p)
    return [Case(x, sp.BlockDiagMatrix(*[B.xreplace({BLOCK_INDEX: sp.Integer(k)}) for k in range(1, p + 1)]),
                 x.doit())]


def _softmax_doit(m, n):
    X = _leaf("X", m, n)
    explicit = sp.ImmutableMatrix(m, n, lambda i, j: 2 * X[i, j] + 1)
    return [Case(Softmax(explicit, ax), None, Softmax(explicit, ax).doit()) for ax in (0, 1)]


def _causal_mask_doit(m, n, t):
    x = CausalMask(m, n, t - 2)
    return [Case(x, sp.ZeroMatrix(m, n) if t - 2 >= m - 1 else None, x.doit())]


# --- moments.py --------------------------------------------------------------------------------

#: Three distributions with mean 0 and variance 1, by their moments E[x^e] (e = 0, 1, 2, 3, 4):
#: Rademacher ±1; {-2, 0, 2} with probabilities 1/8, 3/4, 1/8; {-2, 1/2} with 1/5, 4/5.
DISTRIBUTIONS = {
    "Rademacher": (1, 0, 1, 0, 1),
    "{-2, 0, 2}": (1, 0, 1, 0, 4),
    "{-2, 1/2}": (1, 0, 1, sp.Rational(-3, 2), sp.Rational(13, 4)),
}


def _enumerated_expectation(x, moments) -> sp.Expr:
    """E[x] of a polynomial in independent entries with the given moments, monomial by monomial."""
    x = sp.expand(write_out(x))
    total = sp.Integer(0)
    for term in sp.Add.make_args(x):
        coeff = sp.Integer(1)
        for f in sp.Mul.make_args(term):
            base, e = f.as_base_exp()
            if isinstance(base, sp.Indexed) and e.is_Integer and 0 <= int(e) < len(moments):
                coeff *= moments[int(e)]
            else:
                coeff *= f
        total += coeff
    return total


@lru_cache(maxsize=None)
def _moment_symbolic():
    d = _dim("d")
    q, k, k2 = StandardVector("q", d), StandardVector("k", d), StandardVector("k2", d)
    polys = [dot(q, k), dot(q, k) ** 2, (dot(q, k) / sp.sqrt(d)) ** 2, dot(q, k) * dot(q, k2),
             dot(q, k) + 2 * dot(q, q), dot(q, q) + dot(k, k2) ** 2]
    out = [(x, expectation(x)[0]) for x in polys]
    out.append((None, reduce_expectations(variance(dot(q, k)))[0]))
    return d, q, k, out


def _moment_calculus(d):
    D, q, k, forms = _moment_symbolic()
    cases = []
    for moments in DISTRIBUTIONS.values():
        for x, got in forms:
            if x is None:  # Var(qᵀk) = E[(qᵀk)²] - E[qᵀk]²
                x2 = dot(q, k).xreplace({D: d})
                truth = _enumerated_expectation(x2 ** 2, moments) - _enumerated_expectation(x2, moments) ** 2
            else:
                truth = _enumerated_expectation(x.xreplace({D: d}), moments)
            cases.append(Case(truth, None, got.xreplace({D: d}), changed=True))
    return cases


# --- certify.py and scalar.py ------------------------------------------------------------------

def _closed_numbers(p, q):
    x = sp.Rational(p, q)
    return [x, sp.sqrt(abs(p)) / q, sp.exp(x), sp.log(abs(p) + q), sp.cos(x), sp.sin(x), sp.pi * x, sp.E ** p - x,
            sp.sqrt(2) * sp.exp(-x) + x]


def _exact_endpoint(raw) -> sp.Expr:
    sign, man, exp, _ = raw
    return (-1) ** sign * sp.Integer(man) * sp.Integer(2) ** exp


def _encloses(box, v) -> bool:
    lo, hi = (_exact_endpoint(r) for r in box._mpi_)
    for diff in (v - lo, hi - v):
        diff = sp.nsimplify(diff) if diff.is_Rational else diff
        if diff.is_Rational:
            if diff < 0:
                return False
        elif not sp.N(diff, 40) >= 0:
            return False
    return True


def _interval_enclosure(p, q):
    return [Case(sp.Integer(int(_encloses(enclose(v, prec), v))), sp.Integer(1))
            for v in _closed_numbers(p, q) for prec in (53, 80)]


_ZERO_PARTS = (sp.sqrt(2), sp.sqrt(3) / 2, sp.exp(sp.Rational(1, 3)), sp.pi, sp.log(3), sp.cos(1), sp.E - 1)


def _never_certifies_zero(a, b):
    x, y = _ZERO_PARTS[a], _ZERO_PARTS[b]
    cases = []
    for z in (sp.Pow(x + y, 2, evaluate=False) - x ** 2 - 2 * x * y - y ** 2,
              (x - y) * (x + y) - x ** 2 + y ** 2, sp.exp(x) * sp.exp(y) - sp.exp(x + y)):
        truth = sp.expand(z, power_exp=True) == 0
        cases.append(Case(sp.Integer(int(truth and certify_nonzero(z) is None)), sp.Integer(int(truth))))
    return cases


def _certified_floors(p, q):
    s = abs(p) * q
    root = math.isqrt(s)
    values = [(sp.Rational(p, q), p // q), (sp.sqrt(s), root), (-sp.sqrt(s), -root - (0 if root * root == s else 1)),
              (sp.Rational(p, q) + sp.Rational(1, 3), (3 * p + q) // (3 * q))]
    cases = []
    for x, k in values:
        f = sp.floor(x, evaluate=False)
        got, _ = certify_floors(f)
        cases.append(Case(sp.Integer(k), None, got, changed=got != f))
    return cases


# --- evaluate.py (the exact evaluation behind every counterexample) ---------------------------

class _LeafValues(dict):
    """An environment for :func:`symattn.proof.evaluate.evaluate` holding, for every leaf it asks for
    (keyed by the object), the value the checker gave that leaf."""

    def __init__(self, inp):
        super().__init__()
        self.inp = inp

    def __contains__(self, key):
        return isinstance(key, (sp.MatrixSymbol, FamilyMember))

    def __missing__(self, key):
        if not isinstance(key, (sp.MatrixSymbol, FamilyMember)):
            raise KeyError(key)
        return self.inp.leaf(key)


def _exact_evaluation(m, n, d):
    from .evaluate import evaluate

    Q, K, V = _leaf("Q", d, n), _leaf("K", d, m), _leaf("V", d, m)
    E = FamilyMember("E", H_INDEX, d, n)
    B = FamilyMember("B", BLOCK_INDEX, 2, 2)
    scores = sp.MatMul(1 / sp.sqrt(d), K.T, Q)
    exprs = [sp.MatMul(V, Softmax(scores, 0)),
             sp.MatMul(V, Softmax(sp.MatAdd(scores, CausalMask(m, n, n - m)), 0)),
             sp.MatMul(Softmax(sp.Transpose(scores), 1), V.T),
             sp.MatAdd(HeadSum(sp.MatMul(Q.T, E), H_INDEX, m), sp.MatMul(Q.T, HeadConcat(E, H_INDEX, 1))),
             sp.Transpose(HeadStack(E, H_INDEX, m)),
             sp.MatMul(BlockDiag(B, BLOCK_INDEX, d), sp.Identity(2 * d)),
             sp.HadamardProduct(sp.MatrixSlice(K, (0, d, 1), (0, 1, 1)), Q[:, 0:1])]
    def by_evaluate(x):
        return lambda inp: evaluate(x, _LeafValues(inp), "float" if inp.mode == "float" else "exact")

    return [Case(x, None, by_evaluate(x)) for x in exprs]


# --- the registry ----------------------------------------------------------------------------

def _rule(name, where, statement, family=None, params=(), **kw) -> Rule:
    where = (where,) if isinstance(where, str) else tuple(where)
    return Rule(name, where, statement, family, tuple(params), **kw)


C, S, E = "symattn.proof.canon", "symattn.proof.sums", "symattn.proof.entrywise"
SMALL_INT = {"p": range(-6, 7), "q": range(1, 5), "r": range(1, 5), "n": range(-2, 3)}
LARGE_INT = {"p": range(-60, 61), "q": range(5, 13), "r": range(5, 13), "n": range(-12, 13)}

TRUST_BASE: list[Rule] = [
    # strategy A (canon.py) and the nodes' own rules
    _rule("transpose_of_product", (f"{C}.canon", "sympy Transpose.doit"),
          "(AB)ᵀ = BᵀAᵀ, (ABC)ᵀ = CᵀBᵀAᵀ", _transpose_of_product, "abc"),
    _rule("transpose_of_sum_scalar_transpose", (f"{C}.canon", "sympy Transpose.doit"),
          "(A + B)ᵀ = Aᵀ + Bᵀ, (cA)ᵀ = c Aᵀ, (Aᵀ)ᵀ = A", _transpose_of_sum, "ab"),
    _rule("transpose_of_softmax", "symattn.defs.softmax.Softmax._eval_transpose",
          "Softmax(X, 0)ᵀ = Softmax(Xᵀ, 1) and Softmax(X, 1)ᵀ = Softmax(Xᵀ, 0)", _transpose_of_softmax, "mn"),
    _rule("transpose_of_head_nodes", ("symattn.defs.heads.HeadStack._eval_transpose",
                                      "symattn.defs.heads.HeadConcat._eval_transpose",
                                      "symattn.defs.heads.HeadSum._eval_transpose"),
          "[e_1; ...; e_H]ᵀ = [e_1ᵀ ... e_Hᵀ], [e_1 ... e_H]ᵀ = [e_1ᵀ; ...; e_Hᵀ], (Σ_h e_h)ᵀ = Σ_h e_hᵀ",
          _transpose_of_head_nodes, ("H", "r", "c")),
    _rule("transpose_of_block_diagonal", "symattn.defs.rope.BlockDiag._eval_transpose",
          "diag(B_1, ..., B_p)ᵀ = diag(B_1ᵀ, ..., B_pᵀ)", _transpose_of_block_diagonal, ("p", "r", "c")),
    _rule("distribute", (f"{C}.canon", "sympy MatrixExpr.expand"),
          "A(B + C) = AB + AC, (B + C)D = BD + CD, A(cB) = c AB, (AB)D = A(BD), B + B + C - C = 2B",
          _distribute, "abc"),
    _rule("multiply_blocks", (f"{C}.canon", "sympy block_collapse"),
          "[A B][C; D] = AC + BD, [A B]ᵀ = [Aᵀ; Bᵀ], [C; D][Cᵀ Dᵀ] = [CCᵀ CDᵀ; DCᵀ DDᵀ]",
          _multiply_blocks, ("a", "b1", "b2", "c")),
    _rule("push_into_head_sums", f"{C}.push_into_head_sums",
          "M Σ_h e_h = Σ_h M e_h, (Σ_h e_h) N = Σ_h e_h N, c Σ_h e_h = Σ_h c e_h, Σ_h (a_h + b_h) = Σ_h a_h + "
          "Σ_h b_h, for M, N, c free of h (a factor that mentions h is not moved)",
          _push_into_head_sums, ("H", "r", "a", "c")),
    _rule("settle_floors_over_heads", f"{C}.settle_floors_over_heads",
          "over h = 1..H: floor(a h + b) = floor(a + b) when a >= 0 and a H + b < floor(a + b) + 1 "
          "(e.g. floor((h - 1)/H) + 1 = 1)", _settle_floors, ("H", "r", "s"), exact={"s": range(0, 4)},
          numeric={"s": range(0, 13)}),
    _rule("multiply_block_diagonals", f"{C}.multiply_block_diagonals",
          "diag(A_1, ..., A_p) diag(B_1, ..., B_p) = diag(A_1 B_1, ..., A_p B_p)",
          _multiply_block_diagonals, ("p", "a", "b", "c")),
    _rule("expand_trig_entries", f"{C}.expand_trig_entries",
          "cos(x + y) = cos x cos y - sin x sin y, sin(x + y) = sin x cos y + cos x sin y, cos(-x) = cos x, "
          "sin(-x) = -sin x, sin²x = 1 - cos²x (at x, y = aπ/12, bπ/12)", _trig, "ab",
          exact={"a": range(-4, 5), "b": range(-4, 5)}, numeric={"a": range(-24, 25), "b": range(-24, 25)}),
    _rule("split_softmax_over_blocks", f"{C}.split_softmax_over_blocks",
          "Softmax([A B], 0) = [Softmax(A, 0) Softmax(B, 0)], Softmax([C; D], 1) = [Softmax(C, 1); Softmax(D, 1)], "
          "Softmax([e_1 ... e_H], 0) = [Softmax(e_1, 0) ... Softmax(e_H, 0)] and the row twin; never over the "
          "axis that crosses the blocks", _split_softmax_over_blocks, ("m", "a", "b")),
    _rule("identity_block_diagonals", f"{C}.identity_block_diagonals",
          "diag(I_k, ..., I_k) (p blocks) = I_{kp}, diag(0, ..., 0) = 0, diag(I_a, I_b) = I_{a+b} (explicit "
          "identity blocks too)", _identity_block_diagonals, ("p", "k")),
    _rule("canonical_binder_indices", f"{C}.canonical_binder_indices",
          "Σ_{u=1}^{H} A_u = Σ_{h=1}^{H} A_h (alpha-renaming a binder over a user's index u to the lowest "
          "canonical index not occurring in its body; also stacks and block diagonals)",
          _canonical_binder_indices, ("H", "r", "c")),
    _rule("constant_head_sums", f"{C}.constant_head_sums",
          "Σ_{h=1}^{H} e = H e when h is not free in e (also when e binds h again)", _constant_head_sums,
          ("H", "r", "c")),
    _rule("scalars_into_block_diagonals", f"{C}.scalars_into_block_diagonals",
          "c diag(B_1, ..., B_p) = diag(c B_1, ..., c B_p) for a scalar c free of the block index",
          _scalars_into_block_diagonals, ("p", "r", "c")),
    _rule("ceilings_as_floors", f"{C}.ceilings_as_floors",
          "ceiling(a/r) = floor((a + r - 1)/r) for an integer a and a positive integer r", _ceilings_as_floors,
          ("a", "r"), exact={"a": range(-8, 9)}, numeric={"a": range(-99, 100)}),
    *([_rule("slice_block_diagonals", f"{C}.slice_block_diagonals",
             "diag(B_1, ..., B_c)[Ra:Rb, Ca:Cb] = diag(B_{a+1}, ..., B_b) for R × C blocks and 0 <= a < b <= c "
             "(a slice on the block boundaries keeps whole blocks)", _slice_block_diagonals, ("p", "r", "c"))]
      if hasattr(canon, "slice_block_diagonals") else []),
    # sums.py
    _rule("eliminate_delta", f"{S}.eliminate_delta",
          "Σ_{k=lo}^{hi} [k = u] f(k) = f(u) and Σ_k [σ(k) = u] f(k) = f(σ⁻¹(u)) when lo <= u <= hi is "
          "provable (not applied when u may leave the range)", _eliminate_delta, "n"),
    _rule("reindex_permutation", f"{S}.reindex_permutation",
          "Σ_{k=0}^{n-1} f(σ(k)) = Σ_{k=0}^{n-1} f(k) when k occurs only as σ(k)", _reindex_permutation, "n"),
    _rule("restrict_to_visible", f"{S}.restrict_to_visible",
          "Σ_{k=lo}^{hi} f(k) exp(Visible(k, u)) = Σ_{k=lo}^{min(u, hi)} f(k) when lo <= u is provable "
          "(exp(0) = 1, exp(-oo) = 0)", _restrict_to_visible, "n"),
    _rule("split_into_blocks", f"{S}.split_into_blocks",
          "Σ_{k=0}^{RN-1} f(k, floor(k/R)) = Σ_{q=1}^{N} Σ_{s=0}^{R-1} f(R(q-1) + s, q - 1)",
          _split_into_blocks, ("R", "N")),
    _rule("pull_constants_out_of_sums", (f"{S}.simplify_sum", f"{S}.simplify_sums"),
          "Σ_k (c a_k + b_k + 3) = c Σ_k a_k + Σ_k b_k + 3n; a Sum over several limits is the nested sums, "
          "innermost limit first", _pull_constants, "n"),
    _rule("write_out_short_sums", (f"{S}.simplify_sum", f"{E}._index_sum"),
          "a sum over a concrete range of length <= 8 is its terms written out", _write_out_short_sums, "n",
          numeric={"n": range(5, 9)}),
    _rule("cancel_permutation", f"{S}.cancel_permutation",
          "[σ(a) = σ(b)] = [a = b] and [σ⁻¹(a) = σ⁻¹(b)] = [a = b] for a, b provably in 0..n-1 (σ is "
          "injective)", _cancel_permutation, "n"),
    _rule("linearize_delta", f"{S}.linearize_delta",
          "exp(c [a = b]) = 1 + (exp(c) - 1) [a = b] for a finite c (no mask in c)", _linearize_delta, "ab",
          exact={"a": range(0, 4), "b": range(0, 4)}, numeric={"a": range(0, 13), "b": range(0, 13)}),
    _rule("absorb_mask_scale", f"{S}.absorb_mask_scale",
          "c Visible(k, u) = Visible(k, u) for c provably positive (Visible is 0 or -oo), so "
          "exp(c Visible(k, u)) = exp(Visible(k, u))", _absorb_mask_scale, ("k", "u", "c"),
          exact={"k": range(0, 4), "u": range(0, 4)}, numeric={"k": range(0, 13), "u": range(0, 13)}),
    _rule("pull_sums_out", (f"{S}.pull_sums_out", f"{S}.prenex"),
          "(Σ_k a_k) b = Σ_k a_k b with k renamed fresh (no capture of a free k in b); a sum of a sum is one "
          "sum over both indices; Σ_k (a_k + b_k) = Σ_k a_k + Σ_k b_k", _pull_sums_out, "n"),
    _rule("order_limits", f"{S}.order_limits",
          "Σ_j Σ_k f = Σ_k Σ_j f when no bound of one depends on the other (finite sums commute)",
          _order_limits, ("n", "m")),
    # entrywise.py
    _rule("entry_of_product", f"{E}.entry",
          "(AB)_ij = Σ_k A_ik B_kj (a fresh k each time), (cA)_ij = c A_ij", _entry_of_product, "abc"),
    _rule("entry_of_elementwise_nodes", f"{E}.entry",
          "(A + B)_ij = A_ij + B_ij, (Aᵀ)_ij = A_ji, (A ∘ B)_ij = A_ij B_ij, I_ij = [i = j], 1_ij = 1, 0_ij = 0; "
          "a single row (column) has only index 0", _entry_of_elementwise, "ab"),
    _rule("entry_of_softmax", f"{E}.entry",
          "Softmax(X, 0)_ij = exp(X_ij) / Σ_k exp(X_kj), Softmax(X, 1)_ij = exp(X_ij) / Σ_k exp(X_ik)",
          _entry_of_softmax, "mn"),
    _rule("entry_of_slice", f"{E}.entry",
          "X[r0:r1:rs, c0:c1:cs]_ij = X_{r0 + rs i, c0 + cs j}", _entry_of_slice, "rc"),
    _rule("merge_slices", f"{E}.merge_slices",
          "[X[:, a:b] X[:, b:c]] = X[:, a:c], [X[a:b, :]; X[b:c, :]] = X[a:c, :], a slice over the whole "
          "matrix is the matrix", _merge_slices, ("r", "a", "b")),
    _rule("entry_of_head_nodes", f"{E}.entry",
          "(Σ_h e_h)_ij = Σ_h (e_h)_ij; [e_1; ...; e_H]_ij = (e_h)_{i - R(h-1), j} with h = floor(i/R) + 1; "
          "columns likewise for [e_1 ... e_H]", _entry_of_head_nodes, ("H", "r", "c")),
    _rule("entry_of_block_matrix", f"{E}.entry",
          "the entry of a block matrix at concrete i, j is the entry of its block; [A_11ᵀ A_21ᵀ; A_12ᵀ A_22ᵀ] "
          "= [A_11 A_12; A_21 A_22]ᵀ", _entry_of_blocks, "abc"),
    _rule("entry_of_masks", f"{E}.entry",
          "CausalMask(m, n, o)_kj = Visible(k, j + o), PaddingMask(m, n, L)_kj = Visible(k, L - 1), "
          "Visible(k, t) = 0 if k <= t else -oo", _entry_of_masks, ("m", "n", "t")),
    _rule("entry_of_permutation", f"{E}.entry",
          "(P_σ)_ij = [i = σ(j)], for every permutation σ", _entry_of_permutation, "n"),
    _rule("entry_of_numeric_nodes", (f"{E}.entry", "symattn.defs.numeric_nodes.Exp.entry_rule",
                                     "symattn.defs.numeric_nodes.Log.entry_rule",
                                     "symattn.defs.numeric_nodes.ShiftRows.entry_rule",
                                     "symattn.defs.numeric_nodes.ScaleRows.entry_rule",
                                     "symattn.defs.numeric_nodes.DivideRows.entry_rule",
                                     "symattn.defs.numeric_nodes.RowOf.entry_rule"),
          "Exp(X)_ij = exp(X_ij), Log(X)_ij = log(X_ij), ShiftRows(X, c)_ij = X_ij - c_i, ScaleRows(d, X)_ij = "
          "d_i X_ij, DivideRows(X, d)_ij = X_ij / d_i, RowOf(X, k)_0j = X_kj", _entry_of_numeric_nodes, "mn"),
    _rule("elementwise_nodes_act_blockwise", ("symattn.defs.numeric_nodes.Exp.doit",
                                             "symattn.defs.numeric_nodes.Log.doit",
                                             "symattn.defs.numeric_nodes.ShiftRows.doit"),
          "Exp([A B]) = [Exp(A) Exp(B)], Log([A B]) = [Log(A) Log(B)], ShiftRows([A B], c) = "
          "[ShiftRows(A, c) ShiftRows(B, c)]", _numeric_nodes_blockwise, ("m", "a", "b")),
    _rule("permutation_inverse", "symattn.defs.permutation.PermIndex.eval",
          "σ(σ⁻¹(k)) = σ⁻¹(σ(k)) = k, for every permutation σ", _permutation_inverse, "n", must_fire=True),
    _rule("visible_decided", "symattn.defs.mask.Visible.eval",
          "Visible(k, t) = 0 when t - k >= 0 is provable, -oo when t - k < 0 is provable, else left as is",
          _visible_decided, ("k", "d"), exact={"k": range(0, 5)}, numeric={"k": range(0, 13)}),
    _rule("exp_of_a_sum", (f"{E}.normalize", "sympy expand(power_exp=True)"),
          "exp(a + b) = exp(a) exp(b), exp(k a) = exp(a)^k (the exact check splits exp atoms the same way; the "
          "float check is the independent one)", _exp_of_a_sum, "n"),
    _rule("symmetric_input", ("symattn.defs.structured.Symmetric._eval_transpose",
                              "symattn.defs.structured.Symmetric._entry", "symattn.defs.structured.Symmetric.impose",
                              f"{E}.entry"),
          "for S = Sᵀ: Sᵀ = S, (S X)ᵀ = Xᵀ S, S_ij = S_{min(i,j), max(i,j)}, and imposing symmetry on a symmetric "
          "matrix changes nothing", _symmetric, "n"),
    _rule("merge_nested_floors", f"{E}.merge_nested_floors",
          "floor(floor(x)/r) = floor(x/r) for a positive integer r (x = p/q)", _merge_nested_floors, "pqr",
          exact=SMALL_INT, numeric=LARGE_INT),
    _rule("floor_shift", ("sympy floor", f"{E}.normalize"),
          "floor(x + n) = floor(x) + n for an integer n (x = p/q)", _floor_shift, "pqn",
          exact=SMALL_INT, numeric=LARGE_INT),
    _rule("rename_bound", f"{E}.rename_bound",
          "renaming bound indices (fresh ones first, then by depth) changes no value", _rename_bound, "n"),
    # induction.py and the nodes over heads
    _rule("peel_last_head", ("symattn.proof.induction.peel", "symattn.defs.heads._OverHeads.peel"),
          "Σ_{h=1}^{H+1} e_h = Σ_{h=1}^{H} e_h + e_{H+1}, [S_{H+1}] = [S_H; e_{H+1}], "
          "[C_{H+1}] = [C_H e_{H+1}]", _peel, ("H", "r", "c")),
    _rule("heads_at_a_concrete_count", ("symattn.defs.heads._OverHeads.doit", "symattn.proof.instances.expand_heads",
                                        "symattn.defs.heads.Binder.term", "symattn.defs.heads.substitute"),
          "at a concrete H (and the base case H = 1) a node over heads is its explicit sum, stack or "
          "concatenation; the term for h = k substitutes k for the free h only (a nested binder of the same "
          "index keeps its own)", _heads_at_concrete_count, ("H", "r", "c")),
    _rule("induction_on_H", "symattn.proof.induction.by_induction",
          "lhs(1) = rhs(1) and (lhs - rhs)(H + 1) = (lhs - rhs)(H) for every H >= 1 give lhs(H) = rhs(H) for "
          "every H >= 1", axiom="induction on the positive integers; each of its two steps is a proof by the "
                                "rules of this table"),
    _rule("block_diagonal_at_a_concrete_count", "symattn.defs.rope.BlockDiag.doit",
          "diag(B_i, i = 1..p) at a concrete p is BlockDiagMatrix(B_1, ..., B_p)", _block_diag_doit, ("p", "r", "c")),
    _rule("softmax_of_explicit_matrix", ("symattn.defs.softmax.Softmax.doit", "symattn.defs.softmax.softmax_explicit"),
          "Softmax of an explicit matrix is computed entry by entry: exp(x_ij) / Σ_k exp(x_kj) (axis 0)",
          _softmax_doit, "mn"),
    _rule("causal_mask_without_masked_keys", "symattn.defs.mask.CausalMask.doit",
          "CausalMask(m, n, o) = 0 when o >= m - 1 (every key is visible to every query)",
          _causal_mask_doit, ("m", "n", "t"), exact={"t": range(0, 8)}, numeric={"t": range(0, 16)}),
    # moments.py
    _rule("moment_calculus", ("symattn.proof.moments.expectation", "symattn.proof.moments.reduce_expectations"),
          "independent entries with E[x] = 0, E[x²] = 1: linearity, independence, E[q_a q_b] = δ_ab, delta "
          "summation; E[qᵀk] = 0, E[(qᵀk)²] = d, Var(qᵀk) = d, ... (checked against three distributions with "
          "different third and fourth moments, expectations enumerated exactly)", _moment_calculus, "d"),
    _rule("exact_evaluation", "symattn.proof.evaluate.evaluate",
          "the exact evaluation that counterexamples and strategy D rest on computes each node's definition "
          "(products, transposes, Softmax on both axes, masks, nodes over heads, block diagonals, slices, "
          "entrywise products); exact check with random integer inputs", _exact_evaluation, ("m", "n", "d"),
          integer_entries=True),
    # certify.py and scalar.py
    _rule("interval_enclosure", ("symattn.proof.certify.enclose", "symattn.proof.certify.certify_nonzero"),
          "the interval (mpmath.iv, outward rounding) of a closed expression contains its exact value, so 0 "
          "outside it certifies a nonzero value (containment decided exactly for rational ends and values, by "
          "40-digit evaluation of the distance to each end for a transcendental value)", _interval_enclosure, "pq",
          exact={"p": range(-6, 7), "q": range(1, 5)}, numeric={"p": range(-40, 41), "q": range(5, 13)},
          must_fire=False),
    _rule("certify_nonzero_never_certifies_zero", "symattn.proof.certify.certify_nonzero",
          "an exactly zero difference (written as (x + y)² - x² - 2xy - y², ...) is never certified nonzero",
          _never_certifies_zero, "ab", exact={"a": range(len(_ZERO_PARTS)), "b": range(len(_ZERO_PARTS))},
          samples=0, must_fire=False),
    _rule("certified_floors", "symattn.proof.scalar.certify_floors",
          "⌊x⌋ of a closed number x is k when an interval enclosing x lies in [k, k + 1)", _certified_floors,
          "pq", exact={"p": range(-6, 7), "q": range(1, 5)}, numeric={"p": range(-99, 100), "q": range(5, 13)}),
    # trusted, not checkable by instances
    _rule("exp_atoms_as_independent_symbols", ("symattn.proof.instances.equal_at",),
          "an identity of rational functions in independent positive symbols stays true when each symbol "
          "is specialized to exp(t) (strategy D, and the exact comparison of this check)",
          axiom="specialization of a polynomial identity; treating exp atoms as independent can miss an "
                "identity, never invent one"),
    _rule("sympy_exact_arithmetic", ("sympy expand", "sympy together", "sympy cancel", "sympy simplify"),
          "expand, together, cancel and simplify return an expression equal to their input (exact arithmetic; "
          "verify_scalar and strategy B decide 0 with them)",
          axiom="SymPy's exact polynomial arithmetic is trusted"),
]


def clear_caches() -> None:
    """Forget the symbolic rewrites the families compute once per process (e.g. after patching a rule)."""
    for obj in list(globals().values()):
        if callable(obj) and hasattr(obj, "cache_clear"):
            obj.cache_clear()


def rule_functions() -> list[str]:
    """Qualified names of every public function defined in the rule modules."""
    out = []
    for modname in RULE_MODULES:
        mod = importlib.import_module(modname)
        for name, fn in vars(mod).items():
            if name.startswith("_") or not callable(fn) or inspect.isclass(fn):
                continue
            if getattr(fn, "__module__", None) != modname:
                continue
            out.append(f"{modname}.{name}")
    return sorted(out)


def unlisted_rule_functions(base: list[Rule] | None = None) -> list[str]:
    """Public functions of the rule modules that neither an entry nor :data:`DRIVERS` names."""
    base = TRUST_BASE if base is None else base
    named = {w for r in base for w in r.where} | set(DRIVERS)
    return [f for f in rule_functions() if f not in named]


def check_trust_base(base: list[Rule] | None = None, names=None) -> list[RuleCheck]:
    """Check every entry (or the named ones) of the trust base."""
    base = TRUST_BASE if base is None else base
    return [check_rule(r) for r in base if names is None or r.name in names]


def table(checks: list[RuleCheck] | None = None, base: list[Rule] | None = None) -> str:
    """The trust base as text: per rule its statement, where it lives, and how it was checked."""
    base = TRUST_BASE if base is None else base
    by_name = {c.rule.name: c for c in checks or []}
    lines = []
    for r in base:
        c = by_name.get(r.name)
        if r.family is None:
            status, how = "axiom", f"not checked by instances: {r.axiom}"
        elif c is None:
            status, how = "listed", "not checked (--no-check)"
        else:
            status = f"{'ok' if c.ok else 'FAILED'}, {c.seconds:.1f} s"
            how = c.summary()
        lines += [f"{r.name}  [{status}]", f"  statement: {r.statement}",
                  f"  where:     {'; '.join(w.replace('symattn.', '') for w in r.where)}", f"  check:     {how}"]
        if c is not None and len(c.failures) > 1:
            lines += [f"             {f}" for f in c.failures[1:]]
        lines.append("")
    return "\n".join(lines).rstrip()
