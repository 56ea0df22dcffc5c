r"""An entry ``M_{ij}`` of a mask defined by cases, used in an expression of entries (Mistral's sliding
window, ``\exp(q_i k_j^\top / \sqrt{d} + M_{ij})`` in a sum over j), is refused by name: a mask is read
only as a summand of the scores of a matrix. The same mask in the matrix form keeps its meaning."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import SymattnError


def entrywise(i="i", j="j", l="l", window=r"i - 2 \le j \le i"):
    window = window.replace("i", "\0").replace("j", j).replace("\0", i)
    return ("%: convention: row\n"
            rf"$$ q_{i}, k_{j}, v_{j} \in \mathbb{{R}}^{{d}}, \quad M_{{{i}{j}}} = \begin{{cases}} 0 & {window} \\ "
            r"-\infty & \text{otherwise} \end{cases} $$"
            rf"$$ h_{i} = \sum_{{{j}=1}}^{{n}} \frac{{\exp(q_{i} k_{j}^\top / \sqrt{{d}} + M_{{{i}{j}}})}}"
            rf"{{\sum_{{{l}=1}}^{{n}} \exp(q_{i} k_{l}^\top / \sqrt{{d}} + M_{{{i}{l}}})}} v_{j} $$")


def matrix_form(window):
    return ("%: convention: row\n"
            r"$$ Q, K, V \in \mathbb{R}^{n \times d} $$"
            rf"$$ M_{{ij}} = \begin{{cases}} 0 & {window} \\ -\infty & \text{{otherwise}} \end{{cases}}, \quad "
            r"N_{ij} = \begin{cases} 0 & j \le i \text{ and } i - 1 \le j \\ -\infty & \text{otherwise} \end{cases} $$"
            r"$$ \mathrm{softmax}\left(Q K^\top + M\right) V = \mathrm{softmax}\left(Q K^\top + N\right) V $$")


@pytest.mark.parametrize("letters", [("i", "j", "l"), ("t", "s", "r")])
@pytest.mark.parametrize("window", [r"i - 2 \le j \le i", r"i - W \le j \le i", r"j \le i"])
def test_entry_of_a_mask_in_a_sum_is_refused_by_name(letters, window):
    i, j, _ = letters
    with pytest.raises(SymattnError) as err:
        check_latex(entrywise(*letters, window=window))
    message = str(err.value)
    assert f"the entry M_{i}{j} of the mask M" in message
    assert "a summand of the scores of a matrix" in message
    assert "cannot stand here" not in message


def test_the_same_window_in_the_matrix_form_keeps_its_meaning():
    proved = check_latex(matrix_form(r"i - 1 \le j \le i"))
    assert [s.status for s in proved.steps] == ["proved"]
    refuted = check_latex(matrix_form(r"i - 2 \le j \le i"))
    assert [s.status for s in refuted.steps] == ["refuted"]


def test_a_row_of_a_mask_is_refused_by_name():
    text = ("%: convention: row\n"
            r"$$ Q, K, V \in \mathbb{R}^{n \times d}, \quad M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & "
            r"\text{otherwise} \end{cases} $$"
            r"$$ \mathrm{softmax}(Q_{t,:} K^\top + M_{t,:}) = \mathrm{softmax}(Q_{t,:} K^\top + M_{t,:}) $$")
    (step,) = check_latex(text).steps
    assert step.status == "ill-formed"
    assert "the row M_{t,:} of the mask M" in step.error
