"""The feature map phi : R^D -> R^C of linear attention (Katharopoulos et al. 2020) and the reading of
rows, scalars and masks that its derivation needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symattn as sa
from symattn.defs.feature_map import FeatureMap, coordinate, feature_map
from symattn.derivation.latex import parse_latex
from symattn.derivation.model import check_statements
from symattn.errors import ShapeError
from symattn.proof.entrywise import entry

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"
KATHAROPOULOS = (PAPERS / "katharopoulos2020.tex").read_text(encoding="utf-8")
N, D, C, M = sa.dims("N D C M")
Q, K = sp.MatrixSymbol("Q", N, D), sp.MatrixSymbol("K", N, D)
V = sp.MatrixSymbol("V", N, M)


def phi(X):
    return FeatureMap("phi", X, C)


def check(text, budget=20.0):
    return check_statements(parse_latex(text), budget=budget, dialect="latex")


# the node ------------------------------------------------------------------------------------------


def test_an_entry_of_phi_of_a_matrix_is_phi_of_that_row_only():
    i, c = sp.Dummy("i", integer=True), sp.Dummy("c", integer=True)
    by_matrix = entry(phi(Q), sp.Integer(2), c)
    by_row = entry(feature_map("phi", Q[2:3, :].T, C, D), c, sp.Integer(0))  # phi(Q_3), a column
    assert by_matrix == by_row
    assert entry(phi(Q), i, c) != entry(phi(K), i, c)  # another matrix, another row
    assert entry(phi(Q), i, c).has(Q[i:i + 1, :])


def test_phi_applies_to_every_row_for_every_phi():
    rows = sa.dims("R")
    X = sp.MatrixSymbol("X", rows + 2, D)
    v = sa.verify(phi(X)[1:2, :], phi(X[1:2, :]))
    assert v.status == "proved" and v.general, v.explain()
    assert "audit: 4 random exact instances agree" in v.explain()


def test_linear_attention_reassociates():
    v = sa.verify((phi(Q) * phi(K).T) * V, phi(Q) * (phi(K).T * V))
    assert v.status == "proved" and v.general


def test_a_false_claim_about_phi_is_refuted_with_phi_instantiated_exactly():
    v = sa.verify(phi(Q) * phi(K).T, phi(K) * phi(Q).T)
    assert v.status == "refuted", v.explain()
    cex = v.counterexample
    assert cex.certificate and "phi[0]" in cex.functions and ":=" in cex.functions["phi[0]"]


def test_two_feature_maps_are_not_confused():
    v = sa.verify(FeatureMap("phi", Q, C), FeatureMap("psi", Q, C))
    assert v.status == "refuted"


def test_at_concrete_sizes_phi_is_the_matrix_of_its_coordinate_functions():
    X = sp.MatrixSymbol("X", 2, 3)
    E = FeatureMap("phi", X, 2)
    assert isinstance(E, sp.ImmutableMatrix) and E.shape == (2, 2)
    assert E[1, 0] == coordinate("phi", 0)(X[1, 0], X[1, 1], X[1, 2])
    assert coordinate("phi", 0) != sp.Function("phi[0]")  # never a user's function that prints alike


def test_phi_of_a_vector_of_the_wrong_length_names_it_and_its_shape():
    with pytest.raises(ShapeError, match=r"phi maps R\^D to R\^C"):
        feature_map("phi", sp.MatrixSymbol("x", D + 1, 2), C, D)


@pytest.mark.parametrize("show", [str, repr, sp.latex, sp.srepr, lambda e: sp.pretty(e, use_unicode=True),
                                  lambda e: sp.pretty(e, use_unicode=False)])
def test_the_node_prints_with_sympys_own_printers(show):
    assert "phi" in show(phi(Q) * phi(K).T * V)
    assert sp.latex(phi(Q)) == r"\phi\left(Q\right)"


# the derivation --------------------------------------------------------------------------------------


def test_katharopoulos_reads_rows_scalars_and_the_feature_map():
    r = check(KATHAROPOULOS)
    assert [s.status for s in r.steps] == ["proved", "proved"], [s.error for s in r.steps]
    first = r.steps[0]
    assert "compared as vectors" in first.scope and "at i = N" in first.scope
    assert any("feature map, uninterpreted" in n for n in r.notes)
    assert any("read as a column vector" in n for n in r.notes)
    assert any("holds where it is nonzero" in n for n in r.notes)


def test_a_wrong_linear_attention_step_is_refuted_with_phi_instantiated():
    wrong = KATHAROPOULOS.replace(r"\phi\left(Q_i\right)^T \sum_{j=1}^N \phi\left(K_j\right) V_j^T}",
                                  r"\phi\left(Q_i\right)^T \sum_{j=1}^N \phi\left(Q_j\right) V_j^T}")
    assert wrong != KATHAROPOULOS
    s = check(wrong).steps[0]
    assert s.status == "refuted", s.error
    assert s.verdict.counterexample.certificate
    assert any(k.startswith("phi[") for k in s.verdict.counterexample.functions)


def test_a_sum_over_another_range_than_the_rows_is_an_error():
    text = KATHAROPOULOS.replace(r"\sum_{j=1}^N \phi\left(Q_i\right)^T \phi\left(K_j\right) V_j}",
                                 r"\sum_{j=1}^M \phi\left(Q_i\right)^T \phi\left(K_j\right) V_j}")
    assert text != KATHAROPOULOS
    s = check(text).steps[0]
    assert s.status == "ill-formed" and re.search(r"K_j is row j of K, which has N rows, and the sum over j runs "
                                                  r"to M", s.error), s.error


def test_a_feature_map_on_matrices_is_refused_saying_what_is_read():
    with pytest.raises(sa.DerivationError, match=r"a feature map between vector spaces"):
        parse_latex(r"$$ \phi : M^{N \times D} \to M^{N \times C} $$")


def test_the_corrupted_copy_names_the_transposed_product():
    s = check((PAPERS / "katharopoulos2020_corrupted.tex").read_text(encoding="utf-8")).steps[1]
    assert s.status == "ill-formed" and "cannot multiply" in s.error
    assert s.diagnosis.slip == "transposed product" and s.diagnosis.proved, s.diagnosis
    assert r"\phi\left(K\right)^{\mathsf{T}} V" in s.diagnosis.corrected


# renaming every symbol of the file changes no verdict ---------------------------------------------------

LETTERS = "QKVNDCMij"
POOL = "ABEFGHLPSUWXYZabcdkmnpqsuvxyz"


def _rename(text, mapping, greek):
    body = re.sub(r"(?<![\\A-Za-z])([" + LETTERS + r"])(?![A-Za-z])", lambda m: mapping[m.group(1)], text)
    return body.replace(r"\phi", "\\" + greek)


@settings(max_examples=4, deadline=None)
@given(st.permutations(POOL).map(lambda p: dict(zip(LETTERS, p))), st.sampled_from(["psi", "varphi", "sigma"]))
def test_renaming_every_symbol_of_the_paper_keeps_its_verdicts(mapping, greek):
    renamed = _rename(KATHAROPOULOS, mapping, greek)
    assert renamed != KATHAROPOULOS
    assert [s.status for s in check(renamed).steps] == ["proved", "proved"]


# slips inside a cases mask ------------------------------------------------------------------------------

CACHE = (PAPERS / "seed002_kv_cache.tex").read_text(encoding="utf-8")
CAUSAL = r"0 & s \le t \\ -\infty & s > t"


@pytest.mark.parametrize("mask, slip", [
    (r"0 & s < t \\ -\infty & s \ge t", "mask condition off by one"),
    (r"0 & s \ge t \\ -\infty & s < t", "mask direction flipped"),
    (r"0 & s > t \\ -\infty & s \le t", "mask direction flipped"),
])
def test_a_slip_in_a_cases_mask_is_refuted_and_named(mask, slip):
    text = CACHE.replace(CAUSAL, mask)
    assert text != CACHE
    (s,) = check(text).steps
    assert s.status == "refuted" and s.verdict.counterexample.certificate
    d = s.diagnosis
    assert d is not None and d.slip == slip and d.proved and d.side == "definition", d
    assert d.corrected.startswith("M_{ts} = \\begin{cases}") and "corrected definition" in d.describe()
