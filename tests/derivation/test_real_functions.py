"""Real functions papers do not define (tanh, ReLU), and bodies written for a number applied to a vector.

ReLU of a number is max(0, x); tanh or ReLU of a vector stays an uninterpreted map for proofs, and a step
refuted for some map is decided again with the real function entry by entry. A body such as
Swish_beta(x) = x sigma(beta x), applied to a row, is read entry by entry.
"""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def steps(text):
    return check(text).steps


@pytest.mark.parametrize("x", ["x", "u"])
def test_the_square_of_relu_is_proved_and_a_false_one_refuted(x):
    head = rf"$$ {x} \in \mathbb{{R}} $$" + "\n"
    (s,) = steps(head + rf"$$ \mathrm{{ReLU}}({x})^2 = {x} \cdot \mathrm{{ReLU}}({x}) $$")
    assert s.status == "proved"
    (s,) = steps(head + rf"$$ \mathrm{{ReLU}}({x})^2 = {x}^2 $$")
    assert s.status == "refuted" and s.verdict.counterexample is not None


def test_relu_of_a_number_is_not_the_number():
    (s,) = steps(r"$$ x \in \mathbb{R} $$" + "\n" + r"$$ \mathrm{ReLU}(x) + \mathrm{ReLU}(-x) = x $$")
    assert s.status == "refuted"


TANH = (r"$$ s \in \mathbb{R}^{n}, \quad h \in \mathbb{R}^{m}, \quad v \in \mathbb{R}^{p}, \quad "
        r"W \in \mathbb{R}^{p \times n}, \quad U \in \mathbb{R}^{p \times m} $$" + "\n")


def test_a_true_step_with_tanh_of_a_vector_is_proved():
    (s,) = steps(TANH + r"$$ v^\top \tanh(W s + U h) = v^\top \tanh(U h + W s) $$")
    assert s.status == "proved"


@pytest.mark.parametrize("lhs, rhs", [(r"v^\top \tanh(W s + U h)", r"v^\top \tanh(W s)"),
                                      (r"v^\top \tanh(W s + U h)",
                                       r"v^\top \tanh(W s) + v^\top \tanh(U h)")])
def test_a_false_step_with_tanh_is_refuted_with_a_certificate(lhs, rhs):
    (s,) = steps(TANH + rf"$$ {lhs} = {rhs} $$")
    cex = s.verdict.counterexample
    assert s.status == "refuted" and "interval arithmetic" in cex.certificate
    assert "the real function" in " ".join(cex.functions.values())


def test_a_step_true_of_relu_but_not_of_every_map_stays_unknown():
    text = (r"%: convention: row" + "\n" + r"$$ X \in \mathbb{R}^{n \times d} $$" + "\n"
            + r"$$ \mathrm{ReLU}(2 X) = 2\, \mathrm{ReLU}(X) $$")
    (s,) = steps(text)
    assert s.status == "unknown"


def test_an_undefined_map_other_than_tanh_stays_unknown():
    (s,) = steps(TANH + r"$$ v^\top \mathrm{LN}(W s + U h) = v^\top \mathrm{LN}(W s) $$")
    assert s.status == "unknown"


ROWS = (r"%: convention: row" + "\n" + r"$$ x \in \mathbb{R}^{1 \times d}, \quad W, V \in \mathbb{R}^{d \times f}, "
        r"\quad W_2 \in \mathbb{R}^{f \times d}, \quad \mathrm{Sq}(z) = z z $$" + "\n")


def test_a_body_written_for_a_number_is_read_entry_by_entry_on_a_row():
    (s,) = steps(ROWS + r"$$ \mathrm{Sq}(xW) W_2 = (xW \odot xW) W_2 $$")
    assert s.status == "proved"
    (s,) = steps(ROWS + r"$$ \mathrm{Sq}(xW) W_2 = (xW \odot xV) W_2 $$")
    assert s.status == "refuted"


def test_a_declared_matrix_with_a_subscript_is_a_parameter_bound_to_itself():
    text = ROWS + r"$$ \mathrm{F}(x, W, W_2) = x W W_2 $$" + "\n" + r"$$ \mathrm{F}(x, W, W_2) = x (W W_2) $$"
    (s,) = steps(text)
    assert s.status == "proved"
    text = ROWS + r"$$ \mathrm{F}(x, W, W_2) = x W W_2 $$" + "\n" + r"$$ \mathrm{F}(x, V, W_2) = x W W_2 $$"
    (s,) = steps(text)
    assert s.status == "refuted"


def test_a_power_of_relu_of_a_matrix_is_refused():
    text = (r"%: convention: row" + "\n" + r"$$ X \in \mathbb{R}^{n \times n} $$" + "\n"
            + r"$$ \mathrm{ReLU}(X)^2 = \mathrm{ReLU}(X) \mathrm{ReLU}(X) $$")
    (s,) = steps(text)
    assert s.status == "ill-formed" and "each entry or a matrix product" in s.error


def test_a_body_with_a_transpose_is_not_read_entry_by_entry():
    text = (r"%: convention: row" + "\n" + r"$$ x \in \mathbb{R}^{1 \times d}, \quad W \in \mathbb{R}^{d \times f}, "
            r"\quad \mathrm{G}(z) = z^\top z z $$" + "\n" + r"$$ \mathrm{G}(xW) = \mathrm{G}(xW) $$")
    (s,) = steps(text)
    assert s.status == "ill-formed"
