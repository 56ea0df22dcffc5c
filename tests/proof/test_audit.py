"""The independent audit of every "proved": its interpreter against hand-computed values, its
agreement with the theorem library, its disagreement with the gallery of mistakes, and a
deliberately unsound strategy caught as a SoundnessError carrying both traces."""

import random
from fractions import Fraction

import mpmath
import pytest
import sympy as sp
from sympy.matrices.expressions.matexpr import MatrixExpr

import symattn as sa
from symattn.defs.heads import Family, HeadSum
from symattn.errors import SoundnessError
from symattn.proof import audit_numbers as num
from symattn.proof import engine, scalar
from symattn.proof.audit import draw_instance, run_audit
from symattn.proof.audit_eval import Evaluator
from symattn.proof.audit_expect import Expectations
from symattn.proof.audit_gradient import run_gradient_audit
from symattn.proof.audit_instance import Instance
from symattn.proof.moments import Expectation, StandardVector, dot, variance
from symattn.proof.scalar import is_scalar_claim, verify_scalar
from symattn.proof.verdict import proved
from symattn.statements import is_gradient_claim
from symattn.theorems import load_library

n, m, d, d_k, p, H, G, r = sa.dims("n m d d_k p H G r")
FAKE = proved("a strategy under test", "all dimensions", ["the step under test"], True)


def audit_line(lhs, rhs, **kw) -> str:
    """The audit's trace line for a claim that the strategy under test (FAKE) proved."""
    return run_audit(lhs, rhs, prover_trace=FAKE.trace, method=FAKE.method, **kw).line


def evaluator(values: dict, seed: int = 0, kind: int = 0, expectation=None):
    return Evaluator(Instance(random.Random(seed), values, kind), expectation)


def drawn(ev, label):
    """The integer matrix the instance drew for the input printed as ``label``."""
    return next(rows for lab, rows in ev.inst.matrices.values() if lab == label)


def matmul(A, B):
    return [[sum(a * b for a, b in zip(row, col)) for col in zip(*B)] for row in A]


def transpose(A):
    return [list(c) for c in zip(*A)]


def add(A, B):
    return [[a + b for a, b in zip(x, y)] for x, y in zip(A, B)]


def contains(value, exact: mpmath.mpf) -> bool:
    """True when the audit's value (exact or an interval) contains the number ``exact``."""
    if num.is_exact(value):
        return abs(mpmath.mpf(value.numerator if isinstance(value, Fraction) else value)
                   / (value.denominator if isinstance(value, Fraction) else 1) - exact) < mpmath.mpf(10) ** -40
    lo, hi = (mpmath.mpf(x) for x in value._mpi_)
    return lo <= exact <= hi


# -- the interpreter against hand-computed values ------------------------------------------------

def test_interpreter_multiplies_transposes_and_adds_exactly():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    ev = evaluator({n: 2, m: 3})
    got = ev.matrix((A * B).T + 2 * B.T * A.T)
    a, b = drawn(ev, "A"), drawn(ev, "B")
    want = [[3 * x for x in row] for row in transpose(matmul(a, b))]
    assert got == want


def test_nested_head_binders_bind_each_index_in_the_environment():
    Wa, Wb = Family("A", d, d), Family("B", d, d)
    h2 = sp.Symbol("h2", integer=True, positive=True)
    expr = HeadSum(HeadSum(Wa[sa.h] * Wb[h2], h2, G), sa.h, H)
    ev = evaluator({d: 2, H: 3, G: 2})
    got = ev.matrix(expr)
    sa_ = [drawn(ev, f"A_{k}") for k in (1, 2, 3)]
    sb = [drawn(ev, f"B_{k}") for k in (1, 2)]
    want = matmul(add(add(sa_[0], sa_[1]), sa_[2]), add(sb[0], sb[1]))  # Σ_h Σ_h2 A_h B_h2
    assert got == want


def test_an_inner_binder_of_the_same_index_shadows_the_outer_one():
    W = Family("W", d, d)
    expr = HeadSum(HeadSum(W[sa.h] * W[sa.h], sa.h, 2), sa.h, 3)  # the inner h hides the outer
    ev = evaluator({d: 2})
    got = ev.matrix(expr)
    w1, w2 = drawn(ev, "W_1"), drawn(ev, "W_2")
    inner = add(matmul(w1, w1), matmul(w2, w2))
    assert got == [[3 * x for x in row] for row in inner]
    assert "W_3" not in [lab for lab, _ in ev.inst.matrices.values()]


