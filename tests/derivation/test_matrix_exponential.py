r"""``\exp(\Delta A)`` of a square matrix A that the file inverts is the matrix exponential (the zero-order hold of
Gu & Dao 2023): it commutes with A^{-1}; a step with it is proved for every invertible A or refuted with A
diagonal; beside anything but sums, products and inverses it is refused."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def head(a, b, d):
    return (rf"$$ {a} \in \mathbb{{R}}^{{N \times N}}, \quad {b} \in \mathbb{{R}}^{{N \times 1}}, \quad "
            rf"{d} \in \mathbb{{R}} $$" + "\n")


def steps(a, b, d, *claims):
    text = head(a, b, d) + "\n".join(f"$$ {c} $$" for c in claims)
    return check(text.replace("A", a).replace("B", b).replace(r"\Delta", d)).steps


@pytest.mark.parametrize("a, b, d", [("A", "B", r"\Delta"), ("M", "U", "t")])
def test_the_zero_order_hold_is_proved(a, b, d):
    claims = [r"(\Delta A)^{-1}(\exp(\Delta A) - I) \Delta B = A^{-1}(\exp(\Delta A) - I) B",
              r"A^{-1}(\exp(\Delta A) - I) B = (\exp(\Delta A) - I) A^{-1} B",
              r"\exp(\Delta A) \exp(\Delta A) A^{-1} B = A^{-1} \exp(2 \Delta A) B"]
    out = steps(a, b, d, *claims)
    assert [s.status for s in out] == ["proved"] * 3, [s.error for s in out]


@pytest.mark.parametrize("claim", [
    r"A^{-1}(\exp(\Delta A) - I) \Delta B = A^{-1}(\exp(\Delta A) - I) B",
    r"A^{-1} \exp(\Delta A) B = \exp(\Delta A) B",
    r"\exp(\Delta A) \exp(\Delta A) A^{-1} B = A^{-1} \exp(\Delta A) B",
])
def test_a_false_step_is_refuted_with_a_certificate(claim):
    (s,) = steps("A", "B", r"\Delta", claim)
    assert s.status == "refuted" and s.verdict.counterexample.certificate


def test_the_matrix_exponential_is_not_the_entrywise_one():
    # e^{ΔA} commutes with A; exp of every entry of A does not
    (s,) = steps("A", "B", r"\Delta", r"A^{-1} \exp(\Delta A) A B = \exp(\Delta A) B")
    assert s.status == "proved"
    r = check(head("A", "B", r"\Delta") + r"$$ A^{-1} \exp(A) A B = \exp(A) B $$")
    assert r.steps[0].status == "proved" and any("matrix exponential" in n for n in r.notes)


def test_beside_a_transpose_it_is_refused():
    (s,) = steps("A", "B", r"\Delta", r"A^{-1} \exp(\Delta A) B = \exp(\Delta A^T) A^{-1} B")
    assert s.status == "ill-formed" and "matrix exponential" in s.error


def test_without_an_inverse_of_A_exp_stays_entrywise():
    text = (r"$$ S \in \mathbb{R}^{N \times N} $$" + "\n" + r"$$ \exp(S + S) = \exp(S) \odot \exp(S) $$")
    (s,) = check(text).steps
    assert s.status == "proved"


def test_a_side_without_exp_reads_the_same_A():
    # A^{-1} A on one side and exp on the other: both sides read A as one matrix
    (s,) = steps("A", "B", r"\Delta", r"\exp(\Delta A) A^{-1} A B = \exp(\Delta A) B")
    assert s.status == "proved"
    (s,) = steps("A", "B", r"\Delta", r"\exp(\Delta A) A^{-1} B = A^{-1} B + \exp(\Delta A) B")
    assert s.status == "refuted"
    r = check(head("A", "B", r"\Delta") + r"$$ A^{-1} \exp(\Delta A) B = \exp(\Delta A) A^{-1} B $$" + "\n"
              + r"$$ A B = A B $$")
    assert [s.status for s in r.steps] == ["proved", "proved"]


def test_beside_a_number_made_of_a_matrix_it_is_refused():
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad "
            r"c \in \mathbb{R}^{1 \times N} $$" + "\n" + r"$$ (c A B) A^{-1} \exp(A) B = A^{-1} \exp(A) B (c A B) $$")
    (s,) = check(text).steps
    assert s.status == "ill-formed" and "matrix exponential" in s.error
