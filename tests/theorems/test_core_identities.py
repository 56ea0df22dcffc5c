"""The four identities of seed 000 are proved for all dimensions (and every H)."""

import pytest
import sympy as sp

import symattn as sa
from symattn.theorems import load_library, prove

CORE = [
    "multihead_block_equals_head_sum",
    "column_row_transpose",
    "single_head_reduces_to_attention",
    "projection_composition_collapses",
]


@pytest.mark.parametrize("name", CORE)
def test_core_identity_is_proved_general(name):
    result = prove(load_library()[name])
    assert result.status == "proved", result.as_dict()
    assert result.general
    assert all(v.general and v.method != "exact instances (D)" for v in result.verdicts)


def test_block_equals_sum_needs_induction_and_says_every_H():
    result = prove(load_library()["multihead_block_equals_head_sum"])
    assert "induction on H" in result.method
    assert "every H >= 1" in result.scope
    trace = "\n".join(result.verdicts[0].trace)
    assert "base H = 1" in trace and "step" in trace


def test_block_equals_sum_for_concrete_head_lists():
    n, m, d_model, d_k, d_v = sa.dims("n m d_model d_k d_v")
    Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    W = {w: [sp.MatrixSymbol(f"W^{w}_{i}", d_v if w == "V" else d_k, d_model) for i in (1, 2, 3)] for w in "QKV"}
    W_O = [sp.MatrixSymbol(f"W^O_{i}", d_model, d_v) for i in (1, 2, 3)]
    block = sa.multihead(Q, K, V, W["Q"], W["K"], W["V"], W_O, form="block")
    total = sa.multihead(Q, K, V, W["Q"], W["K"], W["V"], W_O, form="sum")
    v = sa.verify(block, total)
    assert v.status == "proved" and v.general


def test_a_wrong_head_sum_is_not_proved_by_induction():
    """Σ_h W_h^O head_h against W^O [head_1; ...] with the heads shifted by one: refuted."""
    n, m, d_model, d_k, d_v, H = sa.dims("n m d_model d_k d_v H")
    Q, K, V = (sp.MatrixSymbol(s, d_model, c) for s, c in (("Q", n), ("K", m), ("V", m)))
    W_Q, W_K = sa.Family("W^Q", d_k, d_model), sa.Family("W^K", d_k, d_model)
    W_V, W_O = sa.Family("W^V", d_v, d_model), sa.Family("W^O", d_model, d_v)
    block = sa.multihead(Q, K, V, W_Q, W_K, W_V, W_O, H=H)
    shifted = sa.head_sum(lambda h: W_O[h] * sa.head(Q, K, V, W_Q[h + 1], W_K[h + 1], W_V[h + 1]), H)
    v = sa.verify(block, shifted)
    assert v.status == "refuted"
