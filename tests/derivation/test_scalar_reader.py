"""The scalar reader: online softmax derivations (running values, vectors in blocks, maxima)."""

from __future__ import annotations

import json

import pytest
import sympy as sp

from symattn.cli import main
from symattn.derivation import scalars as S
from symattn.derivation.scalar_check import Elaborator, Prover, Refuter, check_scalar_document
from symattn.errors import DerivationError, ParseError, SoundnessError

DECLARE = r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad m_0 = -\infty, \quad d_0 = 0 $$" + "\n"
RECUR = (r"\begin{align*} m_j &\leftarrow \max\left(m_{j-1}, x_j\right) \\"
         r" d_j &\leftarrow d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j} \end{align*}" + "\n")
VECTORS = (r"$$ x^{(1)}, x^{(2)} \in \mathbb{R}^{B}, \quad x = \begin{bmatrix} x^{(1)} & x^{(2)} \end{bmatrix}"
           r" \in \mathbb{R}^{2B} $$" + "\n"
           r"$$ m(x) := \max_i x_i, \quad f(x) := \begin{bmatrix} e^{x_1 - m(x)} & \ldots & e^{x_B - m(x)}"
           r" \end{bmatrix}, \quad \ell(x) := \sum_i f(x)_i $$" + "\n")


def chain(*rows):
    return r"\begin{align*} " + r" \\ ".join(rows) + r" \end{align*}"


def statuses(text):
    return [s.status for s in check_scalar_document(text).steps]


def test_the_trigger_is_max_or_an_assignment_outside_comments():
    assert S.is_scalar_document(r"$$ m = \max(a, b) $$")
    assert S.is_scalar_document(r"$$ d_j \gets d $$")
    assert not S.is_scalar_document("% \\max in a comment\n$$ A = B $$")
    assert not S.is_scalar_document(r"$$ \mathrm{softmax}(x) = y $$")


def test_statements_of_the_papers_are_read():
    stmts = S.parse_scalar_document(DECLARE + RECUR + VECTORS.replace("x^{(", "y^{(").replace("x =", "y ="))
    kinds = [type(s).__name__ for s in stmts]
    assert kinds == ["Declare", "Chain", "Chain", "Recur", "Recur", "Declare", "Define", "Define", "Define", "Define"]
    assert S.latex(stmts[3].body) == r"\max(m_{j - 1}, x_{j})"
    assert S.latex(stmts[4].body) == r"d_{j - 1} \times e^{m_{j - 1} - m_{j}} + e^{x_{j} - m_{j}}"


def test_the_online_normalizer_is_proved_by_induction_on_j():
    r = check_scalar_document(DECLARE + RECUR + chain(
        r"d_j &= d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j-1} e^{x_k - m_{j-1}} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j-1} e^{x_k - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j} \exp(x_k - m_j)"))
    assert r.ok, [(s.status, s.scope) for s in r.steps]
    assert all(s.general for s in r.steps)
    assert "induction hypothesis" in r.steps[1].scope and "induction" not in r.steps[0].scope
    assert all(r"m_0 = -\infty" in s.scope for s in r.steps)
    assert any("finite" in n for n in r.notes)


def test_minus_infinity_is_used_exactly():
    el = Elaborator(S.parse_scalar_document(DECLARE + RECUR))
    pr = Prover(el, budget=5.0)
    m, d = el.seqfuns["m"], el.seqfuns["d"]
    x = el.reals["x"][0]
    assert pr.at_index(m(pr.j), 1, maxima=True) == x[1]  # max(-oo, x_1) = x_1
    assert pr.at_index(d(pr.j), 1) == sp.exp(x[1] - m(1))  # 0 * e^{-oo} = 0
    assert pr.at_index(sp.exp(m(pr.j - 1)), 1) == 0  # e^{-oo} = 0


def test_a_step_true_only_at_j_1_is_not_proved():
    # d_j = e^{x_j - m_j} holds at j = 1 (d_0 = 0, e^{-oo} = 0), and fails at j = 2
    r = check_scalar_document(DECLARE + RECUR + chain(r"d_j &= e^{x_j - m_j}"))
    assert [s.status for s in r.steps] == ["refuted"]
    cex = r.steps[0].verdict.counterexample
    assert cex.dims["j"] >= 2 and cex.certificate


