"""Retention's parallel form: row n of (QK^T ⊙ D)V with the decay mask D, read as the sum over m <= n."""

from pathlib import Path

import pytest

from symattn.derivation.latex_document import check_latex

FIELD = Path(__file__).resolve().parents[2] / "examples" / "field"

MASK = r"""
%: convention: row
$$ Q, K, V \in \mathbb{R}^{N \times d}, \quad \gamma \in \mathbb{R} $$
$$ D_{nm} = \begin{cases} \gamma^{n-m}, & n \ge m \\ 0, & n < m \end{cases} $$
"""


def _step(line: str, mask: str = MASK):
    report = check_latex(mask + f"$$ {line} $$\n", diagnose=False)
    assert len(report.steps) == 1
    return report.steps[0]


def test_the_parallel_form_is_the_sum_over_the_earlier_positions():
    s = _step(r"\sum_{m=1}^{n} \gamma^{n-m} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}")
    assert s.status == "proved" and s.general
    assert s.method.startswith("term by term")
    assert "every position n" in s.scope and "the two sums agree term by term" in s.scope


@pytest.mark.parametrize("line", [
    r"\left[(QK^\top \odot D)V\right]_{t,:} = \sum_{j=1}^{t} \gamma^{t-j} Q_t K_j^\top V_j",  # other letters, sides
    r"\sum_{m=1}^{n} \gamma^{n-m} K_m Q_n^\top V_m = \left[(D \odot QK^\top)V\right]_{n,:}",  # D the first factor
])
def test_renamed_letters_and_turned_sides_are_read_alike(line):
    s = _step(line)
    assert s.status == "proved" and s.method.startswith("term by term")


@pytest.mark.parametrize("line, where", [
    (r"\sum_{m=1}^{n} \gamma^{m-n} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}", "n = "),  # decay flipped
    (r"\sum_{m=1}^{n} \gamma^{n-m+1} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}", "n = 1"),
    (r"\sum_{m=1}^{n} \gamma^{n-m} Q_m K_n^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}", "n = "),  # rows swapped
    (r"\left[(QK^\top \odot D)V\right]_{t,:} = \sum_{j=1}^{t} \gamma^{j-t} Q_t K_j^\top V_j", "t = "),
])
def test_a_wrong_sum_is_refuted_at_a_position_with_a_certificate(line, where):
    s = _step(line)
    assert s.status == "refuted", (s.status, s.scope, s.error)
    assert f"at the position {where}" in s.scope and "each sum written out" in s.scope
    cex = s.verdict.counterexample
    assert cex is not None and "exact" in cex.certificate
    assert "n" not in cex.dims and "t" not in cex.dims  # the position is given; the length N is reported


def test_a_mask_decaying_the_other_way_is_not_read_as_the_causal_sum():
    anti = MASK.replace(r"n \ge m \\ 0, & n < m", r"n \le m \\ 0, & n > m")
    s = _step(r"\sum_{m=1}^{n} \gamma^{n-m} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}", anti)
    assert s.status == "ill-formed" and "decay mask D" in s.error


def test_a_sum_over_every_position_is_not_compared_term_by_term():
    s = _step(r"\sum_{m=1}^{N} \gamma^{n-m} Q_n K_m^\top V_m = \left[(QK^\top \odot D)V\right]_{n,:}")
    assert s.status == "ill-formed"


def test_retnet_recurrent_and_parallel_forms():
    """Sun et al. 2023: both steps proved; the copy whose decay is flipped is refuted at its slip (line 11)."""
    good = check_latex((FIELD / "sun2023.tex").read_text(), diagnose=False)
    assert [(s.pos[0], s.status) for s in good.steps] == [(11, "proved"), (12, "proved")]
    bad = check_latex((FIELD / "sun2023_corrupted.tex").read_text(), diagnose=False)
    first = bad.steps[0]
    assert (first.pos[0], first.status) == (11, "refuted")
    gamma = {str(k): v for k, v in first.verdict.counterexample.values.items()}["gamma"]
    assert gamma not in (0, 1, -1)  # where gamma^{m-n} and gamma^{n-m} differ


def test_values_of_another_length_are_never_read_as_the_masked_product():
    mask = MASK.replace(r"\gamma \in \mathbb{R}", r"\gamma \in \mathbb{R}, \quad W \in \mathbb{R}^{d \times d}")
    s = _step(r"\sum_{m=1}^{n} \gamma^{n-m} Q_n K_m^\top W_m = \left[(QK^\top \odot D)W\right]_{n,:}", mask)
    assert s.status == "ill-formed"
