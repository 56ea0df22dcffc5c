r"""The axis of an unlabelled softmax: softmax(A B^T) (a product of rows, query i's scores in row i) in a
file that sets no convention is refused, not read column by column; a convention or Softmax_row says it."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError

DECL = r"$$ A, B \in \mathbb{R}^{n \times d}, \quad V \in \mathbb{R}^{n \times e} $$" + "\n"



def test_row_scores_with_no_convention_are_refused_naming_the_two_fixes():
    with pytest.raises(DerivationError, match=r"product of rows A B\^T.*sets no convention"):
        check(DECL + r"$$ P = \mathrm{softmax}(A B^\top) $$" + "\n" + r"$$ P V = P V $$")


def test_softmax_row_reads_each_row_normalized():
    text = DECL + r"$$ P = \mathrm{Softmax}_{row}(A B^\top) $$" + "\n"
    assert [s.status for s in check(text + r"$$ P (V + V) = P V + P V $$").steps] == ["proved"]
    (s,) = check(text + r"$$ P V = \mathrm{Softmax}_{col}(A B^\top) V $$").steps
    assert s.status == "refuted"


def test_a_convention_line_reads_the_file_as_written():
    text = "%: convention: row\n" + DECL + r"$$ P = \mathrm{softmax}(A B^\top) $$" + "\n"
    (s,) = check(text + r"$$ P V = \mathrm{Softmax}_{row}(A B^\top) V $$").steps
    assert s.status == "proved"


def test_column_scores_keep_the_default_column_reading():
    text = DECL + r"$$ P = \mathrm{softmax}(B A^\top)^\top $$" + "\n"
    with pytest.raises(DerivationError, match="product of rows"):
        check(text + r"$$ P = P $$")
    (s,) = check(DECL + r"$$ \mathrm{softmax}(A^\top B) = \mathrm{Softmax}_{col}(A^\top B) $$").steps
    assert s.status == "proved"
