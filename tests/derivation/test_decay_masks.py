r"""A decay mask by cases (``D_{nm} = \gamma^{n-m}`` where n >= m, 0 elsewhere; RetNet), a closed form that opens
a chain, and a function defined by its value at the member of a sequence (``\mathrm{Retention}(X_n) = ...``)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError


def _retention(t, i):
    return (rf"$$ k_{t} \in \mathbb{{R}}^{{d}}, \quad v_{t} \in \mathbb{{R}}^{{e}}, \quad \gamma \in \mathbb{{R}}, "
            rf"\quad S_0 = 0 $$" + "\n" rf"$$ S_{t} = \gamma S_{{{t}-1}} + k_{t} v_{t}^\top $$" + "\n")


DECAY = (r"%: convention: row" + "\n" r"$$ Q, K, V \in \mathbb{R}^{N \times d}, \quad \gamma \in \mathbb{R} $$" + "\n"
         r"$$ D_{nm} = \begin{cases} \gamma^{n-m}, & n \ge m \\ 0, & n < m \end{cases} $$" + "\n")


def _closed_form_chain(kernel, t="t", i="i"):
    kernel = kernel.format(t=t, i=i)
    return _retention(t, i) + (rf"\begin{{align*}} S_{t} &= \sum_{{{i}=1}}^{{{t}}} {kernel} k_{i} v_{i}^\top \\ "
                               rf"&= \sum_{{{i}=1}}^{{{t}}} \gamma^{{{t}-{i}}} k_{i} v_{i}^\top \end{{align*}}")


def test_a_closed_form_that_opens_a_chain_is_proved_by_induction():
    step = check(_closed_form_chain(r"\gamma^{{{t}-{i}}}")).steps[0]
    assert step.status == "proved" and "every position t by induction on t" in step.scope


def test_a_wrong_kernel_that_opens_a_chain_is_refuted_with_a_certificate():
    step = check(_closed_form_chain(r"\gamma^{{{i}-1}}")).steps[0]
    assert step.status == "refuted" and "at the position t = 2" in step.scope
    assert step.verdict.counterexample.certificate


@pytest.mark.parametrize("kernel, status", [(r"\gamma^{{{t}-{i}}}", "proved"), (r"\gamma^{{{i}-1}}", "refuted")])
def test_renaming_the_position_letters_changes_no_verdict(kernel, status):
    for t, i in (("t", "i"), ("n", "m"), ("k", "j")):
        assert check(_closed_form_chain(kernel, t, i)).steps[0].status == status


def test_the_decay_mask_is_read_and_its_use_in_a_product_refused_by_name():
    report = check(DECAY + r"$$ (Q K^\top \odot D) V = (Q K^\top \odot D) V $$")
    assert any("D_nm := {gamma^{n - m} if n >= m; 0 if n < m}" in d for d in report.definitions)
    step = report.steps[0]
    assert step.status == "ill-formed" and "the decay mask D" in step.error


def test_the_decay_mask_is_never_read_as_a_softmax_mask():
    step = check(DECAY + r"$$ \mathrm{softmax}(Q K^\top + D) V = \mathrm{softmax}(Q K^\top) V $$").steps[0]
    assert step.status == "ill-formed" and "the decay mask D" in step.error


def test_a_plain_number_as_a_value_of_the_cases_stays_refused():
    with pytest.raises(ParseError, match="value of the cases environment"):
        check(DECAY.replace(r"\gamma^{n-m}", "1"))


FUNCTION = (r"%: convention: row" + "\n" r"$$ Q, K \in \mathbb{R}^{n \times d} $$" + "\n"
            r"$$ \mathrm{Score}(X_i) = Q_i K_i^\top $$" + "\n")


def test_a_function_of_the_member_of_a_sequence_is_defined_by_its_value_there():
    report = check(FUNCTION + r"$$ \mathrm{Score}(X_i) = K_i Q_i^\top $$")
    assert any(d.startswith("Score(X_i) := Q_i K_i^T") for d in report.definitions)
    assert report.steps[0].status == "proved"
    step = check(FUNCTION + r"$$ \mathrm{Score}(X_i) = Q_i Q_i^\top $$").steps[0]
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def _rows_of_declared(kernel, n="n", m="m"):
    kernel = kernel.format(n=n, m=m)
    return (r"%: convention: row" + "\n"
            r"$$ Q, K, V \in \mathbb{R}^{N \times d}, \quad \gamma \in \mathbb{R}, \quad S_0 = 0 $$" + "\n"
            rf"$$ S_{n} = \gamma S_{{{n}-1}} + K_{n}^\intercal V_{n} $$" + "\n"
            rf"$$ Q_{n} S_{n} = \sum_{{{m}=1}}^{{{n}}} {kernel} Q_{n} K_{m}^\intercal V_{m} $$")


@pytest.mark.parametrize("n, m", [("n", "m"), ("t", "i"), ("k", "j")])
def test_rows_of_declared_matrices_are_the_members_in_the_decay_induction(n, m):
    step = check(_rows_of_declared(r"\gamma^{{{n}-{m}}}", n, m)).steps[0]
    assert step.status == "proved" and f"every position {n} by induction on {n}" in step.scope


@pytest.mark.parametrize("kernel", [r"\gamma^{{{m}-1}}", r"\gamma^{{{m}-{n}}}", r"\gamma^{{{n}-{m}+1}}"])
def test_a_wrong_kernel_over_rows_of_declared_matrices_is_never_proved(kernel):
    step = check(_rows_of_declared(kernel)).steps[0]
    assert step.status in ("refuted", "unknown") and "by induction" not in step.scope
