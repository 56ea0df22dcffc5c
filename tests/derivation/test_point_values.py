"""The value of a function at one point declared by its shape, ``\\phi(\\mathbf{k}^{(i)}) \\in \\mathbb{R}^{d}``
(Schlag et al. 2021): a vector of its own, which every application written the same way denotes."""

from __future__ import annotations

import pytest

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError

DECL = (r"$$ W \in \mathbb{R}^{m \times n}, \quad v \in \mathbb{R}^{m}, \quad \phi(\mathbf{k}^{(i)}) \in "
        r"\mathbb{R}^{n}, \quad \beta \in \mathbb{R} $$" "\n")


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def test_the_value_is_one_vector_wherever_it_is_written():
    r = check(DECL + r"$$ W \phi(\mathbf{k}^{(i)}) + W \phi(\mathbf{k}^{(i)}) = 2 W \phi(\mathbf{k}^{(i)}) $$")
    assert [s.status for s in r.steps] == ["proved"], [s.error for s in r.steps]
    s = check(DECL + r"$$ \phi(\mathbf{k}^{(i)})^\top \phi(\mathbf{k}^{(i)}) = \beta $$").steps[0]
    assert s.status == "refuted" and s.verdict.counterexample.certificate


def test_the_value_at_another_point_is_another_value():
    text = (DECL + r"$$ \phi(\mathbf{q}) \in \mathbb{R}^{n} $$" "\n"
            r"$$ W \phi(\mathbf{k}^{(i)}) = W \phi(\mathbf{q}) $$")
    assert check(text).steps[0].status == "refuted"


def test_renaming_the_point_changes_no_verdict():
    step = r"$$ W \phi(\mathbf{k}^{(i)}) + \beta W \phi(\mathbf{k}^{(i)}) = (1 + \beta) W \phi(\mathbf{k}^{(i)}) $$"
    a = [s.status for s in check(DECL + step).steps]
    b = [s.status for s in check((DECL + step).replace(r"\mathbf{k}^{(i)}", r"\mathbf{x}_t")).steps]
    assert a == b == ["proved"]


def test_a_value_at_a_declared_argument_is_refused():
    with pytest.raises(DerivationError, match=r"names x declared by the file"):
        check(r"$$ x \in \mathbb{R}^{n}, \quad \phi(x) \in \mathbb{R}^{n} $$" "\n" r"$$ \phi(x) = \phi(x) $$")
