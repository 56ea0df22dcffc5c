r"""Definitions by named alternatives (Luong et al.'s ``\mathrm{score}`` = ``\begin{cases} ... & \text{dot} \\
... & \text{general} \end{cases}``): the definition is read, the steps that do not use the function are
checked (a true one proved, a false one refuted), and a step that uses it is decided under each
alternative: proved naming the one it holds under, refuted only when every one refutes it, never a
verdict without the alternative named; renaming the letters changes no verdict; a mask by conditions is
read as before."""

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


@pytest.mark.parametrize("h,W", [("h", "W"), ("g", "U")])
@pytest.mark.parametrize("rhs,word,other", [(r"{h}_t^\top {W}_a \bar{{{h}}}_s", "general", "dot"),
                                            (r"\bar{{{h}}}_s^\top {W}_a^\top {h}_t", "general", "dot"),
                                            (r"{h}_t^\top \bar{{{h}}}_s", "dot", "general")])
def test_a_step_that_uses_the_function_is_proved_naming_the_alternative_it_holds_under(h, W, rhs, word, other):
    (s,) = check(decl(h, W) + rf"$$ \mathrm{{score}}({h}_t, \bar{{{h}}}_s) = {rhs.format(h=h, W=W)} $$").steps
    assert s.status == "proved", s.error
    assert f"with score read as its alternative {word} (under {other}: refuted)" in s.scope


@pytest.mark.parametrize("h,W", [("h", "W"), ("g", "U")])
def test_a_step_false_under_every_alternative_is_refuted_saying_so(h, W):
    text = decl(h, W) + rf"$$ \mathrm{{score}}({h}_t, \bar{{{h}}}_s) = \bar{{{h}}}_s^\top {W}_a {h}_t $$"
    (s,) = check(text).steps
    assert s.status == "refuted"
    assert "refuted under every alternative of score (under dot: refuted; under general: refuted)" in s.scope
    assert s.as_dict()["counterexample"]["certificate"]


def test_a_step_through_another_definition_is_decided_under_each_alternative():
    # Luong et al.: the alignment a_t(s) uses the score; the context as one fraction holds for the general score
    text = decl() + (r"$$ a_t(s) = \frac{\exp(\mathrm{score}(h_t, \bar{h}_s))}{\sum_{s'} "
                     r"\exp(\mathrm{score}(h_t, \bar{h}_{s'}))} $$" + "\n")
    good = (r"$$ \sum_{s} a_t(s) \bar{h}_s = \frac{\sum_{s} \exp(h_t^\top W_a \bar{h}_s) \bar{h}_s}"
            r"{\sum_{s'} \exp(h_t^\top W_a \bar{h}_{s'})} $$")
    (s,) = check(text + good).steps
    assert s.status == "proved" and "alternative general" in s.scope
    bad = good.replace(r"\exp(h_t^\top W_a \bar{h}_s) \bar{h}_s", r"\exp(\bar{h}_s^\top W_a \bar{h}_s) \bar{h}_s")
    (s,) = check(text + bad).steps
    assert s.status == "refuted" and "refuted under every alternative of score" in s.scope


def test_a_mask_by_conditions_is_still_a_mask():
    text = (r"$$ S \in \mathbb{R}^{n \times n} $$" + "\n"
            r"$$ M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & \text{otherwise} \end{cases} $$" + "\n")
    (s,) = check(text + r"$$ \mathrm{softmax}(S + M) = \mathrm{softmax}(S + M) $$").steps
    assert s.status == "proved"
    (s,) = check(text + r"$$ \mathrm{softmax}(S + M) = \mathrm{softmax}(S) $$").steps
    assert s.status == "refuted"


def test_a_step_true_under_every_alternative_says_so():
    text = decl() + (r"$$ \mathrm{score}(h_t, \bar{h}_s) + \mathrm{score}(\bar{h}_s, h_t) - \mathrm{score}(h_t, "
                     r"\bar{h}_s) = \mathrm{score}(\bar{h}_s, h_t) $$")
    (s,) = check(text).steps
    assert s.status == "proved" and "under every alternative of score (dot, general)" in s.scope


def test_a_step_beside_one_that_uses_the_function_names_no_alternative():
    text = decl() + r"$$ \mathrm{score}(h_t, \bar{h}_s) = h_t^\top \bar{h}_s $$" + "\n" + \
        r"$$ h_t^\top W_a \bar{h}_s = \bar{h}_s^\top W_a^\top h_t $$"
    first, second = check(text).steps
    assert "alternative dot" in first.scope and "alternative" not in second.scope


def test_a_step_of_the_same_chain_that_does_not_use_the_function_names_no_alternative():
    text = decl() + r"$$ h_t^\top W_a \bar{h}_s = \bar{h}_s^\top W_a^\top h_t = \mathrm{score}(h_t, \bar{h}_s) $$"
    first, second = check(text).steps
    assert first.status == "proved" and "alternative" not in first.scope
    assert second.status == "proved" and "alternative general (under dot: refuted)" in second.scope


@pytest.mark.parametrize("g,name", [(r"\mathrm{g}", "g"), (r"\mathrm{alternatives}", "alternatives")])
def test_two_functions_by_named_alternatives_are_read_under_every_pair(g, name):
    # a second function, also under a name the reader uses for its own bookkeeping
    text = decl() + (g + r"(h_t, \bar{h}_s) = \begin{cases} h_t^\top \bar{h}_s & \text{a} \\ 0 & \text{b} "
                     r"\end{cases}").join(["$$ ", " $$\n"])
    use = g + r"(h_t, \bar{h}_s)"
    (s,) = check(text + rf"$$ \mathrm{{score}}(h_t, \bar{{h}}_s) + {use} = h_t^\top W_a \bar{{h}}_s $$").steps
    assert s.status == "proved", s.error
    assert f"with score read as its alternative general, {name} read as its alternative b" in s.scope
    (s,) = check(text + rf"$$ \mathrm{{score}}(h_t, \bar{{h}}_s) + {use} = 2 h_t^\top W_a \bar{{h}}_s $$").steps
    assert s.status == "refuted" and "under general and b: refuted" in s.scope
