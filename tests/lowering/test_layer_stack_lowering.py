"""Stacks of layers in kernels: a loop over the layers, each weight one array with its layers on axis -3."""

import numpy as np
import pytest
import sympy as sp

import symattn as sa
from symattn.errors import LoweringError, ShapeError

n, m, L, M = sa.dims("n m L M")
X, S, A = (sp.MatrixSymbol(s, n, m) for s in "XSA")
W = sp.MatrixSymbol("W", n, n)


def _softmax_columns(z):
    e = np.exp(z - z.max(axis=-2, keepdims=True))
    return e / e.sum(axis=-2, keepdims=True)


def _reference(x, w):
    """S_l = S_{l-1} + W_l softmax(S_{l-1}), written as a plain loop over the layers."""
    s = x
    for layer in range(w.shape[-3]):
        s = s + w[..., layer, :, :] @ _softmax_columns(s)
    return s


RESIDUAL = sa.layer_stack(S + W * sa.softmax(S), S, X, L, weights=[W])


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_a_kernel_of_a_stack_reads_the_depth_from_the_weights_and_equals_the_loop(depth):
    rng = np.random.default_rng(depth)
    x, w = rng.normal(size=(3, 4, 2)), rng.normal(size=(3, depth, 4, 4))  # a batch of 3
    kernel = sa.lower(RESIDUAL)
    np.testing.assert_allclose(kernel(x, w), _reference(x, w), rtol=1e-12)
    f = sp.lambdify([X, W], RESIDUAL)  # stock lambdify: the same loop
    np.testing.assert_allclose(f(x, w), _reference(x, w), rtol=1e-12)


def test_weights_shared_by_the_batch_broadcast():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(5, 4, 2)), rng.normal(size=(3, 4, 4))  # one set of 3 layers for 5 inputs
    np.testing.assert_allclose(sa.lower(RESIDUAL)(x, w), _reference(x, w), rtol=1e-12)


def test_a_concrete_depth_is_checked_against_the_weights():
    kernel = sa.lower(sa.layer_stack(S + W * sa.softmax(S), S, X, 3, weights=[W]))
    with pytest.raises(ShapeError, match=r"W: its layers \(axis -3\) should number 3, got 2"):
        kernel(np.ones((4, 2)), np.ones((2, 4, 4)))


def test_a_weight_without_a_layer_axis_is_an_error_naming_it():
    with pytest.raises(sa.SymattnError, match="W"):
        sa.lower(RESIDUAL)(np.ones((4, 2)), np.ones((4, 4)))


def test_a_stack_without_weights_takes_its_depth_by_keyword_and_checks_it():
    plain = sa.layer_stack(S + sa.softmax(S), S, X, L)
    kernel = sa.lower(plain)
    x = np.arange(8.0).reshape(4, 2) / 8
    want = x
    for _ in range(3):
        want = want + _softmax_columns(want)
    np.testing.assert_allclose(kernel(x, L=3), want, rtol=1e-12)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ShapeError, match="positive whole number"):
            kernel(x, L=bad)


def test_nested_stacks_loop_inside_each_layer():
    T, B = sp.MatrixSymbol("T", n, m), sp.MatrixSymbol("B", n, n)
    inner = sa.layer_stack(T + B * T, T, S, M, weights=[B])  # B_1..B_M, the same in every outer layer
    outer = sa.layer_stack(S + W * inner, S, X, L, weights=[W])
    rng = np.random.default_rng(4)
    x, w, b = rng.normal(size=(4, 2)), rng.normal(size=(2, 4, 4)), rng.normal(size=(3, 4, 4))
    want = x
    for layer in range(2):
        t = want
        for k in range(3):
            t = t + b[k] @ t
        want = want + w[layer] @ t
    kernel = sa.lower(outer)
    given = {"X": x, "W": w, "B": b}
    np.testing.assert_allclose(kernel(*[given[a.name] for a in kernel.args]), want, rtol=1e-12)


def test_a_weight_also_read_outside_its_stack_is_refused():
    both = RESIDUAL + W * X
    with pytest.raises(LoweringError, match="also read outside the stack"):
        sa.lower(both)


@pytest.mark.parametrize("name", ["_S0", "_l0"])
def test_a_user_matrix_named_like_the_loop_variables_keeps_its_value(name):
    """The loop's lambda names its parameters apart from every name of the body."""
    B = sp.MatrixSymbol(name, n, m)
    stack = sa.layer_stack(S + W * S + B, S, X, L, weights=[W])
    rng = np.random.default_rng(2)
    x, w, b = rng.normal(size=(4, 2)), rng.normal(size=(3, 4, 4)), rng.normal(size=(4, 2))
    want = x
    for layer in range(3):
        want = want + w[layer] @ want + b
    np.testing.assert_allclose(sp.lambdify([X, W, B], stack)(x, w, b), want, rtol=1e-12)
    kernel, given = sa.lower(stack), {"X": x, "W": w, name: b}
    np.testing.assert_allclose(kernel(*[given[a.name] for a in kernel.args]), want, rtol=1e-12)