def test_inputs_are_told_apart_by_object_not_by_printed_name():
    W, same_name = Family("W", d, d), sp.MatrixSymbol("W_2", d, d)
    ev = evaluator({d: 2})
    ev.matrix(W[2] + same_name)
    assert [lab for lab, _ in ev.inst.matrices.values()] == ["W_2", "W_2"]  # two inputs, two draws
    h_user = sp.Symbol("h", integer=True, positive=True)  # a user's h is not the bound head index
    ev = evaluator({d: 1, h_user: 3, H: 2})
    got = ev.matrix(HeadSum(W[sa.h] * h_user, sa.h, H))
    assert got == [[3 * (drawn(ev, "W_1")[0][0] + drawn(ev, "W_2")[0][0])]]


def test_head_stack_of_gqa_groups_repeats_each_group_in_place():
    K = Family("K", d, m)
    ev = evaluator({G: 2, r: 2, d: 1, m: 2})
    got = ev.matrix(sa.repeat_kv_heads(K, G, r))
    k1, k2 = drawn(ev, "K_1"), drawn(ev, "K_2")
    assert got == k1 + k1 + k2 + k2


def test_gqa_heads_read_the_key_of_their_group():
    X = sp.MatrixSymbol("X", d, n)
    Wq, Wk = Family("W^Q", d, d), Family("W^K", d, d)
    Wv, Wo = Family("W^V", d, d), Family("W^O", d, d)
    expr = sa.gqa(X, X, X, Wq, Wk, Wv, Wo, H=2 * G, G=G, form="sum")
    ev = evaluator({G: 2, d: 1, n: 1})
    ev.matrix(expr)
    labels = {lab for lab, _ in ev.inst.matrices.values()}
    assert {"W^K_1", "W^K_2", "W^Q_4"} <= labels and "W^K_3" not in labels


def test_causal_and_padding_masks_give_exact_softmax_weights():
    Z = sp.ZeroMatrix(3, 3)
    got = evaluator({}).matrix(sa.softmax(Z + sa.CausalMask(3)))
    assert got == [[Fraction(1, j + 1) if k <= j else 0 for j in range(3)] for k in range(3)]
    got = evaluator({}).matrix(sa.softmax(sp.ZeroMatrix(3, 2) + sa.PaddingMask(3, 2, 2)))
    assert got == [[Fraction(1, 2)] * 2, [Fraction(1, 2)] * 2, [0, 0]]


def test_a_fully_masked_softmax_column_is_not_evaluated():
    expr = sa.softmax(sp.ZeroMatrix(2, 3) + sa.CausalMask(2, 3, offset=-1))
    with pytest.raises(num.Unevaluable, match="masked"):
        evaluator({}).matrix(expr)


def test_softmax_axes_enclose_the_true_values():
    X = sp.MatrixSymbol("X", m, n)
    ev = evaluator({m: 3, n: 2})
    cols, rows = ev.matrix(sa.softmax(X)), ev.matrix(sa.softmax(X, axis=1))
    x = drawn(ev, "X")
    mpmath.mp.prec = 200
    for i in range(3):
        for j in range(2):
            col = mpmath.exp(x[i][j]) / sum(mpmath.exp(x[k][j]) for k in range(3))
            row = mpmath.exp(x[i][j]) / sum(mpmath.exp(x[i][k]) for k in range(2))
            assert contains(cols[i][j], col) and contains(rows[i][j], row)
    mpmath.mp.prec = 53


def test_rope_rotates_each_pair_by_its_drawn_frequency():
    a = sp.Symbol("a", integer=True)
    theta = sp.Function("theta")
    ev = evaluator({p: 2, a: 3})
    R = ev.matrix(sa.rope(a, p, theta))
    thetas = {args[0]: v for (f, args), v in ev.inst.functions.items()}
    assert set(thetas) == {1, 2}
    mpmath.mp.prec = 200
    for blk in (0, 1):
        t = mpmath.mpf(thetas[blk + 1].numerator) / thetas[blk + 1].denominator
        c, s = mpmath.cos(3 * t), mpmath.sin(3 * t)
        i = 2 * blk
        assert contains(R[i][i], c) and contains(R[i][i + 1], -s)
        assert contains(R[i + 1][i], s) and contains(R[i + 1][i + 1], c)
        assert R[i][(i + 2) % 4] == 0 and R[i + 1][(i + 3) % 4] == 0
    mpmath.mp.prec = 53
    assert evaluator({p: 3, a: 0}).matrix(sa.rope(a, p, theta)) == [[int(i == j) for j in range(6)] for i in range(6)]


