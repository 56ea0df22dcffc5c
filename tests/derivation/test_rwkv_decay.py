r"""RWKV's notation (Peng et al. 2023): the operator ``wkv_t`` a display defines as one name of three letters, a
decay by the entrywise ``e^{-w} \odot`` unrolled into ``\sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} \odot v_i`` (a closed
form at the position t - 1, proved by induction), and the distance ``(t - 1 - i)`` between positions used as a
number."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

WKV = (r"$$ w, k_t, v_t \in \mathbb{R}^{d}, \quad a_0 = 0 $$" + "\n"
       r"$$ a_t = e^{-w} \odot a_{t-1} + e^{k_t} \odot v_t $$" + "\n")


def _step(text):
    return check(text).steps[-1]


def test_a_run_of_letters_a_display_defines_is_one_name_read_at_given_positions():
    head = (r"$$ k_t, v_t \in \mathbb{R}^{d} $$" + "\n"
            r"$$ abc_t = \sum_{i=1}^{t-1} k_i \odot v_i + k_t $$" + "\n")
    assert _step(head + r"$$ k_1 \odot v_1 + k_2 = abc_2 $$").status == "proved"
    step = _step(head + r"$$ k_1 \odot v_2 + k_2 = abc_2 $$")
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_run_the_file_does_not_define_stays_a_product():
    step = _step(r"$$ k_t, v_t \in \mathbb{R}^{d} $$" + "\n" r"$$ k_2 \odot v_2 = xyz_2 $$")
    assert step.status == "ill-formed" and "unknown symbol" in step.error


def test_an_entrywise_decay_unrolls_into_exponentials_of_the_distance():
    step = _step(WKV + r"$$ a_t = \sum_{i=1}^{t} e^{-(t-i)w + k_i} \odot v_i $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    step = _step(WKV + r"$$ a_t = \sum_{i=1}^{t} e^{-(t-1-i)w + k_i} \odot v_i $$")
    assert step.status == "refuted" and "at the position t = 1" in step.scope
    assert step.verdict.counterexample.certificate


def test_the_closed_form_at_the_previous_position_is_the_same_claim():
    step = _step(WKV + r"$$ a_{t-1} = \sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} \odot v_i $$")
    assert step.status == "proved" and "base t = 1" in step.scope
    step = _step(WKV + r"$$ a_{t-1} = \sum_{i=1}^{t-1} e^{-(t-i)w + k_i} \odot v_i $$")
    assert step.status == "refuted" and "at the position t = 2" in step.scope


def test_renaming_the_letters_changes_no_verdict():
    text = WKV.replace("_t", "_n").replace("_{t-1}", "_{n-1}")
    step = _step(text + r"$$ a_n = \sum_{j=1}^{n} e^{-(n-j)w + k_j} \odot v_j $$")
    assert step.status == "proved" and "every position n by induction on n" in step.scope
    assert _step(text + r"$$ a_n = \sum_{j=1}^{n} e^{-(n-1-j)w + k_j} \odot v_j $$").status == "refuted"


def test_an_index_of_a_sum_is_a_number_in_a_product():
    head = r"$$ x_1, x_2 \in \mathbb{R}^{d} $$" + "\n"
    assert _step(head + r"$$ \sum_{i=1}^{2} i x_i = x_1 + 2 x_2 $$").status == "proved"
    step = _step(head + r"$$ \sum_{i=1}^{2} i x_i = x_1 + x_2 $$")
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_vector_positive_by_its_form_divides_entry_by_entry():
    head = r"$$ a, b \in \mathbb{R}^{d} $$" + "\n"
    assert _step(head + r"$$ \frac{a}{e^{b}} = a \odot e^{-b} $$").status == "proved"
    step = _step(head + r"$$ \frac{a}{e^{b}} = a \odot e^{b} $$")
    assert step.status == "refuted" and step.verdict.counterexample.certificate
    step = _step(head + r"$$ \frac{a}{b} = a $$")  # b may have a zero entry: refused, not read
    assert step.status == "ill-formed" and "division by the matrix b" in step.error
    step = _step(head + r"$$ \frac{a}{e^{b} - a} = a $$")
    assert step.status == "ill-formed" and "division by the matrix" in step.error


RWKV = (r"$$ w, u, k_t, v_t \in \mathbb{R}^{d}, \quad a_0 = 0, \quad b_0 = 0 $$" + "\n"
        r"$$ wkv_t = \frac{\sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} \odot v_i + e^{u + k_t} \odot v_t}"
        r"{\sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} + e^{u + k_t}} $$" + "\n"
        r"$$ a_t = e^{-w} \odot a_{t-1} + e^{k_t} \odot v_t, \qquad b_t = e^{-w} \odot b_{t-1} + e^{k_t} $$" + "\n"
        r"$$ a_{t-1} = \sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} \odot v_i $$" + "\n")
B_FORM = r"$$ b_{t-1} = \sum_{i=1}^{t-1} e^{-(t-1-i)w + k_i} $$" + "\n"
WKV_STEP = r"$$ wkv_t = \frac{a_{t-1} + e^{u + k_t} \odot v_t}{b_{t-1} + e^{u + k_t}} $$"


def test_the_recurrent_form_of_wkv_is_proved_with_the_closed_forms_proved_before():
    steps = check(RWKV + B_FORM + WKV_STEP).steps
    assert [s.status for s in steps] == ["proved"] * 3
    assert "closed forms proved for" in steps[-1].scope and steps[-1].general


def test_a_closed_form_not_proved_proves_nothing_that_uses_it():
    wrong = B_FORM.replace("-(t-1-i)w", "-(t-i)w")
    steps = check(RWKV + wrong + WKV_STEP).steps
    assert steps[1].status == "refuted" and steps[-1].status != "proved"
    swapped = WKV_STEP.replace(r"\odot v_t}{b_{t-1}", r"}{b_{t-1}")
    assert check(RWKV + B_FORM + swapped).steps[-1].status == "refuted"


def test_renaming_the_letters_of_the_recurrent_form_changes_no_verdict():
    text = (RWKV + B_FORM + WKV_STEP).replace("_t", "_n").replace("t-1", "n-1").replace("_{i", "_{j")
    text = text.replace("k_i", "k_j").replace("v_i", "v_j").replace("-i)", "-j)")
    steps = check(text).steps
    assert [s.status for s in steps] == ["proved"] * 3 and "every position n" in steps[-1].scope


def test_two_adjacent_letters_stay_a_product():
    text = (r"$$ x \in \mathbb{R}^{1 \times d}, \quad W_q \in \mathbb{R}^{d \times e} $$" + "\n"
            r"$$ xW_q = x W_q $$")
    assert _step(text).status == "proved"
