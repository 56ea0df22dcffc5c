"""Sums over a block of positions whose limits divide by a dimension (segment means): read where m divides n,
n = m (n/m), with the assumption stated in every step's scope; a sum over all the blocks is the sum over all
the positions (the engine's merge_blocks). Other block shapes are refused naming the construct."""

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError, NotationShapeError

DECL = (r"%: convention: row" "\n"
        r"$$ Q \in \mathbb{R}^{n \times d}, \quad \tilde{Q} \in \mathbb{R}^{m \times d} $$" "\n")


def _segment_means(i: str, j: str, right: str = r"\frac{m}{n}", upper: str = "n", block=None) -> str:
    lo, hi = block or (rf"({j}-1)\times n/m+1", rf"({j}-1)\times n/m+n/m")
    return (DECL + rf"$$ \tilde{{q}}_{j} = \sum_{{{i}={lo}}}^{{{hi}}} "
            rf"\frac{{q_{i}}}{{n/m}}, \quad {j} = 1, \cdots, m $$" "\n"
            rf"$$ \sum_{{{j}=1}}^{{m}} \tilde{{q}}_{j} = {right}\sum_{{{i}=1}}^{{{upper}}} q_{i} $$" "\n")


@pytest.mark.parametrize("i, j", [("i", "j"), ("k", "l"), ("j", "i")])
def test_the_sum_of_the_segment_means_is_proved_where_m_divides_n(i, j):
    report = check_latex(_segment_means(i, j))
    (step,) = report.steps
    assert step.status == "proved" and step.general
    assert "where m divides n" in step.scope
    assert any("read where m divides n" in note for note in report.notes)


@pytest.mark.parametrize("i, j", [("i", "j"), ("k", "l")])
def test_the_inverted_scale_is_refuted_at_an_n_that_m_divides(i, j):
    (step,) = check_latex(_segment_means(i, j, right=r"\frac{n}{m}")).steps
    assert step.status == "refuted"
    dims = step.verdict.counterexample.dims
    assert "n" in dims and "m" in dims and dims["n"] % dims["m"] == 0 and "n/m" not in str(dims)
    assert dims["n"] != dims["m"]  # the scales differ there: m/n != n/m


def test_the_number_of_blocks_stays_any_m():
    (step,) = check_latex(_segment_means("i", "j", right=r"\frac{1}{n}")).steps
    assert step.status == "refuted" and step.verdict.counterexample.dims["m"] > 1


def test_the_block_written_as_j_n_over_m_is_the_same_block():
    (step,) = check_latex(_segment_means("i", "j", block=(r"(j-1) n/m+1", r"j n/m"))).steps
    assert step.status == "proved"


def test_a_block_past_the_last_position_is_refused():
    with pytest.raises(NotationShapeError, match="ends after the last"):
        check_latex(_segment_means("i", "j", block=(r"j n/m+1", r"j n/m+n/m")))


def test_a_block_of_another_number_of_terms_is_refused_naming_the_block():
    with pytest.raises(NotationShapeError) as exc:
        check_latex(_segment_means("i", "j", block=(r"(j-1) n/m+1", r"j n/m+1")))
    assert "is a sum over a block of positions" in str(exc.value) and exc.value.line == 3


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
