r"""``\nabla_{v} F`` of a scalar F the file defines (an energy): read as the gradient derived by the VJP
rules, so a true gradient is proved for all dimensions and a wrong one refuted with a counterexample."""

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.derivation.scalar_gradients import rewrite_scalar_gradients
from symattn.errors import DerivationError

HOPFIELD = (r"$$ \boldsymbol{X} \in \mathbb{R}^{d \times N}, \quad \boldsymbol{@} \in \mathbb{R}^{d}, "
            r"\quad \beta \in \mathbb{R} $$" "\n"
            r"$$ \mathrm{E} = - \beta^{-1} \log(\mathbf{1}_N^T \exp(\beta \boldsymbol{X}^T \boldsymbol{@})) "
            r"+ \frac{1}{2} \boldsymbol{@}^T \boldsymbol{@} + \beta^{-1} \log N $$" "\n"
            r"$$ \nabla_{\boldsymbol{@}} \mathrm{E} = RHS $$" "\n")
TRUE = r"- \boldsymbol{X} \mathrm{softmax}(\beta \boldsymbol{X}^T \boldsymbol{@}) + \boldsymbol{@}"
SLIP = r"- \boldsymbol{X} \mathrm{softmax}(\boldsymbol{X}^T \boldsymbol{@}) + \boldsymbol{@}"


def _hopfield(rhs: str, letter: str = r"\xi") -> str:
    return HOPFIELD.replace("RHS", rhs).replace("@", letter)


@pytest.mark.parametrize("letter", [r"\xi", "u"])
def test_the_hopfield_energy_gradient_is_proved_for_all_dimensions(letter):
    report = check_latex(_hopfield(TRUE, letter))
    (step,) = report.steps
    assert step.status == "proved" and step.general, step.scope
    assert any("derived by reverse mode modulo the VJP rules" in n for n in report.notes)


@pytest.mark.parametrize("letter", [r"\xi", "u"])
def test_the_gradient_without_the_inverse_temperature_is_refuted_with_a_counterexample(letter):
    (step,) = check_latex(_hopfield(SLIP, letter)).steps
    assert step.status == "refuted" and step.verdict.counterexample is not None


def test_the_gradient_is_never_read_as_the_definition_of_a_function():
    # "\nabla_x f = ..." with nothing defining it before would otherwise define a function nabla
    (step,) = check_latex(_hopfield(r"\boldsymbol{@}", r"\xi")).steps
    assert step.status == "refuted"


def test_a_quadratic_form_and_the_update_rule_as_a_chain():
    text = (r"$$ A \in \mathbb{R}^{n \times n}, \quad b, x \in \mathbb{R}^{n} $$" "\n"
            r"$$ f = \frac{1}{2} x^T A x - b^T x $$" "\n"
            r"$$ \nabla_x f = \frac{1}{2} (A + A^T) x - b $$" "\n"
            r"$$ x^{\mathrm{new}} = x - \nabla_{x} f = x - \frac{1}{2} (A + A^T) x + b $$" "\n"
            r"$$ \nabla_x f = A x - b $$" "\n")
    statuses = [s.status for s in check_latex(text).steps]
    assert statuses == ["proved", "proved", "refuted"]  # A x - b only for a symmetric A


def test_a_term_free_of_the_variable_adds_nothing():
    text = (r"$$ x \in \mathbb{R}^{n}, \quad c \in \mathbb{R} $$" "\n"
            r"$$ f = x^T x + c^2 + \log n $$" "\n"
            r"$$ \nabla_x f = 2 x $$" "\n")
    assert [s.status for s in check_latex(text).steps] == ["proved"]


def test_a_gradient_with_respect_to_a_defined_quantity_is_refused():
    text = (r"$$ x \in \mathbb{R}^{n}, \quad W \in \mathbb{R}^{n \times n} $$" "\n"
            r"$$ y = W x, \quad f = y^T y $$" "\n"
            r"$$ \nabla_y f = 2 y $$" "\n")
    report = check_latex(text)
    assert report.steps[-1].status == "ill-formed"
    assert "is not a declared vector or matrix" in report.steps[-1].error


def test_the_gradient_of_a_vector_is_refused_as_a_jacobian():
    text = (r"$$ x \in \mathbb{R}^{n}, \quad W \in \mathbb{R}^{n \times n} $$" "\n"
            r"$$ y = W x $$" "\n"
            r"$$ \nabla_x y = W^T $$" "\n")
    report = check_latex(text)
    assert report.steps[-1].status == "ill-formed" and "a Jacobian" in report.steps[-1].error


def test_the_rewrite_leaves_the_loss_and_calls_alone():
    assert rewrite_scalar_gradients(r"\nabla_x f(x)") == r"\nabla_x f(x)"
    read = rewrite_scalar_gradients(r"\mathrm{E} = \xi^T \xi, \quad \nabla_{\boldsymbol{\xi}} \mathrm{E}")
    assert "nabla}(\\boldsymbol{\\xi}, \\mathrm{E})" in read
    assert rewrite_scalar_gradients(r"\nabla_{a} b") == r"\nabla_{a} b"  # b is not defined by the text
    with pytest.raises(DerivationError, match="nabla"):
        check_latex(r"$$ x \in \mathbb{R}^{n} $$" "\n" r"$$ \nabla_x f(x) = x $$" "\n")
