"""``W_{Q,h}``: a subscript that mixes a label and an index (Dong et al.'s per-head weights) is the label
of a name of its own when the file declares that name, and otherwise refused (the form is read as a
label and a position only for a rotation defined by its pmatrix)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from symattn.derivation.latex_document import check_latex as check


def decl(label="Q", index="h"):
    return (rf"$$ X \in \mathbb{{R}}^{{n \times d}}, \quad W_{{{label},{index}}}, W_{{K,{index}}} "
            rf"\in \mathbb{{R}}^{{d \times e}} $$" + "\n")


def test_a_declared_label_and_index_name_is_one_matrix():
    r = check(decl() + r"$$ X (W_{Q,h} + W_{K,h}) = X W_{Q,h} + X W_{K,h} $$")
    assert [s.status for s in r.steps] == ["proved"]


def test_the_two_labelled_names_are_different_matrices():
    (s,) = check(decl() + r"$$ X W_{Q,h} = X W_{K,h} $$").steps
    assert s.status == "refuted"


def test_an_undeclared_label_and_index_name_is_refused_with_what_to_write():
    (s,) = check(decl() + r"$$ X W_{V,h} = X W_{V,h} $$").steps
    assert s.status == "ill-formed"
    assert "W_{V,h}: a subscript with a label and a position" in s.error and "W_{V,h} is not declared" in s.error


@settings(max_examples=5, deadline=None)
@given(index=st.sampled_from(["h", "i", "j", "m"]), label=st.sampled_from(["Q", "A", "V"]))
def test_renaming_the_label_or_the_index_changes_no_verdict(index, label):
    true = check(decl(label, index) + rf"$$ X (W_{{{label},{index}}} + W_{{K,{index}}}) = "
                 rf"X W_{{{label},{index}}} + X W_{{K,{index}}} $$")
    false = check(decl(label, index) + rf"$$ X W_{{{label},{index}}} = X W_{{K,{index}}} $$")
    assert [s.status for s in true.steps] == ["proved"] and [s.status for s in false.steps] == ["refuted"]


def test_a_function_named_with_a_word_below_is_the_files_own_function():
    decl = r"$$ K \in \mathbb{R}^{d \times d}, \quad x, y \in \mathbb{R}^{d} $$" + "\n"
    gauss = r"$$ K_{\mathrm{gauss}}(x, y) = \exp\left(-\frac{\|x - y\|^2}{2}\right) $$" + "\n"
    left = r"$$ \exp(x^\top y) = \exp\left(\frac{\|x\|^2}{2}\right) K_{\mathrm{gauss}}(x, y) "
    true = left + r"\exp\left(\frac{\|y\|^2}{2}\right) $$"
    false = left + r"\exp\left(\|y\|^2\right) $$"
    assert [s.status for s in check(decl + gauss + true).steps] == ["proved"]
    assert [s.status for s in check(decl + gauss + false).steps] == ["refuted"]
