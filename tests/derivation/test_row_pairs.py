r"""Rows at a second position (``H_j`` beside ``H_i``) and at an index map (``P_{\delta(i,j)}``), as in
DeBERTa's disentangled attention: proved with those rows free, refuted only at j = i."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

DECL = (r"%: convention: row" "\n"
        r"$$ H \in \mathbb{R}^{N \times d}, \quad P \in \mathbb{R}^{2k \times d}, \quad "
        r"W, U \in \mathbb{R}^{d \times d} $$" "\n" r"$$ Q = H W, \quad K = H U, \quad R = P U $$" "\n")


def _steps(body):
    return check(DECL + body).steps


@pytest.mark.parametrize("i, j", [("i", "j"), ("t", "s"), ("j", "i")])
def test_rows_at_two_positions_are_proved_for_every_pair(i, j):
    (s,) = _steps(rf"$$ Q_{i} K_{j}^\top + Q_{i} R_{{\delta({i},{j})}}^\top = H_{i} W U^\top H_{j}^\top "
                  rf"+ H_{i} W U^\top P_{{\delta({i},{j})}}^\top $$")
    assert s.status == "proved", s.error
    assert f"for every {j}" in s.scope


@pytest.mark.parametrize("i, j", [("i", "j"), ("t", "s")])
def test_a_false_step_is_refuted_at_the_second_position_equal_to_the_first(i, j):
    (s,) = _steps(rf"$$ Q_{i} K_{j}^\top = H_{i} W U H_{j}^\top $$")
    assert s.status == "refuted" and s.verdict.counterexample is not None
    assert f"{j} = {i}" in s.scope


def test_a_step_true_only_at_j_equal_to_i_is_not_refuted():
    (s,) = _steps(r"$$ H_i W H_j^\top = H_i W W H_j^\top $$")  # false already at j = i
    assert s.status == "refuted"
    (s,) = _steps(r"$$ H_i W H_j^\top = H_j W H_i^\top $$")  # false for i != j, true at j = i: undecided
    assert s.status == "unknown", s.status
    (s,) = _steps(r"$$ H_i H_j^\top = H_j H_i^\top $$")  # true for every i, j
    assert s.status == "proved"
    (s,) = _steps(r"$$ H_i W H_i^\top + H_j W H_j^\top = 2 H_i W H_j^\top $$")  # true at j = i only
    assert s.status == "unknown", s.status


def test_two_index_map_rows_of_one_matrix_are_free_rows():
    (s,) = _steps(r"$$ H_i U^\top P_{\delta(i,j)}^\top + H_i U^\top P_{\delta(j,i)}^\top "
                  r"= H_i U^\top (P_{\delta(i,j)} + P_{\delta(j,i)})^\top $$")
    assert s.status == "proved", s.error
    (s,) = _steps(r"$$ H_i R_{\delta(i,j)}^\top = H_i U P_{\delta(i,j)}^\top $$")
    assert s.status == "refuted"


def test_a_row_of_a_transpose_at_a_second_position_is_refused():
    decl = DECL + r"$$ S = (H W)^\top H $$" "\n"
    (s,) = check(decl + r"$$ H_i S_j^\top = H_i S_j^\top $$").steps
    assert s.status == "ill-formed" and "second position" in s.error


@pytest.mark.parametrize("transpose, status", [(r"U^\top", "proved"), ("U", "refuted")])
def test_under_the_column_convention_the_rows_are_column_vectors(transpose, status):
    text = (r"$$ H \in \mathbb{R}^{N \times d}, \quad P \in \mathbb{R}^{M \times d}, \quad "
            r"W, U \in \mathbb{R}^{d \times d} $$" "\n" r"$$ Q = H W, \quad K = P U $$" "\n"
            rf"$$ Q_i^\top K_{{\delta(i,j)}} + Q_i^\top H_j = H_i^\top W {transpose} P_{{\delta(i,j)}} "
            r"+ H_i^\top W H_j $$")
    assert [s.status for s in check(text).steps] == [status]
