r"""A vector of ones written without its length, sized by the sum it sits in even when that sum is nested
inside a product: in ``P (\mathbf{1} x^\top + R) W + \mathbf{1} b^\top`` the inner R fixes the first 1, and
the first term (then of a known shape) fixes the second."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

DECL = (r"$$ P \in \mathbb{R}^{n \times n}, \quad R \in \mathbb{R}^{n \times d}, \quad W \in \mathbb{R}^{d \times e},"
        r" \quad x \in \mathbb{R}^{d}, \quad b \in \mathbb{R}^{e} $$" + "\n")



def test_ones_inside_a_nested_sum_are_sized_by_it():
    (s,) = check(DECL + r"$$ P (\mathbf{1} x^\top + R) W + \mathbf{1} b^\top = P \mathbf{1}_n x^\top W + P R W "
                 r"+ \mathbf{1} b^\top $$").steps
    assert s.status == "proved"


def test_a_false_step_with_nested_ones_is_refuted():
    (s,) = check(DECL + r"$$ P (\mathbf{1} x^\top + R) W + \mathbf{1} b^\top = \mathbf{1} x^\top W + P R W "
                 r"+ \mathbf{1} b^\top $$").steps
    assert s.status == "refuted"


def test_ones_that_nothing_sizes_are_still_refused():
    (s,) = check(DECL + r"$$ \mathbf{1} b^\top + \mathbf{1} b^\top = 2 \mathbf{1} b^\top $$").steps
    assert s.status == "ill-formed" and "the vector of ones without its length" in s.error