def test_permutation_matrix_moves_column_sigma_j_to_j():
    X, P = sp.MatrixSymbol("X", d, n), sa.Permutation("P", n)
    ev = evaluator({d: 2, n: 3})
    got = ev.matrix(X * P)
    x = drawn(ev, "X")
    (sigma,) = [s for _, s in ev.inst.perms.values()]
    assert sorted(sigma) == [0, 1, 2]
    assert got == [[x[i][sigma[j]] for j in range(3)] for i in range(2)]


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_score_functions_are_instantiated_bilinear_and_not(kind):
    Q, K = sp.MatrixSymbol("Q", d, n), sp.MatrixSymbol("K", d, m)
    ev = evaluator({d: 2, n: 2, m: 3}, kind=kind)
    got = ev.matrix(sa.ScoreFunction("f")(Q, K))
    q, k = drawn(ev, "Q"), drawn(ev, "K")
    if kind == 1:
        assert got == [[x * x for x in row] for row in matmul(transpose(k), q)]
        return
    (M,) = ev.inst.bilinear.values()
    S = matmul(matmul(transpose(k), M), q)
    if kind == 0:
        assert got == S
    else:
        for i in range(3):
            for j in range(2):
                assert contains(got[i][j], mpmath.exp(mpmath.mpf(S[i][j]) / 4))


def test_slices_blocks_inverse_powers_and_explicit_entries():
    A = sp.MatrixSymbol("A", 2, 2)
    ev = evaluator({}, seed=3)
    blocks = sp.BlockMatrix([[A, sp.Identity(2)], [sp.ZeroMatrix(2, 2), sp.OneMatrix(2, 2)]])
    got = ev.matrix(blocks[0:2, 1:3])
    a = drawn(ev, "A")
    assert got == [[a[0][1], 1], [a[1][1], 0]]
    assert ev.matrix(sp.HadamardProduct(A, A)) == [[x * x for x in row] for row in a]
    assert ev.matrix(A**2) == matmul(a, a)
    assert ev.matrix(A.as_explicit()) == a
    det = a[0][0] * a[1][1] - a[0][1] * a[1][0]
    if det:
        inv = ev.matrix(sp.Inverse(A))
        assert matmul(a, inv) == [[1, 0], [0, 1]]
    else:
        with pytest.raises(num.Unevaluable, match="singular"):
            ev.matrix(sp.Inverse(A))


def test_scalars_in_the_tree_use_the_environment():
    k = sp.Symbol("k", integer=True)
    ev = evaluator({n: 3})
    s = sp.Sum(sp.KroneckerDelta(k, 2) * k**2 + sp.floor(sp.Rational(7, 2)), (k, 0, n - 1))
    assert ev.scalar(s) == 4 + 3 * 3
    assert ev.scalar(sp.Mod(7, n)) == 1
    assert num.show(ev.scalar(sp.sqrt(n))).startswith("[1.73205")
    assert ev.scalar(sp.sqrt(4 * n + 4)) == 4
    assert contains(ev.scalar(sp.pi * sp.E), mpmath.pi * mpmath.e)


def test_expectations_are_exact_at_each_law():
    q = StandardVector("q", d_k)
    ev = lambda kind: evaluator({d_k: 2}, kind=kind, expectation=Expectations(kind))  # noqa: E731
    for kind in (0, 1):
        assert ev(kind).scalar(Expectation(dot(q, q))) == 2
    s = dot(q, q) ** 2
    assert ev(0).scalar(Expectation(s)) == 4          # Rademacher: (Σ q_i²)² = d²
    assert ev(1).scalar(Expectation(s)) == 4 + 3 * 2  # three-point: d² + d (E[x⁴] - 1), E[x⁴] = 4


