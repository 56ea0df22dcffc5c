"""Indices and labels as the field typesets them: a subscripted name inside a subscript
(``E_{x_i}``), labels of several parts (``W_{k,E}``, ``q_{t,i}``, ``x^{pre,1}_{l,i}``, ``W^{1,l}``), a
stacked bracket ``[q^C; q^R]``, a masked ``\\mathrm{softmax}^{*}``, the square root of a 1 × 1 value,
and the clear refusal of a dimension that is not positive."""

from __future__ import annotations

import pytest

from symattn.derivation import ast, check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def chain_first(text):
    return next(s for s in parse_latex(text) if isinstance(s, ast.Chain)).first


DAI = (r"$$ \mathbf{E}_{x_i}, \mathbf{E}_{x_j}, u \in \mathbb{R}^{d}, \quad "
       r"\mathbf{W}_q, \mathbf{W}_{k,E}, \mathbf{W}_{k,R} \in \mathbb{R}^{d \times d} $$")


def test_a_subscripted_name_in_a_subscript_is_part_of_the_name():
    n = chain_first(r"$$ E_{x_i} = E_{x_i} $$")
    assert isinstance(n.sub, ast.Name) and n.sub.base == "x" and n.sub.sub == ast.Name(n.sub.sub.pos, "i")
    assert n.text() == "E_{x_i}"
    assert statuses(DAI + r"$$ (\mathbf{W}_q \mathbf{E}_{x_i} + u)^\top \mathbf{E}_{x_j} = "
                          r"\mathbf{E}_{x_i}^\top \mathbf{W}_q^\top \mathbf{E}_{x_j} + u^\top \mathbf{E}_{x_j} $$") \
        == ["proved"]
    # E_{x_i} and E_{x_j} are two names: a step that confuses them is refuted
    assert statuses(DAI + r"$$ \mathbf{E}_{x_i}^\top \mathbf{W}_q \mathbf{E}_{x_j} = "
                          r"\mathbf{E}_{x_j}^\top \mathbf{W}_q \mathbf{E}_{x_i} $$") == ["refuted"]


def test_a_label_of_several_parts_names_a_matrix_of_its_own():
    n = chain_first(r"$$ W_{k,E} = W_{k,E} $$")
    assert isinstance(n.sub, ast.Labels) and n.text() == "W_{k,E}"
    assert statuses(DAI + r"$$ u^\top (\mathbf{W}_{k,E} + \mathbf{W}_{k,R}) = u^\top \mathbf{W}_{k,R} "
                          r"+ u^\top \mathbf{W}_{k,E} $$") == ["proved"]
    assert statuses(DAI + r"$$ u^\top \mathbf{W}_{k,E} = u^\top \mathbf{W}_{k,R} $$") == ["refuted"]


def test_labels_with_numbers_in_superscripts_are_labels_not_powers():
    text = (r"%: convention: row" "\n"
            r"$$ x^{pre}_{l,i}, b^{2,l} \in \mathbb{R}^{1 \times d}, \quad "
            r"W^{1,l}, W^{2,l} \in \mathbb{R}^{d \times d} $$"
            r"$$ x^{pre,1}_{l,i} = x^{pre}_{l,i} W^{1,l} $$")
    assert statuses(text + r"$$ x^{pre,1}_{l,i} W^{2,l} + b^{2,l} = x^{pre}_{l,i} W^{1,l} W^{2,l} + b^{2,l} $$") \
        == ["proved"]
    assert statuses(text + r"$$ x^{pre,1}_{l,i} W^{2,l} = x^{pre}_{l,i} W^{2,l} W^{1,l} $$") == ["refuted"]


def test_a_number_alone_in_braces_is_still_a_power():
    text = r"$$ A \in \mathbb{R}^{n \times n} $$ $$ A^{2} = A A $$"
    assert statuses(text) == ["proved"]


def test_a_bracket_with_semicolons_stacks_its_rows():
    text = (r"$$ q^C, k^C \in \mathbb{R}^{d_h}, \quad q^R, k^R \in \mathbb{R}^{d_r} $$")
    assert statuses(text + r"$$ [q^C; q^R]^\top [k^C; k^R] = (q^C)^\top k^C + (q^R)^\top k^R $$") == ["proved"]
    assert statuses(text + r"$$ [q^C; q^R]^\top [k^C; k^R] = (q^C)^\top k^C $$") == ["refuted"]
    with pytest.raises(DerivationError, match=r"have 1 and 2 cells"):
        parse_latex(r"$$ X = [a; b, c] $$")


