"""Rows of a declared matrix written with its lower-case letter (q_i of Q), in the row convention."""

import pytest

from symattn.derivation.latex_document import check_latex

ROW = "%: convention: row\n"
DECL = r"$$ Q, K \in \mathbb{R}^{n \times d} $$" "\n"


@pytest.mark.parametrize("i", ["i", "j", "t"])
def test_q_i_is_row_i_of_q(i):
    (step,) = check_latex(ROW + DECL + rf"$$ \sum_{{{i}=1}}^{{n}} q_{i} = \sum_{{{i}=1}}^{{n}} Q_{i} $$").steps
    assert step.status == "proved"


def test_the_rows_of_another_matrix_are_refuted():
    (step,) = check_latex(ROW + DECL + r"$$ \sum_{i=1}^{n} q_i = \sum_{i=1}^{n} k_i $$").steps
    assert step.status == "refuted"


def test_a_free_position_is_a_row_too():
    report = check_latex(ROW + DECL + r"$$ q_i K^\top = \left[Q K^\top\right]_{i,:} $$")
    assert [s.status for s in report.steps] == ["proved"]
    assert any("row i of Q" in n for n in report.notes)


def test_the_column_convention_does_not_read_q_i():
    text = r"$$ Q \in \mathbb{R}^{d \times n} $$" "\n" r"$$ \sum_{i=1}^{n} q_i = \sum_{i=1}^{n} Q_i $$"
    (step,) = check_latex(text).steps
    assert step.status == "ill-formed" and "unknown symbol q_i" in step.error


def test_a_sequence_the_file_declares_keeps_its_own_reading():
    text = ROW + r"$$ Q \in \mathbb{R}^{n \times d}, \quad q_i \in \mathbb{R}^{d} $$" "\n" \
        r"$$ \sum_{i=1}^{n} q_i = \sum_{i=1}^{n} Q_i $$"
    assert [s.status for s in check_latex(text).steps] != ["proved"]
