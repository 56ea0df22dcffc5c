"""The shape of a space as a tuple (``\\mathbb{R}^{(T, N)}``), the length ``|x|`` of a sequence as a dimension, a
sequence as a tuple ``H = (h_1, h_2, \\cdots, h_n)``, and a label of letters and a number (``W_{s1}``)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError


def test_a_shape_tuple_is_rows_by_columns():
    text = r"$$ B, C \in \mathbb{R}^{(\mathtt{T}, \mathtt{N})}, \quad X \in \mathbb{R}^{N \times T} $$" + "\n"
    assert [s.status for s in check(text + r"$$ (C B^\top)^\top = B C^\top $$").steps] == ["proved"]
    (step,) = check(text + r"$$ B X = B X $$").steps  # T × N by N × T: fits; X B^T does not
    assert step.status == "proved"
    (step,) = check(text + r"$$ X B^\top = X B^\top $$").steps
    assert step.status == "ill-formed"


def test_a_shape_of_three_axes_is_refused():
    with pytest.raises(ParseError, match="a shape of 3 axes"):
        parse_latex(r"$$ B \in \mathbb{R}^{(T, N, P)} $$")


def test_the_length_of_a_sequence_is_a_dimension():
    text = "%: convention: row\n" + r"$$ Q, K \in \mathbb{R}^{|x| \times d} $$" + "\n"
    assert [s.status for s in check(text + r"$$ (Q K^\top)^\top = K Q^\top $$").steps] == ["proved"]
    assert [s.status for s in check(text + r"$$ (Q K^\top)^\top = Q K^\top $$").steps] == ["refuted"]


def test_a_tuple_names_the_rows_of_a_declared_matrix():
    text = "%: convention: row\n" + r"$$ H = (h_1, h_2, \cdots, h_n), \quad H \in \mathbb{R}^{n \times d} $$" + "\n"
    assert [s.status for s in check(text + r"$$ H^\top H = \sum_{i=1}^{n} h_i^\top h_i $$").steps] == ["proved"]
    assert [s.status for s in check(text + r"$$ H H^\top = \sum_{i=1}^{n} h_i^\top h_i $$").steps] == ["ill-formed"]


def test_a_tuple_as_a_value_is_not_read():
    text = r"$$ a, b \in \mathbb{R}^{d} $$" + "\n" + r"$$ (a, b) = (a, b) $$"
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "cannot stand here" in step.error


def test_a_label_of_letters_and_a_number_is_one_name():
    text = r"$$ W_{s1} \in \mathbb{R}^{d \times d}, \quad W_{s2} \in \mathbb{R}^{d \times d} $$" + "\n"
    assert [s.status for s in check(text + r"$$ W_{s1} + W_{s2} = W_{s2} + W_{s1} $$").steps] == ["proved"]
    assert [s.status for s in check(text + r"$$ W_{s1} W_{s2} = W_{s2} W_{s1} $$").steps] == ["refuted"]


def test_times_between_the_indices_of_a_limit_is_a_product():
    (step,) = check(r"$$ v_t \in \mathbb{R}^{d} $$" + "\n"
                    + r"$$ \sum_{i=2 \times t - t}^{1 \times t} v_i = v_t $$").steps
    assert step.status == "proved"  # the limits are t and t: one term


def test_a_product_over_a_range_of_positions_is_refused_by_name():
    with pytest.raises(ParseError, match="the product of the members of a sequence over a range"):
        parse_latex(r"$$ a_{t:s}^{\times} = a_t $$")


def test_a_negative_index_is_read_in_a_subscript():
    (st,) = parse_latex(r"$$ x_{-1} = 0 $$")
    assert st.first.sub.value == -1


def test_a_power_by_an_index_expression_is_read_as_a_power():
    (st,) = parse_latex(r"$$ A^{k-j} = A $$")
    assert st.first.text() == "A^{k - j}"  # index_powers: read at given exponents, and in closed forms


def test_an_entry_of_a_parenthesized_result_is_a_scalar():
    r"""\left(A B\right)_{ij} is the entry (i, j) of A B (the entries module): beside the matrix A, a shape
    error; a subscript after a name in parentheses, (A)_{i}, is still refused by name."""
    d = r"$$ A \in \mathbb{R}^{n \times n}, \quad B \in \mathbb{R}^{n \times n} $$" "\n"
    (step,) = check(d + r"$$ \sum_{i=1}^{n} \sum_{j=1}^{n} \left(A B\right)_{ij} = A $$").steps
    assert step.status == "ill-formed"
    with pytest.raises(ParseError, match=r"a subscript after parentheses"):
        parse_latex(r"$$ (A)_{i} = A $$")
