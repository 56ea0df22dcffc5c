"""Definitions at indexed points (Bahdanau et al. 2015, Parikh et al. 2016): a function the file never
declares defined by its value at indexed arguments, ``a(s_{i-1}, h_j) = ...``, and a name indexed by two
letters, ``e_{ij} = a(s_{i-1}, h_j)``, whose use ``e_{ik}`` (or ``e_{ij}`` under a sum over j) renames them."""

from __future__ import annotations

from symattn.derivation import check_statements
from symattn.derivation.latex import parse_latex

DECL = (r"$$ s \in \mathbb{R}^{n}, \quad h_j \in \mathbb{R}^{m}, \quad v \in \mathbb{R}^{p}, \quad "
        r"W \in \mathbb{R}^{p \times n}, \quad U \in \mathbb{R}^{p \times m}, \quad "
        r"Z \in \mathbb{R}^{T \times m} $$" "\n"
        r"$$ a(s_{i}, h_j) = v^\top \left(W s_{i} + U h_j\right) $$" "\n"
        r"$$ e_{ij} = a(s_{i}, h_j), \qquad \alpha_{ij} = \frac{\exp(e_{ij})}{\sum_{k=1}^{T} \exp(e_{ik})} $$" "\n")
DECL = DECL.replace(r"s \in", r"s_{i} \in")


def check(text):
    return check_statements(parse_latex(text), source="t.tex", dialect="latex")


def statuses(text):
    return [s.status for s in check(text).steps]


def test_the_function_and_the_indexed_name_are_read_with_their_meaning():
    true = r"$$ \sum_{j=1}^{T} \alpha_{ij} h_j = \frac{\sum_{j=1}^{T} \exp(e_{ij}) h_j}{\sum_{k=1}^{T} \exp(e_{ik})} $$"
    r = check(DECL + true)
    assert [s.status for s in r.steps] == ["proved"], [s.error for s in r.steps]
    assert any(d.startswith("a(s_i, h_j) := ") for d in r.definitions), r.definitions
    wrong = check(DECL + r"$$ \sum_{j=1}^{T} \alpha_{ij} h_j = \sum_{j=1}^{T} \exp(e_{ij}) h_j $$").steps[0]
    assert wrong.status == "refuted" and wrong.verdict.counterexample.certificate
    step = r"$$ \sum_{j=1}^{T} e_{ij} h_j = \sum_{j=1}^{T} (v^\top (W s_{i} + U h_j)) h_j $$"
    assert statuses(DECL + step) == ["proved"]  # e_{ij} under the sum over j is the body at that j


def test_the_weights_sum_to_one_over_their_own_index_only():
    text = DECL.replace(r"h_j \in", r"h_j \in") + r"$$ \sum_{j=1}^{T} \alpha_{ij} \mathbf{1}_1 = \mathbf{1}_1 $$"
    assert statuses(text) == ["proved"]


def test_renaming_the_index_letters_changes_no_verdict():
    step = r"$$ \sum_{j=1}^{T} \alpha_{ij} h_j = \frac{\sum_{j=1}^{T} \exp(e_{ij}) h_j}{\sum_{k=1}^{T} \exp(e_{ik})} $$"
    renamed = (DECL + step).replace("_{ik}", "_{il}").replace("k=1", "l=1")
    assert statuses(DECL + step) == statuses(renamed) == ["proved"]


def test_a_function_at_undeclared_indexed_arguments_is_not_defined():
    r = check(r"$$ h_j \in \mathbb{R}^{n} $$" "\n" r"$$ a(x_i, h_j) = h_j $$")
    assert r.steps and r.steps[0].status == "ill-formed" and "unknown symbol a" in r.steps[0].error


def test_an_undefined_function_of_two_arguments_is_refused_by_name():
    text = (r"$$ x \in \mathbb{R}^{d}, \quad X \in \mathbb{R}^{d \times n} $$" "\n"
            r"$$ 2 \mathrm{MultiHeadAtt}(x, X) = \mathrm{MultiHeadAtt}(x, X) + \mathrm{MultiHeadAtt}(x, X) $$")
    s = check(text).steps[0]
    assert s.status == "ill-formed" and "MultiHeadAtt is not defined by the file and is applied to 2" in s.error
    defined = (r"$$ x_i \in \mathbb{R}^{d}, \quad X_j \in \mathbb{R}^{d \times n} $$" "\n"
               r"$$ \mathrm{Att}(x_i, X_j) = X_j^\top x_i $$" "\n"
               r"$$ \mathrm{Att}(x_i, X_j) = (x_i^\top X_j)^\top $$")
    assert statuses(defined) == ["proved"]  # defined at indexed arguments: read with its meaning


def test_a_declared_name_with_other_letters_is_not_renamed():
    text = (r"$$ W_q, W_k \in \mathbb{R}^{d \times d}, \quad W_{kq} \in \mathbb{R}^{d \times d} $$" "\n"
            r"$$ W_{qk} = W_q W_k^\top $$" "\n" r"$$ W_{kq} = W_k W_q^\top $$")
    s = check(text).steps[0]
    assert s.status == "refuted"  # W_{kq} is the file's own matrix, free, not W_{qk} renamed
