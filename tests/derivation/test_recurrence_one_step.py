r"""One step of a recurrence at the symbolic position letter, when the file declares the previous member
(``W^{(i-1)} \in \mathbb{R}^{m \times n}``): read as the body once, the previous member any value of its shape."""

from __future__ import annotations

from symattn.derivation.latex_document import check_latex as check

DELTA = (r"$$ \mathbf{W}^{(i-1)} \in \mathbb{R}^{m \times n}, \quad \mathbf{v}^{(i)} \in \mathbb{R}^{m}, "
         r"\quad \mathbf{k}^{(i)} \in \mathbb{R}^{n}, \quad \beta^{(i)} \in \mathbb{R} $$" + "\n"
         r"$$ \mathbf{W}^{(i)} = \mathbf{W}^{(i-1)} + \beta^{(i)} (\mathbf{v}^{(i)} - \mathbf{W}^{(i-1)} "
         r"\mathbf{k}^{(i)}) \otimes \mathbf{k}^{(i)} $$" + "\n")

TRUE = (r"$$ \mathbf{W}^{(i)} = \mathbf{W}^{(i-1)} \left(\mathbf{I} - \beta^{(i)} \mathbf{k}^{(i)} "
        r"\mathbf{k}^{(i)\top}\right) + \beta^{(i)} \mathbf{v}^{(i)} \otimes \mathbf{k}^{(i)} $$")


def test_a_regrouped_update_is_proved_at_every_position():
    r = check(DELTA + TRUE)
    assert [s.status for s in r.steps] == ["proved"]
    assert any("one step of its recurrence" in n and "every position i" in n for n in r.notes)


def test_a_dropped_scale_is_refuted_with_a_certificate():
    (step,) = check(DELTA + TRUE.replace(r"+ \beta^{(i)} \mathbf{v}", r"+ \mathbf{v}")).steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_transposed_correction_is_refuted():
    wrong = TRUE.replace(r"\mathbf{W}^{(i-1)} \left(", r"\left(").replace(r"\right) +", r"\right) \mathbf{W}^{(i-1)} +")
    (step,) = check(DELTA.replace("m \\times n", "n \\times n").replace("^{m}", "^{n}") + wrong).steps
    assert step.status == "refuted"


def test_renaming_the_position_letter_changes_no_verdict():
    text = (DELTA + TRUE).replace("(i-1)", "(t-1)").replace("(i)", "(t)")
    r = check(text)
    assert [s.status for s in r.steps] == ["proved"]
    assert any("every position t" in n for n in r.notes)


def test_an_undeclared_previous_member_is_still_refused():
    text = (r"$$ A \in \mathbb{R}^{N \times N}, \quad B \in \mathbb{R}^{N \times 1}, \quad u_k \in \mathbb{R}, "
            r"\quad x_{-1} = 0 $$" + "\n" + r"$$ x_k = A x_{k-1} + B u_k $$" + "\n"
            r"$$ x_k = A x_{k-1} + B u_k $$")
    (step,) = check(text).steps
    assert step.status == "ill-formed" and "symbolic position k" in step.error


def test_a_later_position_is_still_refused():
    (step,) = check(DELTA + TRUE.replace("(i)", "(i+1)").replace("(i-1)", "(i)")).steps
    assert step.status == "ill-formed" and "symbolic position i + 1" in step.error


RFA = (r"$$ k_t \in \mathbb{R}^{d}, \quad v_t \in \mathbb{R}^{e} $$" + "\n"
       r"$$ S_t = S_{t-1} + k_t \otimes v_t, \quad S_0 = 0 $$" + "\n")


def test_an_initial_condition_after_the_recurrence_is_read_as_one():
    r = check(RFA + r"$$ S_2 = k_1 v_1^\top + k_2 v_2^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
    assert any("S_0 := 0" in d for d in r.definitions)


def test_a_member_dropped_after_the_late_initial_condition_is_refuted():
    (step,) = check(RFA + r"$$ S_2 = k_2 v_2^\top $$").steps
    assert step.status == "refuted" and step.verdict.counterexample.certificate


def test_a_zero_written_once_the_initial_condition_is_stated_is_a_claim():
    r = check(RFA + r"$$ S_1 = 0 $$")
    assert [s.status for s in r.steps] == ["ill-formed"]  # a claim (S_1 a matrix, 0 a scalar), not a definition
    assert not any(d.startswith("S_1") for d in r.definitions)


def test_an_initial_condition_is_read_whatever_the_position_letter():
    r = check(RFA.replace("_t", "_i").replace("_{t-1}", "_{i-1}") + r"$$ S_1 = k_1 v_1^\top $$")
    assert [s.status for s in r.steps] == ["proved"]
