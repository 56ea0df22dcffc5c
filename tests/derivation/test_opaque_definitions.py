r"""A step about matrices the file defines (Q = L W_Q, Jaegle et al. 2021) that the reader cannot decide with
the definitions put in is decided again with those names kept as matrices of their shapes: a proof there
holds for every such matrix, the definitions among them; nothing else is taken from it."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def perceiver(q, k, v, m, row="{v}_{m}"):
    text = (r"%: convention: row" + "\n"
            r"$$ L \in \mathbb{{R}}^{{N \times D}}, \quad X \in \mathbb{{R}}^{{M \times C}}, \quad W_Q \in "
            r"\mathbb{{R}}^{{D \times F}}, \quad W_K, W_V \in \mathbb{{R}}^{{C \times F}} $$" + "\n"
            r"$$ {q} = L W_Q, \quad {k} = X W_K, \quad {v} = X W_V $$" + "\n"
            r"$$ \left[\mathrm{{softmax}}\left(\frac{{{q}{k}^T}}{{\sqrt{{F}}}}\right){v}\right]_n = "
            r"\sum_{{{m}=1}}^{{M}} \frac{{\exp({q}_n {k}_{m}^T / \sqrt{{F}})}}"
            r"{{\sum_{{{m}'=1}}^{{M}} \exp({q}_n {k}_{{{m}'}}^T / \sqrt{{F}})}} "
            + row + " $$")
    return text.format(q=q, k=k, v=v, m=m)


@pytest.mark.parametrize("q, k, v, m", [("Q", "K", "V", "m"), ("A", "B", "E", "j")])
def test_one_latent_row_is_proved_for_every_value_of_the_defined_names(q, k, v, m):
    (s,) = check(perceiver(q, k, v, m)).steps
    assert s.status == "proved", (s.status, s.error)
    assert "kept as names" in s.scope


def test_a_false_row_is_not_proved():
    (s,) = check(perceiver("Q", "K", "V", "m", row="{k}_{m}")).steps
    assert s.status == "refuted"
    (s,) = check(perceiver("Q", "K", "V", "m").replace(r"\exp(Q_n K_m^T / \sqrt{F})}", r"\exp(Q_n K_m^T)}")).steps
    assert s.status == "refuted"


def test_a_step_that_needs_its_definitions_keeps_them():
    text = (r"$$ A, B \in \mathbb{R}^{n \times n} $$" + "\n" + r"$$ C = A B $$" + "\n" + r"$$ C^T = B^T A^T $$")
    (s,) = check(text).steps
    assert s.status == "proved" and "kept as names" not in s.scope
    (s,) = check(text.replace("B^T A^T", "A^T B^T")).steps
    assert s.status == "refuted"
