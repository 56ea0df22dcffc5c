"""Rules beyond transposes: a 1 × 1 product is its own transpose, a symmetric input too; traces
are linear, cyclic and blind to a transpose; P⁻¹ = Pᵀ; Exp of any block matrix is blockwise; a
feature map acts row by row (stacks, row permutations). Each true claim here was "unknown"
before; each false twin must not be proved."""

import pytest
import sympy as sp

import symattn as sa
from symattn.defs.feature_map import FeatureMap

n, m = sa.dims("n m")
A, B, C = sp.MatrixSymbol("A", n, m), sp.MatrixSymbol("B", m, n), sp.MatrixSymbol("C", n, n)
x, y = sp.MatrixSymbol("x", n, 1), sp.MatrixSymbol("y", n, 1)
S = sa.Symmetric("S", n)
P = sa.Permutation("P", n)
U, W, Z = sp.MatrixSymbol("U", n, m), sp.MatrixSymbol("W", m, m), sp.MatrixSymbol("Z", n, m)
C_ = sa.dims("c")[0] if isinstance(sa.dims("c"), tuple) else sa.dims("c")


def phi(X):
    return FeatureMap("phi", X, C_)


TRUE = [
    (x.T * S * y, y.T * S * x),
    (x.T * C * y, y.T * C.T * x),
    (sp.Trace(A * B), sp.Trace(B * A)),
    (sp.Trace(A * B * C), sp.Trace(C * A * B)),
    (sp.Trace((A * B).T), sp.Trace(B * A)),
    (sp.Trace(A * B + C), sp.Trace(B * A) + sp.Trace(C)),
    (sp.Trace(2 * A * B + C.T), 2 * sp.Trace(B * A) + sp.Trace(C)),
    (sp.Inverse(P), P.T),
    (sa.Exp(sp.BlockMatrix([[U], [W]])), sp.BlockMatrix([[sa.Exp(U)], [sa.Exp(W)]])),
    (sa.Exp(sp.BlockMatrix([[U, Z], [Z, U]])), sp.BlockMatrix([[sa.Exp(U), sa.Exp(Z)], [sa.Exp(Z), sa.Exp(U)]])),
    (phi(sp.BlockMatrix([[U], [W]])), sp.BlockMatrix([[phi(U)], [phi(W)]])),
    (phi(P * U), P * phi(U)),
]
FALSE = [
    (x.T * C * y, y.T * C * x),
    (sp.Trace(A * B * C * C), sp.Trace(A * B * C)),
    (sp.Trace(2 * A * B + C), sp.Trace(B * A) + sp.Trace(C)),
    (sp.Trace(C * C), sp.Trace(C) ** 2),
    (sp.Inverse(P), P),
    (sa.Exp(sp.BlockMatrix([[U], [Z]])), sp.BlockMatrix([[sa.Exp(Z)], [sa.Exp(U)]])),
    (phi(P * U), phi(U)),
]


@pytest.mark.parametrize("lhs, rhs", TRUE, ids=[sp.sstr(a) for a, _ in TRUE])
def test_true_claims_are_proved_and_audited(lhs, rhs):
    v = sa.verify(lhs, rhs)
    assert v.proved and v.general, v.explain()
    assert v.audit.agreed >= 1


@pytest.mark.parametrize("lhs, rhs", FALSE, ids=[sp.sstr(a) for a, _ in FALSE])
def test_false_twins_are_not_proved(lhs, rhs):
    assert not sa.verify(lhs, rhs).proved


@pytest.mark.parametrize("lhs, rhs", [
    (sp.det(C + C.T), sp.det(C) + sp.det(C.T)),
    (sp.Trace(C * C), sp.Trace(C) ** 2),
    (sp.Trace(A * B), 2 * sp.Trace(B * A)),
], ids=["det_of_a_sum", "trace_of_a_square", "trace_doubled"])
def test_false_claims_about_traces_and_determinants_are_refuted_with_matrices(lhs, rhs):
    v = sa.verify(lhs, rhs)
    assert v.status == "refuted", v.explain()
    named = {s.name for s in (lhs - rhs).atoms(sp.MatrixSymbol)}
    assert named <= set(v.counterexample.values) and v.counterexample.certificate


def test_a_scalar_claim_with_matrices_that_do_not_fit_is_refused():
    with pytest.raises(sa.ShapeError, match="cannot form"):
        sa.verify(sp.Trace(A * B * C * C), sp.Trace(C * A * C * B))  # C·A needs m = n
