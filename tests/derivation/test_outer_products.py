"""``u \\otimes v`` of two vectors is their outer product (Schlag et al. 2021): u vᵀ under the column
convention, uᵀ v under the row convention; between matrices ``\\otimes`` stays the Kronecker operator."""

from __future__ import annotations

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex

DECL = r"$$ u \in \mathbb{R}^{m}, \quad v, w \in \mathbb{R}^{n}, \quad W \in \mathbb{R}^{m \times n} $$" "\n"


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_the_outer_product_of_two_columns_is_u_v_transposed():
    r = check(DECL + r"$$ W + u \otimes v = W + u v^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("outer product" in n for n in r.notes)
    assert statuses(DECL + r"$$ u \otimes (v + w) = u \otimes v + u \otimes w $$") == ["proved"]
    wrong = check(DECL + r"$$ u \otimes (v + w) = u \otimes v $$").steps[0]
    assert wrong.status == "refuted" and wrong.verdict.counterexample.certificate


def test_the_row_convention_reads_u_transposed_v():
    assert statuses("%: convention: row\n" + DECL + r"$$ W + u \otimes v = W + u^\top v $$") == ["proved"]


def test_an_outer_product_times_a_vector_scales_the_first():
    assert statuses(DECL + r"$$ (u \otimes v) w = (v^\top w) u $$") == ["proved"]
    assert statuses(DECL + r"$$ (u \otimes v) w = (v^\top v) u $$") == ["refuted"]


def test_renaming_the_vectors_changes_no_verdict():
    other = r"$$ a \in \mathbb{R}^{m}, \quad b, c \in \mathbb{R}^{n}, \quad W \in \mathbb{R}^{m \times n} $$" "\n"
    for step, renamed in ((r"$$ u \otimes (v + w) = u \otimes v + u \otimes w $$",
                           r"$$ a \otimes (b + c) = a \otimes b + a \otimes c $$"),
                          (r"$$ u \otimes (v + w) = u \otimes w $$", r"$$ a \otimes (b + c) = a \otimes c $$")):
        assert statuses(DECL + step) == statuses(other + renamed)
