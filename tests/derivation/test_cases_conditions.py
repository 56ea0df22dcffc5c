r"""Conditions of a cases row as papers write them: ``\le``/``\leq``/``\ge``/``\geq``/``<``/``>``,
``\text{if}``, chains ``i - W \le j \le i`` and absolute values ``|i - j| \le w``.

One comparison of the two indices is a causal mask and is read with its meaning (a true step
proved, a false one refuted); a chain or an absolute value is a window, read at parse and refused
where it is used, never read as a causal mask."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.conditions import Abs, Conjunction, show
from symattn.derivation.latex import parse_latex
from symattn.errors import ParseError


def cache(p="t", k="s", mask=None):
    """Row p of causally masked attention equals the softmax over the first p keys (the KV cache)."""
    mask = mask or rf"0 & {k} \le {p} \\ -\infty & {k} > {p}"
    return ("%: convention: row\n"
            rf"$$ Q, K, V \in \mathbb{{R}}^{{n \times d_k}}, \quad q_{p} = Q_{{{p},:}} $$"
            rf"$$ o_{p} = \mathrm{{softmax}} \left( \frac{{q_{p} K_{{1:{p}}}^\top}}{{\sqrt{{d_k}}}} \right) "
            rf"V_{{1:{p}}} = \left[ \mathrm{{softmax}} \left( \frac{{QK^\top}}{{\sqrt{{d_k}}}} + M \right) V "
            rf"\right]_{{{p},:}}, \quad M_{{{p}{k}}} = \begin{{cases}} {mask} \end{{cases}} $$")


def steps(text):
    return check_statements(parse_latex(text), dialect="latex").steps


def condition(row_condition):
    st = parse_latex(rf"$$ M_{{ij}} = \begin{{cases}} 0 & {row_condition} \\ -\infty & \text{{otherwise}} "
                     r"\end{cases} $$")[0]
    return st.links[0][2].rows[0][1]


@pytest.mark.parametrize("mask", [
    r"0 & \text{if } s \le t \\ -\infty & \text{if } s > t",
    r"0 & s \leq t \\ -\infty & \text{otherwise}",
    r"0 & t \geq s \\ -\infty & t < s",
    r"0 & s < t + 1 \\ -\infty & s \ge t + 1",
])
def test_a_causal_mask_written_with_any_comparison_is_read_as_the_causal_mask(mask):
    (s,) = steps(cache(mask=mask))
    assert s.status == "proved", s.error


@pytest.mark.parametrize("mask", [
    r"0 & \text{if } s < t \\ -\infty & \text{if } s \geq t",  # the diagonal hidden too
    r"0 & s \geq t \\ -\infty & \text{otherwise}",  # the future visible, not the past
])
def test_a_wrong_comparison_is_refuted_with_a_counterexample(mask):
    (s,) = steps(cache(mask=mask))
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("p, k", [("t", "s"), ("i", "j"), ("u", "v")])
def test_renaming_the_index_letters_changes_no_verdict(p, k):
    assert [s.status for s in steps(cache(p, k))] == ["proved"]
    wrong = cache(p, k, rf"0 & {k} < {p} \\ -\infty & \text{{otherwise}}")
    assert [s.status for s in steps(wrong)] == ["refuted"]


def test_a_chain_is_read_as_the_conjunction_of_its_comparisons():
    c = condition(r"i - W \le j \le i")
    assert isinstance(c, Conjunction)
    assert [(a.text(), rel, b.text()) for a, rel, b in c.atoms] == [("i-W", "<=", "j"), ("j", "<=", "i")]
    assert show(c) == "i-W <= j <= i"


def test_an_absolute_value_and_a_half_width_are_read():
    c = condition(r"|i - j| \le \frac{w}{2}")
    ((left, rel, right),) = c.atoms
    assert isinstance(left, Abs) and left.body.text() == "i-j" and rel == "<=" and right.text() == "(w) / (2)"


def test_comparisons_joined_by_and_hold_together():
    c = condition(r"j \le i \text{ and } i - 4 \le j")
    assert len(c.atoms) == 2 and show(c) == "j <= i and i-4 <= j"


def test_one_comparison_stays_the_triple_a_causal_mask_reads():
    left, rel, right = condition(r"\text{if } j \leq i")
    assert (left.text(), rel, right.text()) == ("j", "<=", "i")


@pytest.mark.parametrize("window", [r"t - 2 \le s \le t", r"|t - s| \le 2", r"s \le t \text{ and } t - 2 \le s"])
def test_a_window_mask_is_refused_where_it_is_used_never_read_as_causal(window):
    (s,) = steps(cache(mask=rf"0 & {window} \\ -\infty & \text{{otherwise}}"))
    assert s.status == "ill-formed" and "a window of positions" in s.error, s.error


@pytest.mark.parametrize("row, message", [
    (r"j = i", "in the condition of a cases row"),
    (r"j \le i \ge 2", "mixes the directions"),
    (r"|i - j \le 2", "closing the absolute value"),
])
def test_a_condition_that_is_not_read_says_why(row, message):
    with pytest.raises(ParseError, match=message):
        condition(row)
