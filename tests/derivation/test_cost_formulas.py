"""Cost formulas ``\\Omega(\\text{MSA}) = 4hwC^2 + 2(hw)^2C``: the cost is a name labelled by the method, and
the undeclared letters of the formulas that mention it are sizes; steps between costs are claims about
numbers."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ \Omega(\text{MSA}) = 4hwC^2 + 2(hw)^2C, \qquad \Omega(\text{W-MSA}) = 4hwC^2 + 2M^2hwC $$" + "\n")



def test_a_true_cost_identity_is_proved_for_all_sizes():
    r = check(HEAD + r"$$ \Omega(\text{MSA}) - \Omega(\text{W-MSA}) = 2hwC\left(hw - M^2\right) $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("read as a size" in n for n in r.notes)


def test_a_wrong_power_in_a_cost_is_refuted():
    (s,) = check(HEAD + r"$$ \Omega(\text{W-MSA}) = \frac{hw}{M^2}\left(4M^2C^2 + 2M^2C\right) $$").steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("a, b", [("w", "q"), ("C", "D")])
def test_renaming_a_size_changes_no_verdict(a, b):
    text = HEAD + r"$$ \Omega(\text{W-MSA}) = \frac{hw}{M^2}\left(4M^2C^2 + 2(M^2)^2C\right) $$"
    assert [s.status for s in check(text.replace(a, b)).steps] == ["proved"]


def test_two_methods_are_two_costs():
    (s,) = check(HEAD + r"$$ \Omega(\text{MSA}) = \Omega(\text{W-MSA}) $$").steps
    assert s.status == "refuted"


def test_letters_in_a_file_without_costs_stay_unknown():
    (s,) = check(r"$$ X \in \mathbb{R}^{n \times n} $$" + "\n" + r"$$ h w = w h $$").steps
    assert s.status == "ill-formed" and "unknown symbol" in s.error
