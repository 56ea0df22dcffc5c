"""Products over an index range (``\\prod_{j=1}^{3} \\alpha_j``): over a given number of terms, scalars multiply and
vectors multiply entry by entry; a symbolic range, or matrices, are refused with a message."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError

GATES = "%: convention: row\n" + r"$$ \alpha_j \in \mathbb{R}^{d}, \quad b_3 = \prod_{j=1}^{3} \alpha_j $$" + "\n"



def test_a_product_of_vectors_is_entry_by_entry():
    assert [s.status for s in check(GATES + r"$$ b_3 = \alpha_1 \odot \alpha_2 \odot \alpha_3 $$").steps] == ["proved"]
    (step,) = check(GATES + r"$$ b_3 = \alpha_1 \odot \alpha_2 $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_product_of_scalars_from_zero():
    decl = r"$$ c_j \in \mathbb{R} $$" + "\n"
    assert [s.status for s in check(decl + r"$$ \prod_{j=0}^{2} c_j = c_0 c_1 c_2 $$").steps] == ["proved"]
    assert [s.status for s in check(decl + r"$$ \prod_{j=0}^{2} c_j = c_0 c_2 $$").steps] == ["refuted"]


def test_a_product_of_matrices_is_refused():
    (step,) = check(r"$$ A_j \in \mathbb{R}^{d \times d} $$" + "\n" + r"$$ \prod_{j=1}^{2} A_j = A_1 A_2 $$").steps
    assert step.status == "ill-formed" and "the order of a matrix product is not written" in step.error


def test_a_product_over_a_symbolic_range_is_refused():
    (step,) = check(GATES + r"$$ \prod_{j=1}^{t} \alpha_j = \alpha_t $$").steps
    assert step.status == "ill-formed" and "t terms, a number that is not given" in step.error


@pytest.mark.parametrize("space", [r"(0, 1)^{1 \times d}", r"\{0, 1\}^{L \times L}"])
def test_a_space_of_entries_in_an_interval_or_a_set_is_refused(space):
    with pytest.raises(ParseError, match="a space whose entries lie in"):
        parse_latex(rf"$$ M \in {space} $$")
