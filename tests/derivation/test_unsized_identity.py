"""The identity ``\\mathbf{I}`` written without its size in a sum takes the size the other terms give it
(Schlag et al. 2021, ``W (I - \\beta \\phi \\phi^\\top)``); a file's own I is kept; an unsized identity with
nothing to size it is refused."""

from __future__ import annotations

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex

DECL = r"$$ W \in \mathbb{R}^{m \times n}, \quad k \in \mathbb{R}^{n}, \quad c \in \mathbb{R} $$" "\n"


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def test_the_identity_takes_the_size_of_the_other_term():
    r = check(DECL + r"$$ W (\mathbf{I} - c k k^\top) = W - c W k k^\top $$")
    assert [s.status for s in r.steps] == ["proved"], [s.error for s in r.steps]
    assert any("n × n identity" in n for n in r.notes)
    wrong = check(DECL + r"$$ W (\mathbf{I} - c k k^\top) = W - W k k^\top $$").steps[0]
    assert wrong.status == "refuted" and wrong.verdict.counterexample.certificate


def test_a_declared_I_is_the_files_own_matrix():
    decl = DECL + r"$$ I \in \mathbb{R}^{n \times n} $$" "\n"
    s = check(decl + r"$$ W (I - c k k^\top) = W - c W k k^\top $$").steps[0]
    assert s.status == "refuted"  # I is a free matrix here, not the identity


def test_an_identity_that_nothing_sizes_is_refused():
    s = check(DECL + r"$$ c \mathbf{I} + c \mathbf{I} = 2 c \mathbf{I} $$").steps[0]
    assert s.status == "ill-formed" and "identity I without its size" in s.error
