"""Instance families of the trust base for induction on H and the nodes over heads at a concrete
count, the moment calculus, interval certification and the exact evaluation (see
:mod:`symattn.proof.trust_families`)."""

from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from ..defs.dims import HeadIndex
from ..defs.dims import h as H_INDEX
from ..defs.heads import FamilyMember, HeadConcat, HeadStack, HeadSum
from ..defs.mask import CausalMask
from ..defs.rope import BlockDiag
from ..defs.rope import i as BLOCK_INDEX
from ..defs.softmax import Softmax
from .certify import certify_nonzero, enclose
from .induction import peel
from .instances import expand_heads
from .moments import StandardVector, dot, expectation, reduce_expectations, variance
from .scalar import certify_floors
from .trust_check import Case
from .trust_eval import write_out
from .trust_families import _dim, _leaf

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
