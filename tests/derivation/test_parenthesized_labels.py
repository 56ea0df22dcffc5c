"""A quantity labelled by an argument in parentheses (``A(l_1)``, a matrix per layer): a name of its own
when the file never applies it to a declared value and no definition of it uses its parameter."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ W_1, W_2 \in \mathbb{R}^{n \times n}, \quad A(l_1) = \frac{1}{2} W_1 + \frac{1}{2} I, \quad "
        r"A(l_2) = \frac{1}{2} W_2 + \frac{1}{2} I $$" + "\n"
        r"$$ \tilde{A}(l_1) = A(l_1), \qquad \tilde{A}(l_2) = A(l_2)\tilde{A}(l_1) $$" + "\n")



def test_labelled_matrices_are_read_each_as_its_own_definition():
    r = check(HEAD + r"$$ \tilde{A}(l_2) = \frac{1}{4} (W_2 + I)(W_1 + I) $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("labelled" in n for n in r.notes)


def test_two_labels_are_two_matrices():
    (s,) = check(HEAD + r"$$ A(l_1) = A(l_2) $$").steps
    assert s.status == "refuted"


@pytest.mark.parametrize("label", ["l", "t", "k"])
def test_the_letter_of_the_label_changes_no_verdict(label):
    head = HEAD.replace("l_", f"{label}_")
    good = check(head + rf"$$ \tilde{{A}}({label}_2) = A({label}_2) A({label}_1) $$").steps[0].status
    bad = check(head + rf"$$ \tilde{{A}}({label}_2) = A({label}_1) A({label}_2) $$").steps[0].status
    assert (good, bad) == ("proved", "refuted")


def test_a_function_that_uses_its_parameter_stays_a_function():
    head = r"$$ W \in \mathbb{R}^{d \times d}, \quad x \in \mathbb{R}^{1 \times d}, \quad f(z) = z W $$" + "\n"
    r = check(head + r"$$ f(x) = x W $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert not any("labelled" in n for n in r.notes)


def test_a_name_typeset_as_a_function_is_never_a_label():
    head = (r"%: convention: row" + "\n" + r"$$ Q, K, V \in \mathbb{R}^{n \times d} $$" + "\n")
    r = check(head + r"$$ \mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2) = \mathrm{Concat}(\mathrm{head}_1, "
                     r"\mathrm{head}_2) $$")
    assert not any("labelled" in n for n in r.notes)
