"""A decimal number (``0.5 W + 0.5 I``, Abnar & Zuidema 2020) is the fraction it is, never its digits side
by side (0 times 5, which would make every such term 0 and prove false steps)."""

from __future__ import annotations

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex

DECL = r"$$ W_1, W_2 \in \mathbb{R}^{n \times n} $$" "\n"


def statuses(text):
    return [s.status for s in check_statements(parse_latex(text), source="t.tex", dialect="latex").steps]


def test_a_decimal_is_its_fraction():
    assert statuses(DECL + r"$$ 0.5 W_1 + 0.5 W_1 = W_1 $$") == ["proved"]
    assert statuses(DECL + r"$$ 0.25 W_1 = \frac{1}{4} W_1 $$") == ["proved"]
    assert statuses(DECL + r"$$ 1.5 W_1 = \frac{3}{2} W_1 $$") == ["proved"]


def test_a_product_expanded_with_decimals_keeps_every_term():
    true = r"$$ (0.5 W_2 + 0.5 I)(0.5 W_1 + 0.5 I) = 0.25\, W_2 W_1 + 0.25\, W_2 + 0.25\, W_1 + 0.25\, I $$"
    assert statuses(DECL + true) == ["proved"]
    dropped = true.replace(r" + 0.25\, W_1", "")
    assert statuses(DECL + dropped) == ["refuted"]


def test_a_point_ending_a_display_is_still_punctuation():
    assert statuses(DECL + r"$$ 2 W_1 = W_1 + W_1 . $$") == ["proved"]
