"""One vector of a result, ``[E]_n``, as papers write it (Jaegle et al. 2021, Zhai et al. 2021): row n
of E under the row convention, column n under the column convention; and the rows ``Q_n`` of a matrix
the file defines (``Q = L W_Q``), read as rows under the row convention."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError

ROW = "%: convention: row\n"
DECL = (r"$$ A \in \mathbb{R}^{N \times D}, \quad B \in \mathbb{R}^{D \times F}, "
        r"\quad C \in \mathbb{R}^{N \times F} $$" "\n")


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_a_row_of_a_result_is_the_row_of_its_first_factor_times_the_rest():
    assert statuses(ROW + DECL + r"$$ \left[A B + C\right]_n = A_n B + C_n $$") == ["proved"]
    r = check(ROW + DECL + r"$$ \left[A B + C\right]_n = A_n B $$")  # a dropped term: refuted
    assert r.steps[0].status == "refuted" and r.steps[0].verdict.counterexample.certificate
    assert any("is row n of" in n for n in r.notes)


def test_a_column_of_a_result_in_the_column_convention():
    decl = (r"$$ A \in \mathbb{R}^{F \times D}, \quad B \in \mathbb{R}^{D \times N}, "
            r"\quad C \in \mathbb{R}^{F \times N} $$")
    assert statuses(decl + r"$$ \left[A B + C\right]_n = A \left[B\right]_n + \left[C\right]_n $$") == ["proved"]
    assert statuses(decl + r"$$ \left[A B + C\right]_n = A \left[B\right]_n $$") == ["refuted"]


def test_renaming_the_index_changes_no_verdict():
    for text in (r"$$ \left[A B + C\right]_n = A_n B + C_n $$", r"$$ \left[A B + C\right]_n = A_n B $$"):
        renamed = text.replace("_n", "_t")
        assert statuses(ROW + DECL + text) == statuses(ROW + DECL + renamed)


def test_the_rows_of_a_defined_matrix_are_rows():
    decl = ROW + (r"$$ L \in \mathbb{R}^{N \times D}, \quad W \in \mathbb{R}^{D \times F}, "
                  r"\quad X \in \mathbb{R}^{M \times F} $$" r"$$ Q = L W $$")
    assert statuses(decl + r"$$ \left[Q X^T\right]_n = Q_n X^T $$") == ["proved"]
    assert statuses(decl + r"$$ \left[Q X^T\right]_n = L_n X^T $$") != ["proved"]  # L_n is 1 × D: ill-formed


def test_an_entry_of_a_vector_is_refused_by_name():
    decl = ROW + r"$$ x \in \mathbb{R}^{D}, \quad B \in \mathbb{R}^{D \times F} $$"
    r = check(decl + r"$$ \left[x B\right]_i = \left[x B\right]_i $$")
    assert r.steps[0].status == "ill-formed" and "entry of the 1 × F vector" in r.steps[0].error


def test_a_pair_of_indices_after_a_bracket_is_refused_saying_what_is_read():
    with pytest.raises(DerivationError, match=r"only one vector of a result is read, \[\\cdot\]_n"):
        parse_latex(ROW + DECL + r"$$ \left[A B\right]_{ij} = \left[A B\right]_{ij} $$")


def test_a_subscript_after_parentheses_around_a_name_is_refused_saying_what_to_write():
    for formula in (r"$$ C_n = (C)_n $$", r"$$ C_n = (A B)_{n,:} $$"):
        with pytest.raises(DerivationError, match=r"a subscript after parentheses") as info:
            parse_latex(ROW + DECL + formula)
        assert r"[\cdot]_n" in info.value.expected


def test_one_index_after_parentheses_around_a_result_is_one_vector_of_it():
    assert statuses(ROW + DECL + r"$$ (A B + C)_n = A_n B + C_n $$") == ["proved"]
    assert check(ROW + DECL + r"$$ (A B + C)_n = A_n B $$").steps[0].status == "refuted"
