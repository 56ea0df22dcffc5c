r"""Backward passes as papers typeset them: ``dX = F`` claims that F is the gradient of
the loss with respect to X, Σ_Y vjp(def_Y, X, dY) over the forward definitions Y that use X, and is
proved modulo the VJP rules, refuted with a counterexample whose inputs include the cotangent, or
ill-formed; a wrong step names its slip."""

from __future__ import annotations

from pathlib import Path

import pytest

from symattn.derivation.documents import check_text
from symattn.derivation.grad_notation import merge_gradient_tokens, rewrite_gradient_notation
from symattn.derivation.grad_slips import AXIS, DIAGONAL, SCALE, TRANSPOSE
from symattn.derivation.latex_lexer import tokenize_latex

PAPERS = Path(__file__).resolve().parents[2] / "examples" / "papers"

ROW = r"""%: convention: row
$$ Q, K, V \in \mathbb{R}^{N \times d} $$
$$ S = \frac{Q K^\top}{\sqrt{d}}, \quad P = \mathrm{softmax}(S), \quad O = P V $$
"""

COLUMN = r"""$$ Q \in \mathbb{R}^{d \times n}, \quad K, V \in \mathbb{R}^{d \times m} $$
$$ S = \frac{K^\top Q}{\sqrt{d}}, \quad P = \mathrm{softmax}(S), \quad O = V P $$
"""

VECTOR = r"""$$ z \in \mathbb{R}^{n}, \quad W \in \mathbb{R}^{m \times n} $$
$$ p = \mathrm{softmax}(z), \quad y = W p $$
$$ \frac{\partial L}{\partial p} = W^\top \nabla_y L $$
"""


def check(text):
    return check_text(text, "tex", source="<test>")


def gradient_steps(report):
    return [s for s in report.steps if getattr(s, "gradient", None) is not None]


def test_flashattention2_backward_is_proved_modulo_the_vjp_rules():
    r = check_text((PAPERS / "dao2023_backward.tex").read_text(), "tex")
    assert r.ok and [s.lhs for s in r.steps] == ["dV", "dP", "dS", "dQ", "dK"]
    assert all(s.general and "modulo the VJP rules" in s.scope and "checked exactly" in s.scope for s in r.steps)
    dS = r.steps[2]
    assert "softmax_rows" in dS.scope and "dP = dO V^T" in dS.scope  # D = rowsum(dO ∘ O) needs the file's dP


def test_the_erratum_is_ill_formed_and_named():
    r = check_text((PAPERS / "dao2023_backward_corrupted.tex").read_text(), "tex")
    bad = r.first_failure
    assert (bad.lhs, bad.status, bad.pos[0]) == ("dK", "ill-formed", 17) and "cannot multiply" in bad.error
    assert bad.diagnosis.slip == TRANSPOSE and bad.diagnosis.proved
    assert bad.diagnosis.corrected == "(1) / (sqrt(d)) dS^T Q"
    assert [s.status for s in r.steps[:4]] == ["proved"] * 4


SPELLINGS = [
    ("dV", "dO"),
    (r"\frac{\partial L}{\partial V}", r"\frac{\partial L}{\partial O}"),
    (r"\dfrac{\partial \mathcal{L}}{\partial V}", r"\frac{\partial \mathcal{L}}{\partial O}"),
    (r"\partial L / \partial V", r"\partial L / \partial O"),
    (r"\nabla_V L", r"\nabla_{O} L"),
    (r"\mathrm{d}V", r"\mathrm{d} O"),
    (r"\mathrm{d}\mathbf{V}", r"\mathrm{d}\mathbf{O}"),
]


@pytest.mark.parametrize("dv, do", SPELLINGS)
def test_every_spelling_of_the_gradient_reads_as_dX(dv, do):
    r = check(ROW + f"$$ {dv} = P^\\top {do} $$\n")
    (s,) = gradient_steps(r)
    assert (s.lhs, s.rhs, s.status, s.general) == ("dV", "P^T dO", "proved", True), (s.status, s.error)


def test_a_declared_delta_is_the_gradient():
    r = check(ROW + r"$$ \delta V = \frac{\partial L}{\partial V} $$" "\n" r"$$ \delta V = P^\top \delta O $$" "\n")
    (s,) = gradient_steps(r)
    assert (s.lhs, s.rhs, s.status) == ("dV", "P^T dO", "proved")
    assert any("the notation of the gradient" in n for n in r.notes)


def test_the_rewrite_keeps_columns_and_lines():
    text = "$$ \\frac{\\partial L}{\\partial W_i^Q} + X $$"
    out = rewrite_gradient_notation(text)
    assert out.index("X") == text.index("X") and "\\mathrm{dW}_i^Q" in out
    two = "$$ \\frac{\\partial L}\n{\\partial Q} = Y $$"
    assert rewrite_gradient_notation(two).count("\n") == 1


def test_dV_is_one_name_only_in_a_file_with_a_gradient_step():
    forward = tokenize_latex("$$ (dV)^\\top = d V^\\top $$")
    assert [t.value for t in merge_gradient_tokens(forward)][:3] == ["$$", "(", "d"]
    backward = tokenize_latex("$$ dV = P^\\top dO $$")
    assert [t.value for t in merge_gradient_tokens(backward) if t.kind == "ident"] == ["dV", "P", "dO"]


