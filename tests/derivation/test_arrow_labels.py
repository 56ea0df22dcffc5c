r"""Arrows in a subscript are labels: Performers' ``\mathrm{Att}_{\leftrightarrow}`` (bidirectional) and
``\mathrm{Att}_{\rightarrow}`` (unidirectional) are names, not relations."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex as check
from symattn.derivation.latex_lexer import tokenize_latex
from symattn.errors import ParseError


@pytest.mark.parametrize("arrow, mark", [(r"\leftrightarrow", "\u2194"), (r"\rightarrow", "\u2192"),
                                         (r"\to", "\u2192")])
def test_an_arrow_after_an_underscore_is_an_identifier(arrow, mark):
    toks = tokenize_latex(f"A_{{{arrow}}}", math=True)
    assert [(t.kind, t.value) for t in toks][:4] == [("ident", "A"), ("op", "_"), ("op", "{"), ("ident", mark)]


def test_an_arrow_label_names_a_matrix_of_its_own():
    decl = r"$$ A_{\leftrightarrow}, A_{\rightarrow}, B \in \mathbb{R}^{n \times n} $$" + "\n"
    assert [s.status for s in check(decl + r"$$ (A_{\leftrightarrow} + A_{\rightarrow}) B = "
                                    r"A_{\leftrightarrow} B + A_{\rightarrow} B $$").steps] == ["proved"]
    assert [s.status for s in check(decl + r"$$ A_{\leftrightarrow} B = A_{\rightarrow} B $$").steps] == ["refuted"]


def test_an_arrow_outside_a_subscript_is_still_refused():
    with pytest.raises(ParseError, match=r"\\leftrightarrow"):
        parse_latex(r"$$ A \leftrightarrow B $$")
