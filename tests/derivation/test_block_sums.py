"""Sums over a block of positions whose limits divide by a dimension (segment means) are refused,
naming the construct; a sum over a given number of terms beside them is still read and checked."""

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError, NotationShapeError

DECL = (r"%: convention: row" "\n"
        r"$$ Q \in \mathbb{R}^{n \times d}, \quad \tilde{Q} \in \mathbb{R}^{m \times d} $$" "\n")


def _segment_means(i: str, j: str) -> str:
    return (DECL + rf"$$ \tilde{{q}}_{j} = \sum_{{{i}=({j}-1)\times n/m+1}}^{{({j}-1)\times n/m+n/m}} "
            rf"\frac{{q_{i}}}{{n/m}}, \quad {j} = 1, \cdots, m $$" "\n"
            rf"$$ \sum_{{{j}=1}}^{{m}} \tilde{{q}}_{j} = \frac{{m}}{{n}}\sum_{{{i}=1}}^{{n}} q_{i} $$" "\n")


@pytest.mark.parametrize("i, j", [("i", "j"), ("k", "l")])
def test_a_segment_mean_is_refused_naming_the_block_and_its_divisor(i, j):
    with pytest.raises(NotationShapeError) as exc:
        check_latex(_segment_means(i, j))
    text = str(exc.value)
    assert "is a sum over a block of positions" in text and "n/m terms" in text
    assert "where m divides" in text and exc.value.line == 3


def test_a_divisibility_stated_in_a_comment_does_not_make_it_read():
    with pytest.raises(DerivationError, match="a sum over a block of positions"):
        check_latex("% the landmarks are segment means (m divides n)\n" + _segment_means("i", "j"))


def test_a_symbolic_range_without_a_quotient_keeps_its_own_message():
    text = (r"$$ q_i, w_0, w_1 \in \mathbb{R}^{d}, \quad \tilde{q}_i = \sum_{s=0}^{k} w_s \odot q_{i-s} $$" "\n"
            r"$$ \tilde{q}_i = w_0 \odot q_i $$" "\n")
    with pytest.raises(DerivationError) as exc:
        check_latex(text)
    assert "block of positions" not in str(exc.value)


def test_a_shifted_sum_over_a_given_number_of_terms_is_still_read_with_its_meaning():
    head = r"$$ q_i, w_0, w_1, w_2 \in \mathbb{R}^{d}, \quad \tilde{q}_i = \sum_{s=0}^{2} w_s \odot q_{i-s} $$" "\n"
    good = check_latex(head + r"$$ \tilde{q}_i = w_0 \odot q_i + w_1 \odot q_{i-1} + w_2 \odot q_{i-2} $$" "\n")
    bad = check_latex(head + r"$$ \tilde{q}_i = w_0 \odot q_i + w_1 \odot q_{i+1} + w_2 \odot q_{i-2} $$" "\n")
    assert [s.status for s in good.steps] == ["proved"]
    assert [s.status for s in bad.steps] == ["refuted"]
