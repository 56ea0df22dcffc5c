r"""Powers by an index expression (``\bar{A}^{k-j}``, ``\gamma^{t-i}``, ``A^{j}`` in a sum over j) and the closed
form of a recurrence that decays, ``x_k = \sum_{j=0}^{k} A^{k-j} B u_j`` for ``x_k = A x_{k-1} + B u_k``: proved
for every position by an induction whose parts are each checked; a wrong kernel is refuted only by a
counterexample at a given position."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

SSM = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad C \in \mathbb{R}^{1 \times N}, "
       r"\quad u_k \in \mathbb{R}, \quad x_{-1} = 0 $$" + "\n"
       r"$$ x_k = A x_{k-1} + B u_k, \qquad y_k = C x_k $$" + "\n")

RETENTION = (r"$$ k_t \in \mathbb{R}^{d}, \quad v_t \in \mathbb{R}^{e}, \quad \gamma \in \mathbb{R}, \quad S_0 = 0 $$"
             + "\n" r"$$ S_t = \gamma S_{t-1} + k_t v_t^\top $$" + "\n")


def _step(text):
    return check(text).steps[-1]


def test_the_convolution_kernel_of_a_state_space_model_is_proved_for_every_position():
    step = _step(SSM + r"$$ y_k = \sum_{j=0}^{k} C A^{k-j} B u_j $$")
    assert step.status == "proved" and step.general
    assert "every position k by induction on k" in step.scope and "base k = -1" in step.scope
    step = _step(SSM + r"$$ x_k = \sum_{j=0}^{k} A^{k-j} B u_j $$")
    assert step.status == "proved" and step.general


def test_the_reversed_kernel_is_refuted_at_a_given_position_with_a_certificate():
    step = _step(SSM + r"$$ y_k = \sum_{j=0}^{k} C A^{j} B u_j $$")
    assert step.status == "refuted" and "at the position k = 1" in step.scope
    assert step.verdict.counterexample.certificate
    step = _step(SSM + r"$$ y_k = \sum_{j=0}^{k} C A^{k-j+1} B u_j $$")
    assert step.status == "refuted" and "at the position k = 0" in step.scope


def test_a_scalar_decay_unrolls_into_powers_of_the_distance():
    step = _step(RETENTION + r"$$ S_t = \sum_{i=1}^{t} \gamma^{t-i} k_i v_i^\top $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    step = _step(RETENTION + r"$$ S_t = \sum_{i=1}^{t} \gamma^{t-i+1} k_i v_i^\top $$")
    assert step.status == "refuted" and "at the position t = 1" in step.scope
    step = _step(RETENTION + r"$$ S_t = \sum_{i=1}^{t} \gamma^{i-1} k_i v_i^\top $$")
    assert step.status == "refuted" and "at the position t = 2" in step.scope


def test_a_query_at_the_position_is_any_value_in_the_decayed_sum():
    text = RETENTION.replace(r"k_t \in", r"k_t, q_t \in").replace("k_t v_t^\\top", "v_t k_t^\\top")
    step = _step(text + r"$$ S_t q_t = \sum_{i=1}^{t} \gamma^{t-i} v_i k_i^\top q_t $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    assert _step(text + r"$$ S_t q_t = \sum_{i=1}^{t} \gamma^{t-i} v_i k_i^\top q_i $$").status != "proved"


def test_renaming_the_letters_changes_no_verdict():
    text = SSM.replace("_k", "_t").replace("_{k-1}", "_{t-1}")
    step = _step(text + r"$$ y_t = \sum_{i=0}^{t} C A^{t-i} B u_i $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    step = _step(text + r"$$ y_t = \sum_{i=0}^{t} C A^{i} B u_i $$")
    assert step.status == "refuted" and "at the position t = 1" in step.scope


def test_a_power_at_a_given_exponent_is_that_power_and_the_zeroth_is_the_identity():
    head = r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad u_j \in \mathbb{R} $$" + "\n"
    step = _step(head + r"$$ \sum_{j=0}^{2} A^{2-j} B u_j = A^2 B u_0 + A B u_1 + B u_2 $$")
    assert step.status == "proved" and step.general
    step = _step(head + r"$$ \sum_{j=0}^{2} A^{j} B u_j = A^2 B u_0 + A B u_1 + B u_2 $$")
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_symbolic_exponent_outside_a_closed_form_is_refused_by_name():
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1} $$" + "\n"
            r"$$ A^{k-1} A B = A^{k} B $$")
    step = _step(text)
    assert step.status == "ill-formed" and "by the symbolic exponent" in step.error


def test_a_negative_power_of_a_scalar_is_its_reciprocal_and_of_a_matrix_refused():
    decl = r"$$ \gamma \in \mathbb{R}, \quad B \in \mathbb{R}^{N \times 1} $$" + "\n"
    step = _step(decl + r"$$ \sum_{j=1}^{2} \gamma^{1-j} B = \gamma B + B $$")  # B + B / gamma
    assert step.status == "refuted"
    step = _step(decl + r"$$ \gamma \sum_{j=1}^{2} \gamma^{1-j} B = B + \gamma B $$")
    assert step.status == "proved"
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1} $$" + "\n"
            r"$$ \sum_{j=1}^{2} A^{1-j} B = A B + B $$")
    step = _step(text)
    assert step.status == "ill-formed" and "negative power of a matrix is not read" in step.error


def test_a_letter_on_top_of_a_name_that_is_not_a_square_matrix_stays_a_label():
    text = (r"$$ B \in \mathbb{R}^{N \times 1}, \quad u_j \in \mathbb{R} $$" + "\n"
            r"$$ \sum_{j=1}^{2} B^{j} u_j = B^{j} u_1 $$")
    step = _step(text)
    assert step.status == "ill-formed" and "unknown symbol B^j" in step.error
