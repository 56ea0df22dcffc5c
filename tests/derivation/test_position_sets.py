r"""Sets of positions written by a condition: Reformer's ``\mathcal{P}_i = \{j : i \geq j\}`` and the Sparse
Transformer's ``A_i = \{j : (i - j) \bmod l = 0\}``.

A set so named is read and kept as written: it changes no verdict of a step that does not use it (a true
step is proved, a false one refuted, whatever its letters), and a step that uses it, or a sum over its
members, is refused by name."""

from __future__ import annotations

import pytest

from symattn.derivation.latex import parse_latex
from symattn.derivation.latex_document import check_latex
from symattn.derivation.position_sets import Congruence, PositionSet
from symattn.errors import ParseError, SymattnError

SETS = [(r"\mathcal{P}_{I} = \{J : I \geq J\}", "P_i := {j : i >= j}"),
        (r"A_{I} = \{J \mid (I - J) \bmod l = 0\}", "A_i := {j : (i-j) mod l = 0}"),
        (r"B_{I} = \{J : I - 2 \le J \le I\}", "B_i := {j : i-2 <= j <= i}")]


def document(the_set, claim_right=r"V^\top \mathrm{softmax}(K Q^\top)", i="i", j="j"):
    the_set = the_set.replace("I", i).replace("J", j)
    return ("%: convention: row\n"
            rf"$$ Q, K, V \in \mathbb{{R}}^{{n \times d}}, \quad {the_set} $$"
            rf"$$ \left(\mathrm{{softmax}}(Q K^\top) V\right)^\top = {claim_right} $$")


@pytest.mark.parametrize("letters", [("i", "j"), ("t", "s")])
@pytest.mark.parametrize("the_set", [s for s, _ in SETS])
def test_a_set_no_step_uses_changes_no_verdict(the_set, letters):
    true = check_latex(document(the_set, r"V^\top \mathrm{softmax}(Q K^\top)^\top", *letters))
    assert [s.status for s in true.steps] == ["proved"]
    false = check_latex(document(the_set, r"V^\top \mathrm{softmax}(K Q^\top)", *letters))
    assert [s.status for s in false.steps] == ["refuted"]


@pytest.mark.parametrize(("the_set", "shown"), SETS)
def test_the_set_is_shown_as_written(the_set, shown):
    report = check_latex(document(the_set, r"V^\top \mathrm{softmax}(Q K^\top)^\top"))
    assert any(d.startswith(shown) for d in report.definitions), report.definitions


def test_a_congruence_is_read_with_its_parts():
    st = parse_latex(r"$$ A_i = \{j : (i - j) \bmod l = 0\} $$")[0]
    s = st.links[0][2]
    assert isinstance(s, PositionSet) and s.var == "j" and isinstance(s.cond, Congruence)
    assert (s.cond.left.text(), s.cond.modulus.text(), s.cond.residue.text()) == ("(i-j)", "l", "0")


def test_a_step_that_uses_the_set_is_refused_by_name():
    text = ("%: convention: row\n"
            r"$$ Q, K, V \in \mathbb{R}^{n \times d}, \quad \mathcal{P}_i = \{j : i \geq j\} $$"
            r"$$ \mathrm{softmax}(Q K^\top) V + \mathcal{P}_i = \mathrm{softmax}(Q K^\top) V $$")
    (step,) = check_latex(text).steps
    assert step.status == "ill-formed"
    assert "the set of positions P_i := {j : i >= j} used in a step" in step.error


def test_a_sum_over_the_members_of_a_set_is_refused_by_name():
    text = (r"$$ q_i, k_j, v_j \in \mathbb{R}^{d}, \quad \mathcal{P}_i = \{j : j \le i\} $$"
            r"$$ o_i = \sum_{j \in \mathcal{P}_i} \exp(q_i k_j^\top) v_j $$")
    with pytest.raises(ParseError, match=r"a sum over the members of a set"):
        check_latex(text)


@pytest.mark.parametrize(("text", "message"), [
    (r"$$ P_i = \{j : i \geq 1\} $$", "does not mention j"),
    (r"$$ Q \in \mathbb{R}^{n \times n}, \quad P_i = \{j : j \le i \ge 2\} $$", "mixes the directions"),
    (r"$$ Q \in \mathbb{R}^{n \times n} \supseteq P $$", "an inclusion of sets is not read"),
    (r"$$ Q \in \mathbb{R}^{n \times n}, \quad i \geq j $$", "inequalities are read only"),
    (r"$$ M_{ij} = \begin{cases} 0 & \text{if } j \notin P_i \\ -\infty & \text{otherwise} \end{cases} $$",
     "a condition of membership"),
])
def test_what_is_not_a_set_of_positions_is_refused(text, message):
    with pytest.raises(SymattnError, match=message):
        check_latex(text)
