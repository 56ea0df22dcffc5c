"""Recurrences over positions (``x_k = \\bar{A} x_{k-1} + \\bar{B} u_k`` with ``x_{-1} = 0``), unrolled at a given
position down to the initial condition; a symbolic position is refused, never read another way."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

SSM = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad C \in \mathbb{R}^{1 \times N}, "
       r"\quad u_k \in \mathbb{R}, \quad x_{-1} = 0 $$" + "\n"
       r"$$ x_k = A x_{k-1} + B u_k, \qquad y_k = C x_k $$" + "\n")



def test_the_recurrence_unrolled_at_a_given_position_is_proved():
    r = check(SSM + r"$$ y_2 = C A^2 B u_0 + C A B u_1 + C B u_2 $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("unrolled at a given position" in n for n in r.notes)


def test_a_reversed_kernel_is_refuted():
    (step,) = check(SSM + r"$$ y_2 = C B u_0 + C A B u_1 + C A^2 B u_2 $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_the_initial_condition_is_used():
    assert [s.status for s in check(SSM + r"$$ x_0 = B u_0 $$").steps] == ["proved"]
    assert [s.status for s in check(SSM + r"$$ x_0 = A B u_0 + B u_0 $$").steps] == ["refuted"]


def test_a_symbolic_position_is_refused_with_a_message():
    (step,) = check(SSM + r"$$ x_k = A^2 x_{k-2} + A B u_{k-1} + B u_k $$").steps
    assert step.status == "ill-formed" and "symbolic position k" in step.error and "induction" in step.error


def test_a_position_before_the_initial_condition_is_refused():
    (step,) = check(SSM + r"$$ x_{-2} = 0 $$").steps
    assert step.status == "ill-formed" and "before the initial condition" in step.error


def test_a_recurrence_without_an_initial_condition_is_refused():
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad u_k \in \mathbb{R} $$"
            + "\n" + r"$$ x_k = A x_{k-1} + B u_k $$" + "\n" + r"$$ x_1 = A B u_0 + B u_1 $$")
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "has no initial condition" in step.error


def test_the_position_letter_is_a_name_like_any_other():
    text = SSM.replace("u_k", "u_t").replace("x_k", "x_t").replace("x_{k-1}", "x_{t-1}").replace("y_k", "y_t")
    text = text.replace("C x_k", "C x_t")
    assert [s.status for s in check(text + r"$$ y_2 = C A^2 B u_0 + C A B u_1 + C B u_2 $$").steps] == ["proved"]


def test_a_recurrence_at_the_position_it_defines_is_refused():
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad u_k \in \mathbb{R}, "
            r"\quad x_0 = 0 $$" + "\n" + r"$$ x_k = A x_{k+0} + B u_k $$" + "\n" + r"$$ x_1 = B u_1 $$")
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "at the position it defines" in step.error