def test_the_induction_hypothesis_is_only_a_claim_of_the_chain_itself():
    # the step needs d_{j-1} = sum_k e^{x_k - m_{j-1}}, which this chain never claims
    r = check_scalar_document(DECLARE + RECUR + chain(
        r"d_j &= d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j-1} e^{x_k - m_{j-1}} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= 2 \sum_{k=1}^{j} e^{x_k - m_j}"))
    assert not r.ok
    assert r.steps[1].status != "proved" or r.steps[2].status == "refuted"
    assert r.steps[2].status == "refuted"


def test_a_dropped_rescaling_factor_is_named():
    r = check_scalar_document(DECLARE + RECUR + chain(r"d_j &= d_{j-1} + e^{x_j - m_j}"))
    s = r.steps[0]
    assert s.status == "refuted" and s.diagnosis.slip == "rescaling factor dropped"
    assert s.diagnosis.corrected == r"e^{m_{j - 1} - m_{j}} d_{j - 1} + e^{x_{j} - m_{j}}"


def test_an_off_by_one_in_a_running_index_is_named():
    r = check_scalar_document(DECLARE + RECUR + chain(
        r"d_j &= \sum_{k=1}^{j-1} e^{x_k - m_{j-1}} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}"
        r" = \sum_{k=1}^{j} e^{x_k - m_{j-1}}"))
    bad = [s for s in r.steps if s.status == "refuted"]
    assert bad and bad[-1].diagnosis.slip == "off-by-one in a running index"


def test_vectors_in_blocks_for_every_length():
    r = check_scalar_document(VECTORS + chain(
        r"m(x) &= \max(m(x^{(1)}), m(x^{(2)}))",
        r"f(x) &= \begin{bmatrix} e^{m(x^{(1)}) - m(x)} f(x^{(1)}) & e^{m(x^{(2)}) - m(x)} f(x^{(2)}) \end{bmatrix}",
        r"\ell(x) &= e^{m(x^{(1)}) - m(x)} \ell(x^{(1)}) + e^{m(x^{(2)}) - m(x)} \ell(x^{(2)})"))
    assert r.ok and all(s.general for s in r.steps)
    assert "every B >= 1" in r.steps[0].scope
    assert r.steps[0].method.startswith("case split on the maximum entry")


@pytest.mark.parametrize("claim", [
    r"m(x) &= m(x^{(1)})",
    r"m(x) &= \max(m(x^{(1)}), m(x^{(1)}))",
    r"\ell(x) &= \ell(x^{(1)}) + \ell(x^{(2)})",
    r"f(x) &= \begin{bmatrix} f(x^{(1)}) & f(x^{(2)}) \end{bmatrix}",
])
def test_false_claims_about_blocks_are_refuted_with_a_certificate(claim):
    r = check_scalar_document(VECTORS + chain(claim))
    s = r.steps[0]
    assert s.status == "refuted", (s.status, s.error)
    assert s.verdict.counterexample.certificate and s.verdict.counterexample.dims["B"] >= 1


def test_a_new_name_is_defined_by_the_first_equals_of_its_chain():
    r = check_scalar_document(VECTORS + r"$$ M = m(x) = \max(m(x^{(1)}), m(x^{(2)})) $$")
    assert r.ok and len(r.steps) == 1 and "M = m(x)" in r.definitions[-1]


def test_a_vector_of_the_wrong_declared_length_is_refused():
    with pytest.raises(DerivationError, match="declared in R"):
        check_scalar_document(VECTORS.replace("^{2B}", "^{3B}"))


@pytest.mark.parametrize("text, construct", [
    (r"$$ m = \min(a, b) \max(a) $$", r"\\min is not read"),
    (r"$$ m = \max(a) $$", r"\\max of one argument"),
    (r"$$ m_j \leftarrow \max(m_{j-1}, x_j) $$", r"no initial value m_0"),
    (r"$$ x^{(1)} \in \mathbb{R}^{B} $$ $$ y = \max_i x^{(1)}_3 $$", r"subscripts no vector"),
    (r"$$ x^{(1)} \in \mathbb{R}^{B} $$ $$ m(x) := \max_i x_i $$ $$ m(x^{(1)}) = m(z) $$", r"z is not declared"),
])
def test_what_is_not_read_is_refused_naming_it(text, construct):
    with pytest.raises((ParseError, DerivationError), match=construct):
        r = check_scalar_document(text)
        raise DerivationError("; ".join(s.error for s in r.steps), 0, 0)


def test_the_agreement_check_raises_on_a_false_proof():
    el = Elaborator(S.parse_scalar_document(DECLARE + RECUR))
    pr = Prover(el, budget=5.0)
    d = el.seqfuns["d"]
    with pytest.raises(SoundnessError):
        Refuter(el, pr).agree(d(pr.j), d(pr.j) + 1, count=2)
    assert Refuter(el, pr).agree(d(pr.j), d(pr.j), count=2) == 2


