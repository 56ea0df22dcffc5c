r"""Complex numbers as the RoPE papers write them: i the imaginary unit, e^{ix}, \overline{z} and z^{*} the
conjugate, \mathrm{Re}, \mathrm{Im}, |z|, and a vector of R^2 read as a complex number (R^2 = C)."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex
from symattn.errors import ParseError

REALS = r"$$ a, b, c, d, \theta \in \mathbb{R} $$" + "\n"


def statuses(text: str) -> list:
    return [s.status for s in check_latex(text).steps]


def first_refuted(text: str):
    report = check_latex(text)
    step = report.first_failure
    assert step is not None and step.status == "refuted", [(s.status, s.error) for s in report.steps]
    cex = step.verdict.counterexample
    assert cex is not None and cex.certificate
    return step, cex


@pytest.mark.parametrize("rhs, status", [
    ("ac + bd", "proved"),   # (a + ib)(c - id) = (ac + bd) + i(bc - ad)
    ("ac - bd", "refuted"),
])
def test_the_product_of_a_number_and_a_conjugate(rhs, status):
    text = REALS + rf"$$ \mathrm{{Re}}\left[(a + ib)\overline{{(c + id)}}\right] = {rhs} $$"
    assert statuses(text) == [status]


def test_the_imaginary_part_and_the_star():
    text = REALS + r"$$ \mathrm{Im}[(a + ib)(c + id)^{*}] = bc - ad $$"
    assert statuses(text) == ["proved"]
    step, cex = first_refuted(REALS + r"$$ \mathrm{Im}[(a + ib)(c + id)^{*}] = ad - bc $$")
    assert set(cex.values) == {"a", "b", "c", "d"}


def test_e_to_the_i_x_is_a_rotation():
    assert statuses(REALS + r"$$ \mathrm{Re}\left[e^{ia}\overline{e^{ib}}\right] = \cos(a - b) $$") == ["proved"]
    assert statuses(REALS + r"$$ \mathrm{Im}\left[\exp(ia)\right] = \sin a $$") == ["proved"]
    first_refuted(REALS + r"$$ \mathrm{Re}\left[e^{ia}\overline{e^{ib}}\right] = \cos(a + b) $$")


def test_pi_is_the_number():
    assert statuses(REALS + r"$$ \mathrm{Re}[e^{i(a + \pi)}] = -\cos a $$") == ["proved"]
    first_refuted(REALS + r"$$ \mathrm{Im}[e^{i(a + \pi/2)}] = \sin a $$")  # it is cos a


def test_the_modulus_and_a_declared_complex_number():
    text = r"$$ z \in \mathbb{C}, \quad \theta \in \mathbb{R} $$" + "\n"
    assert statuses(text + r"$$ |z e^{i\theta}|^2 = \mathrm{Re}\left[z \overline{z}\right] $$") == ["proved"]
    first_refuted(text + r"$$ \mathrm{Re}[z^{*}] = -\mathrm{Re}[z] $$")


ROPE = r"""$$ \mathbf{Q}, \mathbf{K} \in \mathbb{R}^{2}, \quad \T \in \mathbb{R} $$
$$ f(\mathbf{x}, M) = (x_0 + ix_1)e^{iM\T} $$
\begin{align*}
    \mathrm{Re}\left[f(\mathbf{Q}, M)\overline{f(\mathbf{K}, N)}\right]
    &= \mathrm{Re}\left[(Q_0 + iQ_1)(K_0 - iK_1)e^{i(M-N)\T}\right]
\end{align*}
"""


def rope(q="q", k="k", m="m", n="n", theta="theta", slip=False) -> str:
    text = ROPE.replace("(M-N)", "(N-M)") if slip else ROPE
    for old, new in (("Q", q), ("K", k), ("M", m), ("N", n), ("T", theta)):
        text = text.replace(old, new)
    return text


def test_ropes_score_depends_on_the_relative_position_only():
    report = check_latex(rope())
    assert [s.status for s in report.steps] == ["proved"]
    assert "all real values of" in report.steps[0].scope and "m, n not declared" in report.steps[0].scope
    step, cex = first_refuted(rope(slip=True))
    assert step.pos[0] == 5
    assert step.diagnosis.slip == "the relative position reversed" and "e^{i(m-n)" in step.diagnosis.corrected
    assert cex.values["m"].tolist() != cex.values["n"].tolist()  # at m = n the two sides agree


@pytest.mark.parametrize("letters", [dict(q="u", k="v", m="s", n="t", theta="phi"),
                                     dict(q="k", k="q", m="n", n="m", theta="alpha")])
def test_renaming_the_letters_changes_no_verdict(letters):
    assert statuses(rope(**letters)) == ["proved"]
    assert statuses(rope(slip=True, **letters)) == ["refuted"]


def test_a_vector_of_r2_is_a_complex_number_by_r2_equals_c():
    text = r"""$$ \mathbf{u}, \mathbf{v} \in \mathbb{R}^{2}, \quad \theta \in \mathbb{R} $$
$$ \langle \mathbf{u}, \mathbf{v} \rangle = \mathrm{Re}\left[\mathbf{u}\,\overline{\mathbf{v}}\right]
   = u_1 v_1 + u_2 v_2 $$
$$ \mathrm{Re}\left[\mathbf{u} e^{i\theta}\right] = \cos\theta \, u_1 - \sin\theta \, u_2 $$
"""
    assert statuses(text) == ["proved", "proved", "proved"]
    first_refuted(text.replace(r"\cos\theta \, u_1 - \sin\theta \, u_2", r"\cos\theta \, u_1 + \sin\theta \, u_2"))


def test_the_matrix_form_is_checked_for_each_member_of_a_family():
    text = r"""$$ \mathbf{x} \in \mathbb{R}^{2}, \quad W_q, W_k \in \mathbb{R}^{2 \times 2},
   \quad \theta \in \mathbb{R} $$
