r"""Definitions by named alternatives (Luong et al.'s ``\mathrm{score}`` = ``\begin{cases} ... & \text{dot} \\
... & \text{general} \end{cases}``): the definition is read, the steps that do not use the function are
checked (a true one proved, a false one refuted), and a step that uses it is refused naming the
alternatives, never checked under one of them; renaming the letters changes no verdict; a mask by
conditions is read as before."""

from __future__ import annotations

import pytest

from symattn.derivation.latex_document import check_latex as check


def decl(h="h", W="W"):
    return (rf"$$ {h}_t, \bar{{{h}}}_s \in \mathbb{{R}}^{{d}}, \quad {W}_a \in \mathbb{{R}}^{{d \times d}} $$" + "\n"
            rf"$$ \mathrm{{score}}({h}_t, \bar{{{h}}}_s) = \begin{{cases}} {h}_t^\top \bar{{{h}}}_s & \text{{dot}} \\ "
            rf"{h}_t^\top {W}_a \bar{{{h}}}_s & \text{{general}} \end{{cases}} $$" + "\n")


@pytest.mark.parametrize("h,W", [("h", "W"), ("g", "U")])
def test_steps_beside_the_definition_are_checked(h, W):
    (s,) = check(decl(h, W) + rf"$$ {h}_t^\top {W}_a \bar{{{h}}}_s = \bar{{{h}}}_s^\top {W}_a^\top {h}_t $$").steps
    assert s.status == "proved"
    (s,) = check(decl(h, W) + rf"$$ {h}_t^\top {W}_a \bar{{{h}}}_s = \bar{{{h}}}_s^\top {W}_a {h}_t $$").steps
    assert s.status == "refuted" and s.as_dict()["counterexample"]["certificate"]


@pytest.mark.parametrize("rhs", [r"h_t^\top W_a \bar{h}_s", r"h_t^\top \bar{h}_s"])
def test_a_step_that_uses_the_function_is_refused_naming_the_alternatives(rhs):
    (s,) = check(decl() + rf"$$ \mathrm{{score}}(h_t, \bar{{h}}_s) = {rhs} $$").steps
    assert s.status == "ill-formed"
    assert "defined by named alternatives (\\text{dot}, \\text{general})" in s.error


def test_a_mask_by_conditions_is_still_a_mask():
    text = (r"$$ S \in \mathbb{R}^{n \times n} $$" + "\n"
            r"$$ M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & \text{otherwise} \end{cases} $$" + "\n")
    (s,) = check(text + r"$$ \mathrm{softmax}(S + M) = \mathrm{softmax}(S + M) $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ \mathrm{softmax}(S + M) = \mathrm{softmax}(S) $$").steps
    assert s.status == "refuted"