def test_symattn_check_reads_a_scalar_file(tmp_path, capsys):
    path = tmp_path / "online.tex"
    path.write_text(DECLARE + RECUR + chain(r"d_j &= d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}"),
                    encoding="utf-8")
    assert main(["check", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["steps"][0]["status"] == "proved"


def test_the_example_of_the_docs_runs_as_shown():
    import re
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "scalars.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    ns: dict = {}
    exec(code, ns)  # the documentation's own example, not user input
    assert [s.status for s in ns["report"].steps] == ["proved"] * 3 and ns["report"].ok
    assert ns["report"].steps[1].scope.startswith(r"every j in 1..V, all real entries: j = 1 exactly from "
                                                  r"m_0 = -\infty, d_0 = 0; j >= 2 symbolically, from the induction")


@pytest.mark.parametrize("claim, status", [
    (r"d_j &= \sum_{k=1}^{j} e^{x_k - m_j}", "proved"),  # the invariant itself, by induction in one step
    (r"d_j &= \sum_{k=1}^{j} e^{x_k - m_{j-1}}", "refuted"),
    (r"d_j &= \sum_{k=1}^{j-1} e^{x_k - m_j}", "refuted"),
    (r"m_j &= \max(m_{j-1}, x_1)", "refuted"),
])
def test_the_invariant_in_one_step_and_its_near_misses(claim, status):
    assert statuses(DECLARE + RECUR + chain(claim)) == [status]


@pytest.mark.parametrize("claim, status", [
    (r"d_j &= d_j + m_{j-1} - m_{j-1}", "unknown"),  # at j = 1: -oo - (-oo) is undefined
    (r"d_j &= d_j e^{m_{j-1}} e^{-m_{j-1}}", "unknown"),  # at j = 1: e^{-oo} e^{+oo} is undefined
    (r"d_j &= d_j + 0 \times e^{m_{j-1}}", "proved"),  # at j = 1: 0 e^{-oo} = 0
])
def test_at_j_1_the_initial_values_enter_before_anything_cancels(claim, status):
    assert statuses(DECLARE + RECUR + chain(claim)) == [status]


SHIFT = (r"$$ x^{(1)}, x^{(2)} \in \mathbb{R}^{B} $$" + "\n"
         r"$$ m(x) := \max_i x_i, \quad g(x) := \begin{bmatrix} x_1 - 10 & \ldots & x_B - 10 \end{bmatrix} $$" + "\n")


@pytest.mark.parametrize("claim", [
    r"m(\begin{bmatrix} x^{(1)} & g(x^{(2)}) \end{bmatrix}) &= m(x^{(1)})",
    r"m(\begin{bmatrix} x^{(1)} & -x^{(2)} \end{bmatrix}) &= m(x^{(1)})",
])
def test_a_maximum_over_a_shifted_or_negated_block_is_never_proved(claim):
    s = check_scalar_document(SHIFT + chain(claim)).steps[0]
    assert s.status == "refuted", (s.status, s.error)
    assert s.verdict.counterexample.certificate


def test_the_agreement_check_is_the_same_in_every_process():
    import subprocess
    import sys

    code = ("from symattn.derivation.scalar_refute import stable_seed; import sympy as sp; "
            "from symattn.proof.maxcases import VecMax, block; "
            "x = sp.IndexedBase('x', real=True); B = sp.Symbol('B', integer=True, positive=True); "
            "print(stable_seed(VecMax(block(B, x)), sp.Dummy('p') + 1))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(runs) == 1 and "_" in runs.pop()


@pytest.mark.parametrize("cells", [
    r"v_1 - v_1 & \ldots & v_B - v_1",
    r"e^{v_1 - v_1} & \ldots & e^{v_B - v_1}",
])
def test_a_constant_entry_in_a_bmatrix_is_not_taken_for_the_running_index(cells):
    text = (r"$$ x \in \mathbb{R}^{B} $$" + "\n"
            r"$$ g(v) := \begin{bmatrix} " + cells + r" \end{bmatrix}, \quad s(v) := \sum_i g(v)_i $$" + "\n"
            + chain(r"s(x) &= 0"))
    s = check_scalar_document(text).steps[0]
    assert s.status != "proved"
    assert "v_{1}" in s.error and "fixed index" in s.error


@pytest.mark.parametrize("last", [r"x_{B-1}", r"x_{2B}", r"x_{B+1}"])
def test_the_last_cell_of_a_bmatrix_must_end_at_a_length(last):
    text = (r"$$ y \in \mathbb{R}^{B} $$" + "\n"
            r"$$ f(x) := \begin{bmatrix} e^{x_1} & \ldots & e^{" + last + r"} \end{bmatrix},"
            r" \quad \ell(x) := \sum_i f(x)_i $$" + "\n" + chain(r"\ell(y) &= \sum_i e^{y_i}"))
    s = check_scalar_document(text).steps[0]
    assert s.status != "proved"
    assert "ends at x_{" in s.error and "its length (B)" in s.error


@pytest.mark.parametrize("text, first, second", [
    (r"$$ x \in \mathbb{R}^{B} $$ $$ f(x) := \sum_i x_i $$" + "\n" + r"$$ f(x) := \max_i x_i $$"
     + "\n" + chain(r"f(x) &= \max_i x_i"), "a function at line 1", "a function at line 2"),
    (r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad x \in \mathbb{R}^{B} $$ $$ m(v) := \max_i v_i $$"
     + chain(r"\max(m(x), x_1) &= m(x)"), "a sequence of reals", r"a vector in R^{B}"),
    (r"$$ a, y \in \mathbb{R}, \quad y \in \mathbb{R}^{B} $$ $$ m(v) := \max_i v_i $$" + chain(r"m(y) + a &= a + m(y)"),
     "a real number", r"a vector in R^{B}"),
])
def test_a_name_declared_twice_is_refused_naming_both_places(text, first, second):
    with pytest.raises(DerivationError, match="declared twice") as info:
        check_scalar_document(text)
    assert first in str(info.value) and second in str(info.value)


def test_ell_and_mathrm_ell_are_different_names():
    text = (r"$$ x \in \mathbb{R}^{B} $$ $$ \ell(x) := \sum_i x_i, \quad \mathrm{ell}(x) := \max_i x_i $$"
            + chain(r"\ell(x) &= \mathrm{ell}(x)"))
    assert statuses(text) == ["refuted"]


def test_operatorname_max_is_max():
    text = r"$$ a, b \in \mathbb{R} $$ $$ c = \operatorname{max}(a, b) $$" + chain(r"\max(a, b) &= c")
    assert S.is_scalar_document(text) and statuses(text) == ["proved"]


def test_two_running_values_at_the_same_index_are_ordered_by_name():
    text = (r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad m_0 = -\infty, \quad s_0 = 0 $$" + "\n"
            r"\begin{align*} m_j &\leftarrow \max(m_{j-1}, x_j) \\ s_j &\leftarrow s_{j-1} + x_j \end{align*}" + "\n"
            + chain(r"s_j &= s_{j-1} + x_j", r"&= \sum_{k=1}^{j} x_k"))
    assert statuses(text) == ["proved", "proved"]


@pytest.mark.parametrize("defs, path", [
    (r"f(x) := \max(f(x), 0)", "f -> f"),
    (r"f(x) := \max(g(x), 0), \quad g(x) := f(x) + 1", "f -> g -> f"),
])
def test_a_definition_by_itself_is_refused_naming_the_function(defs, path):
    s = check_scalar_document(r"$$ a \in \mathbb{R} $$ $$ " + defs + " $$" + chain(r"f(a) &= 0")).steps[0]
    assert s.status == "ill-formed" and "defined in terms of itself" in s.error and path in s.error


def test_json_is_printed_when_the_reader_itself_fails(tmp_path, capsys, monkeypatch):
    from symattn.derivation import scalar_check

    def broken(*args):
        raise TypeError("'<' not supported")

    monkeypatch.setattr(scalar_check, "_check_scalar_document", broken)
    path = tmp_path / "x.tex"
    path.write_text(DECLARE + RECUR, encoding="utf-8")
    assert main(["check", "--json", str(path)]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and "a bug of symattn" in out["error"]["message"]


@pytest.mark.parametrize("claim, status", [
    (r"\frac12 a &= \frac{a}{2}", "proved"),  # TeX: each unbraced argument of \frac is one token, a digit
    (r"\frac1{2} a &= \frac{a}{2}", "proved"),
    (r"\frac{a}2 &= \frac{a}{2}", "proved"),
    (r"\frac12 a &= \frac{12}{a}", "refuted"),
])
def test_frac_reads_an_unbraced_number_argument_as_one_digit(claim, status):
    assert statuses(r"$$ a \in \mathbb{R}, \quad b = \max(a, a) $$" + chain(claim)) == [status]


def test_frac_with_digits_left_over_is_refused_saying_how_tex_reads_it():
    with pytest.raises(ParseError, match=r"followed by 3"):
        check_scalar_document(r"$$ a \in \mathbb{R}, \quad b = \max(a, a) $$" + chain(r"\frac123 a &= a"))


@pytest.mark.parametrize("claim", [r"a b - b a &= 0", r"e^{a} e^{-a} &= 1", r"e^{-\infty} &= 0"])
def test_a_claim_sympy_evaluates_to_a_closed_one_is_proved_in_general(claim):
    s = check_scalar_document(r"$$ a, b \in \mathbb{R}, \quad c = \max(a, b) $$" + chain(claim)).steps[0]
    assert s.status == "proved" and s.general


def test_a_refuted_claim_about_numbers_names_no_dimension(tmp_path, capsys):
    text = r"$$ a, b \in \mathbb{R} $$" + chain(r"\max(a, b) &= a")
    s = check_scalar_document(text).steps[0]
    assert s.status == "refuted" and s.scope == "counterexample at the values shown"
    path = tmp_path / "m.tex"
    path.write_text(text, encoding="utf-8")
    main(["check", str(path)])
    out = capsys.readouterr().out
    assert "as given" not in out and "given dimensions" not in out


def test_a_step_dividing_by_a_value_says_where_it_is_nonzero():
    s = check_scalar_document(r"$$ a, b \in \mathbb{R}, \quad c = \max(a, b) $$"
                              + chain(r"\frac{a}{b} b &= a")).steps[0]
    assert s.status == "proved" and s.scope.endswith("where b != 0")
    s = check_scalar_document(r"$$ a, b \in \mathbb{R}, \quad c = \max(a, b) $$"
                              + chain(r"\frac{a}{2} 2 &= a")).steps[0]
    assert "where" not in s.scope


@pytest.mark.parametrize("body, shown", [
    (r"\max(m_{j-1}, x_{j-1})", r"x_{j - 1} is outside the declared x_1, ..., x_V (at j = 1 it is entry 0)"),
    (r"\max(m_{j-1}, x_{j+1})", r"x_{j + 1} is outside the declared x_1, ..., x_V (at j = V it is entry V + 1)"),
    (r"\max(m_{j-1}, x_0)", r"x_{0} is outside the declared x_1, ..., x_V (0 < 1)"),
])
def test_an_entry_outside_the_declared_sequence_is_refused(body, shown):
    text = (r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad m_0 = -\infty $$"
            r"\begin{align*} m_j &\leftarrow " + body + r" \end{align*}" + chain(r"m_j &= m_j"))
    with pytest.raises(DerivationError) as info:
        check_scalar_document(text)
    assert shown in str(info.value)


def test_a_sum_reading_an_entry_outside_the_sequence_is_refused_naming_it():
    s = check_scalar_document(DECLARE + RECUR + chain(r"d_j &= \sum_{k=0}^{j} e^{x_k - m_j}")).steps[0]
    assert s.status == "ill-formed" and "reads x_{0}, which is outside the declared x_1, ..., x_V" in s.error


def test_a_refuted_scalar_step_names_the_scalar_slip_catalogue(tmp_path, capsys):
    path = tmp_path / "m.tex"
    path.write_text(r"$$ a, b \in \mathbb{R} $$" + chain(r"\max(a, b) &= a + b"), encoding="utf-8")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "rescaling factor" in out and "softmax axis" not in out


@pytest.mark.parametrize("text, words", [
    (r"$$ x \in \mathbb{R}^{n} $$" + chain(r"\max_{i \in [n]} x_i &= \max_i x_i"),
     r"\max_{i \in ...}: a set of indices after \in is not read"),
    (r"$$ Q, K \in \mathbb{R}^{N \times D} $$ $$ a \in \mathbb{R} $$" + chain(r"\max(a, a) &= a"),
     "so it is read as a scalar derivation"),
    (r"$$ x_1, \ldots, x_V \in \mathbb{R}, \quad s_0 = 0 $$ \begin{align*} s_j &\leftarrow s_{j-1} + s_{j-2} + x_j"
     r" \end{align*}" + chain(r"s_j &= s_{j-1} + s_{j-2} + x_j"), r"s_{-1} has no value"),
])
def test_what_is_not_read_is_refused_in_the_scalar_readers_words(text, words):
    with pytest.raises((ParseError, DerivationError)) as info:
        check_scalar_document(text)
    assert words in str(info.value)


def test_max_of_a_set_in_braces_is_read():
    assert statuses(r"$$ a, b \in \mathbb{R} $$" + chain(r"\max\{a, b\} &= \max(b, a)")) == ["proved"]


def test_an_entry_at_the_index_of_a_sum_with_limits_says_so():
    s = check_scalar_document(r"$$ x \in \mathbb{R}^{n} $$ $$ m(v) := \max_i v_i $$"
                              + chain(r"\sum_{i=1}^{n} x_i &= \sum_i x_i")).steps[0]
    assert s.status == "ill-formed" and "i is the index of a sum or maximum with limits" in s.error


def test_user_names_that_look_like_builtins_stay_user_names():
    text = (r"$$ x, y \in \mathbb{R}^{B} $$ $$ \mathrm{Max}(x) := \max_i x_i, \quad \mathrm{exp}(x) := \sum_i x_i,"
            r" \quad \mathrm{oo}(x) := \max_i x_i $$"
            + chain(r"\max(\mathrm{Max}(x), \mathrm{oo}(y)) &= \mathrm{Max}(\begin{bmatrix} x & y \end{bmatrix})",
                    r"&= \mathrm{exp}(x)"))
    assert statuses(text) == ["proved", "refuted"]


def test_a_slip_in_the_step_that_needs_the_induction_hypothesis_is_named():
    r = check_scalar_document(DECLARE + RECUR + chain(
        r"d_j &= d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j} e^{x_k - m_{j-1}} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j} e^{x_k - m_j}"))
    s = r.steps[1]
    assert s.status == "refuted"
    assert s.diagnosis is not None and s.diagnosis.slip == "off-by-one in a running index"
    assert r"\sum_{k=1}^{j - 1}" in s.diagnosis.corrected and "by induction" in s.diagnosis.evidence


DAO_F = r"f(x) &= \begin{bmatrix} e^{m(x^{(1)}) - m(x)} f(x^{(1)}) & e^{m(x^{(2)}) - m(x)} f(x^{(2)}) \end{bmatrix}"
DAO_L = r"\ell(x) &= e^{m(x^{(1)}) - m(x)} \ell(x^{(1)}) + e^{m(x^{(2)}) - m(x)} \ell(x^{(2)})"


@pytest.mark.parametrize("claim, slip", [
    (DAO_L.replace(r"e^{m(x^{(1)}) - m(x)}", r"e^{m(x) - m(x^{(1)})}"), "rescaling factor inverted"),
    (DAO_F.replace(r"e^{m(x^{(2)}) - m(x)}", r"e^{m(x^{(1)}) - m(x)}"), "rescaling factor of another block"),
    (DAO_L.replace(r"\ell(x^{(2)})", r"\ell(x^{(1)})"), "another block's vector"),
    (r"f(x) &= \begin{bmatrix} e^{m(x^{(2)}) - m(x)} f(x^{(2)}) & e^{m(x^{(1)}) - m(x)} f(x^{(1)}) \end{bmatrix}",
     "blocks swapped"),
])
def test_dao_slips_are_named(claim, slip):
    s = check_scalar_document(VECTORS + chain(claim)).steps[0]
    assert s.status == "refuted" and s.diagnosis is not None and s.diagnosis.slip == slip
    assert s.diagnosis.proved


def test_an_inverted_factor_in_the_induction_step_is_named():
    r = check_scalar_document(DECLARE + RECUR + chain(
        r"d_j &= d_{j-1} \times e^{m_{j-1} - m_j} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j-1} e^{x_k - m_{j-1}} \times e^{m_j - m_{j-1}} + e^{x_j - m_j}",
        r"&= \sum_{k=1}^{j} e^{x_k - m_j}"))
    d = r.steps[1].diagnosis
    assert r.steps[1].status == "refuted" and d is not None
    assert d.slip == "rescaling factor inverted" and "by induction" in d.evidence


@pytest.mark.parametrize("claim, slip", [
    (r"\ell(x) &= \ell(x^{(1)}) + \ell(x^{(2)})", "rescaling factors dropped"),
    (r"m(x) &= m(x^{(1)}) + m(x^{(2)})", "a maximum written as a sum"),
])
def test_slips_of_the_whole_right_side_are_named(claim, slip):
    s = check_scalar_document(VECTORS + chain(claim)).steps[0]
    assert s.status == "refuted" and s.diagnosis is not None and s.diagnosis.slip == slip and s.diagnosis.proved
