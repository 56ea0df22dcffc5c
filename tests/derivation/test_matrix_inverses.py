"""``A^{-1}`` and ``(\\Delta A)^{-1}``: negative powers of square matrices are inverses, and steps with them are
proved where every inverse exists; non-square inverses, roots, and exp of a square matrix the file does not
invert beside an inverse (perhaps the matrix exponential) are refused."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check

HEAD = (r"$$ A, C \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad "
        r"F \in \mathbb{R}^{N \times M}, \quad \Delta \in \mathbb{R} $$" + "\n")



def step(text):
    (s,) = check(HEAD + f"$$ {text} $$").steps
    return s


@pytest.mark.parametrize("text", [
    r"A^{-1} A B = B",
    r"(A C)^{-1} = C^{-1} A^{-1}",
    r"(\Delta A)^{-1} \Delta B = A^{-1} B",
    r"A^{-2} A A B = B",
])
def test_a_true_step_with_inverses_is_proved_where_they_exist(text):
    r = check(HEAD + f"$$ {text} $$")  # SymPy folds A^{-1} A while the claim is built: the notes say it
    assert [s.status for s in r.steps] == ["proved"]
    assert "invertible" in r.steps[0].scope or any("where it is invertible" in n for n in r.notes)


@pytest.mark.parametrize("text", [r"A^{-1} C = C A^{-1}", r"(A C)^{-1} = A^{-1} C^{-1}"])
def test_a_false_step_with_inverses_is_not_proved(text):
    assert step(text).status in ("refuted", "unknown")


def test_a_false_step_with_inverses_is_refuted_with_a_certificate():
    s = step(r"(\Delta A)^{-1} B = A^{-1} B")
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("text, said", [(r"F^{-1} F = F^{-1} F", "not square"),
                                        (r"A^{1/2} B = A^{1/2} B", "roots of matrices")])
def test_what_has_no_inverse_reading_is_refused(text, said):
    s = step(text)
    assert s.status == "ill-formed" and said in s.error


def test_exp_of_a_square_matrix_beside_an_inverse_is_refused_not_misread():
    # the inverse of another matrix: exp(Delta A) may be the matrix exponential (A inverted: test_matrix_exponential)
    s = step(r"C^{-1} (\exp(\Delta A) - I) B = (\exp(\Delta A) - I) C^{-1} B")
    assert s.status == "ill-formed" and "matrix exponential" in s.error
