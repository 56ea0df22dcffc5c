r"""``\sigma``, which a file applies to matrices without defining it (Shazeer 2020: GLU(x, W, V, b, c) =
σ(xW + b) ⊗ (xV + c)), stays an uninterpreted map for proofs; a step refuted for some map is decided again
with σ the logistic sigmoid, entry by entry, as such papers mean it, and is refuted only where that
counterexample is certified (the scope names the sigmoid)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

ROW = "%: convention: row\n"


def shapes(x, y):
    return ROW + rf"$$ {x}, {y} \in \mathbb{{R}}^{{n \times d}} $$" + "\n"


@pytest.mark.parametrize("x, y", [("X", "Y"), ("A", "B")])
def test_a_step_true_for_every_map_is_proved(x, y):
    (s,) = check(shapes(x, y) + rf"$$ \sigma({x} + {y}) \odot {y} = {y} \odot \sigma({y} + {x}) $$").steps
    assert s.status == "proved"


@pytest.mark.parametrize("x, y", [("X", "Y"), ("A", "B")])
@pytest.mark.parametrize("claim", [r"\sigma(2 X) = 2 \sigma(X)", r"\sigma(X) \odot Y = \sigma(Y) \odot X"])
def test_a_false_step_is_refuted_with_the_logistic_sigmoid(x, y, claim):
    claim = claim.replace("X", x).replace("Y", y)
    (s,) = check(shapes(x, y) + f"$$ {claim} $$").steps
    assert s.status == "refuted" and "logistic sigmoid" in s.scope
    cex = s.verdict.counterexample
    assert "interval arithmetic" in cex.certificate and "logistic" in cex.functions["sigma"]


def test_a_step_true_of_the_sigmoid_only_stays_unknown():
    text = shapes("X", "Y") + r"$$ \sigma(X) + \sigma(-X) = \mathbf{1}_n \mathbf{1}_d^\top $$"
    (s,) = check(text).steps
    assert s.status == "unknown" and "for some map sigma" in s.error
    (s,) = check(text.replace(r"= \mathbf", r"= 2 \mathbf")).steps
    assert s.status == "refuted"


def test_a_sigma_the_file_defines_is_its_own():
    text = (ROW + r"$$ X \in \mathbb{R}^{n \times d}, \quad \sigma(X) = 2 X $$" + "\n"
            + r"$$ \sigma(2 X) = 2 \sigma(X) $$")
    (s,) = check(text).steps
    assert s.status == "proved"
