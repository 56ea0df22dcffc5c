r"""The entries x_i of a function's vector parameter, as log-sum-exp is defined:
``\mathrm{lse}(\beta, x) = \beta^{-1} \log \sum_{i=1}^{N} \exp(\beta x_i)``; its gradient is the softmax."""

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError

HEAD = (r"$$ X \in \mathbb{R}^{d \times N}, \quad \xi \in \mathbb{R}^{d}, \quad \beta \in \mathbb{R} $$" "\n"
        r"$$ \mathrm{lse}(\beta, x) = \beta^{-1} \log \left( \sum_{@=1}^{N} \exp(\beta x_@) \right), "
        r"\quad \mathrm{E} = - \mathrm{lse}(\beta, X^T \xi) + \frac{1}{2} \xi^T \xi $$" "\n")


def _check(step: str, index: str = "i"):
    return [s.status for s in check_latex(HEAD.replace("@", index) + rf"$$ {step} $$" "\n").steps]


@pytest.mark.parametrize("index", ["i", "k"])
def test_lse_is_read_entry_by_entry(index):
    assert _check(r"\mathrm{lse}(\beta, X^T \xi) = \beta^{-1} \log(\mathbf{1}_N^T \exp(\beta X^T \xi))",
                  index) == ["proved"]
    assert _check(r"\mathrm{lse}(\beta, X^T \xi) = \beta^{-1} \log(\mathbf{1}_N^T \exp(X^T \xi))",
                  index) == ["refuted"]


@pytest.mark.parametrize("index", ["i", "k"])
def test_the_gradient_of_the_hopfield_energy_through_lse(index):
    assert _check(r"\nabla_{\xi} \mathrm{E} = - X \mathrm{softmax}(\beta X^T \xi) + \xi", index) == ["proved"]
    assert _check(r"\nabla_{\xi} \mathrm{E} = - X \mathrm{softmax}(\beta X^T \xi) - \xi", index) == ["refuted"]


def test_an_index_running_past_the_parameter_is_refused():
    text = (r"$$ z \in \mathbb{R}^{N}, \quad w \in \mathbb{R}^{M} $$" "\n"
            r"$$ g(x) = \sum_{i=1}^{M} x_i, \quad c = g(z) $$" "\n"
            r"$$ c = \mathbf{1}_N^T z $$" "\n")
    try:
        report = check_latex(text)
    except DerivationError as exc:
        assert "runs to M" in str(exc)
        return
    (step,) = report.steps
    assert step.status == "ill-formed" and "runs to M" in step.error
