r"""Bare vectors (``x \in \mathbb{R}^{d}``) of a row-convention file that it writes as columns (``x^\top y``,
the inner product, as Choromanski et al. 2021 write the softmax kernel) are read as columns; a file that
writes them as rows (``x W``, ``x y^\top``), or both ways, keeps them rows."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

ROW = "%: convention: row\n"


def statuses(text):
    return [s.status for s in check(text).steps]


def kernel(a, b, right):
    return (ROW + rf"$$ \mathbf{{Q}} \in \mathbb{{R}}^{{L \times d}}, \quad \mathbf{{{a}}}, \mathbf{{{b}}} \in "
            rf"\mathbb{{R}}^{{d}} $$" + "\n"
            rf"$$ \mathrm{{SM}}(\mathbf{{{a}}}, \mathbf{{{b}}}) = \exp(\mathbf{{{a}}}^{{\top}}\mathbf{{{b}}}) $$" + "\n"
            rf"$$ \mathrm{{SM}}(\mathbf{{{a}}}, \mathbf{{{b}}}) = {right} $$")


def gaussian(a, b, half=r"\frac{\|\mathbf{B}\|^2}{2}"):
    half = half.replace("B", b)
    return (rf"\exp\left(\frac{{\|\mathbf{{{a}}}\|^2}}{{2}}\right) \exp\left(-\frac{{\|\mathbf{{{a}}} - "
            rf"\mathbf{{{b}}}\|^2}}{{2}}\right) \exp\left({half}\right)")


@pytest.mark.parametrize("a, b", [("x", "y"), ("u", "v")])
def test_the_inner_product_of_columns_is_read_and_decided(a, b):
    true = check(kernel(a, b, gaussian(a, b)))
    assert [s.status for s in true.steps] == ["proved"]
    assert any("read as columns" in n for n in true.notes)
    false = check(kernel(a, b, gaussian(a, b, r"\|\mathbf{B}\|^2")))
    assert [s.status for s in false.steps] == ["refuted"]
    assert false.steps[0].verdict.counterexample.certificate


def test_the_inner_product_is_a_scalar():
    text = kernel("x", "y", r"\exp(\mathbf{y}^{\top}\mathbf{x})")
    assert statuses(text) == ["proved"]
    assert statuses(kernel("x", "y", r"\exp(\mathbf{x}^{\top}\mathbf{x})")) == ["refuted"]


ROWS = ROW + r"$$ W \in \mathbb{R}^{d \times d}, \quad x, y \in \mathbb{R}^{d} $$" + "\n"


def test_a_file_that_writes_its_vectors_as_rows_keeps_them_rows():
    r = check(ROWS + r"$$ x W y^\top = y W^\top x^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert not any("read as columns" in n for n in r.notes)
    assert statuses(ROWS + r"$$ x W y^\top = y W x^\top $$") == ["refuted"]


def test_a_file_that_writes_both_ways_keeps_rows():
    # x^T y beside x W: the rows of the convention; x^T y is then the d x d outer product
    r = check(ROWS + r"$$ x^\top y = (y^\top x)^\top $$" + "\n" + r"$$ x W = x W $$")
    assert not any("read as columns" in n for n in r.notes)
    assert [s.status for s in r.steps] == ["proved", "proved"]
    assert statuses(ROWS + r"$$ x^\top y + W = W + y^\top x $$" + "\n" + r"$$ x W = x W $$") == ["refuted", "proved"]


def test_a_declared_row_keeps_its_shape():
    text = ROW + r"$$ x, y \in \mathbb{R}^{1 \times d} $$" + "\n" + r"$$ x^\top y = (y^\top x)^\top $$"
    assert statuses(text) == ["proved"]
    assert statuses(ROW + r"$$ x, y \in \mathbb{R}^{1 \times d} $$" + "\n" + r"$$ x^\top y = y^\top x $$") == [
        "refuted"]


def test_a_transposed_vector_before_one_of_another_length_is_an_outer_product_of_rows():
    text = ROW + r"$$ x \in \mathbb{R}^{d}, \quad v \in \mathbb{R}^{m} $$" + "\n"
    r = check(text + r"$$ x^\top v = (v^\top x)^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert not any("read as columns" in n for n in r.notes)
    assert statuses(text + r"$$ x^\top v + x^\top v = 2 (v^\top x)^\top $$") == ["proved"]
