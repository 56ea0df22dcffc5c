"""Gradients of stacks of layers: at a concrete depth through the layers written out, each layer's weight
W_l its own input; a symbolic depth, or the weight W of every layer at once, refused with what to ask."""

import pytest
import sympy as sp

import symattn as sa
from symattn.grad.explicit import at_dims, derivative, explicit, symbols_for

n, L = sa.dims("n L")
X, S, A = (sp.MatrixSymbol(s, n, n) for s in "XSA")
G = sp.MatrixSymbol("G", n, n)
A1, A2 = sp.MatrixSymbol("A_1", n, n), sp.MatrixSymbol("A_2", n, n)


def _two_layers():
    return sa.layer_stack(S + A * sa.softmax(S), S, X, 2, weights=[A])


@pytest.mark.parametrize("wrt", [X, A1, A2], ids=str)
def test_the_vjp_of_a_stack_at_a_concrete_depth_is_proved_the_derivative(wrt):
    stack = _two_layers()
    candidate = sa.vjp(stack, wrt, G)
    verdict = sa.verify_gradient(stack, wrt, candidate, G)
    assert verdict.status == "proved" and verdict.general


def test_the_vjp_of_a_stack_equals_the_derivative_of_its_explicit_instance():
    """Independent of the rules: the explicit 2 × 2 instance of the unfolded stack, differentiated entrywise
    by sympy.diff, at an exact point."""
    stack, dims = _two_layers(), {n: 2}
    env = {at_dims(M, dims): symbols_for(at_dims(M, dims), M.name) for M in (X, A1, A2, G)}
    E = explicit(at_dims(stack.unfold(2), dims), env)
    want = derivative(E, env[at_dims(G, dims)], env[at_dims(A1, dims)])
    got = explicit(at_dims(sa.vjp(stack, A1, G), dims), env)
    point = {x: sp.Rational((7 * k) % 11 - 5, 4) for k, x in enumerate(sorted(
        set().union(*(m.free_symbols for m in env.values())), key=str))}
    gap = (got - want).xreplace(point).evalf(60)  # exp of rationals: compared to 60 digits, not simplified
    assert max(abs(x) for x in gap) < sp.Float("1e-50")


def test_a_wrong_layer_gradient_is_refuted():
    stack = _two_layers()
    assert sa.verify_gradient(stack, A2, G * X.T, G).status == "refuted"  # layer 2 sees S_1, not X


def test_a_symbolic_depth_is_refused_also_for_one_layer_weight():
    deep = sa.layer_stack(S + A * S, S, X, L, weights=[A])
    for wrt in (X, A1):
        with pytest.raises(sa.GradientError, match="symbolic number of layers L"):
            sa.vjp(deep, wrt, G)


def test_the_weight_of_every_layer_at_once_is_refused_naming_the_layer_weights():
    with pytest.raises(sa.GradientError, match="A_1, ..., A_L"):
        sa.vjp(_two_layers(), A, G)


def test_a_user_matrix_named_like_a_layer_weight_is_refused():
    """Unfolded, layer 1's weight A_1 would be the user's A_1: the two gradients would be summed."""
    with pytest.raises(sa.GradientError, match="A_1 is named like a weight"):
        sa.vjp(_two_layers() + A1 * X, A1, G)