def test_an_unknown_node_is_skipped_not_a_crash():
    class Mystery(MatrixExpr):
        shape = (n, n)

    A = sp.MatrixSymbol("A", n, n)
    line = audit_line(A + Mystery(), Mystery() + A)
    assert line.startswith("audit: skipped:") and "Mystery" in line

    class Broken(sp.MatrixSymbol):
        @property
        def rows(self):
            raise TypeError("no rows today")

    B = Broken("B", n, n)
    assert "TypeError: no rows today" in audit_line(B, B)


def test_instances_are_deterministic_per_claim():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    draws = []
    for _ in range(2):
        seed_rng = random.Random(7)
        inst = draw_instance(seed_rng, 0, [m, n], [])
        Evaluator(inst).matrix(A * B)
        draws.append(inst.describe())
    assert draws[0] == draws[1]
    assert audit_line(A * B, A * B) == audit_line(A * B, A * B)


def test_dimension_assumptions_are_respected():
    e = sp.Symbol("e", integer=True, positive=True, even=True)
    X = sp.MatrixSymbol("X", e, e)
    for k in range(6):
        inst = draw_instance(random.Random(k), k, [e], [])
        assert inst.base[e] in (2, 4)
    assert audit_line(X, X) == "audit: 4 random exact instances agree"


# -- the audit's decisions -----------------------------------------------------------------------

def test_audit_finds_a_false_claim_with_both_traces():
    C, D = sp.MatrixSymbol("C", n, n), sp.MatrixSymbol("D", n, n)
    with pytest.raises(SoundnessError, match="proved a false claim") as exc:
        audit_line((C * D).T, C.T * D.T)
    assert exc.value.prover_trace == ("the step under test",)
    assert any("differs" in t for t in exc.value.audit_trace)
    assert exc.value.instance["inputs"].keys() == {"C", "D"}


def test_audit_at_dimensions_uses_exactly_those_dimensions():
    C, D = sp.MatrixSymbol("C", n, n), sp.MatrixSymbol("D", n, n)
    assert audit_line(C * D, D * C, at=[{n: 1}]).startswith("audit: 4 random exact instances agree")
    with pytest.raises(SoundnessError):
        audit_line(C * D, D * C, at=[{n: 2}])


def test_audit_sees_a_difference_of_ten_to_the_minus_twenty():
    ones, tiny = sp.OneMatrix(2, 2), sp.Rational(1, 10**20)  # e is irrational: only enclosures can tell
    with pytest.raises(SoundnessError, match="disjoint enclosures at 128 bits"):
        audit_line((sp.E + tiny) * ones, sp.E * ones)
    X = sp.MatrixSymbol("X", 2, 2)
    with pytest.raises(SoundnessError, match="disjoint enclosures at 128 bits"):
        audit_line(sa.softmax(X) * (1 + tiny * sp.pi), sa.softmax(X))
    assert audit_line(sa.softmax(X) * sp.exp(0), sa.softmax(X)) == "audit: 4 random exact instances agree"


def test_theorems_of_the_library_carry_the_audit_line():
    from symattn.theorems import prove

    result = prove(load_library()["softmax_columns_sum_to_one"])
    assert result.ok and all(v.trace[-1].startswith("audit: 4 random exact instances agree") for v in result.verdicts)


def test_verify_runs_the_audit_and_says_so():
    A, B = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n)
    v = sa.verify((A * B).T, B.T * A.T)
    assert v.proved and v.trace[-1] == "audit: 4 random exact instances agree"
    assert v.audit.agreed == 4 and v.audit.line == v.trace[-1]
    with pytest.raises(TypeError):  # the audit cannot be switched off
        sa.verify((A * B).T, B.T * A.T, audit=False)


def test_an_unsound_rewriting_step_raises_soundness_error(monkeypatch):
    monkeypatch.setattr(engine, "same_by_rewriting", lambda lhs, rhs: (True, ["(AB)ᵀ -> AᵀBᵀ (unsound)"]))
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    with pytest.raises(SoundnessError) as exc:
        sa.verify((A * B).T, A.T * B.T)
    assert "A: (AB)ᵀ -> AᵀBᵀ (unsound)" in exc.value.prover_trace
    assert "prover's trace" in str(exc.value) and "audit's instance" in str(exc.value)


