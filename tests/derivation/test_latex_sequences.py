"""Sequences declared as papers declare them (``Q_1, \\ldots, Q_H \\in S``) and the vector of ones
written without its length where the other terms of a sum fix it (``dP - D \\mathbf{1}^\\top``)."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import ParseError

HEADS = r"$$ Q_1, \ldots, Q_H \in \mathbb{R}^{n \times d}, \quad K_1, \ldots, K_H \in \mathbb{R}^{m \times d} $$" + "\n"


def check(text):
    return check_statements(parse_latex(text), dialect="latex")


def test_a_sequence_declaration_declares_every_member_and_the_count():
    r = check(HEADS + r"$$ \sum_{h=1}^{H} Q_h K_h^\top = \sum_{h=1}^{H} (K_h Q_h^\top)^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert not any("read from the sum" in n for n in r.notes)  # the declaration gives the range


def test_a_false_step_about_a_declared_sequence_is_refuted():
    r = check(HEADS + r"$$ \sum_{h=1}^{H} Q_h K_h^\top = \sum_{h=1}^{H} Q_h K_1^\top $$")
    assert [s.status for s in r.steps] == ["refuted"]


def test_members_of_a_sequence_have_its_shape():
    (step,) = check(HEADS + r"$$ Q_1 K_H = Q_1 K_H $$").steps
    assert step.status == "ill-formed" and "Q_1 (n × d) by K_H (m × d)" in step.error


@pytest.mark.parametrize("decl, message", [
    (r"x_0, \ldots, x_N \in \mathbb{R}^{d}", "is not read"),
    (r"x_1, \ldots, x_{N-1} \in \mathbb{R}^{d}", "is not read"),
    (r"x_1, \ldots, y_N \in \mathbb{R}^{d}", "is not read"),
])
def test_a_sequence_the_reader_cannot_index_is_refused_with_what_to_write(decl, message):
    with pytest.raises(ParseError, match=message) as e:
        parse_latex(f"$$ {decl} $$")
    assert "x_1, \\ldots, x_N \\in S" in e.value.expected


def test_a_sequence_without_its_space_is_refused():
    with pytest.raises(ParseError, match="after the sequence x_1, .ldots, x_N"):
        parse_latex(r"$$ x_1, \ldots, x_N = y $$")


ONES = (r"$$ D \in \mathbb{R}^{N \times 1}, \quad P, S \in \mathbb{R}^{N \times N}, "
        r" \quad v \in \mathbb{R}^{1 \times M}, \quad T \in \mathbb{R}^{M \times M} $$" + "\n")


def test_the_ones_vector_takes_the_length_the_other_terms_of_the_sum_fix():
    r = check(ONES + r"$$ P \circ (S - D\mathbf{1}^\top) = P \circ S - P \circ (D \mathbf{1}_N^\top) $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("has N entries" in n for n in r.notes)


def test_the_inferred_ones_vector_is_the_ones_vector_not_a_free_matrix():
    r = check(ONES + r"$$ S - D\mathbf{1}^\top = S - \mathbf{1} D^\top $$")
    assert [s.status for s in r.steps] == ["refuted"]
    r = check(ONES + r"$$ T - \mathbf{1} v = T - \mathbf{1}_M v $$")
    assert [s.status for s in r.steps] == ["proved"]


@pytest.mark.parametrize("step", [
    r"D\mathbf{1}^\top = D\mathbf{1}^\top",  # no sum: nothing fixes the length
    r"S - \mathbf{1}^\top S \mathbf{1} = S",  # the length is inside the product, not a side of it
])
def test_a_ones_vector_whose_length_nothing_fixes_is_refused(step):
    (s,) = check(ONES + f"$$ {step} $$").steps
    assert s.status == "ill-formed" and "vector of ones without its length" in s.error


POSITIVE = r"$$ X \in \mathbb{R}^{n \times d}, \quad c > 0 $$" + "\n"


def test_a_positive_scalar_is_assumed_positive_and_the_scope_says_so():
    (s,) = check(POSITIVE + r"$$ \sqrt{c^2} X = c X $$").steps
    assert s.status == "proved" and "under c > 0" in s.scope


def test_a_scalar_declared_real_then_positive_is_positive():
    text = r"$$ X \in \mathbb{R}^{n \times d}, \quad c \in \mathbb{R}, \quad c > 0 $$" + "\n"
    assert [s.status for s in check(text + r"$$ \sqrt{c^2} X = c X $$").steps] == ["proved"]


def test_without_the_positivity_the_step_is_refuted_and_with_it_a_false_step_still_is():
    (s,) = check(r"$$ X \in \mathbb{R}^{n \times d}, \quad c \in \mathbb{R} $$" + "\n"
                 + r"$$ \sqrt{c^2} X = c X $$").steps
    assert s.status == "refuted"
    (s,) = check(POSITIVE + r"$$ \sqrt{c^2} X = 2 c X $$").steps
    assert s.status == "refuted"


def test_a_declared_value_of_a_function_at_a_declared_point_is_refused_with_the_map_declaration_to_write():
    # the value at an argument the file never declares is a vector of its own (test_point_values.py)
    with pytest.raises(ParseError, match=r"declares the value of phi at k, which names k declared") as e:
        check(r"$$ k \in \mathbb{R}^{d_k}, \quad \phi(k) \in \mathbb{R}^{d} $$")
    assert "phi : " in e.value.expected


def test_a_sequence_indexed_on_top_is_refused_by_name():
    with pytest.raises(ParseError, match=r"indexed on top is not read") as e:
        parse_latex(r"$$ \mathbf{x}^1_p, \ldots, \mathbf{x}^N_p \in \mathbb{R}^{d} $$")
    assert r"x_1, \ldots, x_N" in e.value.expected
