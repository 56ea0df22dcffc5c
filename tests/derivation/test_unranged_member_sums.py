"""A sum with no range over the members of a declared sequence (unranged_sums.py): ``\\sum_{s}`` over every
member \\bar{h}_s, a symbolic number of them, as Luong et al. (2015) write their context vector."""

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError

HEAD = r"$$ h_t, \bar{h}_s, b \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d} $$" + "\n"


def statuses(text):
    return [s.status for s in check_latex(text).steps]


@pytest.mark.parametrize("s, r", [("s", "s'"), ("r", "q"), ("j", "k")])
def test_a_sum_with_no_range_runs_over_every_member(s, r):
    head = HEAD.replace(r"\bar{h}_s", rf"\bar{{h}}_{s}")
    true = head + rf"$$ \sum_{{{s}}} W \bar{{h}}_{{{s}}} = W \sum_{{{r}}} \bar{{h}}_{{{r}}} $$"
    false = head + rf"$$ \sum_{{{s}}} (W \bar{{h}}_{{{s}}} + b) = W \sum_{{{r}}} \bar{{h}}_{{{r}}} + b $$"
    assert statuses(true) == ["proved"]
    assert statuses(false) == ["refuted"]  # b is added once for every member


def test_the_report_names_the_count():
    r = check_latex(HEAD + r"$$ \sum_{s} W \bar{h}_s = W \sum_{s} \bar{h}_s $$")
    assert any("has no range: read as the sum over every member" in n for n in r.notes)
    assert "every n >= 1" in r.steps[0].scope or "(d, n)" in r.steps[0].scope, r.steps[0].scope


def test_a_summand_with_members_of_two_sequences_is_refused():
    text = (r"$$ a_s, c_s \in \mathbb{R}^{d} $$" + "\n" + r"$$ \sum_{s} a_s c_s^\top = \sum_{s} c_s a_s^\top $$")
    with pytest.raises(DerivationError, match="members of two sequences"):
        check_latex(text)


def test_a_sum_with_no_range_over_no_sequence_keeps_its_message():
    text = r"$$ W \in \mathbb{R}^{d \times d} $$" + "\n" + r"$$ \sum_{s} W = \sum_{s} W $$"
    (step,) = check_latex(text).steps
    assert step.status == "ill-formed" and "has no range" in step.error


def test_a_weight_named_by_the_label_of_a_declared_name_is_a_function_of_the_index_only():
    # a_t(s): t labels h_t (declared as written), s is the parameter; c_t sums a_t(s) h̄_s over every s
    head = HEAD + r"$$ a_t(s) = h_t^\top W \bar{h}_s, \qquad c_t = \sum_{s} a_t(s) \bar{h}_s $$" + "\n"
    assert statuses(head + r"$$ c_t = \sum_{s} \bar{h}_s \bar{h}_s^\top W^\top h_t $$") == ["proved"]
    assert statuses(head + r"$$ c_t = \sum_{s} \bar{h}_s \bar{h}_s^\top W h_t $$") == ["refuted"]
