r"""Slices of a labelled matrix, ``K_{s,1:t}`` (positions 1..t of the declared ``K_s``), and the ends of a
window defined beside the step (Longformer's ``\ell_i = \max(1, i - \frac{w}{2})``), refused by name.

A labelled slice is read with its meaning: row t of causally masked attention of ``Q_s, K_s, V_s`` is the
attention over the first t keys (proved); one key short is not (refuted or ill-formed, never proved);
renaming the position letter changes no verdict."""

from __future__ import annotations

import pytest

from symattn.derivation.labelled_slices import LabelledSlice
from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError


def cache(p="t", k="s", label="s", end=None):
    """Row p of causally masked attention of the labelled Q, K, V against the slice of the first keys."""
    end = end or p
    return ("%: convention: row\n"
            rf"$$ Q_{label}, K_{label}, V_{label} \in \mathbb{{R}}^{{n \times d_k}} $$" "\n"
            rf"$$ M_{{{p}{k}}} = \begin{{cases}} 0 & {k} \le {p} \\ -\infty & \text{{otherwise}} \end{{cases}} $$"
            "\n"
            rf"$$ \left[ \mathrm{{softmax}} \left( \frac{{Q_{label} K_{label}^\top}}{{\sqrt{{d_k}}}} + M \right) "
            rf"V_{label} \right]_{{{p},:}} = \mathrm{{softmax}} \left( \frac{{[Q_{label}]_{{{p},:}} "
            rf"K_{{{label},1:{end}}}^\top}}{{\sqrt{{d_k}}}} \right) V_{{{label},1:{end}}} $$")


def statuses(text):
    return [s.status for s in check_latex(text).steps]


def test_the_subscript_is_read_as_a_slice_of_the_labelled_matrix():
    st = parse_latex(r"$$ X = K_{s,1:t} $$")[0]
    sub = st.body.sub if hasattr(st, "body") else st.links[0][2].sub
    assert isinstance(sub, LabelledSlice)
    assert (sub.label.text(), sub.lo.text(), sub.hi.text()) == ("s", "1", "t")
    assert sub.text() == "s,1:t"


def test_row_of_masked_attention_is_attention_over_the_labelled_slice():
    assert statuses(cache()) == ["proved"]


@pytest.mark.parametrize("p, k, label", [("i", "j", "s"), ("m", "l", "h")])
def test_renaming_the_letters_changes_no_verdict(p, k, label):
    assert statuses(cache(p, k, label)) == ["proved"]
    assert statuses(cache(p, k, label, end=f"{p}-1")) != ["proved"]


def test_one_key_short_is_not_proved():
    report = check_latex(cache(end="t-1"))
    (step,) = report.steps
    assert step.status in ("refuted", "ill-formed")
    if step.status == "refuted":
        assert step.verdict.counterexample is not None


def test_a_labelled_slice_of_an_undeclared_matrix_is_refused_naming_both_readings():
    text = ("%: convention: row\n"
            r"$$ A \in \mathbb{R}^{n \times d} $$" "\n"
            r"$$ A_{t,1:k} = A_{t,1:k} $$")
    (step,) = check_latex(text).steps
    assert step.status == "ill-formed"
    assert "either a slice of A_t or row t" in str(step.error)


def test_a_window_end_defined_beside_the_step_is_read_as_a_slice_end():
    text = ("%: convention: row\n"
            r"$$ Q_s, K_s, V_s \in \mathbb{R}^{n \times d_k} $$" "\n"
            r"$$ \ell_i = \max\left(1, i - \frac{w}{2}\right), \quad r_i = \min\left(n, i + \frac{w}{2}\right) $$"
            "\n"
            r"$$ V_{s,\ell_i:r_i} + V_{s,\ell_i:r_i} = 2 V_{s,\ell_i:r_i} $$")
    assert statuses(text) == ["proved"]


def test_a_window_end_of_a_real_number_is_refused_by_name():
    text = ("%: convention: row\n"
            r"$$ Q_s, K_s, V_s \in \mathbb{R}^{n \times d_k}, \quad x \in \mathbb{R} $$" "\n"
            r"$$ \ell_i = \max\left(1, i - x\right) $$" "\n"
            r"$$ V_{s,\ell_i:i} = V_{s,\ell_i:i} $$")
    with pytest.raises(DerivationError, match="defines a number for each position i"):
        statuses(text)


def test_a_definition_with_a_maximum_of_declared_numbers_is_still_read():
    text = r"$$ Q \in \mathbb{R}^{n \times d}, \quad a, b \in \mathbb{R} $$ $$ \max(a, b) + \min(a, b) = a + b $$"
    assert statuses(text) == ["proved"]
