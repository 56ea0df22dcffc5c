r"""Maxima and minima of numbers in a matrix derivation, ``\max(a, b)`` and ``\min(k, x)``: read with
their meaning (a true step proved for all values, a false one refuted with a counterexample), and
``\max_j`` or a maximum of matrices refused with a message naming it."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError

DECLARE = r"$$ Q \in \mathbb{R}^{n \times d}, \quad a, b, x, k \in \mathbb{R} $$" + "\n"


def statuses(steps_tex, declare=DECLARE):
    report = check_statements(parse_latex(declare + steps_tex), dialect="latex")
    return [s.status for s in report.steps]


@pytest.mark.parametrize("step", [
    r"$$ \max(a, b) + \min(a, b) = a + b $$",
    r"$$ \max\left(a, b\right) = -\min(-a, -b) $$",
    r"$$ \max\{a, b\} = \max(b, a) $$",
    r"$$ \max(a, \max(b, x)) = \max(a, b, x) $$",
    r"$$ \min(\max(a, b), a) = a $$",
])
def test_a_true_step_with_maxima_is_proved(step):
    assert statuses(step) == ["proved"]


@pytest.mark.parametrize("step", [
    r"$$ \max(a, b) = a $$",
    r"$$ \max(a, b) + \max(a, b) = a + b $$",
    r"$$ \max(-k, \min(k, x)) = \min(k, \max(-k, x)) $$",  # false for k < 0: clipping needs k >= 0
])
def test_a_false_step_with_maxima_is_refuted_with_a_counterexample(step):
    report = check_statements(parse_latex(DECLARE + step), dialect="latex")
    (s,) = report.steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("letters", ["abxk", "uvyc", "pqst"])
def test_renaming_the_numbers_changes_no_verdict(letters):
    a, b, x, k = letters
    declare = rf"$$ Q \in \mathbb{{R}}^{{n \times d}}, \quad {a}, {b}, {x}, {k} \in \mathbb{{R}} $$" + "\n"
    true = rf"$$ \max({a}, {b}) + \min({a}, {b}) = {a} + {b} $$" + "\n"
    false = rf"$$ \max(-{k}, \min({k}, {x})) = \min({k}, \max(-{k}, {x})) $$"
    assert statuses(true + false, declare) == ["proved", "refuted"]


def test_max_written_equal_to_something_is_a_step_not_a_definition():
    assert statuses(r"$$ \max(a, b) = \max(b, a) $$") == ["proved"]


@pytest.mark.parametrize("text, message", [
    (r"$$ m = \max_i a_i $$", r"\max_{...}: an extremum over an index"),
    (r"$$ m = \min_{j} a_j $$", r"\min_{...}: an extremum over an index"),
    (r"$$ m = \max\limits_{j} a_j $$", r"\max_{...}: an extremum over an index"),
    (r"$$ m = \max\nolimits_{j} a_j $$", r"\max_{...}: an extremum over an index"),
])
def test_an_extremum_over_an_index_is_refused_naming_it(text, message):
    with pytest.raises(DerivationError) as info:
        parse_latex(DECLARE + text)
    assert message in str(info.value) and "softmax" in info.value.expected


@pytest.mark.parametrize("step, message", [
    (r"$$ \max(Q, Q) = Q $$", "maximum of matrices"),
    (r"$$ \max(a) = a $$", "of 1 argument"),
])
def test_an_extremum_that_is_not_read_says_why(step, message):
    report = check_statements(parse_latex(DECLARE + step), dialect="latex")
    (s,) = report.steps
    assert s.status == "ill-formed" and message in s.error, s.error
