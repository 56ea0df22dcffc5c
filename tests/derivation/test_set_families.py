r"""A family of values indexed by the members of a set, ``(W_k \mathbf{x}_j)_{j \in S_i}`` (Child et al. 2019),
is refused by name where its subscript begins: the stacking (rows or columns, and the order) is not written.
An entry after parentheses, ``(P)_{h,h'}``, is still read."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError, ParseError

DECL = r"$$ x_i \in \mathbb{R}^{d}, \quad W_k \in \mathbb{R}^{d \times d} $$" + "\n"


@pytest.mark.parametrize("j, S", [("j", r"S_i"), ("m", r"\{1, \ldots, n\}")])
def test_a_family_over_a_set_is_refused_by_name(j, S):
    with pytest.raises(ParseError, match=rf"a family \(W_k x_{j}\)_\{{{j} \\in \.\.\.\}}, one value for each member "
                       rf"{j} of a set, is not read") as e:
        check(DECL + rf"$$ K = \left(W_k x_{j}\right)_{{{j} \in {S}}} $$")
    assert (e.value.line, e.value.column) == (2, 28)  # the subscript mark


def test_a_softmax_over_a_set_keeps_its_own_message():
    """x_i declared by its generic member: the number of members of X is not written (set_softmax)."""
    with pytest.raises(DerivationError, match=r"the subscript x_j in X: the number of members of X is not written"):
        check(DECL + r"$$ a = \mathop{\mathrm{softmax}}_{x_j \in X}\left(x_j\right) $$")


def test_an_entry_after_parentheses_is_still_read():
    doc = (r"$$ P \in \mathbb{R}^{2 \times 2}, \quad J_1, J_2 \in \mathbb{R}^{d \times d} $$" + "\n"
           r"$$ \sum_{h=1}^{2} (P)_{h,1} J_h = (P)_{1,1} J_1 + (P)_{2,1} J_2 $$")
    assert [s.status for s in check(doc).steps] == ["proved"]
