"""Functions the file defines on one real variable (``\\sigma(u) = 1/(1 + e^{-u})``), called on scalars:
the call is the body with the parameter bound to the scalar argument, so the step is checked with the
function's meaning; a false use is refuted, a true one proved."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ X \in \mathbb{R}^{n \times d}, \quad \sigma(u) = \frac{1}{1 + e^{-u}}, \quad s, t \in \mathbb{R} $$"
        + "\n")



def test_the_sigmoid_of_a_shifted_scalar_is_read_with_its_meaning():
    (s,) = check(HEAD + r"$$ \sigma(s - \log(n)) = \frac{1}{1 + n e^{-s}} $$").steps
    assert s.status == "proved"


def test_a_false_value_of_the_defined_function_is_refuted():
    (s,) = check(HEAD + r"$$ \sigma(s - \log(n)) = \frac{1}{1 + e^{-s} / n} $$").steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("var", ["s", "t"])
def test_the_name_of_the_argument_changes_no_verdict(var):
    good, bad = (check(HEAD + rf"$$ \sigma({var}) + \sigma(-{var}) = {rhs} $$").steps[0].status
                 for rhs in ("1", "2"))
    assert (good, bad) == ("proved", "refuted")


def test_a_scalar_function_of_two_parameters_binds_each_argument():
    head = r"$$ f(a, b) = a - 2 b, \quad s, t \in \mathbb{R} $$" + "\n"
    good, bad = (check(head + rf"$$ f(t, s) = {rhs} $$").steps[0].status for rhs in ("t - 2 s", "s - 2 t"))
    assert (good, bad) == ("proved", "refuted")


def test_a_matrix_argument_still_reads_as_a_matrix():
    head = r"$$ X \in \mathbb{R}^{n \times d}, \quad g(u) = 2 u $$" + "\n"
    (s,) = check(head + r"$$ g(X) = X + X $$").steps
    assert s.status == "proved"


def test_a_scalar_body_called_on_a_matrix_is_ill_formed_not_misread():
    (s,) = check(HEAD + r"$$ \sigma(X) = \sigma(X) $$").steps
    assert s.status == "ill-formed" and "cannot add a matrix to a scalar" in s.error
