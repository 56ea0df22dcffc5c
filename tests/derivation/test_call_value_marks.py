r"""A transpose (or a power) after a call of the document's own one-parameter function marks the call's value,
as Kobayashi et al. (2020) write the score ``q(x_i) k(x_j)^\top`` with ``k(x) = x W^K + b^K``: the
transpose of the key k(x_j), never the product of an unknown k and (x_j)^T."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def doc(k="k", x="x", q="q"):
    return (r"%: convention: row" + "\n"
            rf"$$ {x}_1 \in \mathbb{{R}}^{{d}}, \quad W^K \in \mathbb{{R}}^{{d \times e}}, \quad "
            rf"b^K \in \mathbb{{R}}^{{e}}, \quad {q} \in \mathbb{{R}}^{{e}} $$" + "\n"
            rf"$$ {k}(u) = u W^K + b^K $$" + "\n")


@pytest.mark.parametrize("k, x, q", [("k", "x", "q"), ("g", "z", "p")])
def test_the_transpose_of_the_value_is_proved(k, x, q):
    r = check(doc(k, x, q) + rf"$$ {q} {k}({x}_1)^\top = {q} (W^K)^\top {x}_1^\top + {q} (b^K)^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert r.steps[0].verdict.scope.startswith("all dimensions")


@pytest.mark.parametrize("k, x, q", [("k", "x", "q"), ("g", "z", "p")])
def test_a_dropped_bias_is_refuted_with_a_certificate(k, x, q):
    (step,) = check(doc(k, x, q) + rf"$$ {q} {k}({x}_1)^\top = {q} (W^K)^\top {x}_1^\top $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_the_score_of_two_calls():
    d = doc() + r"$$ f(u) = u W^K $$" + "\n"
    assert [s.status for s in check(d + r"$$ f(x_1) k(x_1)^\top = x_1 W^K (x_1 W^K + b^K)^\top $$").steps] \
        == ["proved"]
    (step,) = check(d + r"$$ f(x_1) k(x_1)^\top = x_1 W^K (x_1 W^K)^\top $$").steps
    assert step.status == "refuted"


def test_a_declared_matrix_before_parentheses_is_still_a_product():
    """W (x_1)^T with W a declared matrix: W times the transpose, as before."""
    d = (r"%: convention: row" + "\n"
         r"$$ x_1 \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{e \times d} $$" + "\n")
    assert [s.status for s in check(d + r"$$ W (x_1)^\top = W x_1^\top $$").steps] == ["proved"]


def test_a_name_that_is_neither_stays_unknown():
    d = (r"%: convention: row" + "\n"
         r"$$ x_1 \in \mathbb{R}^{d}, \quad q \in \mathbb{R}^{d} $$" + "\n")
    (step,) = check(d + r"$$ q h(x_1)^\top = q x_1^\top $$").steps
    assert step.status == "ill-formed" and "unknown symbol h" in step.error
