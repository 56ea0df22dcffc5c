"""``\\otimes`` between rows of one shape is their component-wise product (Shazeer 2020); between matrices it
stays the Kronecker product acting on a matrix; three factors that are not such rows are refused."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"%: convention: row" + "\n" + r"$$ x \in \mathbb{R}^{1 \times d}, \quad W, V \in \mathbb{R}^{d \times f}, "
        r"\quad W_2 \in \mathbb{R}^{f \times d} $$" + "\n")



def step(text):
    (s,) = check(HEAD + f"$$ {text} $$").steps
    return s


@pytest.mark.parametrize("text", [
    r"(xW \otimes xV) W_2 = (xW \odot xV) W_2",
    r"xW \otimes xV = xV \otimes xW",
    r"(xW \otimes xV \otimes xW) W_2 = (xW \odot xW \odot xV) W_2",
])
def test_rows_of_one_shape_multiply_component_wise(text):
    s = step(text)
    assert s.status == "proved"


def test_a_false_component_wise_step_is_refuted():
    s = step(r"(xW \otimes xV) W_2 = (xW \odot xW) W_2")
    assert s.status == "refuted" and s.verdict.counterexample is not None


def test_three_factors_that_are_not_rows_are_refused():
    s = step(r"(W \otimes W \otimes W) x^\top = (W \otimes W \otimes W) x^\top")
    assert s.status == "ill-formed" and "three factors" in s.error
