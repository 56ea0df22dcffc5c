r"""Entries of results and of matrices, the trace and the Frobenius norm as sums of entries, as Lin et al.
(2017) expand their penalization term: ``\left\| AA^T - I \right\|_F^2 = \mathrm{tr}(...)`` and
``\sum_i \sum_j \left(AA^T\right)_{ij}^2 - 2 \sum_i \sum_j A_{ij}^2 + r``."""

from __future__ import annotations

import pytest
import sympy as sp

from symattn.derivation.latex_document import check_latex as check
from symattn.errors import ParseError
from symattn.proof.sums import pull_sums_out


def doc(A="A", B="B", C="C"):
    return (r"%: convention: row" + "\n"
            rf"$$ {A} \in \mathbb{{R}}^{{r \times n}}, \quad {B} \in \mathbb{{R}}^{{n \times r}}, \quad "
            rf"{C} \in \mathbb{{R}}^{{r \times r}} $$" + "\n")


def statuses(text):
    return [s.status for s in check(text).steps]


@pytest.mark.parametrize("i, j", [("i", "j"), ("p", "q")])
def test_a_trace_is_the_sum_of_the_diagonal(i, j):
    d = doc()
    assert statuses(d + r"$$ \mathrm{tr}(A B) = \mathrm{tr}(B A) $$") == ["proved"]
    assert statuses(d + rf"$$ \mathrm{{tr}}(A B) = \sum_{{{i}=1}}^{{r}} \sum_{{{j}=1}}^{{n}} A_{{{i}{j}}} "
                    rf"B_{{{j}{i}}} $$") == ["proved"]
    (step,) = check(d + rf"$$ \mathrm{{tr}}(A B) = \sum_{{{i}=1}}^{{r}} \sum_{{{j}=1}}^{{n}} A_{{{i}{j}}} "
                    rf"B_{{{i}{j}}} $$").steps  # B_{ij} for B_{ji}: out of B's shape, or a false step
    assert step.status in ("refuted", "ill-formed")


