r"""Letters in an exponent: ``2^{-8h/n}`` and ``\left(2^{-8/n}\right)^{h}`` (ALiBi's head slopes) are real
powers of a positive number; a true identity of such powers is proved, a false one refuted with a
counterexample; renaming the letters changes no verdict; a letter exponent on a matrix, or on a base
not known to be positive, is refused by name; ``(\cdot)^{T}`` stays a transpose."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def decl(h="h", n="n"):
    return rf"$$ x \in \mathbb{{R}}^{{{n}}}, \quad {h} \in \mathbb{{R}} $$" + "\n"


@pytest.mark.parametrize("h,n", [("h", "n"), ("k", "m")])
def test_a_power_of_a_power_is_proved_and_a_wrong_exponent_refuted(h, n):
    (s,) = check(decl(h, n) + rf"$$ 2^{{-8{h}/{n}}} = \left(2^{{-8/{n}}}\right)^{{{h}}} $$").steps
    assert s.status == "proved" and s.general
    (s,) = check(decl(h, n) + rf"$$ 2^{{-8{h}/{n}}} = \left(2^{{-8/{n}}}\right)^{{2{h}}} $$").steps
    assert s.status == "refuted"
    assert s.as_dict()["counterexample"]["certificate"]


def test_a_bare_letter_exponent_on_a_group():
    (s,) = check(decl() + r"$$ (2^{h})^2 = (4)^h $$").steps
    assert s.status == "proved"
    (s,) = check(decl() + r"$$ (2^{h})^2 = (2)^h $$").steps
    assert s.status == "refuted"


def test_a_letter_exponent_on_a_matrix_is_refused_by_name():
    (s,) = check(decl() + r"$$ (x^\top x)^{h} = (x^\top x)^{h} $$").steps
    assert s.status == "ill-formed" and "an exponent with letters is read only as a power of numbers" in s.error


def test_a_base_not_known_positive_is_refused():
    (s,) = check(decl() + r"$$ (h)^{n} = (h)^{n} $$").steps
    assert s.status == "ill-formed" and "not known to be positive" in s.error


def test_a_transpose_on_a_group_stays_a_transpose():
    text = r"$$ x, y \in \mathbb{R}^{n} $$" + "\n"
    (s,) = check(text + r"$$ (x + y)^{T} = x^\top + y^\top $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ (x + y)^T x = x^\top x + y^\top x $$").steps
    assert s.status == "proved"
