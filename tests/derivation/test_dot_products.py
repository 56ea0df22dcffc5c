r"""``a \cdot b`` of two vectors of one orientation and length is their inner product (papers write
``q_i \cdot k_j``), in either convention; between other shapes ``\cdot`` is the product as written;
juxtaposition of two columns stays ill-formed; renaming the letters changes no verdict."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

LETTERS = [("q", "k", "W"), ("u", "v", "A"), ("x", "y", "M")]


def doc(body, q="q", k="k", W="W", row=False):
    head = "%: convention: row\n" if row else ""
    space = r"\mathbb{R}^{1 \times d}" if row else r"\mathbb{R}^{d}"
    return head + rf"$$ {q}, {k} \in {space}, \quad {W} \in \mathbb{{R}}^{{d \times d}} $$" + "\n" + body


@pytest.mark.parametrize("q,k,W", LETTERS)
def test_the_dot_of_two_columns_is_their_inner_product(q, k, W):
    r = check(doc(rf"$$ {q} \cdot {k} = {k}^\top {q} = \langle {q}, {k} \rangle $$", q, k, W))
    assert [s.status for s in r.steps] == ["proved", "proved"]
    assert any("read as their inner product" in n for n in r.notes)
    (s,) = check(doc(rf"$$ ({W} {q}) \cdot {k} = {q}^\top {W}^\top {k} $$", q, k, W)).steps
    assert s.status == "proved" and s.general


@pytest.mark.parametrize("q,k,W", LETTERS)
def test_a_false_step_with_a_dot_is_refuted_with_a_certificate(q, k, W):
    (s,) = check(doc(rf"$$ ({W} {q}) \cdot {k} = {q}^\top {W} {k} $$", q, k, W)).steps
    assert s.status == "refuted" and s.as_dict()["counterexample"]["certificate"]


def test_the_dot_of_two_rows_in_the_row_convention():
    (s,) = check(doc(r"$$ \exp(q \cdot k) = \exp(q k^\top) $$", row=True)).steps
    assert s.status == "proved"
    s, t = check(doc(r"$$ q \cdot (k W) = q W^\top k^\top = q W k^\top $$", row=True)).steps
    assert s.status == "proved" and t.status == "refuted"


def test_other_shapes_keep_the_product_as_written():
    (s,) = check(doc(r"$$ W \cdot q = W q $$")).steps  # a matrix product
    assert s.status == "proved"
    (s,) = check(doc(r"$$ (q^\top k) \cdot q = q (k^\top q) $$")).steps  # a 1 × 1 value times a column
    assert s.status == "proved"


def test_juxtaposition_of_two_columns_stays_ill_formed():
    (s,) = check(doc(r"$$ q k = k^\top q $$")).steps
    assert s.status == "ill-formed" and "inner dimensions" in s.error
