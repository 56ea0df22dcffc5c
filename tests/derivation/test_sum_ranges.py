"""Sums over an index range from any start (``\\sum_{s=0}^{2}``, ``\\sum_{i=t-1}^{t}``) and the members of a
sequence by index arithmetic (``q_{i-1}``, ``w_s`` at s = 0), read with their meaning."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError

CONV = r"$$ q_i, w_0, w_1, w_2 \in \mathbb{R}^{d}, \quad \tilde{q}_i = \sum_{s=0}^{2} w_s \odot q_{i-s} $$" + "\n"



def statuses(text):
    return [s.status for s in check(text).steps]


def test_a_sum_from_zero_is_the_sum_of_its_terms():
    assert statuses(CONV + r"$$ \tilde{q}_i = w_0 \odot q_i + w_1 \odot q_{i-1} + w_2 \odot q_{i-2} $$") == ["proved"]


def test_a_wrong_member_of_the_sum_is_refuted_with_a_certificate():
    (step,) = check(CONV + r"$$ \tilde{q}_i = w_0 \odot q_i + w_1 \odot q_{i+1} + w_2 \odot q_{i-2} $$").steps
    assert step.status == "refuted"
    assert step.verdict.counterexample.certificate


def test_a_dropped_term_is_refuted():
    assert statuses(CONV + r"$$ \tilde{q}_i = w_0 \odot q_i + w_1 \odot q_{i-1} $$") == ["refuted"]


def test_a_range_from_an_expression_of_a_position():
    decl = r"$$ v_t \in \mathbb{R}^{d} $$" + "\n"
    assert statuses(decl + r"$$ \sum_{i=t-1}^{t} v_i = v_{t-1} + v_t $$") == ["proved"]
    assert statuses(decl + r"$$ \sum_{i=t-1}^{t} v_i = v_{t+1} + v_t $$") == ["refuted"]


def test_members_with_the_same_index_are_one_value_and_with_other_indices_independent():
    decl = r"$$ v_t \in \mathbb{R}^{d} $$" + "\n"
    assert statuses(decl + r"$$ v_{t-1+1} + v_{t-1} = v_t + v_{t-1} $$") == ["proved"]
    assert statuses(decl + r"$$ v_{t-1} = v_{t-2} $$") == ["refuted"]


@settings(max_examples=6, deadline=None)
@given(st.sampled_from("sjk"), st.sampled_from("itn"))
def test_renaming_the_index_letters_changes_no_verdict(s, i):
    text = (rf"$$ q_{i}, w_0, w_1 \in \mathbb{{R}}^{{d}} $$" + "\n"
            + rf"$$ \sum_{{{s}=0}}^{{1}} w_{s} \odot q_{{{i}-{s}}} = w_0 \odot q_{i} + w_1 \odot q_{{{i}-1}} $$" + "\n"
            + rf"$$ \sum_{{{s}=0}}^{{1}} w_{s} \odot q_{{{i}-{s}}} = w_0 \odot q_{i} + w_1 \odot q_{{{i}+1}} $$")
    assert statuses(text) == ["proved", "refuted"]


def test_a_range_of_symbolically_many_terms_is_refused_with_what_to_write():
    (step,) = check(r"$$ u_k \in \mathbb{R}^{d} $$" + "\n" + r"$$ \sum_{j=0}^{k} u_j = u_k $$").steps
    assert step.status == "ill-formed" and "k + 1 terms, a number that is not given" in step.error


def test_a_range_that_reaches_a_head_below_one_is_refused():
    text = (r"$$ h = 1, \ldots, H $$" + "\n" + r"$$ W_h \in \mathbb{R}^{d \times d} $$" + "\n"
            + r"$$ \sum_{h=0}^{1} W_h = W_1 $$")
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "the heads of W are numbered from 1" in step.error


def test_a_member_inside_a_sum_of_symbolically_many_terms_is_refused():
    text = CONV + r"$$ n \in \mathbb{R} $$" + "\n" + r"$$ \sum_{s=1}^{d} w_0 \odot q_{i-s} = w_0 $$"
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "is not read" in step.error


def test_the_plain_notation_still_refuses_a_sum_from_zero():
    from symattn.derivation.notation import parse_notation

    with pytest.raises(ParseError, match="the sum starts at '0'"):
        parse_notation("Q: d x n\nQ = sum_{h=0}^{H} Q\n")
