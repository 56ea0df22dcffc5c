"""The four core identities, checked numerically on random shapes with batch axes.

These checks do not prove anything (the proofs are in test_core_identities.py); they make
sure the symbolic definitions compute what the papers mean, against hand-written NumPy.
"""

import numpy as np
from hypothesis import given, settings
from reference import multihead_columns, multihead_rows
from strategies import arrays, mha_sizes

from symattn.defs.heads import FamilyMember
from symattn.proof.evaluate import evaluate
from symattn.proof.instances import dimension_symbols, leaves, specialize
from symattn.theorems import load_library

LIBRARY = load_library()
# an instance of the uninterpreted score function f (deliberately not the dot product)
SCORES = {"f": lambda Q, K: np.swapaxes(K, -1, -2) @ (0.5 * Q + 0.25 * Q**2)}


def _numeric_claims(name, sizes, rng):
    """Both sides of every claim of theorem ``name``, evaluated with the same random inputs."""
    out = []
    for lhs, rhs in LIBRARY[name].claims():
        values = {d: sizes[str(d)] for d in dimension_symbols(lhs, rhs)}
        L, R = specialize(lhs, values), specialize(rhs, values)
        env = {nm: arrays(rng, shape, sizes["batch"]) for nm, shape in leaves(L, R).items()}
        out.append((evaluate(L, env, functions=SCORES), evaluate(R, env, functions=SCORES), env))
    return out


@settings(max_examples=25, deadline=None)
@given(mha_sizes())
def test_block_form_equals_sum_form_and_the_reference(sizes):
    rng = np.random.default_rng(0)
    H = sizes["H"]
    for lhs, rhs, env in _numeric_claims("multihead_block_equals_head_sum", sizes, rng)[:1]:
        np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)
        ref = multihead_columns(
            env["Q"], env["K"], env["V"],
            *([env[f"W^{w}_{k}"] for k in range(1, H + 1)] for w in "QKVO"),
        )
        np.testing.assert_allclose(lhs, ref, rtol=1e-10, atol=1e-10)
        assert lhs.shape == tuple(sizes["batch"]) + (sizes["d_model"], sizes["n"])


@settings(max_examples=25, deadline=None)
@given(mha_sizes())
def test_row_convention_is_the_transpose_of_the_column_convention(sizes):
    rng = np.random.default_rng(1)
    H = sizes["H"]
    claims = _numeric_claims("column_row_transpose", sizes, rng)
    for lhs, rhs, _ in claims:
        np.testing.assert_allclose(lhs, rhs, rtol=1e-10, atol=1e-10)
    lhs, _, env = claims[1]  # MultiHead_row(Qᵀ, Kᵀ, Vᵀ; W_hᵀ), block form
    T = lambda a: np.swapaxes(a, -1, -2)  # noqa: E731
    ref = multihead_rows(T(env["Q"]), T(env["K"]), T(env["V"]),
                         *([T(env[f"W^{w}_{k}"]) for k in range(1, H + 1)] for w in "QKVO"))
    np.testing.assert_allclose(lhs, ref, rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(mha_sizes())
def test_single_head_and_projection_collapse_numerically(sizes):
    rng = np.random.default_rng(2)
    for name in ("single_head_reduces_to_attention", "projection_composition_collapses"):
        for lhs, rhs, _ in _numeric_claims(name, sizes, rng):
            np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9)


def test_numeric_check_can_fail_on_a_wrong_claim():
    """The same harness catches a false identity: Σ_h W_h^O head_h with W^O_1 for every head."""
    lhs, rhs = LIBRARY["multihead_block_equals_head_sum"].claims()[0]
    wrong = rhs.replace(lambda x: isinstance(x, FamilyMember) and x.family_name == "W^O",
                        lambda x: FamilyMember("W^O", 1, *x.shape))
    values = {d: 2 for d in dimension_symbols(lhs, rhs)}
    L, R = specialize(lhs, values), specialize(wrong, values)
    rng = np.random.default_rng(3)
    env = {nm: arrays(rng, s) for nm, s in leaves(L, R).items()}
    assert not np.allclose(evaluate(L, env), evaluate(R, env))
