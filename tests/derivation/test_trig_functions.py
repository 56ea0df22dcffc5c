r"""``\cos`` and ``\sin`` of numbers (cosFormer's re-weighting, random features): read as SymPy's cos and
sin, so that the angle-addition identities are proved and their sign slips refuted; ``\pi`` that the file
does not declare is the number; ``\times`` between numbers is their product; the cosine of a matrix is
refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError


def decl(a="a", b="b"):
    return (rf"$$ {a}, {b} \in \mathbb{{R}}, \quad A \in \mathbb{{R}}^{{n \times n}}, \quad w, x \in "
            r"\mathbb{R}^{n} $$" + "\n")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_the_difference_formula_is_proved_and_its_sign_slip_refuted():
    assert statuses(decl() + r"$$ \cos(a - b) A = (\cos a \cos b + \sin a \sin b) A $$") == ["proved"]
    (s,) = check(decl() + r"$$ \cos(a - b) A = (\cos a \cos b - \sin a \sin b) A $$").steps
    assert s.status == "refuted" and s.verdict.counterexample.certificate


def test_pythagoras_and_the_sine_of_a_sum():
    assert statuses(decl() + r"$$ ((\cos a)^2 + (\sin a)^2) A = A $$" + "\n"
                    + r"$$ \sin(a + b) A = (\sin a \cos b + \cos a \sin b) A $$") == ["proved", "proved"]


def test_cosformer_reweighting_with_pi_and_times():
    text = decl() + (r"$$ \cos\left(\frac{\pi}{2} \times (a - b)\right) A = \left(\cos\left(\frac{\pi a}{2}\right)"
                     r"\cos\left(\frac{\pi b}{2}\right) + \sin\left(\frac{\pi a}{2}\right)\sin\left(\frac{\pi b}{2}"
                     r"\right)\right) A $$")
    assert statuses(text) == ["proved"]
    assert statuses(text.replace(r"\right) + \sin", r"\right) - \sin")) == ["refuted"]


def test_the_cosine_of_an_inner_product_is_a_number():
    assert statuses(decl() + r"$$ \cos(w^\top x) A = \cos(x^\top w) A $$") == ["proved"]
    # the counterexample search does not evaluate the cosine of a sum over entries: never proved, not refuted
    assert statuses(decl() + r"$$ \cos(w^\top x) A = \sin(x^\top w) A $$") == ["unknown"]


def test_the_cosine_of_a_matrix_is_refused():
    (s,) = check(decl() + r"$$ \cos(A) = \cos(A) $$").steps
    assert s.status == "ill-formed" and "are read only of numbers" in s.error


def test_a_sine_as_a_superscript_label_is_a_name():
    text = (r"$$ A^{\sin}, A^{\cos} \in \mathbb{R}^{n \times n} $$" + "\n"
            + r"$$ A^{\sin} + A^{\cos} = A^{\cos} + A^{\sin} $$")
    assert statuses(text) == ["proved"]


@settings(max_examples=4, deadline=None)
@given(names=st.sampled_from([("a", "b"), ("u", "v"), (r"\theta", r"\phi"), ("x_1", "x_2")]))
def test_renaming_the_angles_changes_no_verdict(names):
    a, b = names
    good = rf"$$ \cos({a} - {b}) A = (\cos {a} \cos {b} + \sin {a} \sin {b}) A $$"
    bad = rf"$$ \cos({a} - {b}) A = (\cos {a} \cos {b} - \sin {a} \sin {b}) A $$"
    d = rf"$$ {a}, {b} \in \mathbb{{R}}, \quad A \in \mathbb{{R}}^{{n \times n}} $$" + "\n"
    assert statuses(d + good) == ["proved"] and statuses(d + bad) == ["refuted"]


def test_without_parentheses_the_argument_is_the_product_that_follows():
    d = r"$$ m, \theta, a, b \in \mathbb{R}, \quad A \in \mathbb{R}^{n \times n} $$" + "\n"
    assert statuses(d + r"$$ A \cos m\theta = \cos(m \theta) A $$") == ["proved"]
    assert statuses(d + r"$$ A \cos m\theta = \cos(m) \theta A $$") == ["refuted"]
    (s,) = check(d + r"$$ \cos m\theta A = \cos(m \theta) A $$").steps  # cos of the whole product m theta A
    assert s.status == "ill-formed" and "write \\cos(m\\theta) A" in s.error


def test_a_power_written_on_the_function_is_a_power_of_its_value():
    d = r"$$ a \in \mathbb{R}, \quad A \in \mathbb{R}^{n \times n} $$" + "\n"
    assert statuses(d + r"$$ (\cos^2 a + \sin^{2} a) A = A $$") == ["proved"]
    assert statuses(d + r"$$ (\cos^2 a - \sin^{2} a) A = A $$") == ["refuted"]


def test_the_inverse_function_notation_is_refused():
    with pytest.raises(ParseError, match=r"\\cos\^\{-1\}: only a positive whole power"):
        parse_latex(r"$$ b = \cos^{-1} a $$")
