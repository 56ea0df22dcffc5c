"""The Python API: declare shapes and assumptions, give the chain, get a report per step."""

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import DerivationError


def multihead_derivation(**kw):
    d = sa.Derivation(**kw)
    d.declare("Q", "d_model", "n").declare("K, V", "d_model", "m")
    d.declare("W_h^Q, W_h^K", "d_k", "d_model", heads="h in 1..H")
    d.declare("W_h^V", "d_v", "d_model", heads="h in 1..H")
    d.declare("W_h^O", "d_model", "d_v", heads="h in 1..H")
    return d


def test_chain_of_notation_text_is_checked_step_by_step():
    d = multihead_derivation(score="f")
    d.define("W^O", "[W_1^O, ..., W_H^O]")
    d.chain("MultiHead(Q, K, V)", "W^O [head_1; ...; head_H]", "sum_{h=1}^{H} W_h^O head_h")
    r = d.check()
    assert [s.status for s in r.steps] == ["proved", "proved"]
    assert all("every H >= 1" in s.scope for s in r.steps)


def test_sympy_expressions_mix_with_text():
    n, m, d_k = sa.dims("n m d_k")
    Q, K = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m)
    d = sa.Derivation().declare("Q", d_k, n).declare("K", d_k, m)
    r = d.chain(sa.softmax(K.T * Q).T, "Softmax_row(Q^T K)", "Softmax(Q^T K)").check()
    assert [s.status for s in r.steps] == ["proved", "refuted"]
    assert r.steps[1].diagnosis.slip == "softmax on the other axis"


def test_assume_one_head_reduces_multihead_to_attention():
    d = multihead_derivation().assume("H", 1)
    d.chain("MultiHead(Q, K, V)", "W_1^O Attention(W_1^Q Q, W_1^K K, W_1^V V)")
    (s,) = d.check().steps
    assert s.status == "proved" and s.general


def test_assume_shared_weights():
    d = multihead_derivation().assume("W^K", "W^Q")
    d.chain("(W_h^K Q)^T", "Q^T (W_h^Q)^T")
    (s,) = d.check().steps
    assert s.status == "proved"
    without = multihead_derivation().chain("(W_h^K Q)^T", "Q^T (W_h^Q)^T").check().steps[0]
    assert without.status == "refuted"


def test_assume_equal_dimensions_makes_a_square_claim_well_formed():
    d = sa.Derivation().declare("A", "d_k", "d_v").assume("d_v", "d_k")
    (s,) = d.chain("(A A)^T", "A^T A^T").check().steps
    assert s.status == "proved"


def test_unsupported_assumption_says_so():
    with pytest.raises(DerivationError, match="is not supported"):
        sa.Derivation().declare("P", "n", "n").assume("P", "permutation")


def test_text_given_to_the_api_is_parsed_not_evaluated():
    with pytest.raises(DerivationError, match="unexpected character"):
        sa.Derivation().chain("Q", "__import__('os')")


def test_shared_weights_reach_multihead():
    d = multihead_derivation().assume("W^K", "W^Q")
    d.chain("MultiHead(Q, K, V)", "sum_{h=1}^{H} W_h^O Attention(W_h^Q Q, W_h^Q K, W_h^V V)")
    (s,) = d.check().steps
    assert s.status == "proved"