def test_a_false_trace_step_is_refuted_with_a_certificate():
    (step,) = check(doc() + r"$$ \mathrm{tr}(C) = \sum_{i=1}^{r} \left(C^T C\right)_{ii} $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate
    (step,) = check(doc() + r"$$ \mathrm{tr}(A B) = \mathrm{tr}(A B) + 1 $$").steps
    assert step.status == "refuted"


def test_a_trace_of_a_matrix_that_is_not_square_is_ill_formed():
    (step,) = check(doc() + r"$$ \mathrm{tr}(A) = \mathrm{tr}(A) $$").steps
    assert step.status == "ill-formed" and "square" in step.error


@pytest.mark.parametrize("A, i, j", [("A", "i", "j"), ("X", "k", "l")])
def test_the_frobenius_norm_is_the_sum_of_squared_entries(A, i, j):
    d = doc(A=A)
    true = (rf"$$ \left\| {A} \right\|_F^2 = \sum_{{{i}=1}}^{{r}} \sum_{{{j}=1}}^{{n}} {A}_{{{i}{j}}}^2 "
            rf"= \mathrm{{tr}}({A} {A}^T) = \sum_{{{i}=1}}^{{r}} \left({A} {A}^T\right)_{{{i}{i}}} $$")
    assert statuses(d + true) == ["proved"] * 3
    (step,) = check(d + rf"$$ \left\| {A} \right\|_F^2 = 2 \sum_{{{i}=1}}^{{r}} \sum_{{{j}=1}}^{{n}} "
                    rf"{A}_{{{i}{j}}}^2 $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_lin_et_al_penalization_term_and_its_dropped_trace():
    d = doc()
    expand = (r"$$ \left\| \left(AA^T - I\right) \right\|_F^2 = \mathrm{tr}\left(\left(AA^T - I\right)"
              r"\left(AA^T - I\right)^T\right) = \mathrm{tr}\left(AA^T AA^T\right) - 2\,\mathrm{tr}\left(AA^T\right)"
              r" + r = \sum_{i=1}^{r} \sum_{j=1}^{r} \left(AA^T\right)_{ij}^2"
              r" - 2 \sum_{i=1}^{r} \sum_{j=1}^{n} A_{ij}^2 + r $$")
    assert statuses(d + expand) == ["proved"] * 3
    dropped = expand.replace("A_{ij}^2 + r $$", "A_{ij}^2 $$")
    assert statuses(d + dropped) == ["proved", "proved", "refuted"]


def test_an_index_that_runs_past_the_shape_is_ill_formed():
    (step,) = check(doc() + r"$$ \sum_{i=1}^{n} \sum_{j=1}^{n} A_{ij} = \sum_{i=1}^{n} \sum_{j=1}^{n} A_{ij} $$").steps
    assert step.status == "ill-formed" and "runs to" in step.error


def test_a_declared_double_subscript_name_stays_its_own():
    """W_{s1} (two letters, not sum indices) is the declared name, never an entry."""
    d = (r"%: convention: row" + "\n"
         r"$$ W_{s1} \in \mathbb{R}^{r \times n}, \quad W \in \mathbb{R}^{r \times n} $$" + "\n")
    assert statuses(d + r"$$ W_{s1} + W = W + W_{s1} $$") == ["proved"]


def test_a_subscript_after_a_name_in_parentheses_is_still_refused():
    with pytest.raises(ParseError, match="a subscript after parentheses"):
        check(doc() + r"$$ (C)_{i} = (C)_{i} $$")


def test_a_square_of_a_sum_is_expanded_with_indices_of_its_own():
    k = sp.Symbol("k", integer=True)
    n = sp.Symbol("n", integer=True, positive=True)
    a = sp.IndexedBase("a")
    s = sp.Sum(a[k], (k, 1, n)) ** 2
    out = pull_sums_out(s)
    assert isinstance(out, sp.Sum) and len(out.limits) == 2
    assert sp.expand(out.subs(n, 3).doit()) == sp.expand(s.subs(n, 3).doit())


@pytest.mark.parametrize("n", ["n", "m"])
def test_one_index_after_parentheses_is_one_vector_of_the_result(n):
    d = (r"%: convention: row" + "\n"
         r"$$ A \in \mathbb{R}^{N \times D}, \quad B \in \mathbb{R}^{D \times F}, \quad "
         r"C \in \mathbb{R}^{N \times F} $$" + "\n")
    assert statuses(d + rf"$$ (A B + C)_{n} = A_{n} B + C_{n} $$") == ["proved"]
    assert statuses(d + rf"$$ \sum_{{{n}=1}}^{{N}} (A B + C)_{{{n}}} = \mathbf{{1}}_N^T (A B + C) $$") == ["proved"]
    (step,) = check(d + rf"$$ \sum_{{{n}=1}}^{{N}} (A B + C)_{{{n}}} = \mathbf{{1}}_N^T (A B) $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_one_vector_of_a_result_with_a_softmax_of_no_axis_is_refused():
    d = (r"%: convention: row" + "\n" r"$$ K, V \in \mathbb{R}^{T \times d} $$" + "\n")
    with pytest.raises(ParseError, match="whose axis is not written"):
        check(d + r"$$ \sum_{t'=1}^{T} \left(\mathrm{softmax}(K) \odot V\right)_{t'} = V $$")
    with_axis = (r"$$ \sum_{t'=1}^{T} \left(\mathrm{softmax}_{col}(K) \odot V\right)_{t'} = "
                 r"\mathbf{1}_T^T \left(\mathrm{softmax}_{col}(K) \odot V\right) $$")
    assert statuses(d + with_axis) == ["proved"]


@pytest.mark.parametrize("q, t, i", [("q", "t", "i"), ("k", "s", "j")])
def test_a_member_indexed_by_two_letters_beside_a_declared_member_is_named(q, t, i):
    d = (rf"$$ h_{t} \in \mathbb{{R}}^{{d}}, \quad W \in \mathbb{{R}}^{{e \times d}} $$" + "\n"
         rf"$$ {q}^C_{t} = W h_{t} $$" + "\n")
    with pytest.raises(Exception, match="a member of a family indexed by two letters") as e:
        check(d + rf"$$ {q}_{{{t},{i}}} = {q}_{{{t},{i}}}^C $$")
    assert f"the part of {q}_{t}^C that {i} names" in str(e.value)


def test_the_frobenius_norm_and_inner_product_of_matrices():
    d = r"$$ A \in \mathbb{R}^{r \times n}, \quad B \in \mathbb{R}^{r \times n} $$" "\n"
    assert statuses(d + r"$$ \|A\|_F = \sqrt{\mathrm{tr}(A^T A)} $$") == ["proved"]
    assert statuses(d + r"$$ \langle A, B \rangle = \mathrm{tr}(A^T B) = \mathrm{tr}(A B^T) $$") == ["proved"] * 2
    (step,) = check(d + r"$$ \langle A, B \rangle = \mathrm{tr}(A^T A) $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate
