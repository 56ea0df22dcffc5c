r"""Lists of numbers with an ellipsis (``[0, 1, \ldots, n-1]``, ALiBi's ``[-(i-1), \ldots, -2, -1, 0]``): the
vector whose entry k is first + (k - 1) step, of the length the first and last entries give; a true claim
with one is proved for every length, a false one refuted; renaming the letters changes no verdict; a list
whose entries do not follow one step is refused by name. Undeclared letters in an exponent (ALiBi's head h
of n, ``2^{-8h/n}``) are positive whole numbers."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def decl(n="n", m="m"):
    return ("%: convention: row\n" + rf"$$ q \in \mathbb{{R}}^{{1 \times d}}, "
            rf"\quad K \in \mathbb{{R}}^{{{n} \times d}}, \quad {m} \in \mathbb{{R}} $$" + "\n")


@pytest.mark.parametrize("n,m", [("n", "m"), ("L", "s")])
def test_a_linear_bias_shifted_by_a_constant_leaves_the_softmax(n, m):
    left = rf"\mathrm{{softmax}}\left(q K^\top + {m} \cdot [-({n}-1), \ldots, -2, -1, 0]\right)"
    right = rf"\mathrm{{softmax}}\left(q K^\top + {m} \cdot [1, 2, \ldots, {n}]\right)"
    (s,) = check(decl(n, m) + rf"$$ {left} = {right} $$").steps
    assert s.status == "proved" and s.general
    flipped = rf"\mathrm{{softmax}}\left(q K^\top + {m} \cdot [{n}-1, \ldots, 1, 0]\right)"
    (s,) = check(decl(n, m) + rf"$$ {left} = {flipped} $$").steps
    assert s.status == "refuted" and s.as_dict()["counterexample"]["certificate"]


def test_the_entries_are_first_plus_k_minus_one_steps():
    text = decl() + r"$$ x = [0, 2, \ldots, 2n-2] $$" + "\n"
    (s,) = check(text + r"$$ q K^\top + x = q K^\top + [0, 2, \ldots, 2n - 2] $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ x = 2 [0, 1, \ldots, n - 1] $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ x = [1, 2, \ldots, n] $$").steps
    assert s.status == "refuted"


@pytest.mark.parametrize("bad,why", [(r"[0, 1, 3, \ldots, n]", "do not follow one nonzero step"),
                                     (r"[0, 0, \ldots, n]", "do not follow one nonzero step"),
                                     (r"[0, 2, \ldots, n]", "positive whole number")])
def test_a_list_without_one_step_is_refused_by_name(bad, why):
    (s,) = check(decl() + rf"$$ q K^\top + {bad} = q K^\top $$").steps
    assert s.status == "ill-formed" and why in s.error


def test_undeclared_letters_in_an_exponent_are_positive_whole_numbers():
    report = check(r"$$ q \in \mathbb{R}^{d} $$" + "\n" + r"$$ 2^{-8h/n} = \left(2^{-8/n}\right)^{h} $$")
    (s,) = report.steps
    assert s.status == "proved"
    assert any("h, n in the exponent" in n and "positive whole numbers" in n for n in report.notes)
    (s,) = check(r"$$ q \in \mathbb{R}^{d} $$" + "\n" + r"$$ (2^{1/n})^{n} = 1 $$").steps
    assert s.status == "refuted"


def test_a_length_that_may_be_zero_is_refused():
    (s,) = check(decl() + r"$$ q K^\top + [0, 1, \ldots, n-2] = q K^\top $$").steps
    assert s.status == "ill-formed" and "positive whole number" in s.error
