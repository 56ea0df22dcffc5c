r"""``\mathrm{diag}(v)`` of a vector and the inverse ``D^{-1}`` of D = diag(v) (Performers' normalizer
\widehat{D}^{-1}(\widehat{A} V)), in any file; the diag of a matrix and other inverses stay refused."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import DerivationError

DECL = (r"$$ A \in \mathbb{R}^{n \times n}, \quad V \in \mathbb{R}^{n \times e}, \quad v \in \mathbb{R}^{n} $$"
        + "\n")



def statuses(text):
    return [s.status for s in check(text).steps]


def test_diag_of_a_vector_scales_the_rows():
    assert statuses(DECL + r"$$ \mathrm{diag}(v) (V + V) = 2 \mathrm{diag}(v) V $$") == ["proved"]
    assert statuses(DECL + r"$$ \mathrm{diag}(v) A = A \mathrm{diag}(v) $$") == ["refuted"]


def test_the_inverse_of_a_diagonal_matrix_undoes_it():
    text = DECL + r"$$ D = \mathrm{diag}(A \mathbf{1}_n) $$" + "\n"
    assert statuses(text + r"$$ D^{-1} (D V) = V $$") == ["proved"]
    assert statuses(text + r"$$ D^{-1} (A V) = (D^{-1} A) V $$") == ["proved"]
    assert statuses(text + r"$$ D^{-1} (A V) = A (D^{-1} V) $$") == ["refuted"]


@pytest.mark.parametrize("step, message", [
    (r"$$ \mathrm{diag}(A) V = V $$", "only the diagonal matrix of a vector is read"),
    (r"$$ A^{\frac{1}{2}} V = V $$", "the power ^{1/2} of the matrix A"),
])
def test_other_diagonals_and_roots_are_refused(step, message):
    try:
        (s,) = check(DECL + step).steps
    except DerivationError as exc:
        assert message in str(exc)
        return
    assert s.status == "ill-formed" and message in s.error, s.error


def test_any_other_inverse_is_read_where_invertible():
    assert statuses(DECL + r"$$ A^{-1} (A V) = V $$") == ["proved"]
    assert statuses(DECL + r"$$ A^{-1} V = V $$") == ["refuted"]


def test_renaming_the_vector_changes_no_verdict():
    for name in ("v", "u", "p", r"\ell"):
        decl = DECL.replace("v \\in", f"{name} \\in")
        assert statuses(decl + rf"$$ \mathrm{{diag}}({name}) A = A \mathrm{{diag}}({name}) $$") == ["refuted"]
        assert statuses(decl + rf"$$ \mathrm{{diag}}({name}) (A + A) = 2 \mathrm{{diag}}({name}) A $$") == ["proved"]
