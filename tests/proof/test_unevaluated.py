"""A claim gets the same verdict whether SymPy evaluated it while it was built (``A * B``, ``.T``)
or not (``MatMul(A, B)``, ``Transpose(A)``): random expression trees over three square matrices,
built both ways, on both sides of a claim.

SymPy's evaluation is an identity (it only rewrites), so it must not change what is proved or
refuted. (One thing it does change cannot be seen afterwards: ``Inverse(X) * X`` is built as the
identity, and the claim then holds no inverse at all; built unevaluated, the inverse stays, and a
proof says that it assumes the inverse exists.)
"""

import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symattn as sa

n = sa.dims("n")[0] if isinstance(sa.dims("n"), tuple) else sa.dims("n")
LEAVES = tuple(sp.MatrixSymbol(s, n, n) for s in "ABC")


def trees(depth=3):
    leaf = st.sampled_from(range(len(LEAVES))).map(lambda k: ("leaf", k))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.tuples(st.just("mul"), inner, inner), st.tuples(st.just("add"), inner, inner),
        st.tuples(st.just("T"), inner), st.tuples(st.just("softmax"), inner, st.sampled_from((0, 1))),
        st.tuples(st.just("scale"), inner, st.sampled_from((2, -1, sp.Rational(1, 2))))), max_leaves=depth + 2)


def build(t, evaluated: bool):
    kind = t[0]
    if kind == "leaf":
        return LEAVES[t[1]]
    if kind == "mul":
        a, b = build(t[1], evaluated), build(t[2], evaluated)
        return a * b if evaluated else sp.MatMul(a, b)
    if kind == "add":
        a, b = build(t[1], evaluated), build(t[2], evaluated)
        return a + b if evaluated else sp.MatAdd(a, b)
    if kind == "T":
        a = build(t[1], evaluated)
        return a.T if evaluated else sp.Transpose(a)
    if kind == "softmax":
        return sa.softmax(build(t[1], evaluated), axis=t[2])
    a = build(t[1], evaluated)
    return t[2] * a if evaluated else sp.MatMul(t[2], a)


def transposed_twice(t):
    return ("T", ("T", t))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(left=trees(), right=trees(), same=st.booleans())
def test_evaluated_and_unevaluated_claims_get_the_same_verdict(left, right, same):
    if same:  # a true claim: the tree against itself written with a double transpose
        right = transposed_twice(left)
    evaluated = sa.verify(build(left, True), build(right, True), budget=4)
    unevaluated = sa.verify(build(left, False), build(right, False), budget=4)
    assert evaluated.status == unevaluated.status, (evaluated.explain(), unevaluated.explain())
    if same:
        assert evaluated.proved


def test_an_inverse_sympy_would_cancel_is_kept_when_built_unevaluated():
    u, v = sp.MatrixSymbol("u", n, 1), sp.MatrixSymbol("v", n, 1)
    outer = u * v.T
    assert sp.Inverse(outer) * outer == sp.Identity(n)  # SymPy cancels it while building
    claim = sp.MatMul(sp.Inverse(outer), outer)
    verdict = sa.verify(claim, sp.Identity(n))
    assert verdict.proved and "assuming every inverse in the claim exists" in verdict.scope
    assert "a singular matrix has no inverse" in verdict.audit.line  # at n >= 2 it is singular
