"""Windows whose ends are numbers defined for each position (Longformer's ell_i, r_i) and the half-width w/2 of
an even w: row i of the band-masked attention is the attention over the slice between the ends, proved by cases
on the order of i - 1, n - i and w/2; a wrong end is refuted with a counterexample in the file's names."""

import numpy as np
import pytest

from symattn.derivation.latex_document import check_latex


def _window(i="i", j="j", w="w", left=None, right=None, ends=None, mask=None, label="s"):
    """Longformer's sliding-window step at the letters given (the slice ends as written, or ell_i:r_i)."""
    X = {x: f"{x}_{label}" if label else x for x in "QKV"}
    sl = (lambda m, a, b: f"{m}_{{{label},{a}:{b}}}") if label else (lambda m, a, b: f"{m}_{{{a}:{b}}}")
    lo, hi = ends or (rf"\ell_{i}", f"r_{i}")
    left = left or rf"\max\left(1, {i} - \frac{{{w}}}{{2}}\right)"
    right = right or rf"\min\left(n, {i} + \frac{{{w}}}{{2}}\right)"
    mask = mask or rf"|{i} - {j}| \le \frac{{{w}}}{{2}}"
    row = f"Q_{{{label},{i}}}" if label else f"[Q]_{{{i},:}}"
    return ("%: convention: row\n"
            rf"$$ {X['Q']}, {X['K']}, {X['V']} \in \mathbb{{R}}^{{n \times d_k}} $$" "\n"
            rf"$$ M_{{{i}{j}}} = \begin{{cases}} 0 & {mask} \\ -\infty & \text{{otherwise}} \end{{cases}}, \qquad "
            rf"\ell_{i} = {left}, \quad r_{i} = {right} $$" "\n"
            rf"$$ \left[\mathrm{{softmax}}\left(\frac{{{X['Q']} {X['K']}^T}}{{\sqrt{{d_k}}}} + M\right) {X['V']}"
            rf"\right]_{{{i},:}} = \mathrm{{softmax}}\left(\frac{{{row} {sl('K', lo, hi)}^T}}{{\sqrt{{d_k}}}}\right) "
            rf"{sl('V', lo, hi)} $$")


@pytest.mark.parametrize("i, j, w, label", [("i", "j", "w", "s"), ("t", "u", "v", "s"), ("i", "j", "w", None)])
def test_row_i_of_the_band_masked_attention_is_the_attention_over_the_window(i, j, w, label):
    report = check_latex(_window(i, j, w, label=label))
    (step,) = report.steps
    assert step.status == "proved" and step.general, (step.status, step.error)
    assert f"every even {w} >= 2" in step.scope and f"1 <= {i} <= n" in step.scope
    assert any(f"{w}/2 is read as a whole number" in note for note in report.notes)


def _numeric_window_row(cex, i, w, hi_of):
    """Both sides of the step at the counterexample, evaluated with NumPy (hi_of: the slice's end at i)."""
    Q, K, V = (np.asarray(cex.values[f"{x}_s"], dtype=float) for x in "QKV")
    n, d = Q.shape
    h = w // 2
    S = Q @ K.T / np.sqrt(d)
    S = S + np.array([[0 if abs(a - b) <= h else -np.inf for b in range(n)] for a in range(n)])

    def sm(x):
        e = np.exp(x - x.max())
        return e / e.sum()

    lhs = sm(S[i - 1]) @ V
    lo, hi = max(1, i - h), hi_of(i, h, n)
    rhs = sm((Q @ K.T / np.sqrt(d))[i - 1, lo - 1:hi]) @ V[lo - 1:hi]
    return lhs, rhs


def test_a_window_cut_at_i_is_refuted_at_an_even_width_where_the_sides_differ():
    (step,) = check_latex(_window(ends=(r"\ell_i", "i"))).steps
    assert step.status == "refuted"
    cex = step.verdict.counterexample
    n, i, w = cex.dims["n"], cex.dims["i"], cex.dims["w"]
    assert w % 2 == 0 and w >= 2 and 1 <= i <= n
    lhs, rhs = _numeric_window_row(cex, i, w, lambda i, h, n: i)
    assert not np.allclose(lhs, rhs)


def test_an_end_off_by_one_is_refuted():
    (step,) = check_latex(_window(left=r"\max\left(1, i - \frac{w}{2} + 1\right)")).steps
    assert step.status == "refuted"


def test_a_band_is_not_a_causal_window():
    (step,) = check_latex(_window(ends=("1", "i"))).steps
    assert step.status == "refuted"


def test_the_chain_and_the_absolute_value_are_the_same_band():
    report = check_latex(_window(mask=r"i - \frac{w}{2} \le j \le i + \frac{w}{2}"))
    assert [s.status for s in report.steps] == ["proved"]


def test_a_width_that_is_not_halved_is_not_read():
    (step,) = check_latex(_window(mask=r"|i - j| \le \frac{w}{3}")).steps
    assert step.status == "ill-formed" and "a width W or w/2 that is not a number" in step.error


def test_an_end_at_another_width_is_refuted_at_widths_that_differ():
    (step,) = check_latex(_window(left=r"\max\left(1, i - \frac{v}{2}\right)")).steps
    assert step.status == "refuted"
    dims = step.verdict.counterexample.dims
    assert dims["v"] % 2 == 0 and dims["w"] % 2 == 0 and dims["v"] != dims["w"]
