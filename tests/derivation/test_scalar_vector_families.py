r"""A family of vectors ``k_i \in \mathbb{R}^d`` (one vector for each index, Rabe & Staats' keys) in the scalar
reader is refused by name, saying what it reads instead; a single vector beside it is read as before."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError


@pytest.mark.parametrize("k", ["k", "v"])
def test_a_family_of_vectors_is_refused_by_name(k):
    text = rf"$$ q, {k}_i \in \mathbb{{R}}^{{d}}, \quad a, b \in \mathbb{{R}} $$" + "\n"
    text += r"$$ \max(a, b) = \max(b, a) $$"
    with pytest.raises(DerivationError, match=rf"{k}_{{i}} .* declares a family of vectors"):
        check(text)


def test_a_single_vector_is_still_read():
    text = r"$$ q \in \mathbb{R}^{d}, \quad a, b \in \mathbb{R} $$" + "\n"
    (s,) = check(text + r"$$ \max(a, b) = \max(b, a) $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ \max(a, b) = a $$").steps
    assert s.status == "refuted"
