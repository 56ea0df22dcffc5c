"""An entry ``(P_l)_{h,h'}`` of a declared matrix (Shazeer et al. 2020, talking-heads attention): a scalar,
with h bound by a sum over the heads (or a number) and h' a free position 1 <= h' <= H."""

from __future__ import annotations

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex

DECL = (r"$$ Q_1, \ldots, Q_H \in \mathbb{R}^{n \times d}, \quad K_1, \ldots, K_H \in \mathbb{R}^{m \times d}, "
        r"\quad P \in \mathbb{R}^{H \times H} $$" "\n")


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_a_mixture_of_heads_by_a_column_of_p_is_one_block_product():
    true = (r"$$ \sum_{h=1}^{H} (P)_{h,g} Q_h K_h^\top = \left[(P)_{1,g} Q_1, \ldots, (P)_{H,g} Q_H\right] "
            r"\left[K_1, \ldots, K_H\right]^\top $$")
    r = check(DECL + true)
    assert [s.status for s in r.steps] == ["proved"], [s.error for s in r.steps]
    assert any("is the entry (i, j) of the declared P" in n for n in r.notes)
    wrong = check(DECL + true.replace("(P)_{1,g}", "(P)_{g,1}").replace("(P)_{H,g}", "(P)_{g,H}")).steps[0]
    assert wrong.status == "refuted" and wrong.verdict.counterexample.certificate


def test_renaming_the_free_index_changes_no_verdict():
    step = (r"$$ \sum_{h=1}^{H} (P)_{h,g} Q_h + \sum_{h=1}^{H} (P)_{h,g} Q_h = "
            r"2 \sum_{h=1}^{H} (P)_{h,g} Q_h $$")
    assert statuses(DECL + step) == statuses(DECL + step.replace("g}", "t}")) == ["proved"]


def test_an_entry_of_an_undeclared_matrix_is_ill_formed():
    s = check(DECL + r"$$ (R)_{1,2} Q_1 = Q_1 $$").steps[0]
    assert s.status == "ill-formed" and "does not declare as a matrix" in s.error


def test_an_entry_of_an_expression_is_its_entry():
    """(P P)_{1,1} is the entry (1, 1) of the product (the entries module): a sum over the heads."""
    true = r"$$ (P P)_{1,1} Q_1 = \sum_{h=1}^{H} (P)_{1,h} (P)_{h,1} Q_1 $$"
    assert statuses(DECL + true) == ["proved"]
    s = check(DECL + true.replace("(P)_{1,h}", "(P)_{h,1}")).steps[0]
    assert s.status == "refuted" and s.verdict.counterexample.certificate
