r"""Rows written with the matrix's label on top: DeBERTa's ``Q^c_i`` is row i of ``Q_c = H W_{q,c}``."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

DECL = (r"%: convention: row" "\n"
        r"$$ H \in \mathbb{R}^{N \times d}, \quad W_{q,c}, W_{k,c} \in \mathbb{R}^{d \times d} $$" "\n"
        r"$$ Q_c = H W_{q,c}, \quad K_c = H W_{k,c} $$" "\n")


def _statuses(body):
    return [s.status for s in check(DECL + body).steps]


@pytest.mark.parametrize("i", ["i", "t"])
def test_a_row_with_the_label_on_top_is_the_row_of_the_labelled_matrix(i):
    true = rf"$$ Q^c_{i} {{K^c_{i}}}^\top = H_{i} W_{{q,c}} W_{{k,c}}^\top H_{i}^\top $$"
    assert _statuses(true) == ["proved"]


@pytest.mark.parametrize("i", ["i", "t"])
def test_a_false_step_about_such_a_row_is_refuted_with_a_counterexample(i):
    false = rf"$$ Q^c_{i} {{K^c_{i}}}^\top = H_{i} W_{{q,c}} W_{{k,c}} H_{i}^\top $$"
    result = check(DECL + false)
    assert [s.status for s in result.steps] == ["refuted"]
    assert result.steps[0].verdict.counterexample is not None


def test_the_label_names_which_matrix_the_row_belongs_to():
    assert _statuses(r"$$ H_i W_{k,c} = Q^c_i $$") == ["refuted"]
    assert _statuses(r"$$ H_i W_{k,c} = K^c_i $$") == ["proved"]


def test_a_name_declared_with_the_label_on_top_keeps_its_own_reading():
    decl = DECL + r"$$ Q^c \in \mathbb{R}^{N \times d} $$" "\n"
    assert [s.status for s in check(decl + r"$$ Q^c_i + Q^c_i = 2 Q^c_i $$").steps] == ["proved"]
    assert [s.status for s in check(decl + r"$$ H_i W_{q,c} = Q^c_i $$").steps] == ["refuted"]  # Q^c's row


def test_without_the_labelled_matrix_the_name_stays_unknown():
    (step,) = check(DECL + r"$$ H_i W_{q,c} = V^c_i $$").steps
    assert step.status == "ill-formed" and "unknown symbol V_i^c" in step.error
