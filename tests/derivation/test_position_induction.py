r"""A recurrence's closed form, ``S_t = \sum_{i=1}^{t} k_i v_i^\top`` with ``S_t = S_{t-1} + k_t v_t^\top`` and
``S_0 = 0``: proved for every t by an induction whose base and step are both checked; refuted only by a
counterexample at a given position, never by the induction step alone."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

LINEAR = (r"$$ k_t \in \mathbb{R}^{d}, \quad v_t \in \mathbb{R}^{e}, \quad S_0 = 0 $$" + "\n"
          r"$$ S_t = S_{t-1} + k_t v_t^\top $$" + "\n")


def _step(text):
    (step,) = check(text).steps
    return step


def test_the_unrolled_sum_is_proved_for_every_position_by_induction():
    step = _step(LINEAR + r"$$ S_t = \sum_{i=1}^{t} k_i v_i^\top $$")
    assert step.status == "proved" and step.general
    assert "every position t by induction on t" in step.scope and "base t = 0" in step.scope
    assert step.method.startswith("induction on t")


def test_an_outer_product_written_with_otimes_is_proved_too():
    text = LINEAR.replace(r"k_t v_t^\top $$", r"k_t \otimes v_t $$")
    assert _step(text + r"$$ S_t = \sum_{i=1}^{t} k_i v_i^\top $$").status == "proved"


def test_a_scaled_summand_is_refuted_at_a_given_position():
    step = _step(LINEAR + r"$$ S_t = \sum_{i=1}^{t} 2 k_i v_i^\top $$")
    assert step.status == "refuted" and not step.general
    assert "at the position t = 1" in step.scope and step.verdict.counterexample.certificate


def test_a_summand_with_a_fixed_member_is_refuted_where_the_members_differ():
    step = _step(LINEAR + r"$$ S_t = \sum_{i=1}^{t} k_1 v_i^\top $$")
    assert step.status == "refuted" and "at the position t = 2" in step.scope


def test_a_sum_that_starts_at_the_initial_condition_is_not_this_induction():
    step = _step(LINEAR + r"$$ S_t = \sum_{i=0}^{t} k_i v_i^\top $$")
    assert step.status == "ill-formed" and "symbolic position t" in step.error


def test_a_summand_that_depends_on_the_position_is_still_refused():
    step = _step(LINEAR + r"$$ S_t = \sum_{i=1}^{t} k_t v_i^\top $$")
    assert step.status == "ill-formed" and "symbolic position t" in step.error


def test_renaming_the_letters_changes_no_verdict():
    text = LINEAR.replace("_t", "_n").replace("_{t-1}", "_{n-1}")
    step = _step(text + r"$$ S_n = \sum_{j=1}^{n} k_j v_j^\top $$")
    assert step.status == "proved" and "every position n by induction on n" in step.scope
    assert _step(text + r"$$ S_n = \sum_{j=1}^{n} 2 k_j v_j^\top $$").status == "refuted"


def test_a_decaying_recurrence_is_not_claimed_by_the_undecayed_sum():
    decayed = LINEAR.replace(r"S_{t-1} +", r"2 S_{t-1} +")
    step = _step(decayed + r"$$ S_t = \sum_{i=1}^{t} k_i v_i^\top $$")
    assert step.status == "refuted" and "at the position t = 2" in step.scope


CAUSAL = (r"$$ k_t, q_t \in \mathbb{R}^{d}, \quad v_t \in \mathbb{R}^{e}, \quad S_0 = 0 $$" + "\n"
          r"$$ S_t = S_{t-1} + v_t k_t^\top $$" + "\n")


def test_the_output_equals_causal_linear_attention_at_every_position():
    step = _step(CAUSAL + r"$$ S_t q_t = \sum_{i=1}^{t} v_i k_i^\top q_t $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    assert "S_{t-1} q_t" in step.scope  # the hypothesis, with the query at t any value
    assert _step(CAUSAL + r"$$ q_t^\top S_t^\top = \sum_{i=1}^{t} q_t^\top k_i v_i^\top $$").status == "proved"


def test_a_query_at_the_summed_position_is_not_proved_by_the_induction():
    # q_i in the summand: the query at t is no longer a value apart, and the claim is false at t = 2
    step = _step(CAUSAL + r"$$ S_t q_t = \sum_{i=1}^{t} v_i k_i^\top q_i $$")
    assert step.status != "proved"


def test_a_scaled_causal_sum_is_refuted_at_a_given_position():
    step = _step(CAUSAL + r"$$ S_t q_t = \sum_{i=1}^{t} 2 v_i k_i^\top q_t $$")
    assert step.status == "refuted" and "at the position t = 1" in step.scope


def test_an_output_defined_at_the_position_is_read_through_its_definition():
    text = CAUSAL + r"$$ o_t = S_t q_t $$" + "\n"
    step = _step(text + r"$$ o_t = \sum_{i=1}^{t} v_i k_i^\top q_t $$")
    assert step.status == "proved" and "every position t by induction on t" in step.scope
    step = _step(text + r"$$ o_t = \sum_{i=1}^{t} k_i^\top q_t v_i $$")
    assert step.status == "proved"
    step = _step(text + r"$$ o_t = \sum_{i=1}^{t} v_i q_t^\top k_t $$")
    assert step.status != "proved"
    step = _step(text + r"$$ o_t = \sum_{i=1}^{t} v_i q_t^\top k_1 $$")
    assert step.status == "refuted" and "at the position t = 2" in step.scope
