"""Bounds stated on lengths beside a scalar derivation: ``1 \\le c < n`` (Rabe & Staats 2021)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError, ParseError

SPLIT = r"""
$$ x_1, \ldots, x_n \in \mathbb{R}, \quad {bound}, \quad m = \max(x_1, x_1) $$
$$ \sum_{i=1}^{n} e^{x_i - m} = \sum_{i=1}^{c} e^{x_i - m} + \sum_{i=START}^{n} e^{x_i - m} $$
"""


def split(bound: str, start: str = "c+1", c: str = "c", n: str = "n") -> str:
    text = SPLIT.replace("{bound}", bound).replace("START", start)
    return text.replace("^{c}", "^{" + c + "}").replace("x_n", "x_" + n).replace("^{n}", "^{" + n + "}")


def test_a_sum_split_at_a_bounded_position_is_proved():
    r = check(split(r"1 \le c < n"))
    (s,) = r.steps
    assert s.status == "proved" and s.general, s.scope
    assert r"1 \le c < n" in s.scope


def test_the_position_counted_twice_is_refuted_inside_the_bounds():
    r = check(split(r"1 \le c < n", start="c"))
    (s,) = r.steps
    assert s.status == "refuted"
    dims = s.verdict.counterexample.dims
    assert 1 <= dims["c"] < dims["n"] and s.verdict.counterexample.certificate


def test_a_position_left_out_is_refuted():
    (s,) = check(split(r"1 \le c < n", start="c+2")).steps
    assert s.status == "refuted"
    assert s.verdict.counterexample.dims["c"] < s.verdict.counterexample.dims["n"]


def test_renaming_the_letters_changes_no_verdict():
    for start, status in (("b+1", "proved"), ("b", "refuted")):
        (s,) = check(split(r"1 \le b < N", start=start, c="b", n="N")).steps
        assert s.status == status
        assert (s.verdict.counterexample is None) == (status == "proved")


def test_without_the_bound_the_split_is_not_proved():
    (s,) = check(split(r"y = 1")).steps
    assert s.status == "ill-formed" and "c is not declared" in s.error


def test_a_non_strict_and_a_reversed_chain_are_read():
    for bound in (r"1 \le c \le n", r"n > c \ge 1", r"0 < c < n", r"c \leq n"):
        (s,) = check(split(bound)).steps
        assert s.status == "proved", (bound, s.scope)


def test_a_claim_false_within_the_bounds_is_refuted():
    text = (r"$$ x_1, \ldots, x_n \in \mathbb{R}, \quad 1 \le c \le n, \quad m = \max(x_1, x_1) $$" "\n"
            r"$$ \sum_{i=1}^{n} e^{x_i - m} = \sum_{i=1}^{c} e^{x_i - m} $$")
    (s,) = check(text).steps
    assert s.status == "refuted"
    assert s.verdict.counterexample.dims["c"] < s.verdict.counterexample.dims["n"]


def test_a_chain_of_reals_or_a_numeric_upper_bound_is_refused():
    with pytest.raises(DerivationError, match="neither a length nor the bound of a sum"):
        check(split(r"1 \le c < n, \quad 0 < t < n"))
    with pytest.raises(DerivationError, match="declared as a number too"):
        check(split(r"c \in \mathbb{R}, \quad 1 \le c < n"))
    with pytest.raises(ParseError, match="an upper bound by a number"):
        check(split(r"c \le 5"))
    with pytest.raises(ParseError, match="goes up and down"):
        check(split(r"1 \le c > n"))


def test_an_inequality_inside_an_expression_stays_refused():
    text = r"$$ x_1, \ldots, x_n \in \mathbb{R} $$" "\n" r"$$ \max(x_1, x_2) = (x_1 \le x_2) $$"
    with pytest.raises(ParseError, match="is not read: an inequality is not part of a scalar derivation"):
        check(text)
