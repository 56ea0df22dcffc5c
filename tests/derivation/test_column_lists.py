r"""A matrix declared by its columns, ``X = (x_1, \ldots, x_N) \in \mathbb{R}^{d \times N}``: X is declared
with that shape (the list only names the columns), so steps about X are checked; another list is refused."""

import pytest

from symattn.derivation.column_lists import rewrite_column_lists
from symattn.derivation.latex_document import check_latex
from symattn.errors import DerivationError


def _file(decl: str, step: str) -> str:
    return (rf"$$ {decl}, \quad \xi \in \mathbb{{R}}^{{d}} $$" "\n" rf"$$ {step} $$" "\n")


@pytest.mark.parametrize("x, n", [(r"\boldsymbol{x}", "N"), ("y", "M")])
def test_the_matrix_is_declared_with_its_shape_and_steps_about_it_are_checked(x, n):
    decl = rf"\boldsymbol{{X}} = ({x}_1, \ldots, {x}_{n}) \in \mathbb{{R}}^{{d \times {n}}}"
    good = check_latex(_file(decl, r"(\boldsymbol{X}^T \xi)^T = \xi^T \boldsymbol{X}"))
    bad = check_latex(_file(decl, r"(\boldsymbol{X}^T \xi)^T = \xi^T \boldsymbol{X} + \xi^T \boldsymbol{X}"))
    assert [s.status for s in good.steps] == ["proved"]
    assert [s.status for s in bad.steps] == ["refuted"]


def test_the_shape_is_the_declared_one():
    decl = r"X = (x_1, \ldots, x_N) \in \mathbb{R}^{d \times N}"
    (step,) = check_latex(_file(decl, r"X \xi = \xi")).steps
    assert step.status == "ill-formed"  # X xi does not exist: X is d x N


def test_a_list_that_is_not_the_columns_is_left_to_the_parser():
    for decl in (r"X = (x_1, \ldots, x_M) \in \mathbb{R}^{d \times N}",   # M columns, N declared
                 r"X = (x_1, \ldots, y_N) \in \mathbb{R}^{d \times N}",   # two letters
                 r"X = (x_1, \ldots, x_N) \in \mathbb{R}^{N \times d}"):  # rows, not columns
        assert rewrite_column_lists(decl) == decl
        with pytest.raises(DerivationError):
            check_latex(_file(decl, r"X = X"))


def test_the_columns_keep_their_place():
    decl = r"X = (x_1, \ldots, x_N) \in \mathbb{R}^{d \times N}"
    out = rewrite_column_lists(decl)
    assert len(out) == len(decl) and out.index("\\in") == decl.index("\\in") and out.startswith("X ")