def test_a_double_subscript_on_a_declared_matrix_is_an_entry_and_is_refused():
    steps = check(r"$$ A \in \mathbb{R}^{n \times n} $$ $$ A_{t,s} = A_{t,s} $$").steps
    assert steps[0].status == "ill-formed"
    assert "a double subscript on the declared matrix A" in steps[0].error
    assert "entries of a matrix are not read" in steps[0].error


def test_a_starred_softmax_is_an_uninterpreted_map_of_its_argument():
    text = (r"%: convention: row" "\n" r"$$ X \in \mathbb{R}^{n \times d}, \quad W \in \mathbb{R}^{d \times d} $$")
    report = check(text + r"$$ \mathrm{softmax}^{*}(X W X^\top) X + \mathrm{softmax}^{*}(X W X^\top) X "
                          r"= 2\, \mathrm{softmax}^{*}(X W X^\top) X $$")
    assert [s.status for s in report.steps] == ["proved"]
    assert any("uninterpreted" in n and "softmax" in n for n in report.notes)
    # what the map does is not known: a step that depends on it is neither proved nor refuted
    assert statuses(text + r"$$ \mathrm{softmax}^{*}(2 X W) = 2\, \mathrm{softmax}^{*}(X W) $$") == ["unknown"]


def test_the_square_root_of_a_one_by_one_value_is_a_scalar_and_of_a_matrix_is_refused():
    text = r"$$ x \in \mathbb{R}^{d}, \quad X \in \mathbb{R}^{n \times d} $$"
    assert statuses(text + r"$$ \sqrt{x^\top x} = \|x\| $$ $$ \sqrt{x^\top x} \, \sqrt{x^\top x} = x^\top x $$") \
        == ["proved", "proved"]
    steps = check(text + r"$$ \sqrt{X} = \sqrt{X} $$").steps
    assert steps[0].status == "ill-formed" and "the square root of the n × d matrix X" in steps[0].error


@pytest.mark.parametrize("shape, message", [
    (r"\mathbb{R}^{-3 \times n}", "the dimension -3 is not positive"),
    (r"M^{-3 \times n}", "the dimension -3 is not positive"),
    (r"\mathbb{R}^{n \times -2}", "the dimension -2 is not positive"),
    (r"\mathbb{R}^{n - n \times n}", "the dimension n-n = 0 is not positive"),
    (r"\mathbb{R}^{0 \times n}", "the dimension 0 is not positive"),
])
def test_a_dimension_that_is_not_positive_is_a_clear_error_not_sympys(shape, message):
    with pytest.raises(DerivationError) as info:
        check(rf"$$ Q \in {shape} $$ $$ Q = Q $$")
    assert message in str(info.value), str(info.value)
    assert "positive" in info.value.expected
    assert info.value.line == 1


HEADS_ON_TOP = r"$$ h = 1, \ldots, H $$ $$ W_Q^h, W^h \in \mathbb{R}^{d \times d} $$ $$ A^h = W_Q^h W^h $$"


def test_a_head_index_on_top_without_a_subscript_names_a_family_member():
    """W^h and A^h (h the head index, Elhage et al.) are head h's W and A. Before, W^h was one matrix, so
    the false sum_h W^h = H W^h was proved."""
    assert statuses(HEADS_ON_TOP + r"$$ \sum_{h=1}^{H} W^h = H W^h $$") == ["refuted"]
    assert statuses(HEADS_ON_TOP + r"$$ \sum_{h=1}^{H} A^h = H A^h $$") == ["refuted"]
    assert statuses(HEADS_ON_TOP + r"$$ \sum_{h=1}^{H} A^h = \sum_{h=1}^{H} W_Q^h W^h $$"
                                   r"$$ (A^h)^T = (W^h)^T (W_Q^h)^T $$") == ["proved", "proved"]


def test_a_label_on_top_is_still_a_label():
    text = r"$$ h = 1, \ldots, H $$ $$ W^O, W^Q \in \mathbb{R}^{d \times d} $$"
    assert statuses(text + r"$$ (W^O W^Q)^T = (W^Q)^T (W^O)^T $$") == ["proved"]


