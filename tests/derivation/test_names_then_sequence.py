r"""``x, y, w_1, \ldots, w_D \in \mathbb{R}^{d}``: plain names before a sequence in one declaration are members
of the same space (Peng et al.'s random feature vectors w_i beside the inputs x, y)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError


def test_the_names_and_the_sequence_are_declared_alike():
    decl = r"$$ x, y, w_1, \ldots, w_D \in \mathbb{R}^{d} $$" + "\n"
    good = r"$$ \sum_{i=1}^{D} w_i^\top (x + y) = \sum_{i=1}^{D} (w_i^\top x + w_i^\top y) $$"
    bad = r"$$ \sum_{i=1}^{D} w_i^\top x = \sum_{i=1}^{D} w_i^\top y $$"
    assert [s.status for s in check(decl + good).steps] == ["proved"]
    assert [s.status for s in check(decl + bad).steps] == ["refuted"]


@pytest.mark.parametrize("names", ["x", "x, y", r"a, b, c"])
def test_any_number_of_names_may_come_first(names):
    decl = rf"$$ {names}, w_1, \ldots, w_D \in \mathbb{{R}}^{{d}} $$" + "\n"
    first = names.split(",")[0].strip()
    assert [s.status for s in check(decl + rf"$$ \sum_{{i=1}}^{{D}} w_i^\top {first} = "
                                    rf"\sum_{{j=1}}^{{D}} {first}^\top w_j $$").steps] == ["proved"]


def test_an_indexed_name_before_the_sequence_is_still_refused():
    with pytest.raises(ParseError, match=r"the sequence x_2, w_1, \\ldots, w_D is not read"):
        parse_latex(r"$$ x_2, w_1, \ldots, w_D \in \mathbb{R}^{d} $$")