def test_an_unsound_instance_check_raises_soundness_error(monkeypatch):
    monkeypatch.setattr(engine, "same_by_rewriting", lambda lhs, rhs: (False, []))
    monkeypatch.setattr(engine, "same_entrywise", lambda lhs, rhs, B: (False, []))
    monkeypatch.setattr(engine, "search", lambda lhs, rhs, B: (None, [], 0))
    monkeypatch.setattr(engine, "equal_at", lambda lhs, rhs, values, B: (True, "unsound"))
    A, B = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("B", n, n)
    with pytest.raises(SoundnessError, match="n=2"):
        sa.verify(A * B, B * A, at=[{n: 2}])


def test_an_unsound_scalar_simplification_raises_soundness_error(monkeypatch):
    monkeypatch.setattr(scalar, "exact_zero", lambda d, budget: True)
    q, k = StandardVector("q", d_k), StandardVector("k", d_k)
    with pytest.raises(SoundnessError, match="three-point|Rademacher|d_k="):
        verify_scalar(variance(dot(q, k)), d_k**2)
    assert verify_scalar(variance(dot(q, k)), d_k).proved  # the true claim still passes the audit


# -- the library and the gallery ------------------------------------------------------------------

def _claims(expect: str):
    for th in load_library().values():
        if th.expect == expect:
            for lhs, rhs in th.claims():
                yield th, lhs, rhs


def test_audit_agrees_with_every_claim_of_the_theorem_library():
    """Every claim: an identity by the audit's evaluator, a gradient claim (candidate = vjp(E, W, G)) by
    the gradient audit, which differentiates exact instances."""
    checked = 0
    for th, lhs, rhs in _claims("proved"):
        if is_gradient_claim(lhs, rhs):
            record = run_gradient_audit(rhs.expr, rhs.wrt, lhs, rhs.cotangent, at=th.at)
            assert record.passed and "agree" in record.line, (th.name, record.line)
            checked += 1
            continue
        is_scalar = is_scalar_claim(lhs, rhs)
        line = audit_line(lhs, rhs, scalar=is_scalar, at=None if is_scalar else th.at)
        assert "agree" in line, (th.name, line)
        checked += 1
    assert checked > 100


def test_audit_disagrees_with_every_item_of_the_gallery():
    caught = set()
    names = set()
    for th, lhs, rhs in _claims("refuted"):
        names.add(th.name)
        try:
            if is_gradient_claim(lhs, rhs):
                run_gradient_audit(rhs.expr, rhs.wrt, lhs, rhs.cotangent)
            else:
                audit_line(lhs, rhs, scalar=is_scalar_claim(lhs, rhs))
        except SoundnessError:
            caught.add(th.name)
    assert names and caught == names


def test_structured_and_logarithm_inputs_get_values_in_their_domain():
    from symattn.defs.numeric_nodes import Exp, Log
    from symattn.defs.structured import Symmetric

    S, X = Symmetric("S", n), sp.MatrixSymbol("X", n, n)
    ev = evaluator({n: 3})
    s = ev.matrix(S)
    assert s == transpose(s)
    assert audit_line(S.T * X, S * X) == "audit: 4 random exact instances agree"
    line = audit_line(Exp(Log(X)), X)  # defined where every entry is positive
    assert line.startswith("audit: 4 random exact instances agree")
    with pytest.raises(SoundnessError):
        audit_line(Log(X * X), Log(X) + Log(X))


def test_audit_on_the_adversarial_corpus_agrees_with_the_true_and_catches_the_false():
    from corpus import CORPUS

    true_disagree, false_caught, false_total = [], 0, 0
    for entry in CORPUS:
        try:
            lhs, rhs, kwargs = entry.claim()
        except sa.SymattnError:  # an entry that cannot be built is the corpus's own test failure
            continue
        at = kwargs.get("at") or None
        try:
            audit_line(lhs, rhs, scalar=is_scalar_claim(lhs, rhs), at=at)
        except SoundnessError:
            if entry.expect:
                true_disagree.append(entry.name)
            else:
                false_caught += 1
        false_total += not entry.expect
    assert true_disagree == []
    assert false_total >= 50 and false_caught >= 0.9 * false_total, (false_caught, false_total)
