r"""A stated sign of a real scalar, ``k \ge 0`` (also ``\geq``, ``\le``, ``\leq``, ``>``, ``<`` against 0):
the steps are checked for scalars of that sign only, and say so in their scope; a step true only under
the sign is proved with it and refuted without it."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError

CLIP = r"$$ \max(-k, \min(k, x)) = \min(k, \max(-k, x)) $$"


def report(text):
    return check_statements(parse_latex(text), dialect="latex")


def declare(sign=""):
    return rf"$$ Q \in \mathbb{{R}}^{{n \times d}}, \quad x, k \in \mathbb{{R}}{sign} $$" + "\n"


@pytest.mark.parametrize("sign", [r", \quad k \ge 0", r", \quad k \geq 0", r", \quad k > 0"])
def test_clipping_is_symmetric_for_a_nonnegative_bound(sign):
    r = report(declare(sign) + CLIP)
    (s,) = r.steps
    assert s.status == "proved" and "under k >" in s.scope, s.scope


@pytest.mark.parametrize("sign", ["", r", \quad k \le 0", r", \quad k < 0"])
def test_clipping_is_refuted_without_the_sign_or_with_the_other_one(sign):
    (s,) = report(declare(sign) + CLIP).steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("sign, step, status", [
    (r"k \le 0", r"\max(k, 0) = 0", "proved"),
    (r"k \leq 0", r"\min(k, 0) = k", "proved"),
    (r"k < 0", r"\max(k, 0) = k", "refuted"),
    (r"k \geq 0", r"\max(k, 0) = k", "proved"),
])
def test_each_sign_is_read_with_its_meaning(sign, step, status):
    text = rf"$$ Q \in \mathbb{{R}}^{{n \times d}}, \quad k \in \mathbb{{R}}, \quad {sign} $$" + "\n" + rf"$$ {step} $$"
    assert [s.status for s in report(text).steps] == [status]


def test_a_sign_declares_a_scalar_on_its_own():
    text = r"$$ X \in \mathbb{R}^{n \times d}, \quad c \ge 0 $$" + "\n" + r"$$ \max(c, 0) X = c X $$"
    r = report(text)
    assert [s.status for s in r.steps] == ["proved"]
    assert any("c >= 0 (a nonnegative real scalar)" in n for n in r.notes), r.notes


@pytest.mark.parametrize("text", [
    r"$$ k \ge 1 $$",  # a bound other than 0 is not a sign
    r"$$ Q \in \mathbb{R}^{n \times d}, \quad \sum_{j \ge 0} Q = Q $$",
])
def test_other_inequalities_stay_refused_naming_themselves(text):
    with pytest.raises(DerivationError, match=r"inequalities are read only as the conditions of a cases row"):
        report(text)


@pytest.mark.parametrize("text, message", [
    (r"$$ Q \in \mathbb{R}^{n \times d} $$ $$ Q^\top Q \le 0 $$", r"the inequality Q\^T Q <= \.\.\."),
    (r"$$ a \in \mathbb{R} $$ $$ a + 1 \ge 0 $$", r"the inequality a \+ 1 >= \.\.\."),
    (r"$$ Q \in \mathbb{R}^{n \times d}, \quad Q \ge 0 $$", r"a sign is read for a real scalar"),
])
def test_a_sign_of_anything_but_real_scalars_is_refused_naming_it(text, message):
    with pytest.raises(DerivationError, match=message):
        report(text)


def test_several_scalars_take_one_sign():
    text = r"$$ X \in \mathbb{R}^{n \times d}, \quad a, b \ge 0 $$" + "\n" + r"$$ \max(a + b, 0) = a + b $$"
    assert [s.status for s in report(text).steps] == ["proved"]
