"""``A^{+}``, the pseudo-inverse (Nyströmformer writes softmax(...)^{+}): read as an uninterpreted map of
a square A, so steps that regroup products around it are proved for every map and steps that depend on
what the pseudo-inverse is are neither proved nor refuted."""

from __future__ import annotations

import pytest

from symattn.derivation import ast, check_statements
from symattn.derivation.latex import parse_latex
from symattn.derivation.tokens import PINV

DECL = (r"$$ F \in \mathbb{R}^{n \times m}, \quad A \in \mathbb{R}^{m \times m}, \quad B \in \mathbb{R}^{m \times n},"
        r" \quad V \in \mathbb{R}^{n \times d} $$" + "\n")


def check(text):
    return check_statements(parse_latex(text), dialect="latex")


@pytest.mark.parametrize("mark", ["^{+}", "^+"])
def test_the_plus_superscript_is_the_pseudo_inverse_of_what_it_follows(mark):
    (st,) = parse_latex(f"$$ A{mark} B = C $$")
    call = st.first.factors[0]
    assert isinstance(call, ast.Call) and call.target.base == PINV and call.args[0].base == "A"


def test_regrouping_around_a_pseudo_inverse_is_proved():
    r = check(DECL + r"$$ S = F A^{+} B $$" + "\n" + r"$$ S V = F (A^{+} (B V)) $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("pinv is not defined by the file" in n for n in r.notes)


def test_a_false_step_whose_sides_differ_for_every_map_is_refuted():
    (s,) = check(DECL + r"$$ A^{+} B + F^\top = A^{+} B $$").steps
    assert s.status == "refuted"


@pytest.mark.parametrize("step", [r"A A^{+} A = A", r"A^{+} B = B"])
def test_a_step_that_depends_on_what_the_pseudo_inverse_is_is_unknown_never_refuted(step):
    (s,) = check(DECL + f"$$ {step} $$").steps
    assert s.status == "unknown"


def test_the_pseudo_inverse_of_a_non_square_matrix_is_refused():
    (s,) = check(DECL + r"$$ F^{+} F = F^{+} F $$").steps
    assert s.status == "ill-formed" and "pseudo-inverse F^+ of n × m" in s.error
