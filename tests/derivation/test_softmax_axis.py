r"""The axis of an unlabelled softmax: softmax(A B^T) (a product of rows, query i's scores in row i) in a
file that sets no convention is read row by row, as papers with column vectors and tokens as the rows of
their data mean it (mixed conventions), and the report says so; a convention or Softmax_col says otherwise."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def decl(a="A", b="B", v="V"):
    return rf"$$ {a}, {b} \in \mathbb{{R}}^{{n \times d}}, \quad {v} \in \mathbb{{R}}^{{n \times e}} $$" + "\n"


@pytest.mark.parametrize("a,b,v", [("A", "B", "V"), ("Q", "K", "U")])
def test_row_scores_with_no_convention_are_read_each_row_normalized(a, b, v):
    text = decl(a, b, v) + rf"$$ P = \mathrm{{softmax}}({a} {b}^\top) $$" + "\n"
    report = check(text + rf"$$ P {v} = \mathrm{{Softmax}}_{{row}}({a} {b}^\top) {v} $$")
    assert [s.status for s in report.steps] == ["proved"]
    assert any("read as each row normalized" in n and "sets no convention" in n for n in report.notes)
    (s,) = check(text + rf"$$ P {v} = \mathrm{{Softmax}}_{{col}}({a} {b}^\top) {v} $$").steps
    assert s.status == "refuted" and s.as_dict()["counterexample"]["inputs"]


def test_rows_of_the_row_scores_sum_to_one():
    text = decl() + r"$$ P = \mathrm{softmax}(A B^\top), \quad x \in \mathbb{R}^{e} $$" + "\n"
    (s,) = check(text + r"$$ P \mathbf{1}_n x^\top = \mathbf{1}_n x^\top $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ P^\top \mathbf{1}_n x^\top = \mathbf{1}_n x^\top $$").steps
    assert s.status == "refuted"


def test_softmax_row_reads_each_row_normalized():
    text = decl() + r"$$ P = \mathrm{Softmax}_{row}(A B^\top) $$" + "\n"
    assert [s.status for s in check(text + r"$$ P (V + V) = P V + P V $$").steps] == ["proved"]
    (s,) = check(text + r"$$ P V = \mathrm{Softmax}_{col}(A B^\top) V $$").steps
    assert s.status == "refuted"


def test_a_convention_line_reads_the_file_as_written():
    text = "%: convention: row\n" + decl() + r"$$ P = \mathrm{softmax}(A B^\top) $$" + "\n"
    report = check(text + r"$$ P V = \mathrm{Softmax}_{row}(A B^\top) V $$")
    assert [s.status for s in report.steps] == ["proved"]
    assert not any("read as each row normalized" in n for n in report.notes)


def test_column_scores_keep_the_default_column_reading():
    (s,) = check(decl() + r"$$ \mathrm{softmax}(A^\top B) = \mathrm{Softmax}_{col}(A^\top B) $$").steps
    assert s.status == "proved"
    (s,) = check(decl() + r"$$ \mathrm{softmax}(A^\top B) = \mathrm{Softmax}_{row}(A^\top B) $$").steps
    assert s.status == "refuted"


def test_a_column_convention_line_asks_for_columns():
    text = "%: convention: column\n" + decl()
    (s,) = check(text + r"$$ \mathrm{softmax}(A B^\top) = \mathrm{Softmax}_{col}(A B^\top) $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ \mathrm{softmax}(A B^\top) = \mathrm{Softmax}_{row}(A B^\top) $$").steps
    assert s.status == "refuted"
