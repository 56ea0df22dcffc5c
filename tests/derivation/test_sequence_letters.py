r"""A sequence declared by its generic member ``x_i`` read at another free letter (``x_j``), as Shaw et al.
2018 write ``e_{ij} = x_i W^Q (x_j W^K)^T``: the member at j, independent of x_i; and a declared name indexed
by several letters (``a_{ij}``) inside a sum over one of them, which is refused rather than read as one value
at every term."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError, UnknownSymbolError


def decl(i="i", j="j"):
    """x_i declared; s_{ij} says that i and j are the file's indices (as e_{ij}, alpha_{ij} do in Shaw et al.)."""
    return (r"%: convention: row" + "\n"
            rf"$$ x_{i} \in \mathbb{{R}}^{{d}}, \quad W^Q, W^K \in \mathbb{{R}}^{{d \times d}}, \quad "
            rf"s_{{{i}{j}}} \in \mathbb{{R}} $$" + "\n")


@pytest.mark.parametrize("i, j", [("i", "j"), ("s", "t"), ("j", "i")])
def test_the_member_at_another_letter_is_a_value_of_the_declared_shape(i, j):
    r = check(decl(i, j) + rf"$$ x_{i} W^Q (x_{j} W^K)^T = x_{i} W^Q (W^K)^T x_{j}^T $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any(f"x_{j} is the member at {j}" in n for n in r.notes)


@pytest.mark.parametrize("i, j", [("i", "j"), ("s", "t")])
def test_members_at_different_letters_are_independent(i, j):
    (step,) = check(decl(i, j) + rf"$$ x_{i} W^Q (x_{j} W^K)^T = x_{i} W^Q (x_{i} W^K)^T $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_slip_in_the_scale_of_one_term_is_refuted():
    """Shaw et al.'s split of e_ij, with the scale dropped from the relative term."""
    doc = (r"%: convention: row" + "\n"
           r"$$ x_i \in \mathbb{R}^{d_x}, \quad W^Q, W^K \in \mathbb{R}^{d_x \times d_z}, \quad "
           r"a^K_{ij} \in \mathbb{R}^{d_z} $$" + "\n")
    true = (r"$$ \frac{x_i W^Q \left(x_j W^K + a^K_{ij}\right)^T}{\sqrt{d_z}} = \frac{x_i W^Q \left(x_j W^K\right)^T"
            r" + x_i W^Q \left(a^K_{ij}\right)^T}{\sqrt{d_z}} $$")
    false = (r"$$ \frac{x_i W^Q \left(x_j W^K + a^K_{ij}\right)^T}{\sqrt{d_z}} = \frac{x_i W^Q \left(x_j W^K"
             r"\right)^T}{\sqrt{d_z}} + x_i W^Q \left(a^K_{ij}\right)^T $$")
    assert [s.status for s in check(doc + true).steps] == ["proved"]
    (step,) = check(doc + false).steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_declared_member_at_the_other_letter_is_its_own_name():
    doc = decl() + r"$$ x_j \in \mathbb{R}^{d} $$" + "\n"
    (step,) = check(doc + r"$$ x_j = x_i $$").steps
    assert step.status == "refuted"
    assert not any("x_j is the member at j" in n for n in check(doc + r"$$ x_j = x_j $$").notes)


def test_labels_are_not_positions():
    """W_v beside a declared W_q, where neither q nor v is an index of the file: labels, and W_v unknown."""
    doc = r"$$ W_q \in \mathbb{R}^{d \times d}, \quad x \in \mathbb{R}^{d} $$" + "\n"
    (step,) = check(doc + r"$$ W_v x = W_q x $$").steps
    assert step.status == "ill-formed" and "unknown symbol W_v" in step.error


def test_a_dimension_letter_is_not_a_position():
    with pytest.raises(UnknownSymbolError, match="unknown symbol x_d"):
        check(decl() + r"$$ x_d = x_d $$")


@pytest.mark.parametrize("j", ["j", "k"])
def test_a_name_declared_as_one_value_is_not_read_as_one_per_term_of_a_sum(j):
    doc = (r"%: convention: row" + "\n"
           rf"$$ a_{{i{j}}} \in \mathbb{{R}}^{{d}}, \quad W \in \mathbb{{R}}^{{d \times d}} $$" + "\n")
    (step,) = check(doc + rf"$$ \sum_{{{j}=1}}^{{2}} a_{{i{j}}} W = 2 a_{{i{j}}} W $$").steps
    assert step.status == "ill-formed"
    assert f"a sum binds the letter {j}" in step.error


def test_the_upper_limit_of_a_sum_over_a_sequence_is_its_length():
    """n named nowhere else, in a sum over the members x_j: the length of x, and the members the n rows of one
    matrix (sequence_rows), never n copies of one value."""
    r = check(decl() + r"$$ \sum_{j=1}^{n} x_j W^Q = \sum_{j=1}^{n} x_j W^Q $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("read as the n rows of one n × d matrix" in n for n in r.notes)
    (step,) = check(decl() + r"$$ \sum_{j=1}^{n} x_j W^Q = n x_i W^Q $$").steps
    assert step.status == "refuted"


def test_an_unnamed_upper_limit_of_another_sum_is_refused_as_before():
    (step,) = check(decl() + r"$$ \sum_{j=1}^{n} W^Q = \sum_{j=1}^{n} W^Q $$").steps
    assert step.status == "ill-formed" and "runs to n, which is neither" in step.error


LENGTH = (r"%: convention: row" + "\n"
          r"$$ x_1, \ldots, x_n \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad s_{ij} \in \mathbb{R} $$"
          + "\n")


def test_a_sequence_to_a_small_letter_has_its_members_at_the_file_s_indices():
    """x_1, ..., x_n (Kobayashi et al. 2020): n is the length, x_i and x_j members, x_1 and x_2 members too."""
    r = check(LENGTH + r"$$ (x_i + x_j) W = x_i W + x_j W $$" + "\n" + r"$$ x_1 W + x_2 W = (x_2 + x_1) W $$")
    assert [s.status for s in r.steps] == ["proved", "proved"]
    assert any("n its length" in n for n in r.notes)


def test_members_of_a_sequence_to_a_small_letter_are_independent():
    (step,) = check(LENGTH + r"$$ (x_i + x_j) W = x_i W + x_i W $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_softmax_over_the_members_of_a_set_the_file_does_not_tie_to_x_is_refused_by_name():
    with pytest.raises(DerivationError, match="the set Y is not read as the members"):
        check(LENGTH + r"$$ a_{ij} = \mathop{\mathrm{softmax}}_{x_j \in Y}(s_{ij}) $$")
