r"""Primes on names in the scalar reader (a file with ``\max``): ``a'`` and ``x'_i`` are names of their own,
as in the matrix reader (``K'``); a true step with them is proved, a false one refuted, and the names
a / a' (x_i / x'_i) are never confused; renaming the letters changes no verdict."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.derivation.scalars import tokenize


def test_a_prime_joins_the_name_in_the_scalar_lexer():
    toks = [t.value for t in tokenize(r"$$ s'_i = e^{s_i} $$") if t.kind == "id"]
    assert toks == ["s'", "i", "e", "s", "i"]


@pytest.mark.parametrize("a", ["a", "b"])
def test_a_primed_real_is_a_name_of_its_own(a):
    text = rf"$$ {a}, {a}' \in \mathbb{{R}} $$" + "\n"
    (s,) = check(text + rf"$$ \max({a}, {a}') = \max({a}', {a}) $$").steps
    assert s.status == "proved"
    (s,) = check(text + rf"$$ \max({a}, {a}') = {a} $$").steps
    assert s.status == "refuted"


@pytest.mark.parametrize("x", ["x", "y"])
def test_a_primed_sequence_beside_its_unprimed_one(x):
    text = rf"$$ {x}_1, \ldots, {x}_V \in \mathbb{{R}}, \quad {x}'_1, \ldots, {x}'_V \in \mathbb{{R}} $$" + "\n"
    (s,) = check(text + rf"$$ \max({x}_1, {x}'_1) + {x}'_2 = {x}'_2 + \max({x}'_1, {x}_1) $$").steps
    assert s.status == "proved"
    (s,) = check(text + rf"$$ \max({x}_1, {x}'_1) = {x}'_1 $$").steps
    assert s.status == "refuted"
