"""RoPE's backward for a symbolic head dimension d = 2p: the VJP of R_a x is R_aᵀ G, proved for all
p, n and positions a (modulo the matmul rule), the gradient audit writing R_a out as its p blocks at
each instance; the untransposed neighbours are refuted at an exact instance that names the position."""

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import SoundnessError
from symattn.proof.audit_gradient import run_gradient_audit

n, p = sa.dims("n p")
a = sp.Symbol("a", integer=True)
x, G = sp.MatrixSymbol("x", 2 * p, n), sp.MatrixSymbol("G", 2 * p, n)
y, Gy = sp.MatrixSymbol("y", n, 2 * p), sp.MatrixSymbol("G", n, 2 * p)
R = sa.rope(a, p)


def test_the_vjp_of_a_rotation_is_its_transpose_times_the_cotangent():
    assert sa.vjp(R * x, x, G).args == (R.T, G)  # R_aᵀ G, the transpose left as written
    assert sa.verify(sa.vjp(y * R.T, y, Gy), Gy * R).proved  # G (R_aᵀ)ᵀ = G R_a


@pytest.mark.parametrize("expr, wrt, candidate, cot", [(R * x, x, R.T * G, G), (y * R.T, y, Gy * R, Gy)],
                         ids=["column", "row"])
def test_rope_backward_is_proved_for_every_head_dimension_and_the_audit_evaluates_it(expr, wrt, candidate, cot):
    v = sa.verify_gradient(expr, wrt, candidate, cot)
    assert v.proved and v.general, v.trace
    assert v.scope.startswith("all dimensions (n, p)") and "all values of a" in v.scope, v.scope
    assert v.audit.agreed >= 1 and not any("BlockDiag" in s for s in v.audit.skipped), v.audit.line


@pytest.mark.parametrize("expr, wrt, candidate, cot", [(R * x, x, R * G, G), (y * R.T, y, Gy * R.T, Gy)],
                         ids=["column: R_a G", "row: G R_a^T"])
def test_the_untransposed_rotation_is_refuted_at_a_named_position(expr, wrt, candidate, cot):
    v = sa.verify_gradient(expr, wrt, candidate, cot)
    assert v.status == "refuted", v.trace
    cex = v.counterexample
    assert "a" in cex.dims and cex.dims["a"] in (1, 2, 3) and "p" in cex.dims, cex.dims
    assert cex.certificate and cex.difference != 0


def test_the_gradient_audit_writes_the_rotation_out_and_catches_a_false_claim():
    record = run_gradient_audit(R * x, x, R.T * G, G)
    assert record.agreed == 3 and not record.skipped, record.line
    with pytest.raises(SoundnessError, match="false"):
        run_gradient_audit(R * x, x, R * G, G)
