r"""Sums over symbolically many members of a sequence, the softmax over the members of a set, and relative
position tables (``sequence_rows``, ``set_softmax``, ``relative_positions``): read with their meaning."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import SymattnError

SEQUENCE = r"""%: convention: row
$$ x_1, \ldots, x_n \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad b \in \mathbb{R}^{d} $$
$$ \sum_{j=1}^{n} \frac{\exp(x_i x_j^\top)}{\sum_{k=1}^{n} \exp(x_i x_k^\top)} (x_j W + b) = RHS $$
"""
TRUE_RHS = r"\sum_{j=1}^{n} \frac{\exp(x_i x_j^\top)}{\sum_{k=1}^{n} \exp(x_i x_k^\top)} x_j W + b"
FALSE_RHS = r"\sum_{j=1}^{n} \frac{\exp(x_i x_j^\top)}{\sum_{k=1}^{n} \exp(x_i x_k^\top)} x_j W"


def statuses(text):
    return [s.status for s in check_latex(text).steps]


def rename(text, renaming):
    """The text with the index letters of the sums renamed (j -> m, k -> r)."""
    for old, new in renaming.items():
        text = text.replace(f"x_{old}", f"x_{new}").replace(f"{{{old}=1}}", f"{{{new}=1}}")
    return text


@pytest.mark.parametrize("renaming", [{}, {"j": "m", "k": "r"}, {"j": "s", "k": "t"}])
def test_weights_of_a_sequence_sum_to_one(renaming):
    """The weights normalized over the n members sum to one: the bias splits off (Kobayashi et al.)."""
    assert statuses(rename(SEQUENCE.replace("RHS", TRUE_RHS), renaming)) == ["proved"]
    assert statuses(rename(SEQUENCE.replace("RHS", FALSE_RHS), renaming)) == ["refuted"]


def test_members_are_rows_of_one_matrix():
    """x_i is among the members summed over: the term at j = i is x_i's (a sum of independent values would not
    know that the sum over all j includes x_i)."""
    text = r"""%: convention: row
$$ x_1, \ldots, x_n \in \mathbb{R}^{d} $$
$$ \sum_{j=1}^{n} x_j - x_i = RHS $$
"""
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} x_j - x_i")) == ["proved"]
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} x_j")) == ["refuted"]


def test_generic_member_sequence_column_convention():
    """A sequence declared by its generic member, summed to a letter named nowhere else (its length)."""
    text = r"""$$ v_j \in \mathbb{R}^{d}, \quad A \in \mathbb{R}^{d \times d} $$
$$ A \sum_{j=1}^{n} v_j = RHS $$
"""
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} A v_j")) == ["proved"]
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} v_j")) == ["refuted"]


SOFTMAX = r"""%: convention: row
$$ x_1, \ldots, x_n \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad b \in \mathbb{R}^{d} $$
$$ \alpha_{i,j} = \mathop{\mathrm{softmax}}_{x_j \in X}\left(x_i W x_j^\top\right) $$
$$ \sum_{j=1}^{n} \alpha_{i,j} (x_j + b) = RHS $$
"""


@pytest.mark.parametrize("letter", ["j", "m"])
def test_softmax_over_the_members_of_the_set(letter):
    """softmax_{x_j in X}: the weights over the n members of x, which sum to one."""
    text = SOFTMAX.replace("x_j", f"x_{letter}").replace("{i,j}", f"{{i,{letter}}}").replace("{j=1}", f"{{{letter}=1}}")
    good = r"\sum_{j=1}^{n} \alpha_{i,j} x_j + b".replace("x_j", f"x_{letter}").replace(
        "{i,j}", f"{{i,{letter}}}").replace("{j=1}", f"{{{letter}=1}}")
    bad = good.replace(" + b", " + 2 b")
    assert statuses(text.replace("RHS", good)) == ["proved"]
    assert statuses(text.replace("RHS", bad)) == ["refuted"]


def test_softmax_over_a_set_the_file_does_not_tie_to_the_sequence_is_refused():
    text = SOFTMAX.replace("x_j \\in X", "x_j \\in Y").replace("RHS", "b")
    with pytest.raises(SymattnError, match="is not read as the members"):
        check_latex(text)


def test_softmax_over_a_sequence_without_its_length_is_refused():
    text = r"""%: convention: row
$$ x_i \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d} $$
$$ \alpha_{i,j} = \mathop{\mathrm{softmax}}_{x_j \in X}\left(x_i W x_j^\top\right) $$
$$ \alpha_{i,j} = \alpha_{i,j} $$
"""
    with pytest.raises(SymattnError, match="the number of members of X is not written"):
        check_latex(text)


RELATIVE = r"""%: convention: row
$$ x_i \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad a_{ij} \in \mathbb{R}^{d} $$
$$ \sum_{j=1}^{n} (x_j W + a_{ij}) = RHS $$
$$ a_{ij} = w_{\mathrm{clip}(j-i,k)}, \quad \mathrm{clip}(x, k) = \max(-k, \min(k, x)) $$
"""


def test_pair_vectors_summed_and_their_table_by_clipped_distance():
    """a_{ij}, one vector for each pair, summed over j; its table w at the clipped distance is a definition."""
    report = check_latex(RELATIVE.replace("RHS", r"\sum_{j=1}^{n} x_j W + \sum_{j=1}^{n} a_{ij}"))
    assert [s.status for s in report.steps] == ["proved"]
    assert any("a table of vectors by relative position" in d for d in report.definitions)
    assert statuses(RELATIVE.replace("RHS", r"\sum_{j=1}^{n} x_j W + a_{ij}")) == ["refuted"]


PRODUCT = r"""%: convention: row
$$ x_i, z_i \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad c_{ij} = x_i W x_j^\top $$
$$ z_i = \sum_{j=1}^{n} c_{ij} \left(x_j W\right) $$
$$ z_i = RHS $$
"""


def test_indexed_weight_before_parentheses_and_a_declared_output_defined():
    """c_{ij} (x_j W) is a product (c_{ij} is defined, not a function), and z_i, declared and then written
    with '=' beside the indexed definition c_{ij}, is defined by it."""
    report = check_latex(PRODUCT.replace("RHS", r"\sum_{j=1}^{n} x_i W x_j^\top x_j W"))
    assert [s.status for s in report.steps] == ["proved"]
    assert any(d.startswith("z_i :=") for d in report.definitions)
    assert statuses(PRODUCT.replace("RHS", r"\sum_{j=1}^{n} x_i W x_j^\top x_i W")) == ["refuted"]


def test_softmax_over_the_members_renames_the_letter_in_a_subscript_of_two_letters():
    """softmax_{x_j in X}(e_{ij}): the denominator is the sum of exp(e_{ik}) over k, not n copies of exp(e_{ij})."""
    text = r"""%: convention: row
$$ x_1, \ldots, x_n \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d}, \quad b \in \mathbb{R}^{d} $$
$$ e_{ij} = x_i W x_j^\top, \quad \alpha_{i,j} = \mathop{\mathrm{softmax}}_{x_j \in X}\left(e_{ij}\right) $$
$$ \sum_{j=1}^{n} \alpha_{i,j} (x_j + b) = RHS $$
"""
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} \alpha_{i,j} x_j + b")) == ["proved"]
    assert statuses(text.replace("RHS", r"\sum_{j=1}^{n} \frac{\exp(e_{ij})}{n \exp(e_{ij})} x_j + b")) == ["refuted"]
