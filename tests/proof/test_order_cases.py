"""Scalar maxima, minima, absolute values, floors and ceilings, proved by a case split on the
order of the real symbols (and 0) and on residues; entrywise logarithms of exponentials.

Each true claim here was "unknown" before the case split and the Log rule; each false twin must
not be proved (and is refuted where a small integer instance shows it).
"""

import pytest
import sympy as sp

import symattn as sa
from symattn.proof.order_cases import by_cases
from symattn.proof.scalar import verify_scalar

u, w = sp.symbols("u w", real=True)
c = sp.Symbol("c", positive=True)
a = sp.Symbol("a", integer=True)
n, r = sa.dims("n r")

TRUE = [
    (sp.Max(u, w) + sp.Min(u, w), u + w),
    (sp.Max(u, w) - sp.Min(u, w), sp.Abs(u - w)),
    (sp.exp(sp.Max(u, w)), sp.Max(sp.exp(u), sp.exp(w))),
    (sp.Max(c * u, c * w), c * sp.Max(u, w)),
    (sp.sqrt(u**2), sp.Abs(u)),
    (sp.floor(a / 2) + sp.ceiling(a / 2), a),
    (sp.Abs(u * w), sp.Abs(u) * sp.Abs(w)),
]
FALSE = [
    (sp.Max(u, w) - sp.Min(u, w), u - w),
    (2 * sp.floor(a / 2), a),
    (sp.Max(sp.Symbol("s", real=True) * u, sp.Symbol("s", real=True) * w), sp.Symbol("s", real=True) * sp.Max(u, w)),
    (sp.Abs(u + w), sp.Abs(u) + sp.Abs(w)),
]


@pytest.mark.parametrize("lhs, rhs", TRUE, ids=[sp.sstr(x) for x, _ in TRUE])
def test_true_claims_are_proved_by_cases_and_audited(lhs, rhs):
    v = verify_scalar(lhs, rhs)
    assert v.proved and v.general, v.explain()
    assert v.audit.agreed >= 1


@pytest.mark.parametrize("lhs, rhs", FALSE, ids=[sp.sstr(x) for x, _ in FALSE])
def test_false_twins_are_not_proved(lhs, rhs):
    assert not verify_scalar(lhs, rhs).proved


def test_a_case_that_cannot_be_resolved_proves_nothing():
    z = sp.Symbol("z")  # not known to be real: a maximum of it has no meaning to split on
    ok, trace, _ = by_cases(sp.Max(z, 0) - sp.Max(z, 0) + sp.Max(z, 1) - 1, lambda e: e == 0)
    assert not ok and "not known to be real" in trace[0]


def test_every_ordering_of_two_symbols_and_zero_is_a_case():
    seen = []
    ok, trace, method = by_cases(sp.Max(u, w) + sp.Min(u, w) - u - w, lambda e: seen.append(e) or sp.expand(e) == 0)
    assert ok and len(seen) == 6 and "the order of u, w and 0" in method


def test_log_of_exp_entrywise():
    X = sp.MatrixSymbol("X", n, r)
    assert sa.verify(sa.Log(sa.Exp(X)), X).proved
    assert sa.verify(sa.Log(sa.Exp2(X)), sp.log(2) * X).proved
    assert sa.verify(sa.Log(sa.Exp2(X)), X).status == "refuted"
