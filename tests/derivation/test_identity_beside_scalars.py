"""The identity written without its size (``0.5 W + 0.5 I``, ``\\exp(A) - I``): the identity of the size of
the square terms beside it in the sum."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = r"$$ W, V \in \mathbb{R}^{n \times n}, \quad F \in \mathbb{R}^{n \times m}, \quad c \in \mathbb{R} $$" + "\n"



def step(text):
    (s,) = check(HEAD + f"$$ {text} $$").steps
    return s


@pytest.mark.parametrize("text", [
    r"(W + I)(V + I) = W V + W + V + I",
    r"\frac{1}{2} W + \frac{1}{2} \mathbf{I} - \frac{1}{2} \mathbf{I} = \frac{1}{2} W",
    r"(W + c I) V = W V + c V",
    r"(W - I) F = W F - F",
])
def test_the_identity_beside_a_square_term_is_read_as_the_identity(text):
    assert step(text).status == "proved"


@pytest.mark.parametrize("text", [r"(W + I)(V + I) = W V + W + V", r"(W + I) F = W F", r"W + 2 I = W + I"])
def test_a_false_step_with_the_identity_is_refuted(text):
    s = step(text)
    assert s.status == "refuted" and s.verdict.counterexample is not None


def test_the_identity_beside_a_non_square_term_is_refused():
    s = step(r"F + I = F + I")
    assert s.status == "ill-formed" and "no size gives the term" in s.error


def test_a_file_that_declares_i_keeps_its_own():
    head = r"$$ W, I \in \mathbb{R}^{n \times n} $$" + "\n"
    (s,) = check(head + r"$$ (W + I) W = W W + W $$").steps
    assert s.status == "refuted"


def test_a_lone_identity_has_no_size_and_is_refused():
    s = step(r"W = I")
    assert s.status == "ill-formed" and "unknown symbol I" in s.error
