"""Exp2 (2 to the power of every entry): the node, its proofs, its lowering on every target, and the
base-2 kernels of the numeric core (claims 8-11 of ``blockwise_logsumexp_merge``), which must agree
with the base-e kernels they replace."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import symattn as sa
import symattn.proofs.rewrites as R
from symattn.defs.numeric_nodes import DivideRows, Exp, Exp2
from symattn.numeric import kernels
from symattn.proof import audit_numbers as num
from symattn.proof.budget import Budget
from symattn.proof.instances import equal_at
from symattn.theorems import claim_verdict, load_library

LN2 = sp.log(2)
n, m, d_k, d_v = sa.dims("n m d_k d_v")
Q, K, V = sp.MatrixSymbol("Q", n, d_k), sp.MatrixSymbol("K", m, d_k), sp.MatrixSymbol("V", m, d_v)
X = sp.MatrixSymbol("X", m, n)
ONES = sp.OneMatrix(m, 1)


# -- the node ------------------------------------------------------------------------------


def test_exp2_is_public_beside_exp_and_acts_entrywise_and_blockwise():
    assert sa.Exp2 is Exp2 and sa.defs.Exp2 is Exp2
    assert Exp2(X).shape == (m, n) and str(Exp2(X)) == "Exp2(X)"
    i, j = sp.symbols("i j", integer=True)
    assert Exp2(X).entry_rule(i, j, lambda e, a, b: e[a, b]) == sp.exp(X[i, j] * LN2)  # 2^x = exp(x ln 2)
    assert Exp2(X).entry_rule(i, j, lambda e, a, b: sp.Integer(3)) == 8
    A, B = sp.MatrixSymbol("A", 2, 3), sp.MatrixSymbol("B", 2, 4)
    assert Exp2(sp.BlockMatrix([[A, B]])).doit() == sp.BlockMatrix([[Exp2(A), Exp2(B)]])


def test_exp2_is_not_rewritten_into_exp_at_the_matrix_level():
    """SymPy may write an entry 2^(x/ln 2) as exp(x), but the matrix node stays Exp2 (so kernels call exp2)."""
    e = Exp2(X / LN2)
    assert isinstance(e, Exp2) and isinstance(e.doit(), Exp2)
    assert isinstance(sp.simplify(e), Exp2)


# -- proofs --------------------------------------------------------------------------------

BASE2 = (8, 9, 10, 11, 12)


@pytest.fixture(scope="module")
def merge():
    th = load_library()["blockwise_logsumexp_merge"]
    return th, th.claims()


@pytest.mark.parametrize("k", BASE2)
def test_base2_claims_are_proved_general_entrywise_and_audited(merge, k):
    th, claims = merge
    v = claim_verdict(th, k, claims, cached=False, save=False)
    assert (v.status, v.general) == ("proved", True), v.explain()
    assert v.method == "entrywise (B)"
    text = v.explain()
    assert "normalizes to 0 for symbolic i, j" in text
    assert "audit: 4 random exact instances agree" in text


def test_base2_claims_state_exp_in_base_2_with_the_factor_one_over_ln_2(merge):
    _, claims = merge
    T = (R.Q / LN2) * R.K.T
    assert claims[9] == (Exp(R.Q * R.K.T) * R.V, Exp2(T) * R.V)
    assert claims[10] == (Exp(R.Q * R.K.T) * R.ones(R.m), Exp2(T) * R.ones(R.m))
    assert claims[11][1] == Exp2(R.S_1 / LN2) * R.V_1 + Exp2(R.S_2 / LN2) * R.V_2
    assert claims[12] == (Exp(R.Q * R.K.T + R.M) * R.V, Exp2(T + R.M / LN2) * R.V)
    # the claims before them keep their numbers (the kernels of the numeric core name them)
    assert claims[7] == (Exp(sp.BlockMatrix([[R.S_1, R.S_2]])) * sp.BlockMatrix([[R.V_1], [R.V_2]]),
                         Exp(R.S_1) * R.V_1 + Exp(R.S_2) * R.V_2)


WRONG = {
    "no factor": (Exp(Q * K.T) * V, Exp2(Q * K.T) * V),
    "ln 2 instead of 1/ln 2": (Exp(Q * K.T) * V, Exp2(LN2 * Q * K.T) * V),
    "row sums, ln 2": (Exp(Q * K.T) * ONES, Exp2(LN2 * Q * K.T) * ONES),
    "softmax in base 2 without the factor": (sa.softmax(Q * K.T, 1) * V,
                                             DivideRows(Exp2(Q * K.T) * V, Exp2(Q * K.T) * ONES)),
    "one block without the factor": (Exp(R.S_1) * R.V_1 + Exp(R.S_2) * R.V_2,
                                     Exp2(R.S_1 / LN2) * R.V_1 + Exp2(R.S_2) * R.V_2),
    "log base 2 of e the wrong way round": (Exp2(X), Exp(X / LN2)),
    "the mask not divided by ln 2": (Exp(R.Q * R.K.T + R.M) * R.V, Exp2((R.Q / LN2) * R.K.T + R.M) * R.V),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_base2_variants_are_refuted_with_a_certificate(name):
    lhs, rhs = WRONG[name]
    v = sa.verify(lhs, rhs)
    assert v.status == "refuted", v.explain()
    assert "excludes 0" in v.counterexample.certificate or "exact rational" in v.counterexample.certificate


def test_exp2_identities_hold_and_fail_where_they_should():
    Y = sp.MatrixSymbol("Y", m, n)
    assert sa.verify(Exp2(X + Y), sp.HadamardProduct(Exp2(X), Exp2(Y))).status == "proved"
    assert sa.verify(Exp2(X), Exp(X)).status == "refuted"
    # 2^x is exp(x ln 2): true, in both directions of the factor
    assert sa.verify(Exp2(X), Exp(LN2 * X)).status == "proved"
    assert sa.verify(Exp(X), Exp2(X / LN2)).status == "proved"


def test_strategy_d_treats_powers_of_two_as_exponentials():
    A, B = sp.MatrixSymbol("A", 2, 2), sp.MatrixSymbol("B", 2, 2)
    assert equal_at(Exp2(A + B), sp.HadamardProduct(Exp2(A), Exp2(B)), {}, Budget(20))[0]
    assert equal_at(Exp(A), Exp2(A / LN2), {}, Budget(20))[0]
    assert not equal_at(Exp2(A), Exp(A), {}, Budget(20))[0]


def test_audit_numbers_evaluate_powers_of_two_exactly_or_enclosed():
    assert num.exp2(3) == 8 and num.exp2(-2) == Fraction(1, 4) and num.exp2(0) == 1
    assert num.exp2(num.NEG_INF) == 0
    half = num.exp2(Fraction(1, 2))
    assert not num.is_exact(half) and num.disjoint(half, Fraction(141, 100)) and num.disjoint(half, Fraction(142, 100))
    assert num.compare(half, Fraction(141, 100)) == 1 and num.compare(half, Fraction(142, 100)) == -1


def test_the_trust_base_checks_the_entry_and_block_rules_of_exp2():
    from symattn.proof.trust import TRUST_BASE, check_trust_base

    names = {"entry_of_numeric_nodes", "elementwise_nodes_act_blockwise"}
    assert all("Exp2" in r.statement for r in TRUST_BASE if r.name in names)
    for check in check_trust_base(names=names):
        assert check.ok, check.failures


# -- lowering on every target ----------------------------------------------------------------


def test_numpy_kernel_calls_exp2_and_is_batched():
    expr = Exp2(X) * sp.MatrixSymbol("W", n, 3)
    k = sa.lower(expr)
    assert "exp2" in k.source and "numpy.exp(" not in k.source
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 4, 5, 6)), rng.standard_normal((6, 3))
    want = np.stack([[np.exp2(x[a, b]) @ w for b in range(4)] for a in range(2)])
    np.testing.assert_allclose(k(x, w), want, rtol=1e-13)


def test_kernel_of_exp2_of_a_scaled_product_keeps_exp2():
    k = sa.lower(Exp2((Q / LN2) * K.T) * V)
    assert "exp2" in k.source and "exp_(" not in k.source and "numpy.exp(" not in k.source
    rng = np.random.default_rng(1)
    q, kk, v = rng.standard_normal((3, 4, 2)), rng.standard_normal((3, 5, 2)), rng.standard_normal((3, 5, 3))
    np.testing.assert_allclose(k(q, kk, v), np.exp(q @ np.swapaxes(kk, -1, -2)) @ v, rtol=1e-12)


@pytest.mark.parametrize("target", ["array-api", "torch", "jax"])
def test_other_targets_lower_exp2(target):
    lib = {"array-api": "array_api_compat", "torch": "torch", "jax": "jax"}[target]
    pytest.importorskip(lib)
    expr = Exp2(X) * sp.MatrixSymbol("W", n, 3)
    k = sa.lower(expr, target=target)
    assert "exp2" in k.source
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((2, 4, 5)), rng.standard_normal((5, 3))
    got = np.asarray(k(x, w))
    np.testing.assert_allclose(got, np.exp2(x) @ w, rtol=1e-12 if target != "jax" else 1e-5)


def test_array_api_exp2_helper_falls_back_to_pow_without_an_exp2():
    from symattn.lowering.targets.array_api import exp2

    class Standard:  # a namespace with the standard's pow and full_like but no exp2
        pow = staticmethod(np.power)
        full_like = staticmethod(np.full_like)

    x = np.array([[-1.5, 0.0, 3.0]])
    np.testing.assert_array_equal(exp2(Standard, x), np.exp2(x))


# -- the base-2 kernels of the numeric core ------------------------------------------------

NEW = ("query_base2", "scores_base2", "mask_base2", "scores_base2_masked", "exp2_product", "exp2_rowsum",
       "accumulate_base2")
TOL = {np.float32: 1e-6, np.float64: 1e-13}


def test_the_base2_kernels_are_listed_and_lowered_from_claims_8_to_11():
    assert set(NEW) <= set(kernels.names())
    for name in NEW:
        th, claim, side, _ = kernels.spec(name)
        assert (th, side) == ("blockwise_logsumexp_merge", "rhs") and claim in BASE2
        k = kernels.get(name)
        assert k.provenance.status == "proved" and k.provenance.general
    for name in ("exp2_product", "exp2_rowsum", "accumulate_base2"):
        src = kernels.get(name).source
        assert "exp2_(" in src and "exp_(" not in src and "numpy.exp(" not in src


def _tile(rng, dtype, batch=(2, 3), t=16, blocks=(24, 40), d=8, dv=5):
    """A query tile and two key blocks; scores of size about 3 (the scale folded into Q); values
    positive and [V 1] as in the numeric core, so that every entry of U is a sum of positive terms."""
    q = (rng.standard_normal(batch + (t, d)) / np.sqrt(d)).astype(dtype)
    ks = [rng.standard_normal(batch + (b, d)).astype(dtype) for b in blocks]
    vs = [np.concatenate([rng.uniform(0.1, 1, batch + (b, dv)), np.ones(batch + (b, 1))], -1).astype(dtype)
          for b in blocks]
    return q, ks, vs


def _rel(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.abs(want)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_base2_kernels_agree_with_the_base_e_kernels(dtype):
    rng = np.random.default_rng(3)
    q, (k1, k2), (v1, v2) = _tile(rng, dtype)
    # base e: S = Q Kᵀ, U = exp(S_1) [V_1 1], then U + exp(S_2) [V_2 1]
    U_e = kernels.EXP_PRODUCT(S=kernels.SCORES(q, k1), V=v1)
    U_e2 = kernels.ACCUMULATE(S_2=kernels.SCORES(q, k2), U_1=U_e.copy(), V_2=v2)
    # base 2: T = (Q/ln 2) Kᵀ, U = 2^T_1 [V_1 1], then U + 2^T_2 [V_2 1]
    T1 = kernels.SCORES_BASE2(q, k1)
    assert T1.dtype == dtype and T1.shape == (2, 3, 16, 24)
    U_2 = kernels.EXP2_PRODUCT(T=T1, V=v1)
    U_22 = kernels.ACCUMULATE_BASE2(T_2=kernels.SCORES_BASE2(q, k2), U_1=U_2.copy(), V_2=v2)
    assert U_2.dtype == U_22.dtype == dtype
    want = np.exp(q.astype(np.float64) @ np.swapaxes(k1, -1, -2).astype(np.float64)) @ v1.astype(np.float64)
    assert _rel(U_2, U_e.astype(np.float64)) < TOL[dtype]
    assert _rel(U_22, U_e2.astype(np.float64)) < TOL[dtype]
    assert _rel(U_2, want) < 4 * TOL[dtype]  # against the float64 value of exp(Q Kᵀ) [V 1]
    # the row sums alone, and the query scaled once per work item
    l2 = kernels.EXP2_ROWSUM(T=kernels.SCORES_BASE2(q, k1))
    assert l2.shape == (2, 3, 16, 1) and _rel(l2, U_e[..., -1:].astype(np.float64)) < TOL[dtype]
    T_once = kernels.SCORES(kernels.QUERY_BASE2(q), k1)
    assert _rel(T_once, kernels.SCORES_BASE2(q, k1).astype(np.float64)) < TOL[dtype]


def test_base2_kernels_write_into_out_and_overwrite_only_the_donated_scores():
    rng = np.random.default_rng(4)
    q, (k1, _), (v1, _) = _tile(rng, np.float64, batch=(2,))
    out = np.empty((2, 16, 24))
    T = kernels.SCORES_BASE2(q, k1, out=out)
    assert T is out
    np.testing.assert_allclose(out, (q / np.log(2)) @ np.swapaxes(k1, -1, -2), rtol=1e-14, atol=1e-14)
    v_before = v1.copy()
    U = kernels.EXP2_PRODUCT(T=T, V=v1)
    np.testing.assert_array_equal(v1, v_before)
    np.testing.assert_allclose(out, np.exp2((q / np.log(2)) @ np.swapaxes(k1, -1, -2)), rtol=1e-14)
    assert U.shape == (2, 16, 6)


def test_masked_scores_in_base_2_agree_with_the_masked_scores_in_base_e():
    q, (k1, _), (v1, _) = _tile(np.random.default_rng(8), np.float64, batch=(2,))
    rng = np.random.default_rng(9)
    mask = np.where(rng.random((16, 24)) < 0.3, -np.inf, rng.normal(size=(16, 24)))  # -inf and finite biases
    want = np.exp(q @ np.swapaxes(k1, -1, -2) + mask) @ v1
    T = kernels.SCORES_BASE2_MASKED(q, k1, mask)
    np.testing.assert_allclose(kernels.EXP2_PRODUCT(T=T, V=v1), want, rtol=1e-13)
    T = kernels.SCORES_BASE2(q, k1)
    T += kernels.MASK_BASE2(mask)  # the mask scaled once, added to each block's scores
    np.testing.assert_allclose(kernels.EXP2_PRODUCT(T=T, V=v1), want, rtol=1e-13)


def test_base2_kernels_keep_the_mask_minus_infinity_as_zero_weight():
    q, (k1, _), (v1, _) = _tile(np.random.default_rng(5), np.float64, batch=())
    T = kernels.SCORES_BASE2(q, k1)
    T[:, 3] = -np.inf  # a masked key
    S = q @ k1.T
    S[:, 3] = -np.inf
    np.testing.assert_allclose(kernels.EXP2_PRODUCT(T=T, V=v1), np.exp(S) @ v1, rtol=1e-13)


@pytest.mark.parametrize("module", ["numpy", "array_api"])
def test_a_chain_product_frees_its_operands_and_intermediates_at_once(module):
    """coeff · A B C (scores_base2's product with the factor 1/ln 2) leaves no reference cycle behind:
    the scaled operand and the intermediate products are freed when the call returns, not when the
    garbage collector runs (memory that is not reused made each 512 × 512 product 0.07 ms slower)."""
    import gc
    import importlib

    rt = importlib.import_module(f"symattn.lowering.targets.{module}")
    rng = np.random.default_rng(6)
    A, B, C = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 2))
    call = (lambda: rt.chain(1.5, A, B, C)) if module == "numpy" else (lambda: rt.chain(np, 1.5, A, B, C))
    gc.collect()
    gc.disable()
    try:
        got = call()
        found = gc.collect()
    finally:
        gc.enable()
    np.testing.assert_allclose(got, 1.5 * A @ B @ C, rtol=1e-12, atol=1e-13)
    assert found == 0


@pytest.mark.parametrize("target", ["numpy", "array-api", "torch", "jax"])
def test_exp2_inside_a_sum_over_heads_lowers_on_every_target(target):
    """Inside a node over heads, Exp2 is printed by the expression printers (NumPy's and the other
    libraries'), not by the kernel printers: numpy.exp2 there too."""
    lib = {"numpy": "numpy", "array-api": "array_api_compat", "torch": "torch", "jax": "jax"}[target]
    pytest.importorskip(lib)
    H, d = sa.dims("H d")
    W, Z = sa.Family("W", d, d_k), sp.MatrixSymbol("Z", d_k, n)
    expr = sa.head_sum(Exp2(W[sa.h] * Z), H)
    k = sa.lower(expr, args=[W[sa.h], Z], target=target)
    assert "exp2" in k.source
    rng = np.random.default_rng(7)
    w, z = rng.standard_normal((3, 2, 4)), rng.standard_normal((4, 5))
    np.testing.assert_allclose(np.asarray(k(w, z)), sum(np.exp2(w[j] @ z) for j in range(3)),
                               rtol=1e-12 if target != "jax" else 1e-5)


def test_exp2_in_place_on_a_large_array_shares_rows_between_cores_and_matches_numpy():
    from symattn.lowering.targets.numpy import CHUNK, exp2_

    rng = np.random.default_rng(11)
    x = rng.uniform(-30, 30, (3, 2 * CHUNK // 1000 + 7, 1000))  # large enough for row chunks
    want = np.exp2(x)
    got = exp2_(x)
    assert got is x
    np.testing.assert_array_equal(got, want)


def test_a_narrower_query_is_divided_by_ln2_in_the_scores_dtype():
    """q float32 with k, v float64: Q / ln 2 is formed in float64, not rounded to float32 first."""
    import symattn.numeric as sn

    rng = np.random.default_rng(11)
    q = rng.normal(size=(3, 40, 8)).astype(np.float32)
    k, v = rng.normal(size=(3, 50, 8)), rng.normal(size=(3, 50, 5))
    got = sn.blocked_core(q, k, v)
    want = sn.blocked_core(q.astype(np.float64), k, v)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_the_audit_encloses_huge_powers_of_two_instead_of_computing_them():
    """2^(c x) with c = 10^10 (an exact 2^(10^10) would take gigabytes) and a tower of five Exp2
    (beyond what mpmath can enclose): the audit encloses or skips, and the verdict comes back."""
    n = sa.dims("n")
    X = sp.MatrixSymbol("X", n, n)
    v = sa.verify(sa.Exp2(10**10 * X).T, sa.Exp2(10**10 * X.T), budget=10.0)
    assert v.status == "proved" and any(line.startswith("audit: ") for line in v.trace)
    tower = X
    for _ in range(5):
        tower = sa.Exp2(tower)
    v = sa.verify(tower.T.T + X - X, tower, budget=10.0)
    assert v.status == "proved"


def test_exp2_printed_as_one_expression_falls_back_to_pow_without_an_exp2():
    """Inside a sum over heads (printed as one expression), Exp2 goes through ops.exp2, which uses
    pow(2, x) when the namespace has no exp2 (the array-API standard has none)."""
    import types

    from symattn.lowering.targets.array_api import Ops

    n, d_k, H, d = sa.dims("n d_k H d")
    W, Z = sa.Family("W", d, d_k), sp.MatrixSymbol("Z", d_k, n)
    src = sa.lower(sa.head_sum(sa.Exp2(W[sa.h] * Z), H), args=[W[sa.h], Z], target="array-api").source
    assert "ops.exp2(" in src and "ops.f.exp2" not in src
    strict = types.SimpleNamespace(pow=np.power, full_like=np.full_like)  # the standard's names only
    x = np.array([[-1.0, 0.5, 3.0]])
    np.testing.assert_allclose(Ops(strict, np.float64, None).exp2(x), np.exp2(x))