ELHAGE = (r"$$ t \in \mathbb{R}^{v \times n}, \quad W_E \in \mathbb{R}^{d \times v}, "
          r"\quad W_U \in \mathbb{R}^{v \times d}, \quad W_{OV}^h, W_{QK}^h \in \mathbb{R}^{d \times d} $$"
          r"$$ A^h = \mathrm{softmax}^{*}\left(t^T W_E^T W_{QK}^h W_E t\right) $$")
LOGITS = (r"(\mathrm{Id} \otimes W_U) \cdot \left(\mathrm{Id} + \sum_{h \in H} A^h \otimes W_{OV}^h\right) \cdot "
          r"(\mathrm{Id} \otimes W_E)")


def test_operators_of_kronecker_products_are_compared_on_a_generic_matrix():
    report = check(ELHAGE + rf"$$ T = {LOGITS} $$"
                   r"$$ T = \mathrm{Id} \otimes W_U W_E + \sum_{h \in H} A^h \otimes \left(W_U W_{OV}^h W_E\right) $$")
    assert [s.status for s in report.steps] == ["proved"]
    assert any("generic" in n and "v × n" in n for n in report.notes), report.notes
    assert any("h = 1, ..., H read from the sum over h" in n for n in report.notes)
    # applied to the tokens, the operator is a matrix: the same logits written out
    assert statuses(ELHAGE + rf"$$ {LOGITS} \cdot t = W_U W_E t + \sum_{{h=1}}^{{H}} W_U W_{{OV}}^h W_E t (A^h)^T $$") \
        == ["proved"]


def test_a_dropped_term_of_an_operator_is_refuted_though_softmax_star_is_undefined():
    """The difference W_U W_E ⟨X⟩ does not involve softmax^*: proved so, the counterexample stands."""
    steps = check(ELHAGE + rf"$$ {LOGITS} = \sum_{{h \in H}} A^h \otimes \left(W_U W_{{OV}}^h W_E\right) $$").steps
    assert [s.status for s in steps] == ["refuted"]
    assert "does not depend on what softmax^* does" in steps[0].scope
    # a step whose truth depends on the map stays unknown
    assert statuses(ELHAGE + r"$$ A^h \otimes W_U = (A^h)^T \otimes W_U $$") == ["unknown"]


def test_virtual_heads_compose_by_the_mixed_product():
    heads = r"$$ h = 1, \ldots, H $$" + ELHAGE
    assert statuses(heads + r"$$ (A^{h_2} \otimes W_{OV}^{h_2}) \cdot (A^{h_1} \otimes W_{OV}^{h_1}) = "
                             r"(A^{h_2} A^{h_1}) \otimes (W_{OV}^{h_2} W_{OV}^{h_1}) $$"
                             r"$$ (A^{h_2} \otimes W_{OV}^{h_2}) \cdot (A^{h_1} \otimes W_{OV}^{h_1}) = "
                             r"(A^{h_1} A^{h_2}) \otimes (W_{OV}^{h_2} W_{OV}^{h_1}) $$") == ["proved", "unknown"]


def test_an_operator_compared_with_a_matrix_is_refused_by_name():
    steps = check(ELHAGE + r"$$ \mathrm{Id} \otimes W_U W_E = W_U W_E $$").steps
    assert steps[0].status == "ill-formed" and "acts on nothing, compared with the matrix" in steps[0].error


def test_a_label_that_holds_the_head_index_is_refused_not_one_matrix_for_every_head():
    with pytest.raises(DerivationError, match=r"W_\{q,h\}: the subscript holds the index h beside the label q"):
        check(r"$$ h = 1, \ldots, H $$ $$ W_{q,h} \in \mathbb{R}^{d \times d} $$"
              r"$$ \sum_{h=1}^{H} W_{q,h} = H W_{q,h} $$")
    # an index bound by a sum, inside a label: refused as well
    steps = check(r"$$ W_{q,i} \in \mathbb{R}^{d \times d} $$ $$ \sum_{i=1}^{d} W_{q,i} = d W_{q,i} $$").steps
    assert steps[0].status == "ill-formed" and "holds the index i beside the label q" in steps[0].error
