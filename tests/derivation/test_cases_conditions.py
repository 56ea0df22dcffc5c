r"""Conditions of a cases row as papers write them: ``\le``/``\leq``/``\ge``/``\geq``/``<``/``>``,
``\text{if}``, chains ``i - W \le j \le i`` and absolute values ``|i - j| \le w``.

One comparison of the two indices is a causal mask and is read with its meaning (a true step
proved, a false one refuted); a chain or an absolute value is a window, the sum of one causal mask per
comparison, read with its meaning too; a window of a width that is not a number is refused where it is
used, never read as a causal mask."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from symattn.derivation import ast, check_statements
from symattn.derivation.conditions import Abs, Conjunction, show
from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
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
    r"0 & \text{for } s \le t \\ -\infty & \text{for } s > t",
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


WINDOWS = (r"%: convention: row" "\n"
           r"$$ Q, K, V \in \mathbb{R}^{n \times d} $$" "\n"
           r"$$ M_{ij} = \begin{cases} 0 & |i - j| \le 1 \\ -\infty & \text{otherwise} \end{cases}, \quad "
           r"N_{ij} = \begin{cases} 0 & OTHER \\ -\infty & \text{otherwise} \end{cases} $$" "\n"
           r"$$ \mathrm{softmax}\left(Q K^T + M\right) V = \mathrm{softmax}\left(Q K^T + N\right) V $$")


@pytest.mark.parametrize("other", [r"j - 1 \le i \le j + 1", r"i \le j + 1 \text{ and } j \le i + 1",
                                   r"\text{if } |j - i| < 2", r"i + 1 \ge j \ge i - 1"])
def test_a_window_written_otherwise_is_the_same_window(other):
    assert [s.status for s in steps(WINDOWS.replace("OTHER", other))] == ["proved"]


@pytest.mark.parametrize("other", [r"i - 1 \le j \le i", r"|i - j| \le 2", r"|i - j| < 1", r"j \le i"])
def test_another_window_is_refuted_with_a_counterexample(other):
    (s,) = steps(WINDOWS.replace("OTHER", other))
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("cond, visible", [
    (r"|i - j| \le 1", lambda i, j: abs(i - j) <= 1),
    (r"i - 2 \le j \le i", lambda i, j: i - 2 <= j <= i),
    (r"j < i \text{ and } i \le j + 3", lambda i, j: j < i <= j + 3),
])
def test_a_window_mask_has_the_entries_its_condition_says(cond, visible):
    import sympy as sp

    from symattn.derivation.elaborate import Scope

    (st,) = parse_latex(rf"$$ M_{{ij}} = \begin{{cases}} 0 & {cond} \\ -\infty & \text{{otherwise}} \end{{cases}} $$")
    scope = Scope()
    scope.define_mask(st)
    mask = scope.mask(ast.Name(st.first.pos, "M"), 6, 6).as_explicit()
    want = sp.Matrix(6, 6, lambda r, c: 0 if visible(r + 1, c + 1) else -sp.oo)
    assert mask == want


@pytest.mark.parametrize("window, message", [
    (r"t - W \le s \le t", "a width W or w/2 that is not a number"),
    (r"|t - s| \ge 2", "does not compare"),
])
def test_a_window_that_is_not_read_says_why_never_read_as_causal(window, message):
    (s,) = steps(cache(mask=rf"0 & {window} \\ -\infty & \text{{otherwise}}"))
    assert s.status == "ill-formed" and message in s.error, s.error


def test_the_complement_of_a_window_is_not_read_as_a_condition():
    (s,) = steps(cache(mask=r"0 & s \le t \\ -\infty & t - 2 \le s \le t"))
    assert s.status == "ill-formed" and "is hidden where" in s.error, s.error
    (s,) = steps(cache(mask=r"0 & t - 2 \le s \le t \\ -\infty & s > t"))
    assert s.status == "ill-formed" and "complement of the window" in s.error, s.error


@pytest.mark.parametrize("row, message", [
    (r"j = i", "in the condition of a cases row"),
    (r"j \le i \ge 2", "mixes the directions"),
    (r"|i - j \le 2", "closing the absolute value"),
])
def test_a_condition_that_is_not_read_says_why(row, message):
    with pytest.raises(ParseError, match=message):
        condition(row)


def _term(letter, c):
    return letter if c == 0 else f"{letter} + {c}" if c > 0 else f"{letter} - {-c}"


def _window_entries(cond, a="i", b="j", n=5):
    import sympy as sp

    from symattn.derivation.elaborate import Scope

    (st,) = parse_latex(rf"$$ M_{{{a}{b}}} = \begin{{cases}} 0 & {cond} \\ -\infty & \text{{otherwise}} "
                        r"\end{cases} $$")
    scope = Scope()
    scope.define_mask(st)
    return scope.mask(ast.Name(st.first.pos, "M"), n, n).as_explicit().applyfunc(lambda x: 1 if x == 0 else 0), sp


@settings(max_examples=15, deadline=None)
@given(lo=hst.integers(-3, 3), width=hst.integers(0, 3), form=hst.sampled_from(["chain", "and", "flipped"]),
       letters=hst.sampled_from([("i", "j"), ("t", "s"), ("u", "v")]))
def test_any_window_of_numbers_has_the_entries_of_its_condition(lo, width, form, letters):
    """j in [i + lo, i + lo + width], written as a chain, two comparisons, or the other way round, under any
    index letters: the mask is visible exactly there."""
    a, b = letters
    hi = lo + width
    cond = {"chain": rf"{_term(a, lo)} \le {b} \le {_term(a, hi)}",
            "and": rf"{b} \le {_term(a, hi)} \text{{ and }} {_term(a, lo)} \le {b}",
            "flipped": rf"{_term(a, hi)} \ge {b} \ge {_term(a, lo)}"}[form]
    got, sp = _window_entries(cond, a, b)
    want = sp.Matrix(5, 5, lambda r, c: 1 if lo <= int(c) - int(r) <= hi else 0)
    assert got == want, cond


def test_named_alternatives_are_read_and_their_use_decided_under_each():
    text = (r"$$ h, s \in \mathbb{R}^{d}, \quad W \in \mathbb{R}^{d \times d} $$"
            r"$$ \mathrm{score}(h, s) = \begin{cases} h^\top s & \text{dot} \\ h^\top W s & \text{general} "
            r"\end{cases} $$")
    assert parse_latex(text)  # the definition by named alternatives is read (named_cases)
    (s,) = check(text + "\n" + r"$$ \mathrm{score}(h, s) = h^\top W s $$").steps
    assert s.status == "proved" and "alternative general (under dot: refuted)" in s.scope


def test_other_values_of_a_cases_row_are_refused_as_before():
    with pytest.raises(ParseError, match="only a mask"):
        parse_latex(r"$$ M_{ts} = \begin{cases} 1 & s \le t \\ 0 & s > t \end{cases} $$")
