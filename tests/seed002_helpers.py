"""Shared helpers for the seed-002 tests: Hypothesis strategies, evaluation, exact re-checks."""

from __future__ import annotations

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from symattn.proof.certify import certify_nonzero
from symattn.proof.evaluate import evaluate
from symattn.proof.instances import specialize
from symattn.theorems import load_library, prove

small = st.integers(min_value=1, max_value=4)
batch = st.integers(min_value=1, max_value=3)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def rng_arrays(seed: int, shapes: dict, batch_shape=()) -> dict:
    """name -> float array of the given shape (with leading batch axes), entries in [-2, 2]."""
    rng = np.random.default_rng(seed)
    return {nm: rng.uniform(-2.0, 2.0, size=tuple(batch_shape) + tuple(s)) for nm, s in shapes.items()}


def np_softmax(x, axis):
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def at(expr, dims: dict, env: dict, functions=None):
    """The project's float evaluation of ``expr`` at concrete dimensions."""
    return evaluate(specialize(expr, dims), env, "float", functions)


def result(name: str):
    """Prove the named library theorem and return its Result."""
    return prove(load_library()[name])


def assert_refutation_rechecks(v, recompute):
    """Re-check a refutation exactly: ``recompute(values) -> (lhs, rhs)`` builds both sides with
    exact SymPy arithmetic from the counterexample's integer inputs, independently of the engine;
    the certified entry must differ, shown by interval arithmetic and by a 50-digit evaluation."""
    assert v.status == "refuted", v.explain()
    cex = v.counterexample
    values = {k: sp.ImmutableMatrix(np.asarray(a).tolist()) if np.ndim(a) else sp.Integer(int(a))
              for k, a in cex.values.items()}
    for k, a in cex.values.items():
        assert np.array_equal(np.asarray(a), np.round(np.asarray(a))), f"input {k} is not integer"
    lhs, rhs = recompute(values, cex.dims)
    i, j = cex.entry
    d = sp.sympify(lhs[i, j] - rhs[i, j])
    assert certify_nonzero(d) is not None, f"entry {(i, j)} not certified nonzero: {d}"
    assert abs(sp.N(d, 50)) > sp.Float("1e-30"), d
    assert sp.simplify(d - cex.difference) == 0 or abs(sp.N(d - cex.difference, 50)) < 1e-40
    return d


def np_attention(Q, K, V, mask=None):
    """Column convention, independent of symattn: V softmax(Kᵀ Q / sqrt(d_k) + mask) over keys."""
    S = np.swapaxes(K, -1, -2) @ Q / np.sqrt(Q.shape[-2])
    if mask is not None:
        S = S + mask
    return V @ np_softmax(S, axis=-2)


def np_causal_mask(m, n, offset=0):
    """keys × queries: 0 where key k <= query j + offset, -inf elsewhere."""
    k = np.arange(m)[:, None]
    j = np.arange(n)[None, :]
    return np.where(k <= j + offset, 0.0, -np.inf)


def exact_softmax_columns(S):
    """Exact column softmax of a SymPy matrix; -oo entries give exp(-oo) = 0."""
    E = S.applyfunc(sp.exp)
    return sp.ImmutableMatrix(E.rows, E.cols, lambda i, j: E[i, j] / sum(E[:, j]))


def exact_attention(Q, K, V, mask=None):
    """Column convention with exact SymPy arithmetic: V Softmax(KᵀQ/sqrt(d_k) + mask)."""
    S = K.T * Q / sp.sqrt(Q.rows)
    if mask is not None:
        S = S + mask
    return V * exact_softmax_columns(S)


def exact_causal_mask(m, n):
    return sp.ImmutableMatrix(m, n, lambda k, j: 0 if k <= j else -sp.oo)