def test_a_forward_file_with_dV_reads_as_before():
    r = check("$$ V \\in \\mathbb{R}^{d \\times d} $$\n$$ (dV)^\\top = d V^\\top $$\n")
    assert r.ok and not gradient_steps(r)


def test_the_column_convention():
    r = check(COLUMN + "$$ dV = dO \\, P^\\top, \\quad dP = V^\\top dO $$\n"
              "$$ dS = P \\circ (dP - \\mathbf{1}_m \\, \\mathrm{colsum}(dP \\circ P)) $$\n"
              "$$ dQ = \\frac{1}{\\sqrt{d}} K \\, dS, \\quad dK = \\frac{1}{\\sqrt{d}} Q \\, dS^\\top $$\n")
    assert r.ok and len(gradient_steps(r)) == 5, [(s.lhs, s.status, s.error) for s in r.steps]
    assert "softmax_columns" in r.steps[2].scope


SLIPS = [
    (ROW, "dP = dO V^\\top, \\quad dS = P \\circ (dP - \\mathrm{rowsum}(dP \\circ P) \\mathbf{1}_N^\\top)"
          ", \\quad dQ = dS \\, K", "dQ", SCALE),
    (ROW, "dV = P \\, dO", "dV", TRANSPOSE),
    (ROW, "dP = dO V^\\top, \\quad dS = - P \\circ (\\mathrm{rowsum}(dP \\circ P) \\mathbf{1}_N^\\top)", "dS",
     DIAGONAL),
    (COLUMN, "dP = V^\\top dO, \\quad dS = P \\circ (dP - \\mathrm{rowsum}(dP \\circ P) \\mathbf{1}_n^\\top)", "dS",
     AXIS),
    (VECTOR, "\\mathrm{d}z = - p p^\\top \\frac{\\partial L}{\\partial p}", "dz", DIAGONAL),
]


@pytest.mark.parametrize("doc, steps, which, slip", SLIPS, ids=[f"{w}-{s}" for _, _, w, s in SLIPS])
def test_a_wrong_step_is_refuted_with_its_slip(doc, steps, which, slip):
    r = check(doc + f"$$ {steps} $$\n")
    bad = r.first_failure
    assert bad.lhs == which and bad.status == "refuted", (bad.lhs, bad.status, bad.error)
    cex = bad.verdict.counterexample
    assert cex.certificate and any(k.startswith("d") for k in cex.values)  # the cotangent is an input
    assert bad.diagnosis is not None and bad.diagnosis.slip == slip and bad.diagnosis.proved
    assert all(s.proved for s in r.steps if s is not bad)


def test_the_softmax_jacobian_of_a_vector():
    r = check(VECTOR + "$$ \\mathrm{d}z = (\\operatorname{diag}(p) - p p^\\top) \\,"
                       " \\frac{\\partial L}{\\partial p} $$\n")
    assert r.ok and r.steps[-1].general and "softmax_columns" in r.steps[-1].scope


def test_the_gradient_of_the_output_is_not_a_step():
    r = check(ROW + "$$ dO = P V $$\n")
    (s,) = gradient_steps(r)
    assert s.status == "ill-formed" and "no definition of the file uses O" in s.error


def test_a_gradient_of_the_wrong_shape_is_ill_formed():
    r = check(ROW + "$$ dV = dO^\\top P $$\n")
    (s,) = gradient_steps(r)
    assert s.status == "ill-formed" and "shape" in s.error


def test_a_quantity_used_twice_gets_the_sum_of_both_gradients():
    doc = (r"%: convention: row" "\n" r"$$ X \in \mathbb{R}^{n \times d}, \quad W \in \mathbb{R}^{d \times d} $$" "\n"
           r"$$ A = X W, \quad B = A + X $$" "\n")
    r = check(doc + r"$$ dA = dB, \quad dX = dA \, W^\top + dB $$" "\n")
    assert r.ok and [s.lhs for s in r.steps] == ["dA", "dX"], [(s.lhs, s.status, s.error) for s in r.steps]
    r = check(doc + r"$$ dX = dA \, W^\top $$" "\n")  # the residual's gradient left out
    assert r.steps[-1].status == "refuted"


def test_an_ordinary_step_uses_the_gradient_the_file_gives():
    """FlashAttention-2's rowsum(dO ∘ O) = rowsum(P ∘ dP) holds for the file's dP = dO Vᵀ, not for a free
    dP: with dP left free it was refuted, a true step."""
    given = ROW + r"$$ dP = dO V^\top $$" + "\n"
    (s,) = [s for s in check(given + r"$$ \mathrm{rowsum}(dO \circ O) = \mathrm{rowsum}(P \circ dP) $$").steps
            if getattr(s, "gradient", None) is None]
    assert s.status == "proved" and "with dP = dO V^T as the file's steps give them" in s.scope
    (s,) = [s for s in check(given + r"$$ \mathrm{rowsum}(dO \circ O) = \mathrm{rowsum}(dP) $$").steps
            if getattr(s, "gradient", None) is None]
    assert s.status == "refuted"
