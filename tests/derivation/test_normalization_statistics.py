"""Normalizations as papers write them: the root of a mean of squares (RMS, the standard deviation) of a
vector's entries, read as a scalar, divided into the vector; and a statistic defined after its use
("where RMS(a) = ..."). True uses are proved, false ones refuted."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ \mathbf{a}, \mathbf{g} \in \mathbb{R}^{n}, \quad \delta > 0 $$" + "\n"
        r"$$ \mathrm{RMS}(\mathbf{a}) = \sqrt{\frac{1}{n} \sum_{i=1}^{n} a_i^2} $$" + "\n")



def statuses(text):
    return [s.status for s in check(text).steps]


def test_the_rms_is_the_scaled_norm():
    assert statuses(HEAD + r"$$ \mathrm{RMS}(\mathbf{a}) = \frac{\|\mathbf{a}\|_2}{\sqrt{n}} $$") == ["proved"]


def test_a_wrong_scale_of_the_rms_is_refuted():
    (s,) = check(HEAD + r"$$ \mathrm{RMS}(\mathbf{a}) = \frac{\|\mathbf{a}\|_2}{n} $$").steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


def test_the_rms_is_homogeneous_for_a_positive_scale():
    assert statuses(HEAD + r"$$ \mathrm{RMS}(\delta \mathbf{a}) = \delta \, \mathrm{RMS}(\mathbf{a}) $$") == ["proved"]


def test_without_the_sign_of_the_scale_homogeneity_is_not_proved():
    head = HEAD.replace(r"\delta > 0", r"\delta \in \mathbb{R}")
    (s,) = check(head + r"$$ \mathrm{RMS}(\delta \mathbf{a}) = \delta \, \mathrm{RMS}(\mathbf{a}) $$").steps
    assert s.status != "proved"


@pytest.mark.parametrize("k", ["i", "j", "k"])
def test_the_letter_of_the_summation_index_changes_no_verdict(k):
    head = HEAD.replace("i=1", f"{k}=1").replace("a_i^2", f"a_{k}^2")
    good = check(head + r"$$ \mathrm{RMS}(\mathbf{a}) = \frac{\|\mathbf{a}\|_2}{\sqrt{n}} $$").steps[0].status
    bad = check(head + r"$$ \mathrm{RMS}(\mathbf{a}) = \frac{\|\mathbf{a}\|_2}{2 \sqrt{n}} $$").steps[0].status
    assert (good, bad) == ("proved", "refuted")


def test_a_statistic_defined_after_its_use_in_a_where_clause_is_read_as_defined():
    text = (r"$$ \mathbf{a}, \mathbf{g} \in \mathbb{R}^{n}, \quad \delta > 0 $$" + "\n"
            r"$$ \bar{a}_i = \frac{a_i}{\mathrm{RMS}(\mathbf{a})} g_i, \quad \text{where}~\mathrm{RMS}(\mathbf{a})"
            r" = \sqrt{\frac{1}{n} \sum_{i=1}^{n} a_i^2} $$" + "\n")
    r = check(text + r"$$ \frac{\delta a_i}{\mathrm{RMS}(\delta \mathbf{a})} g_i = \bar{a}_i $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert not any("not defined by the file" in n for n in r.notes)
    r = check(text + r"$$ \frac{a_i}{\mathrm{RMS}(\delta \mathbf{a})} g_i = \bar{a}_i $$")
    assert [s.status for s in r.steps] == ["refuted"]
