"""Seed 002, RoPE scores depend only on the relative position."""

import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from seed002_helpers import assert_refutation_rechecks, at, batch, result, rng_arrays, seeds

import symattn as sa

FAST = settings(deadline=None, max_examples=15)
positions = st.integers(-50, 50)


def test_rope_theorem_is_proved_for_every_head_dimension():
    r = result("rope_scores_depend_on_relative_position")
    assert r.status == "proved" and r.general and "p" in r.scope, [v.explain() for v in r.verdicts]


def np_rotate_llama(x, t, base=10000.0):
    """Llama's apply_rotary_emb on row vectors (..., d): pairs as complex numbers times e^{i t θ_i}."""
    d = x.shape[-1]
    theta = base ** (-np.arange(0, d, 2) / d)                 # θ_i = base^{-2(i-1)/d}
    z = x[..., 0::2] + 1j * x[..., 1::2]
    z = z * np.exp(1j * t * theta)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


@FAST
@given(pairs=st.integers(1, 4), a=positions, b=positions, shift=positions, nb=batch, seed=seeds)
def test_rotated_scores_depend_only_on_b_minus_a(pairs, a, b, shift, nb, seed):
    d = 2 * pairs
    env = rng_arrays(seed, {"q": (d, 1), "k": (d, 1)}, (nb,))
    q_row, k_row = np.swapaxes(env["q"], -1, -2), np.swapaxes(env["k"], -1, -2)
    score = (np_rotate_llama(q_row, a) * np_rotate_llama(k_row, b)).sum(-1)
    shifted = (np_rotate_llama(q_row, a + shift) * np_rotate_llama(k_row, b + shift)).sum(-1)
    np.testing.assert_allclose(shifted, score, rtol=1e-9, atol=1e-9)
    p = sa.dims("p")
    q, k = sp.MatrixSymbol("q", 2 * p, 1), sp.MatrixSymbol("k", 2 * p, 1)
    rel = at(q.T * sa.rope(b - a, p) * k, {p: pairs}, env)      # qᵀ R_{b-a} k by the project
    np.testing.assert_allclose(rel[..., 0, 0], score[..., 0], rtol=1e-9, atol=1e-9)
    lhs = at((sa.rope(a, p) * q).T * (sa.rope(b, p) * k), {p: pairs}, env)
    np.testing.assert_allclose(lhs[..., 0, 0], score[..., 0], rtol=1e-9, atol=1e-9)


def test_rope_matrix_is_the_llama_rotation():
    p = sa.dims("p")
    R = np.array(sa.rope(3, p).xreplace({p: 2}).doit().as_explicit().evalf(), dtype=float)
    x = np.array([[1.0, 2.0, -1.0, 0.5]])
    np.testing.assert_allclose(x @ R.T, np_rotate_llama(x, 3), rtol=1e-12)
    np.testing.assert_allclose(R.T @ R, np.eye(4), atol=1e-12)


def test_sign_mistake_counterexample_rechecks_exactly():
    r = result("rope_scores_depend_on_a_minus_b")
    assert r.status == "refuted" and r.theorem.explanation
    (v,) = r.verdicts

    def rot(x):
        return sp.Matrix([[sp.cos(x), -sp.sin(x)], [sp.sin(x), sp.cos(x)]])

    def R(t, pairs):
        return sp.diag(*[rot(t * sp.Integer(10000) ** sp.Rational(-(i - 1), pairs))
                         for i in range(1, pairs + 1)])

    def recompute(values, dims):
        pairs, a, b = dims["p"], values["a"], values["b"]
        q, k = values["q"], values["k"]
        return (R(a, pairs) * q).T * (R(b, pairs) * k), q.T * R(a - b, pairs) * k

    assert_refutation_rechecks(v, recompute)


def test_rope_and_permutation_errors_are_clear():
    import pytest

    from symattn.errors import DimensionError, ShapeError

    p = sa.dims("p")
    with pytest.raises(ShapeError, match="x needs d = 2p rows"):
        sa.apply_rope(sp.MatrixSymbol("x", 2 * p + 1, 1), 3, p)
    with pytest.raises(DimensionError, match="Permutation P: dimension 0 must be a positive integer"):
        sa.Permutation("P", 0)