$$ f_q(\mathbf{x}, m) = (W_q \mathbf{x}) e^{im\theta}, \quad
   f_k(\mathbf{x}, m) = (W_k \mathbf{x}) e^{SIGNim\theta} $$
$$ \mathrm{Re}\left[f_q(\mathbf{x}, 0)\right] = \mathrm{Re}\left[W_q \mathbf{x}\right] $$
$$ f_{\{q,k\}}(\mathbf{x}, m) = \begin{pmatrix} \cos m\theta & -\sin m\theta \\ \sin m\theta & \cos m\theta
   \end{pmatrix} W_{\{q,k\}} \mathbf{x} $$
"""
    report = check_latex(text.replace("SIGN", ""))
    assert [s.status for s in report.steps] == ["proved", "proved"] and "for each of q, k" in report.steps[1].scope
    first_refuted(text.replace("SIGN", "-"))  # f_k rotates the other way: false for k


@pytest.mark.parametrize("index", ["x_{ij}", "x^{(i)}", "x_{i+1}"])
def test_i_in_any_index_keeps_the_file_from_reading_i_as_the_unit(index):
    with pytest.raises(ParseError, match="i is an index of this file"):
        check_latex(rf"$$ {index}, \theta \in \mathbb{{R}} $$ $$ \mathrm{{Re}}[e^{{i\theta}}] = \cos\theta $$")


def test_i_as_an_index_of_the_file_is_not_the_imaginary_unit():
    text = r"""$$ x_i, \theta \in \mathbb{R} $$
$$ \mathrm{Re}\left[e^{i\theta}\right] = \cos\theta $$
"""
    with pytest.raises(ParseError) as info:
        check_latex(text)
    assert "i written as a factor where i is an index of this file (x_{i}, line 1)" in str(info.value)
    assert "\\mathrm{i}" in info.value.expected
    assert statuses(text.replace(r"e^{i\theta}", r"e^{\mathrm{i}\theta}")) == ["proved"]


@pytest.mark.parametrize("text, named", [
    (r"$$ \mathbf{x} \in \mathbb{R}^{3} $$ $$ \mathrm{Re}[\mathbf{x}] = x_1 $$",
     "\\mathbb{R}^{3}: the complex reader reads vectors of R^2"),
    (r"$$ \mathbf{x} \in \mathbb{R}^{2} $$ $$ \mathrm{Re}[\mathbf{x}] = x_1 $$", "written x_1 only"),
    (r"$$ a, b, c \in \mathbb{R} $$ $$ \mathrm{Re}[a/b c] = a $$", "a factor after a/b is ambiguous"),
    (r"$$ \mathbf{x} \in \mathbb{R}^{2}, \quad x_1 \in \mathbb{R} $$ $$ \mathrm{Re}[\mathbf{x}] = x_0 $$",
     "x_1 is declared, and x is a vector of R^2"),
    (r"$$ e, a \in \mathbb{R} $$ $$ \mathrm{Re}[e^{ia}] = \cos a $$", "e^{...} where the file names e"),
])
def test_what_is_not_read_is_refused_by_name(text, named):
    with pytest.raises(ParseError) as info:
        check_latex(text)
    assert named in str(info.value)


@pytest.mark.parametrize("step, named", [
    (r"\mathrm{Re}[a^{1/2}] = a", "a power is read to a whole number"),
    (r"\mathrm{Re}[(a + ib)^{-1}] = a", "a power is read to a whole number"),
    (r"\mathrm{Re}[\frac{a}{0}] = a", "a division by 0"),
    (r"\mathrm{Re}[\cos(ia)] = a", "\\cos of a complex number"),
])
def test_what_has_no_real_value_here_is_ill_formed(step, named):
    report = check_latex(REALS + f"$$ {step} $$")
    assert report.steps[0].status == "ill-formed" and named in report.steps[0].error


def test_a_product_of_two_vectors_is_ill_formed():
    text = r"$$ \mathbf{u}, \mathbf{v} \in \mathbb{R}^{2} $$ $$ \mathrm{Re}[\mathbf{u} \mathbf{v}] = u_0 v_0 $$"
    step = check_latex(text).steps[0]
    assert step.status == "ill-formed" and "a product of two vectors of R^2 is not read" in step.error


def test_a_conjugate_too_many_is_named():
    step, _ = first_refuted(REALS + r"$$ \mathrm{Re}\left[e^{ia} e^{ib}\right] = "
                                    r"\mathrm{Re}\left[e^{ia}\overline{e^{ib}}\right] $$")
    assert step.diagnosis.slip == "a conjugate too many" and step.diagnosis.corrected.endswith(r"e^{ia}e^{ib}\right]")


def test_a_definition_for_each_member_of_a_family():
    text = r"""$$ \mathbf{x} \in \mathbb{R}^{2}, \quad W_q, W_k \in \mathbb{R}^{2 \times 2},
   \quad \theta \in \mathbb{R} $$
$$ f_{\{q,k\}}(\mathbf{x}, m) = (W_{\{q,k\}} \mathbf{x}) e^{im\theta} $$
$$ \mathrm{Re}\left[f_q(\mathbf{x}, m) \overline{f_k(\mathbf{x}, n)}\right] = \mathrm{Re}\left[(W_q \mathbf{x})
   \overline{(W_k \mathbf{x})} e^{i(m-n)\theta}\right] $$
"""
    report = check_latex(text)
    assert report.definitions[:2] == ["f_{q} defined at line 3", "f_{k} defined at line 3"]
    assert [s.status for s in report.steps] == ["proved"]
    assert statuses(text.replace("(m-n)", "(m+n)")) == ["refuted"]
