"""Letters a paper uses as numbers and introduces only in prose (free_letters.py): read as free numbers, only
for proving; a refutation stands only where the difference of the sides does not depend on the letter."""

import pytest

from symattn.derivation.latex_document import check_latex


def statuses(text):
    return [s.status for s in check_latex(text).steps]


def step(text, k=0):
    return check_latex(text).steps[k]


DECL = r"$$ X \in \mathbb{R}^{n \times d} $$" + "\n"


@pytest.mark.parametrize("M", ["M", "L", "c", "\\tau"])
def test_a_letter_in_a_cosine_is_a_free_number_whatever_its_name(M):
    c = rf"\cos\left(\frac{{\pi}}{{2{M}}}\right)"
    true = DECL + rf"$$ {c} X + X = \left(1 + {c}\right) X $$"
    false = DECL + rf"$$ {c} X + X = {c} X + 2 X $$"
    assert statuses(true) == ["proved"]
    assert statuses(false) == ["refuted"]  # the difference, -X, does not depend on the letter


def test_the_report_says_how_the_letter_is_read():
    r = check_latex(DECL + r"$$ \cos\left(\frac{\pi}{2M}\right) X = \cos\left(\frac{\pi}{2M}\right) X $$")
    assert any("M is not declared: read as a free nonzero real number" in n for n in r.notes)


def test_a_step_false_at_some_value_of_the_letter_is_undecided_never_refuted():
    # cos(pi / M) = 1 holds for M = 1/2 (and the paper may mean such an M): neither proved nor refuted
    s = step(DECL + r"$$ \cos\left(\frac{\pi}{M}\right) X = X $$")
    assert s.status == "unknown"
    assert "depends on M" in s.error and "declare M" in s.error


def test_the_same_step_with_the_letter_declared_is_refuted():
    text = (r"$$ X \in \mathbb{R}^{n \times d}, \quad M \in \mathbb{R}, \quad M > 0 $$" + "\n"
            r"$$ \cos\left(\frac{\pi}{M}\right) X = X $$")
    assert statuses(text) == ["refuted"]


def test_a_letter_beside_a_matrix_stays_an_unknown_symbol():
    s = step(r"$$ X \in \mathbb{R}^{n \times n} $$" + "\n" + r"$$ M X = X M $$")
    assert s.status == "ill-formed" and "unknown symbol M" in s.error


def test_one_use_beside_a_matrix_is_enough_to_refuse_the_reading():
    text = (r"$$ X \in \mathbb{R}^{n \times n} $$" + "\n"
            r"$$ \cos\left(\frac{\pi}{2M}\right) X + M X = \cos\left(\frac{\pi}{2M}\right) X + X M $$")
    s = step(text)
    assert s.status == "ill-formed" and "unknown symbol M" in s.error


def test_a_letter_in_an_exponential_may_be_a_matrix_and_stays_unknown():
    # exp(2A) B = B exp(2A) holds for a number A, not for a matrix A: A is not read as a number
    s = step(r"$$ B \in \mathbb{R}^{n \times n} $$" + "\n" + r"$$ \exp(2A) B = B \exp(2A) $$")
    assert s.status == "ill-formed" and "unknown symbol A" in s.error
    divided = DECL + r"$$ \exp\left(\frac{1}{\tau}\right) X = \exp\left(\frac{1}{\tau}\right) X $$"
    assert statuses(divided) == ["proved"]


def test_a_letter_alone_in_a_function_stays_unknown():
    # exp(M) of a letter alone could be a matrix exponential: not read as a number
    s = step(DECL + r"$$ \exp(M) X = \exp(M) X $$")
    assert s.status == "ill-formed" and "unknown symbol M" in s.error


ENERGY = (r"$$ X \in \mathbb{R}^{d \times N}, \quad \xi \in \mathbb{R}^{d} $$" + "\n"
          r"$$ E = \frac{1}{2} \xi^T \xi + \frac{1}{2} M^2 $$" + "\n")


def test_a_constant_term_of_an_energy_is_a_free_number():
    assert statuses(ENERGY + r"$$ \nabla_{\xi} E = \xi $$") == ["proved"]
    assert statuses(ENERGY + r"$$ \nabla_{\xi} E = 2 \xi $$") == ["refuted"]  # M is gone from the gradient


def test_a_term_of_the_letter_beside_a_vector_is_not_a_number():
    text = (r"$$ \xi \in \mathbb{R}^{d} $$" + "\n" + r"$$ E = \xi + \frac{1}{2} M^2 $$" + "\n"
            r"$$ \nabla_{\xi} E = \xi $$")
    with pytest.raises(Exception, match="unknown symbol M"):
        check_latex(text)


def test_a_position_and_a_second_position_used_as_numbers():
    head = (r"%: convention: row" + "\n" + r"$$ Q, K \in \mathbb{R}^{N \times d} $$" + "\n")
    ci, cj = r"\cos\left(\frac{\pi i}{2M}\right)", r"\cos\left(\frac{\pi j}{2M}\right)"
    si, sj = r"\sin\left(\frac{\pi i}{2M}\right)", r"\sin\left(\frac{\pi j}{2M}\right)"
    cd = r"\cos\left(\frac{(i - j) \pi}{2M}\right)"
    true = head + rf"$$ Q_i K_j^T {cd} = Q_i K_j^T \left({ci} {cj} + {si} {sj}\right) $$"
    assert statuses(true) == ["proved"]
    false = true.replace(f"{cj} + {si}", f"{cj} - {si}")
    assert false != true
    assert statuses(false) == ["unknown"]  # false at some M, and M is the paper's: undecided


def test_a_set_filtering_after_the_semicolon_is_refused_by_name():
    text = (r"$$ x_q \in \mathbb{R}^{1 \times d}, \quad X \in \mathbb{R}^{N \times d} $$" + "\n"
            r"$$ \mathrm{Att}\left(x_q \,;\, M(x_q, S)\right) = x_q $$")
    with pytest.raises(Exception, match="a set filtering") as info:
        check_latex(text)
    assert "line 2" in str(info.value)
