"""The constructs papers typeset, each read (and the step proved) or refused with a message that
names it and says what to write instead."""

from __future__ import annotations

import json
import re
import time

import pytest
import sympy as sp

import symattn as sa
from symattn.cli import main
from symattn.derivation import ast, check_statements
from symattn.derivation.latex import parse_latex
from symattn.errors import DerivationError, ParseError

ROW = "%: convention: row\n"
SHAPES = r"$Q \in \mathbb{R}^{n \times d}$, $K \in \mathbb{R}^{m \times d}$, $V \in \mathbb{R}^{m \times d}$" + "\n"
HEADS = (r"$W^Q_i \in \mathbb{R}^{d \times d_k}$, $W^K_i \in \mathbb{R}^{d \times d_k}$, "
         r"$W^V_i \in \mathbb{R}^{d \times d_v}$ and $W^O \in \mathbb{R}^{hd_v \times d}$" + "\n")


def check(text):
    return check_statements(parse_latex(text), dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_mathrm_with_a_subscript_inside_is_a_name_with_its_subscript():
    (st,) = parse_latex(r"$$ \mathrm{head_i} = \mathrm{head_1} $$")
    assert st.first == ast.Name((0, 0), "head", ast.Name((0, 0), "i"))
    assert st.links[0][2] == ast.Name((0, 0), "head", ast.Num((0, 0), 1))


@pytest.mark.parametrize("dots", ["...", r"\dots", r"\cdots", r"\ldots"])
def test_the_transformer_papers_multihead_with_where_and_any_ellipsis(dots):
    text = ROW + SHAPES + HEADS + (
        r"\begin{align*} \mathrm{MultiHead}(Q, K, V) &= \mathrm{Concat}(\mathrm{head_1}, " + dots
        + r", \mathrm{head_h})W^O\\ \text{where}~\mathrm{head_i} &= \mathrm{Attention}(QW^Q_i, KW^K_i, VW^V_i)"
        r"\end{align*}" "\n"
        r"$$ \mathrm{Concat}(\mathrm{head_1}, " + dots + r", \mathrm{head_h})W^O = "
        r"\sum_{i=1}^{h} \mathrm{head_i} W^O_i $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved", "proved"], r.steps
    assert any("read as its h blocks" in n for n in r.notes)  # W^O beside W^O_i: a block partition
    assert any("read from the sum" in n for n in r.notes)


def test_an_explicit_list_of_heads():
    text = ROW + SHAPES + r"$$ i = 1, \dots, 3 $$" + HEADS.replace("hd_v", "3 d_v") + (
        r"$$ \mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2, \mathrm{head}_3)W^O $$")
    assert statuses(text) == ["proved"]


def test_a_new_name_defined_by_a_chain_with_several_equals():
    text = ROW + SHAPES + HEADS.replace(r"W^K_i \in", r"W^K \in").replace(r"W^V_i \in", r"W^V \in") + (
        r"$$ \mathrm{MQA}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)W^O"
        r" = \sum_{i=1}^{h} \mathrm{head}_i W^O_i, \quad \mathrm{head}_i = \mathrm{Attention}(QW^Q_i, KW^K, VW^V) $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved"]
    assert any(d.startswith("MQA(Q, K, V) :=") for d in r.definitions)


def test_a_declaration_after_its_use_in_the_same_display():
    text = (r"$$ h = 1, \cdots, H, \quad \mathbf{X}_{h} \in M^{d \times n} $$" "\n"
            r"$$ \mathbf{W}^{O} = \begin{bmatrix} \mathbf{W}_{1}^{O} & \cdots & \mathbf{W}_{H}^{O} \end{bmatrix},"
            r" \quad \mathbf{W}_{h}^{O} \in M^{e \times d} $$" "\n"
            r"$$ \mathbf{W}^{O} \begin{bmatrix} \mathbf{X}_{1} \\ \vdots \\ \mathbf{X}_{H} \end{bmatrix} = "
            r"\sum_{h=1}^{H} \mathbf{W}_{h}^{O} \mathbf{X}_{h} $$")
    assert statuses(text) == ["proved", "proved"]  # W^O = [...] holds as the seed reads W^O


def test_a_whole_matrix_that_is_not_h_blocks_is_an_error_naming_both():
    text = ROW + SHAPES + HEADS.replace("hd_v", "d_v") + r"$$ W^O = \sum_{i=1}^{h} W^O_i $$"
    with pytest.raises(DerivationError, match=r"W\^O \(d_v × d\) is not h blocks"):
        check(text)


def test_macros_newcommand_def_and_arguments():
    text = (r"\newcommand{\dmodel}{d_{\text{model}}} \def\sm{\mathrm{softmax}} \newcommand{\proj}[2]{#1 W^{#2}}"
            "\n" + ROW + r"$$ Q \in \mathbb{R}^{n \times \dmodel}, K \in \mathbb{R}^{m \times \dmodel}, "
            r"W^Q, W^K \in \mathbb{R}^{\dmodel \times d_k} $$" "\n"
            r"$$ \sm(\proj{Q}{Q} (\proj{K}{K})^\top) = \sm(Q W^Q W^{K\top} K^\top) $$")
    assert statuses(text) == ["proved"]


def test_a_macro_that_uses_itself_is_refused_quickly():
    start = time.perf_counter()
    with pytest.raises(ParseError, match=r"the macro \\a expands too often"):
        parse_latex(r"\def\a{\a} $$ \a $$")
    assert time.perf_counter() - start < 5.0


def test_a_macro_that_doubles_at_every_level_is_refused_quickly():
    defs = "".join(f"\\def\\m{chr(97 + k)}{{\\m{chr(98 + k)}\\m{chr(98 + k)}}}" for k in range(25))
    start = time.perf_counter()
    with pytest.raises(ParseError, match="expands too often"):
        parse_latex(defs + r"\def\mz{Q} $$ \ma = Q $$")
    assert time.perf_counter() - start < 5.0


def test_primes_belong_to_the_name():
    (st,) = parse_latex(r"$$ V'_i = W' $$")
    assert st.first == ast.Name((0, 0), "V'", ast.Name((0, 0), "i"))
    assert st.links[0][2] == ast.Name((0, 0), "W'")


def test_hyphenated_operator_names():
    (st,) = parse_latex(r"$$ \operatorname{Self-Attention}(X) = X $$")
    assert st.first.target.base == "Self-Attention"
    (st,) = parse_latex(r"$$ \mathrm{GQA}\text{-}G(X) = X $$")
    assert st.first.target.base == "GQA-G"


@pytest.mark.parametrize("rel, kind", [(r"\coloneqq", "Define"), (r"\triangleq", "Define"), (r"\equiv", "Chain")])
def test_definition_and_identity_signs(rel, kind):
    (st,) = parse_latex(rf"$$ A {rel} B $$")
    assert type(st).__name__ == kind


@pytest.mark.parametrize("frac", [r"\frac", r"\tfrac", r"\dfrac"])
def test_fractions(frac):
    text = rf"$$ Q \in \mathbb{{R}}^{{n \times d}} $$ $$ {frac}{{Q}}{{\sqrt{{d}}}} = {frac}{{1}}{{\sqrt{{d}}}} Q $$"
    assert statuses(text) == ["proved"]


def test_scalars_vectors_ones_and_exp():
    text = (r"$$ x \in \mathbb{R}^n, \quad c \in \mathbb{R}, \quad X \in \mathbb{R}^{n \times d} $$" "\n"
            r"$$ \mathbf{1}_n^\top x = x^\top \mathbf{1}_n $$ $$ c X = X c $$ $$ \exp(X)^\top = \exp(X^\top) $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved"] * 3
    assert r.steps[0].lhs_expr.shape == (1, 1)


def test_e_to_a_power_sums_over_a_declared_range_and_compound_subscripts():
    text = (r"$$ h = 1, \dots, H, \quad W_h \in \mathbb{R}^{d \times d}, \quad X \in \mathbb{R}^{d \times n} $$"
            r"$$ e^{X} = \exp(X) $$"
            r"$$ \sum_h W_h X = \sum_{h \in [H]} W_h X = \sum_{h=1}^{H} W_{(h-1)+1} X = \sum_{h=1}^{H} W_h X $$"
            r"$$ \sum_i W_i X = X $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved"] * 4 + ["ill-formed"]
    assert "has no range" in r.steps[4].error


def test_the_head_index_as_a_superscript():
    text = (r"$$ x \in \mathbb{R}^{d \times n}, \quad h = 1, \dots, H $$ $$ W_Q^h, W_K^h \in \mathbb{R}^{e \times d} $$"
            r"$$ \sum_{h=1}^{H} x^T W_Q^{h\,T} W_K^h x = \sum_{h=1}^{H} (W_Q^h x)^T W_K^h x $$")
    assert statuses(text) == ["proved"]


def test_the_seeds_one_argument_attention_is_the_documents_own_function():
    text = (r"%: score: dot" "\n" r"$$ \mathbf{X} \in M^{d \times n}, \quad h = 1, \cdots, H $$"
            r"$$ \mathbf{W}_{h}^{Q}, \mathbf{W}_{h}^{K} \in M^{e \times d}, "
            r"\quad \mathbf{W}_{h}^{V} \in M^{d \times d} $$"
            r"$$ \operatorname{Attention}(\mathbf{X}) = \mathbf{X} + \sum_{h=1}^{H} \left( \mathbf{W}_{h}^{V}\mathbf{X}"
            r" \right) \operatorname{Softmax} \left[ (\mathbf{W}_{h}^{K}\mathbf{X})^{\mathsf{T}} (\mathbf{W}_{h}^{Q}"
            r"\mathbf{X}) \right] $$"
            r"$$ \operatorname{Attention}(\mathbf{X}) = \mathbf{X} + \sum_{h=1}^{H} \operatorname{Attention}("
            r"\mathbf{W}_{h}^{Q}\mathbf{X}, \mathbf{W}_{h}^{K}\mathbf{X}, \mathbf{W}_{h}^{V}\mathbf{X}) $$")
    assert statuses(text) == ["proved"]


def test_prose_and_inline_mentions_between_formulas_are_skipped():
    text = "Queries of dimension $d_k$ and \\textbf{keys}. " + r"$Q \in \mathbb{R}^{n \times d_k}$ so that $Q = Q$."
    assert [type(s).__name__ for s in parse_latex(text)] == ["Declare", "Chain"]


def test_a_list_in_brackets_names_its_own_bracket():
    with pytest.raises(ParseError, match=r"closing the '\[' at line 1, column 8"):
        parse_latex(r"$$ X = [x_1, x_2 $$")


@pytest.mark.parametrize("text, construct, instead", [
    (r"$$ B, C, D, x \in \mathbb{R}^{n \times n} $$ $$ A = (B \otimes C \otimes D) x $$", "three factors",
     "two factors"),
    (r"$$ a = \lceil b \rceil $$", r"\\lceil outside a subscript", "a subscript of a head family"),
    (r"$$ m = \max_i a_i $$", r"\\max_\{\.\.\.\}: an extremum over an index", "softmax"),
    (r"$$ A \in \mathbb{R}^{n \times n} $$ $$ R = \cos(A) $$", r"\\cos of the n × n matrix", "of a number"),
    (r"$$ d_j \leftarrow d $$", r"\\leftarrow", ":= or ="),
    (r"$$ M_{ts} = \begin{cases} 1 & s \le t \\ 0 & s > t \end{cases} $$", "value of the cases environment",
     "a mask entry by entry"),
    (r"$$ K \in \mathbb{R}^{n \times d} $$ $$ o = K_{0:t} $$", r"position 0 does not exist", "numbered from 1"),
    (r"$$ A \in \mathbb{R}^{n \times n} $$ $$ o = A_{t,s} $$", r"a double subscript on the declared matrix A",
     "whole matrices"),
    (r"$$ o = A_{t,s} $$", r"unknown symbol A_t,s \(a double subscript", "a declared name"),
    (r"$$ o = F(X)_{t} $$", r"entries of a result", "the whole matrix"),
    (r"$$ F(X)_{t,:} := X W_{t,:} $$", r"does not start with row t", "F(X)_{t,:} := softmax(A_{t,:}) M"),
    (r"$$ Q \in \mathbb{R}^{n \times n} $$ $$ A = Q^{1/2} $$", r"the power \^\{1/2\} of the matrix Q",
     "roots of matrices and A^0 are not part of the notation"),
    (r"$$ Q \in \mathbb{R}^{n \times m} $$ $$ A = Q^{-1} $$", r"the inverse \^\{-1\} of the n × m matrix Q",
     "the inverse of a square matrix"),
    (r"$$ \phi : M^{N \times D} \to M^{N \times C} $$", "feature map", "between vector spaces"),
    (r"$$ A = \mathrm{GQA}\text{-} 2 $$", r"\\text\{-\} inside a name", "one command"),
])
def test_refused_constructs_name_themselves_and_what_to_write(text, construct, instead):
    with pytest.raises(DerivationError) as info:
        check(text)
    assert re.search(construct, str(info.value)), str(info.value)
    assert instead in info.value.expected, info.value.expected


def test_the_rows_of_x_named_as_a_list_and_sums_over_positions():
    text = (ROW + r"$$ X \in \mathbb{R}^{N \times D} $$ $$ X = [x_1,x_2,\dots,x_N] $$"
            r"$$ \frac{1}{N}\sum_{i=1}^{N}x_i = \sum_{i=1}^{N}\frac{1}{N} x_i $$"
            r"$$ \sum_{i=1}^{N} x_i = \mathbf{1}_N^\top X $$")
    r = check(text)
    assert any("x_i is row i of X (1 × D)" in n for n in r.notes), r.notes
    assert r.steps[0].status == "proved"
    assert r.steps[1].status in ("proved", "unknown")  # never refuted: it holds


def test_a_sum_to_an_undeclared_bound_says_what_to_declare():
    text = r"$$ a \in \mathbb{R}^{1 \times D} $$ $$ \sum_{j=1}^{M} a = a $$"
    (s,) = check(text).steps
    assert s.status == "ill-formed" and "neither a number of heads nor a declared dimension" in s.error


def test_a_row_wise_definition_is_the_matrix_definition():
    text = (ROW + r"$$ X \in \mathbb{R}^{T \times D}, W \in \mathbb{R}^{D \times E} $$ $$ A := X X^\top $$"
            r"$$ \operatorname{F}(X)_{t,:} := \operatorname{softmax}(A_{t,:}) X W $$"
            r"$$ \operatorname{F}(X) = \operatorname{Attention}(X, X, X) W $$ $$ X X^\top = A_{t,:} $$")
    r = check(text)
    assert r.steps[0].status == "refuted"  # F has no scale, Attention has: refuted, as it should be
    assert r.steps[0].diagnosis.slip == "scale applied where it does not belong"
    assert r.definitions[1].startswith("F(X) := softmax_row(A) X W")
    assert r.steps[1].status == "ill-formed" and "read only in a row-wise definition" in r.steps[1].error


def test_a_map_with_its_signature_is_checked_for_every_argument_of_that_shape():
    text = (r"$$ \mathbf{Q} \in M^{d_{\text{model}} \times n} $$"  # the global Q is not the map's Q
            r"$$ f : M^{d_{k} \times n} \times M^{d_{k} \times m} \to M^{m \times n} $$"
            r"$$ \begin{align*} \operatorname{Attention}: M^{d_{k} \times n} \times M^{d_{k} \times m} \times "
            r"M^{d_{v} \times m} &\to M^{d_{v} \times n} \\ (\mathbf{Q},\mathbf{K},\mathbf{V}) &\mapsto "
            r"\mathbf{V} \operatorname{Softmax}\left(f(\mathbf{Q},\mathbf{K})\right) \tag{1} \end{align*} $$")
    (s,) = check(text).steps
    assert s.status == "proved" and s.lhs_expr.shape == s.rhs_expr.shape
    assert str(s.rhs_expr.shape[0]) == "d_v"
    with pytest.raises(ParseError, match="gives the score function a rule"):
        parse_latex(r"$$ f : M^{a \times n} \times M^{a \times m} \to M^{m \times n}, (Q, K) \mapsto K^T Q $$")


def test_the_kronecker_reading_is_vec_of_the_product_exactly():
    """(A ⊗ W) acting on x (columns are positions) is read as W x Aᵀ: vec(W x Aᵀ) = (A ⊗ W) vec(x), the
    identity vec(A X B) = (Bᵀ ⊗ A) vec(X), and the mixed product (A ⊗ W)(B ⊗ U) = AB ⊗ WU, exactly."""
    from sympy import kronecker_product

    def vec(M):
        return sp.Matrix([M[i, j] for j in range(M.cols) for i in range(M.rows)])

    def mat(name, r, c):
        return sp.Matrix(r, c, lambda i, j: sp.Symbol(f"{name}{i}{j}"))

    A, B, W, U, x = mat("a", 3, 3), mat("b", 3, 3), mat("w", 2, 2), mat("u", 2, 2), mat("x", 2, 3)
    assert (kronecker_product(A, W) * vec(x) - vec(W * x * A.T)).expand() == sp.zeros(6, 1)
    assert (kronecker_product(A, W) * kronecker_product(B, U) - kronecker_product(A * B, W * U)).expand() \
        == sp.zeros(6, 6)


def test_tensor_products_act_on_the_matrix_to_their_right():
    text = (r"$$ x \in \mathbb{R}^{d \times n}, A \in \mathbb{R}^{n \times n}, W, U \in \mathbb{R}^{d \times d} $$"
            r"$$ (\mathrm{Id} \otimes W) \cdot (A \otimes \mathrm{Id}) \cdot (\mathrm{Id} \otimes U) \cdot x = "
            r"(A \otimes W U) \cdot x = W U x A^T $$ $$ (A \otimes W) = A $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved", "proved", "ill-formed"]
    assert "acts on nothing" in r.steps[2].error


def test_parameters_after_a_semicolon_and_a_cdot_placeholder():
    text = (ROW + r"$$ Q \in \mathbb{R}^{n \times d}, K, V \in \mathbb{R}^{m \times d} $$"
            r"$$ \mathrm{Att}(Q, K, V; \omega) = \omega\left(QK^\top\right)V, \quad "
            r"\omega(\cdot) = \mathrm{softmax}(\cdot / \sqrt{d}) $$"
            r"$$ \mathrm{Att}(Q, K, V; \omega) = \mathrm{Attention}(Q, K, V) $$"
            r"$$ \mathrm{Att}(Q, K, V; \beta) = \mathrm{Attention}(Q, K, V) $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved", "ill-formed"]
    assert "called with (; beta)" in r.steps[1].error


# reports ----------------------------------------------------------------------


def test_every_failing_step_gets_a_counterexample_and_a_diagnosis():
    text = (ROW + r"$$ Q \in \mathbb{R}^{n \times d}, K \in \mathbb{R}^{m \times d} $$"
            r"$$ Q K^\top = (K Q^\top)^\top = K Q^\top = (K Q^\top)^\top $$")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved", "ill-formed", "ill-formed"]
    assert all(s.diagnosis is not None for s in r.steps[1:]), [s.diagnosis for s in r.steps]


def test_an_ill_formed_first_expression_says_why():
    r = check(r"$$ Q \in \mathbb{R}^{n \times d} $$ $$ Q Q = Q $$")
    (s,) = r.steps
    assert s.status == "ill-formed" and "cannot multiply Q (n × d) by Q (n × d)" in s.error
    assert "cannot multiply" in s.as_dict()["error"]


def test_a_corrected_right_side_is_latex_in_the_files_own_names():
    text = (r"$$ K \in \mathbb{R}^{m \times d}, W \in \mathbb{R}^{d \times e} $$"
            r"$$ (K W)^\top = W^\top K^\top = K^\top W^\top $$")
    r = check(text)
    bad = r.steps[1]
    assert bad.status == "ill-formed" and bad.diagnosis.slip == "transposed product"
    assert bad.diagnosis.corrected == r"W^{\mathsf{T}} K^{\mathsf{T}}"


def test_an_off_by_one_index_is_named():
    text = (r"$$ h = 1, \dots, H $$ $$ W_h \in \mathbb{R}^{d \times d}, X \in \mathbb{R}^{d \times n} $$"
            r"$$ \sum_{h=1}^{H} W_h X = \sum_{h=1}^{H} W_{h+1} X $$")
    (s,) = check(text).steps
    assert s.status == "refuted" and s.verdict.counterexample is not None
    assert s.diagnosis.slip == "off-by-one in an index" and s.diagnosis.detail == "W_{h+1} should be W_h"
    assert s.diagnosis.corrected == r"\sum_{h=1}^{H} W_{h} X" and s.diagnosis.proved


# command line -------------------------------------------------------------------


def test_json_on_an_unreadable_file_is_an_error_object(tmp_path, capsys):
    bad = tmp_path / "bad.tex"
    bad.write_text(r"$$ Q = \otimes $$", encoding="utf-8")
    assert main(["check", "--json", str(bad)]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["error"]["line"] == 1 and "otimes" in out["error"]["message"]
    assert main(["check", "--json", str(tmp_path / "missing.tex")]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "FileNotFoundError"


@pytest.mark.parametrize("name, fmt", [("d.latex", None), ("D.TEX", None), ("d.txt", "tex")])
def test_latex_files_by_suffix_in_any_case_or_by_format(tmp_path, capsys, name, fmt):
    f = tmp_path / name
    f.write_text(r"$$ Q \in M^{d \times n} $$ $$ (Q^\top)^\top = Q $$", encoding="utf-8")
    assert main(["check", str(f)] + (["--format", fmt] if fmt else [])) == 0, capsys.readouterr()


# the Python API's rough edges -----------------------------------------------------


def test_check_steps_with_one_expression_is_an_error():
    n = sa.dims("n")
    with pytest.raises(DerivationError, match="at least two expressions, got 1"):
        sa.check_steps([sp.MatrixSymbol("A", n, n)])


def test_declare_names_the_bad_argument_not_a_line_the_user_never_wrote():
    with pytest.raises(DerivationError, match=r"rows = 2.5 \(float\) is not a dimension") as info:
        sa.Derivation().declare("Q", 2.5, "n")
    assert "line" not in str(info.value)


def test_a_corrected_right_side_keeps_the_files_fonts():
    text = (r"$$ \mathbf{Q} \in M^{d \times n}, \quad \mathbf{K} \in M^{d \times m} $$"
            r"$$ (\mathbf{K}^{\mathsf{T}} \mathbf{Q})^{\mathsf{T}} = \mathbf{K}^{\mathsf{T}} \mathbf{Q} $$")
    (s,) = check(text).steps
    assert s.status == "ill-formed" and s.diagnosis is not None
    assert r"\mathbf{Q}" in s.diagnosis.corrected and r"\mathbf{K}" in s.diagnosis.corrected


# positions, slices and masks written entry by entry (the KV cache) --------------------------

CACHE = (ROW + r"$$ Q, K, V \in \mathbb{R}^{n \times d_k}, \quad q_t = Q_{t,:} $$"
         r"$$ o_t = \mathrm{softmax} \left( \frac{q_t K_{1:t}^\top}{\sqrt{d_k}} \right) V_{1:t} = \left[ "
         r"\mathrm{softmax} \left( \frac{QK^\top}{\sqrt{d_k}} + M \right) V \right]_{t,:}, \quad "
         r"M_{ts} = \begin{cases} 0 & s \le t \\ -\infty & s > t \end{cases} $$")
CAUSAL = r"0 & s \le t \\ -\infty & s > t"


def test_a_kv_cache_step_reads_slices_and_the_cases_mask_as_the_librarys_causal_mask():
    r = check(CACHE)
    (s,) = r.steps
    assert s.status == "proved", s.error
    assert "t = n" in s.scope  # checked for t < n and again for t = n
    assert any("t is a position, 1 <= t <= n" in n for n in r.notes), r.notes
    assert s.rhs_expr.atoms(sa.CausalMask) and not s.rhs_expr.atoms(sa.PaddingMask)


@pytest.mark.parametrize("mask", [r"0 & t \ge s \\ -\infty & t < s", r"0 & s \le t \\ -\infty & \text{otherwise}"])
def test_the_same_causal_mask_written_otherwise_is_read_alike(mask):
    assert statuses(CACHE.replace(CAUSAL, mask)) == ["proved"]


@pytest.mark.parametrize("old, new", [
    (CAUSAL, r"0 & s < t \\ -\infty & s \ge t"),  # the diagonal masked too
    (CAUSAL, r"0 & s > t \\ -\infty & s \le t"),  # the future visible instead of the past
    (r" + M \right)", r" \right)"),  # no mask
    (CAUSAL, r"0 & s \le n \\ -\infty & s > n"),  # a padding mask that hides nothing
])
def test_a_wrong_mask_is_refuted_not_misread(old, new):
    text = CACHE.replace(old, new)
    assert text != CACHE
    (s,) = check(text).steps
    assert s.status == "refuted" and s.verdict.counterexample is not None


@pytest.mark.parametrize("old, new, message", [
    (r"-\infty & s > t", r"-\infty & s > t + 1", "not the complement of the row 0"),
    (r"-\infty & s > t", r"-\infty & s > t \\ 0 & t > s", "not one row 0 and one row"),
    (CAUSAL, r"0 & s \le d_k \\ -\infty & s > d_k", None),  # a padding mask of another length: read, refuted
    (r"\right]_{t,:}", r"\right]_{t+1,:}", "position t \\+ 1 is after the last when t = n"),
    (r"\right]_{t,:}", r"\right]_{u,:}", "a second position u beside t"),
    (r"V_{1:t} =", r"V_{1:t-1} =", "positions 1..t - 1 are empty"),
])
def test_a_mask_or_a_slice_that_is_not_read_says_why(old, new, message):
    (s,) = check(CACHE.replace(old, new)).steps
    if message is None:
        assert s.status == "refuted"
        return
    assert s.status == "ill-formed" and re.search(message, s.error), s.error


def test_an_off_by_one_slice_on_the_left_of_a_chain_is_named():
    (s,) = check(CACHE.replace(r"V_{1:t} =", r"V_{1:t-1} =")).steps
    d = s.diagnosis
    assert d is not None and d.slip == "off-by-one in an index" and d.side == "left" and d.proved, d
    assert "V_{1:t}" in d.corrected


def test_a_padding_mask_with_a_position_as_its_valid_length_in_the_column_convention():
    text = (r"$$ Q \in \mathbb{R}^{d \times n}, \quad K, V \in \mathbb{R}^{d \times m} $$"
            r"$$ V_{1:t} \mathrm{Softmax}\left(\frac{K_{1:t}^\top Q}{\sqrt{d}}\right) = V \mathrm{Softmax}\left("
            r"\frac{K^\top Q}{\sqrt{d}} + M\right), \quad M_{ij} = \begin{cases} 0 & i \le t \\ -\infty & i > t "
            r"\end{cases} $$")
    (s,) = check(text).steps
    assert s.status == "proved" and s.rhs_expr.atoms(sa.PaddingMask), s.error
    (s,) = check(text.replace(r"0 & i \le t \\ -\infty & i > t", r"0 & i \le j \\ -\infty & i > j")).steps
    assert s.status == "refuted"


# the rotation of Su et al. 2021, typeset as a pmatrix of cos and sin ------------------------

ROPE = (r"$$ \boldsymbol{x}_m, \boldsymbol{x}_n \in \mathbb{R}^{d}, \quad \boldsymbol{W}_q, \boldsymbol{W}_k \in "
        r"\mathbb{R}^{d \times d} $$"
        r"$$ \boldsymbol{R}^d_{\Theta,m} = \begin{pmatrix} \cos{m\theta_1} & -\sin{m\theta_1} & \cdots & 0 & 0 \\"
        r" \sin{m\theta_1} & \cos{m\theta_1} & \cdots & 0 & 0 \\ \vdots & \vdots & \ddots & \vdots & \vdots \\"
        r" 0 & 0 & \cdots & \cos{m\theta_{d/2}} & -\sin{m\theta_{d/2}} \\"
        r" 0 & 0 & \cdots & \sin{m\theta_{d/2}} & \cos{m\theta_{d/2}} \end{pmatrix} $$"
        r"$$ (\boldsymbol{R}^d_{\Theta,m} \boldsymbol{W}_q \boldsymbol{x}_m)^\intercal (\boldsymbol{R}^d_{\Theta,n} "
        r"\boldsymbol{W}_k \boldsymbol{x}_n) = \boldsymbol{x}_m^\intercal \boldsymbol{W}_q^\intercal "
        r"\boldsymbol{R}^d_{\Theta,n-m} \boldsymbol{W}_k \boldsymbol{x}_n $$")


def test_the_rotation_pmatrix_is_the_librarys_rope_with_any_frequencies():
    r = check(ROPE)
    (s,) = r.steps
    assert s.status == "proved", s.error
    rotations = [a for a in sp.preorder_traversal(s.rhs_expr) if type(a).__name__ == "BlockDiag"]
    assert rotations and any("rope(m)" in n and "does not fix" in n for n in r.notes), r.notes


def test_the_rotation_by_the_wrong_relative_position_is_refuted_and_named():
    (s,) = check(ROPE.replace(r"\Theta,n-m}", r"\Theta,m-n}")).steps
    assert s.status == "refuted" and s.verdict.counterexample is not None
    assert s.diagnosis.slip == "rotation by the wrong relative position" and s.diagnosis.proved
    assert r"\Theta,n-m" in s.diagnosis.corrected


@pytest.mark.parametrize("old, new, message", [
    (r"\cos{m\theta_1} & -\sin{m\theta_1} & \cdots", r"\cos{m\theta_1} & \sin{m\theta_1} & \cdots",
     r"row 1, column 2"),  # the transpose of the rotation: not the one typeset
    (r"\sin{m\theta_1} & \cos{m\theta_1}", r"\sin{m\theta_1} & \cos{m\theta_2}", "differs from the first block"),
    (r"\sin{m\theta_1} & \cos{m\theta_1}", r"\sin{n\theta_1} & \cos{n\theta_1}", "not an entry of a rotation at m"),
    (r"\cdots & 0 & 0 \\", r"\cdots & 1 & 0 \\", "not an entry of a rotation"),
    (r"\cos{m\theta_{d/2}} & -", r"\cos{m\theta_{d}} & -", "differs from the last block"),
])
def test_a_pmatrix_that_is_not_that_rotation_is_refused_by_its_cell(old, new, message):
    with pytest.raises(DerivationError, match=message) as info:
        check(ROPE.replace(old, new, 1))
    assert "as Su et al. typeset it" in info.value.expected


def test_cos_of_a_matrix_and_a_labelled_subscript_without_a_rotation_are_refused():
    text = r"$$ A \in \mathbb{R}^{d \times d} $$ $$ A = \cos{A} $$"
    (s,) = check(text).steps
    assert s.status == "ill-formed" and "read only of numbers" in s.error, s.error
    text = r"$$ A \in \mathbb{R}^{d \times d} $$ $$ A = R_{\Theta,m} $$"
    (s,) = check(text).steps
    assert s.status == "ill-formed" and "read only for a rotation defined by its pmatrix" in s.error, s.error


def test_a_huge_whole_power_of_a_matrix_is_refused_quickly_not_expanded():
    start = time.perf_counter()
    (s,) = check(r"$$ A \in \mathbb{R}^{n \times n} $$ $$ A^{999999} = A^{999999} $$").steps
    assert s.status == "ill-formed" and "read up to ^{64}" in s.error, s.error
    assert time.perf_counter() - start < 10
    (s,) = check(r"$$ A \in \mathbb{R}^{n \times n} $$ $$ A^{3} = A A A $$").steps
    assert s.status == "proved"


def test_a_power_before_a_parenthesis_is_a_product_not_an_application():
    """A^{2}(C - A)B is A² (C − A) B: it was read as (A (C − A))² B and a true step refuted."""
    decl = r"Let $A, B, C \in \mathbb{R}^{n \times n}$." + "\n"
    assert statuses(decl + r"$$A^{2}(C - A)B = A^{2}CB - A^{3}B$$") == ["proved"]
    assert statuses(decl + r"$$A^{2}(C - A)B = A^{2}CB - A^{2}B$$") == ["refuted"]
    assert statuses(decl + r"$$A^{\top}(C - A) = A^{\top}C - A^{\top}A$$") == ["proved"]


def test_a_declared_vector_of_ones_is_the_ones_vector():
    r"""\mathbf{1} \in \mathbb{R}^{\ell \times 1} is a paper's ones vector, not a free matrix: rows of a
    row softmax sum to one, so softmax(R)(XW + 1b) = softmax(R)XW + 1b (Tay et al. 2021) is proved; it
    was refuted with 1 = [[0], [1]]."""
    decl = (r"Let $X \in \mathbb{R}^{\ell \times d}$, $W \in \mathbb{R}^{d \times d}$, "
            r"$b \in \mathbb{R}^{1 \times d}$, $\mathbf{1} \in \mathbb{R}^{\ell \times 1}$, "
            r"$R \in \mathbb{R}^{\ell \times \ell}$." + "\n" + ROW)
    assert statuses(decl + r"$$\mathrm{softmax}(R)(XW + \mathbf{1} b) = \mathrm{softmax}(R) X W + \mathbf{1} b$$") \
        == ["proved"]
    assert statuses(decl + r"$$\mathrm{softmax}(R)(XW + \mathbf{1} b) = \mathrm{softmax}(R) X W + 2 \mathbf{1} b$$") \
        == ["refuted"]
    with pytest.raises(DerivationError, match="vector of ones declared as"):
        check(r"Let $\mathbf{1} \in \mathbb{R}^{n \times n}$." + "\n" + r"$$\mathbf{1} = \mathbf{1}$$")
