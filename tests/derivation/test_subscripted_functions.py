"""Functions named with a subscript: a parameter (``\\mathrm{Swish}_\\beta(x)``, called ``\\mathrm{Swish}_1``) or a
label; and ``\\mathop{...}``, an operator with limits, read as its content."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ X \in \mathbb{R}^{n \times d}, \quad W \in \mathbb{R}^{d \times d}, \quad "
        r"\mathrm{F}_\beta(Z) = \beta Z W $$" + "\n")



def statuses(text):
    return [s.status for s in check(text).steps]


def test_a_subscript_parameter_is_bound_by_the_call():
    assert statuses(HEAD + r"$$ \mathrm{F}_2(X) = 2 X W $$") == ["proved"]
    assert statuses(HEAD + r"$$ \mathrm{F}_2(X) = X W $$") == ["refuted"]


@pytest.mark.parametrize("letter", ["beta", "gamma"])
def test_the_letter_of_the_subscript_parameter_changes_no_verdict(letter):
    head = HEAD.replace("beta", letter)
    assert statuses(head + r"$$ \mathrm{F}_3(X) + \mathrm{F}_1(X) = 4 X W $$") == ["proved"]


def test_mathop_is_read_as_its_content():
    head = "%: convention: row\n" + r"$$ Q \in \mathbb{R}^{n \times d} $$" + "\n"  # softmax(Q Q^T) asks for its axis
    assert statuses(head + r"$$ \mathop{\mathrm{softmax}}(Q Q^\top) Q = \mathrm{softmax}(Q Q^\top) Q $$") == ["proved"]
