"""A scalar added to a vector (``\\mathbf{a} - \\mu``, ``\\delta \\mathbf{a} + \\gamma``) is added to every entry, as
normalizations write it; beside a matrix of several rows and columns a scalar is still refused."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ \mathbf{a}, \mathbf{g} \in \mathbb{R}^{H}, \quad \delta, \gamma \in \mathbb{R}, \quad "
        r"X \in \mathbb{R}^{H \times H} $$" + "\n"
        r"$$ \mu = \frac{1}{H} \sum_{i=1}^{H} a_i $$" + "\n")



def status(step):
    (s,) = check(HEAD + f"$$ {step} $$").steps
    return s


@pytest.mark.parametrize("step", [
    r"\mathbf{a} + \gamma - \gamma = \mathbf{a}",
    r"\delta \mathbf{a} + \gamma - (\delta \mu + \gamma) = \delta (\mathbf{a} - \mu)",
    r"\frac{1}{H} \sum_{i=1}^{H} \left(\delta a_i + \gamma\right) = \delta \mu + \gamma",
    r"\mathbf{a}^\top + \gamma = (\mathbf{a} + \gamma)^\top",
])
def test_a_scalar_beside_a_vector_is_added_to_every_entry(step):
    assert status(step).status == "proved"


@pytest.mark.parametrize("step", [
    r"\mathbf{a} + \gamma = \mathbf{a}",
    r"\frac{1}{H} \sum_{i=1}^{H} \left(\delta a_i + \gamma\right) = \delta \mu",
    r"\mathbf{a} - \mu = \mathbf{a} - H \mu",
])
def test_a_false_broadcast_step_is_refuted(step):
    s = status(step)
    assert s.status == "refuted" and s.verdict.counterexample is not None


def test_the_centered_vector_sums_to_zero():
    assert status(r"\mathbf{1}_H^\top (\mathbf{a} - \mu) = 0").status == "proved"


def test_a_scalar_beside_a_square_matrix_is_still_refused():
    s = status(r"X + \gamma = X + \gamma")
    assert s.status == "ill-formed" and "cannot add" in s.error


@pytest.mark.parametrize("k", ["i", "j"])
def test_the_letter_of_the_mean_index_changes_no_verdict(k):
    head = HEAD.replace("i=1", f"{k}=1").replace("a_i", f"a_{k}")
    (s,) = check(head + r"$$ \frac{1}{H} \sum_{i=1}^{H} \left(a_i + \gamma\right) = \mu + \gamma $$").steps
    assert s.status == "proved"
