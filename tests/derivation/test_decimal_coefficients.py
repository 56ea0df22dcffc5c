"""Decimal coefficients (``0.5 W + 0.5 I``) are their exact rational values, never digit products."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.derivation.latex_lexer import tokenize_latex

HEAD = r"$$ W, V \in \mathbb{R}^{n \times n} $$" + "\n"



def statuses(step):
    return [s.status for s in check(HEAD + f"$$ {step} $$").steps]


@pytest.mark.parametrize("text, values", [
    ("0.5", ["frac", "{", "1", "}", "{", "2", "}"]),
    ("0.25", ["frac", "{", "1", "}", "{", "4", "}"]),
    ("1.50", ["frac", "{", "3", "}", "{", "2", "}"]),
    ("2.0", ["2"]),
])
def test_a_decimal_is_the_fraction_it_is(text, values):
    toks = [t.value for t in tokenize_latex(f"$$ {text} $$")][1:-2]
    assert toks == values


def test_a_full_stop_after_a_number_is_punctuation():
    toks = [t.value for t in tokenize_latex("$$ x = 2. $$")][1:-2]
    assert toks == ["x", "=", "2"]


@pytest.mark.parametrize("step", [r"0.5 W + 0.5 W = W", r"0.25\, W + 0.75\, W = W", r"1.5 W = W + 0.5 W",
                                  r"(0.5 W)(0.5 V) = 0.25\, W V", r"2.0 W = W + W"])
def test_true_steps_with_decimals_are_proved(step):
    assert statuses(step) == ["proved"]


@pytest.mark.parametrize("step", [r"0.5 W + 0.5 W = 0.5 W", r"0.5 W + 0.5 V = W", r"0.25\, W = 0.5 W"])
def test_false_steps_with_decimals_are_refuted(step):
    assert statuses(step) == ["refuted"]
