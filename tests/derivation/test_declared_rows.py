"""Rows of declared matrices in LaTeX derivations: a part of a declared matrix is never (re)defined, the
file's own names in every report, a column equated with a row said beside the verdict, one declaration
per name, and the slips of linear attention and of a mask named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.commands.check import load
from symattn.derivation import report as R
from symattn.derivation.latex import parse_latex
from symattn.derivation.model import check_statements
from symattn.errors import DerivationError

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"
HEADER = r"$$ {X}, K \in \mathbb{{R}}^{{N \times D}}, \quad V \in \mathbb{{R}}^{{N \times M}} $$"
FEATURES = (r"$$ Q, K \in \mathbb{R}^{N \times D}, \quad V \in \mathbb{R}^{N \times M}, \quad "
            r"\phi : \mathbb{R}^{D} \to \mathbb{R}^{C} $$")


def check(text, budget=20.0, diagnose=True):
    return check_statements(parse_latex(text), budget=budget, diagnose=diagnose, dialect="latex")


# a part of a declared matrix is a claim, never a definition ---------------------------------------------

PARTS = ["", "_i", "_t", "_j", "_1", "_{t,:}", "_{1:t}"]
RIGHTS = ["2 K{s}", "K{s} + K{s}", "K{s}", "{X}{s}", "{X}{s} - K{s}"]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from("QABXYZ"), st.sampled_from(PARTS[1:]), st.lists(st.sampled_from(RIGHTS), min_size=1,
                                                                    max_size=3))
def test_a_chain_from_a_part_of_a_declared_matrix_is_never_a_definition(X, part, rights):
    chain = " = ".join([X + part] + [r.format(X=X, s=part) for r in rights])
    text = HEADER.format(X=X) + "\n\n$$ " + chain + " $$\n"
    r = check(text, budget=2.0, diagnose=False)
    assert r.definitions == [], (chain, r.definitions)
    assert len(r.steps) == len(rights) and r.steps[0].lhs.startswith(X), (chain, [s.lhs for s in r.steps])


@settings(max_examples=20, deadline=None)
@given(st.sampled_from("QABXYZ"), st.lists(st.sampled_from(RIGHTS), min_size=1, max_size=3))
def test_a_declared_matrix_then_written_with_equals_is_defined_only_by_an_expression_without_it(X, rights):
    # c \in R^{d_c}, then c = W h: the paper defines c (a claim that a free matrix equals an expression
    # without it could only be refuted); a right side that holds X itself is a claim about X
    chain = " = ".join([X] + [r.format(X=X, s="") for r in rights])
    r = check(HEADER.format(X=X) + "\n\n$$ " + chain + " $$\n", budget=2.0, diagnose=False)
    if any("{X}" in r for r in rights) or X == "K":
        assert r.definitions == [] and len(r.steps) == len(rights), (chain, r.definitions)
    else:
        assert len(r.definitions) == 1 and r.definitions[0].startswith(f"{X} := "), (chain, r.definitions)
        assert "declared, then written with '='" in r.definitions[0]
        assert len(r.steps) == len(rights) - 1


def test_a_false_claim_about_a_row_is_refuted_not_read_as_a_definition():
    r = check(HEADER.format(X="Q") + "\n\n$$ Q_i = 2 K_i = K_i + K_i $$\n")
    assert r.definitions == [] and [s.status for s in r.steps] == ["refuted", "proved"]
    cex = r.steps[0].verdict.counterexample
    assert cex.certificate and set(cex.dims) == {"D", "N", "i"} and 1 <= cex.dims["i"] < cex.dims["N"]


def test_a_claim_about_rows_then_a_step_that_would_use_it_is_not_proved_by_it():
    text = FEATURES + "\n\n$$ Q_i = K_i $$\n\n$$ \\phi\\left(Q_i\\right)^T \\phi\\left(Q_i\\right) = " \
        "\\phi\\left(K_i\\right)^T \\phi\\left(K_i\\right) $$\n"
    r = check(text)
    assert r.definitions == [] and [s.status for s in r.steps] == ["refuted", "refuted"]


# the file's own names in every report -------------------------------------------------------------------

INTERNAL = re.compile(r"(?:^|[\s(,=])(_[A-Za-z][\w/]*)|Dummy|\u27e8k\u27e9")
FILES = sorted(p.name for p in PAPERS.glob("*.tex"))


@pytest.mark.parametrize("name", FILES)
def test_no_report_of_a_paper_shows_an_internal_name(name):
    report = load(str(PAPERS / name), 20.0)
    for shown in (R.table(report), R.to_json(report), R.to_markdown(report)):
        found = sorted({m.group(0).strip() for m in INTERNAL.finditer(shown)})
        assert not found, (name, found)


def test_a_position_is_shown_as_the_length_it_runs_to():
    r = check(HEADER.format(X="Q") + "\n\n$$ Q_i = Q_i + K_i - K_i $$\n")
    (s,) = r.steps
    assert s.status == "proved" and s.general
    assert s.scope.startswith("all dimensions (D, N) and every position 1 <= i < N; and at i = N: "), s.scope


def test_an_undecided_step_names_the_length_not_the_internal_slack():
    import sympy as sp

    from symattn.derivation.diagnose import as_written
    from symattn.proof.verdict import Verdict

    i, N, slack = sp.Symbol("i", positive=True), sp.Symbol("N", positive=True), sp.Dummy("s", positive=True)
    v = Verdict("unknown", False, "none", f"sides agree at {i + slack} = 3", (f"tried {i + slack}",))
    w = as_written({"i": (i, N, slack)}, v, last=False)
    assert str(slack) not in w.scope + " ".join(w.trace) and "(N - i)" in w.scope, (w.scope, w.trace)


# a column equated with a row ----------------------------------------------------------------------------

ORIENT = FEATURES + "\n\n\\begin{equation}\n    \\phi\\left(Q_i\\right)^T \\phi\\left(K\\right)^T V = " \
    "V^T \\phi\\left(K\\right) \\phi\\left(Q_i\\right)\n\\end{equation}\n"


def test_a_row_equated_with_a_column_says_so_beside_the_verdict_and_in_json():
    r = check(ORIENT)
    (s,) = r.steps
    assert s.status == "proved" and s.orientation == "row = column, compared as vectors (M entries)"
    assert s.as_dict()["orientation"] == s.orientation and "orientation: row = column" in s.scope
    assert "proved, general (as vectors)" in R.table(r)
    assert json.loads(R.to_json(r))["steps"][0]["orientation"] == s.orientation


def test_a_row_and_a_column_stay_a_shape_error_where_no_row_is_read_as_a_vector():
    text = (r"$$ Q, K \in \mathbb{R}^{N \times D}, \quad A \in \mathbb{R}^{D \times 1}, \quad "
            r"B \in \mathbb{R}^{1 \times D} $$" "\n\n$$ Q_i = K_i $$\n\n$$ A = B $$\n")
    r = check(text, diagnose=False)
    assert [s.status for s in r.steps] == ["refuted", "ill-formed"] and not r.steps[1].orientation


def test_the_paper_keeps_its_orientation_note():
    r = check((PAPERS / "katharopoulos2020.tex").read_text(encoding="utf-8"))
    assert [s.status for s in r.steps] == ["proved", "proved"]
    assert r.steps[0].orientation.startswith("column = row") and not r.steps[1].orientation


# one declaration per name -------------------------------------------------------------------------------


@pytest.mark.parametrize("decls", [
    r"\phi : \mathbb{R}^{D} \to \mathbb{R}^{C}, \quad \phi \in \mathbb{R}^{D \times C}",
    r"\phi \in \mathbb{R}^{D \times C}, \quad \phi : \mathbb{R}^{D} \to \mathbb{R}^{C}",
    r"\phi : \mathbb{R}^{D} \to \mathbb{R}^{C}, \quad \phi \in \mathbb{R}",
])
def test_a_feature_map_and_a_matrix_of_the_same_name_is_declared_twice(decls):
    text = rf"$$ Q \in \mathbb{{R}}^{{N \times D}}, \quad {decls} $$" "\n\n$$ \\phi\\left(Q\\right) = Q \\phi $$\n"
    with pytest.raises(DerivationError, match="phi is declared twice"):
        check(text)


# sums over positions ------------------------------------------------------------------------------------


def _one_step(lhs, rhs):
    return check(FEATURES + f"\n\n\\begin{{equation}}\n    {lhs} = {rhs}\n\\end{{equation}}\n", budget=5.0,
                 diagnose=False).steps[0]


def test_a_causal_sum_up_to_a_position_is_refused_speaking_of_positions():
    s = _one_step(r"\sum_{j=1}^{i} \phi\left(K_j\right) V_j^T", r"\phi\left(K\right)^T V")
    assert s.status == "ill-formed" and "the sum over the positions j runs to the position i" in s.error, s.error
    assert "head" not in s.error and r"\sum_{j=1}^{N}" in s.error


def test_a_sum_over_part_of_the_rows_names_the_declared_dimension_not_a_head_index():
    s = _one_step(r"\sum_{j=1}^{N} \phi\left(K_j\right) V_j^T", r"\sum_{j=1}^{N-1} \phi\left(K_j\right) V_j^T")
    assert s.status == "ill-formed" and "the sum over the positions j runs to N-1" in s.error, s.error
    assert "head" not in s.error and "a declared dimension" in s.error


def test_a_sum_over_rows_without_a_range_runs_over_every_row():
    s = _one_step(r"\sum_j \phi\left(K_j\right) V_j^T", r"\phi\left(K\right)^T V")
    assert s.status == "proved" and s.general, s.error


# slips of linear attention and of a mask ----------------------------------------------------------------

KATHAROPOULOS = (PAPERS / "katharopoulos2020.tex").read_text(encoding="utf-8")


SWAPPED = (r"\phi\left(Q\right) \left(\phi\left(K\right)^T V\right)",
           r"\phi\left(K\right) \left(\phi\left(Q\right)^T V\right)")
DENOMINATOR = (r"{\phi\left(Q_i\right)^T \sum_{j=1}^N \phi\left(K_j\right)}",
               r"{\phi\left(Q_i\right)^T \sum_{j=1}^N \phi\left(Q_j\right)}")


@pytest.mark.parametrize("change, slip, detail", [
    (SWAPPED, "queries and keys swapped", "are exchanged"),
    (DENOMINATOR, "wrong denominator", "Q_j should be K_j in the denominator"),
])
def test_a_swapped_or_wrong_matrix_in_linear_attention_is_named(change, slip, detail):
    old, new = change
    assert KATHAROPOULOS.count(old) == 1
    text = KATHAROPOULOS.replace(old, new)
    bad = [s for s in check(text).steps if not s.proved]
    assert len(bad) == 1 and bad[0].status == "refuted" and bad[0].verdict.counterexample.certificate
    d = bad[0].diagnosis
    assert d is not None and d.slip == slip and detail in d.detail and d.proved, d


def test_a_mask_shifted_by_one_is_corrected_by_removing_the_shift():
    cache = (PAPERS / "seed002_kv_cache.tex").read_text(encoding="utf-8")
    text = cache.replace(r"0 & s \le t \\ -\infty & s > t", r"0 & s \le t+1 \\ -\infty & s > t+1")
    assert text != cache
    (s,) = check(text).steps
    d = s.diagnosis
    assert s.status == "refuted" and d is not None and d.slip == "mask condition off by one" and d.proved, d
    assert d.corrected == r"M_{ts} = \begin{cases} 0 & s \le t \\ -\infty & s > t \end{cases}", d.corrected
