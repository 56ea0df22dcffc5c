r"""The complex conjugate of an expression, ``(W_k x_n)^*`` or ``\overline{f(k, n)}`` (RoPE's complex form), is
refused naming the conjugate and the real form to write; a star or a bar over one name stays a label."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError


@pytest.mark.parametrize("written, named", [
    (r"(W x)^{*}", "the complex conjugate (W x)^*"),
    (r"(W x)^{\ast}", "the complex conjugate (W x)^*"),
    (r"f(x, n)^*", "the complex conjugate f(x, n)^*"),
    (r"\overline{f(x, n)}", r"the complex conjugate \overline{f(x, n)}"),
    (r"\bar{(x + y)}", r"the complex conjugate \bar{(x + y)}"),
])
def test_a_conjugate_of_an_expression_is_refused_by_name(written, named):
    with pytest.raises(ParseError) as info:
        parse_latex(f"$$ A = {written} $$")
    assert str(info.value).startswith("line 1, column") and named in str(info.value)
    assert "R^d_{\\Theta,m}" in info.value.expected


def test_a_star_or_a_bar_on_a_name_is_still_a_label():
    text = r"$$ v^*, \overline{v}, v \in \mathbb{R}^{d}, \quad A \in \mathbb{R}^{d \times d} $$" + "\n"
    assert [s.status for s in check(text + r"$$ v^* + \overline{v} = \overline{v} + v^* $$").steps] == ["proved"]
    assert [s.status for s in check(text + r"$$ A v^* = A \overline{v} $$").steps] == ["refuted"]
