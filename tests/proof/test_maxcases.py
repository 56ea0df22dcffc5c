"""Exact proofs about maxima, finite sums and running values (symattn.proof.maxcases)."""

import pytest
import sympy as sp

from symattn.proof.maxcases import (
    INDEX,
    VecMax,
    block,
    merge_sums,
    nonzero_somewhere,
    peel_sums,
    prove_all,
    prove_scalar,
    rename_sum_indices,
    resolve_in_case,
    write_out_maxima,
)

B = sp.Symbol("B", integer=True, positive=True)
j = sp.Symbol("j", integer=True, positive=True)
k, i = sp.symbols("k i", integer=True)
u, w, x = (sp.IndexedBase(n, real=True) for n in ("u", "w", "x"))
m = sp.Function("m", real=True)


def test_the_maximum_of_a_concatenation_is_proved_for_every_length_by_cases():
    both = VecMax(block(B, u), block(B, w))
    v = prove_scalar(both, sp.Max(VecMax(block(B, u)), VecMax(block(B, w))))
    assert v.status == "proved" and v.general
    assert v.method.startswith("case split on the maximum entry (2 cases)")


def test_a_false_claim_about_maxima_is_not_proved():
    both = VecMax(block(B, u), block(B, w))
    assert prove_scalar(both, VecMax(block(B, u))).status == "unknown"
    assert prove_scalar(VecMax(block(B, u)), u[1]).status == "unknown"
    assert prove_scalar(both, sp.Max(VecMax(block(B, u)), w[1])).status == "unknown"


def test_in_a_case_only_values_the_largest_entry_bounds_are_dropped():
    p = sp.Dummy("p", integer=True, positive=True)
    top = u[p]
    bases = {u, w}
    assert resolve_in_case(sp.Max(top, VecMax(block(B, w))), top, bases) == top
    assert resolve_in_case(sp.Max(top, -sp.oo), top, bases) == top
    y = sp.Symbol("y", real=True)  # not an entry: the case says nothing about it
    assert resolve_in_case(sp.Max(top, y), top, bases) == sp.Max(top, y)


def test_the_online_normalizer_step_is_proved_by_peeling_and_merging_sums():
    L = sp.Sum(sp.exp(x[k] - m(j - 1)) * sp.exp(m(j - 1) - m(j)), (k, 1, j - 1)) + sp.exp(x[j] - m(j))
    v = prove_scalar(L, sp.Sum(sp.exp(x[k] - m(j)), (k, 1, j)))
    assert v.status == "proved" and v.general
    wrong = prove_scalar(L, sp.Sum(sp.exp(x[k] - m(j - 1)), (k, 1, j)))
    assert wrong.status == "unknown"


def test_peel_and_merge_are_identities_at_concrete_lengths():
    g = sp.Function("g")
    peeled = peel_sums(sp.Sum(g(k), (k, 1, j + 2)), sp.Sum(g(k), (k, 1, j)))[0]
    assert peeled == sp.Sum(g(k), (k, 1, j)) + g(j + 1) + g(j + 2)
    for n in range(0, 5):
        assert (peeled - sp.Sum(g(k), (k, 1, j + 2))).subs(j, n).doit() == 0
    a = sp.Symbol("a")
    merged = merge_sums(a * sp.Sum(g(k), (k, 1, j)) - sp.Sum(a * g(i), (i, 1, j)))
    assert sp.simplify(merged.doit()) == 0 or merged.function == 0


def test_the_name_of_a_sums_index_does_not_matter():
    assert rename_sum_indices(sp.Sum(u[k], (k, 1, B))) == rename_sum_indices(sp.Sum(u[i], (i, 1, B)))
    assert prove_scalar(sp.Sum(sp.exp(u[k]), (k, 1, B)), sp.Sum(sp.exp(u[i]), (i, 1, B))).proved


def test_maxima_are_exact_at_rational_entries():
    mx = VecMax(sp.Tuple(2, u[INDEX]), sp.Tuple(1, w[INDEX]))
    assert write_out_maxima(mx, {u[1]: sp.Rational(1, 3), u[2]: sp.Integer(-4), w[1]: sp.Rational(1, 2)}) == \
        sp.Rational(1, 2)
    assert VecMax(sp.Tuple(2, sp.Integer(7) + INDEX)) == 9


def test_a_nonzero_difference_is_certified_at_an_instance_not_guessed():
    assert "excludes 0" in nonzero_somewhere(sp.exp(u[1]) - sp.exp(u[1]) * sp.exp(sp.Rational(1, 10**6)))
    assert nonzero_somewhere(sp.exp(u[1] + u[2]) - sp.exp(u[1]) * sp.exp(u[2])) == ""


def test_a_claim_proved_in_parts_is_proved_only_when_every_part_is():
    good = prove_scalar(u[1], u[1])
    bad = prove_scalar(u[1], u[2])
    assert prove_all([good, good]).proved
    assert not prove_all([good, bad]).proved


def _entries(rng, n):
    return [sp.Integer(rng.randint(-3, 3)) for _ in range(n)]


def test_the_rules_are_identities_at_every_small_instance():
    """Each rule's rewrite, evaluated exactly with integer entries at lengths 1..4, equals what it rewrote."""
    import random

    rng = random.Random(7)
    g = sp.Function("g")
    for n in range(1, 5):
        for _ in range(3):
            vu, vw = _entries(rng, n), _entries(rng, n)
            at = {**{u[t + 1]: vu[t] for t in range(n)}, **{w[t + 1]: vw[t] for t in range(n)}}
            both = VecMax(block(n, u), block(n, w))
            assert write_out_maxima(both, at) == max(vu + vw)
            # the case split: in the case of the true largest entry, the resolved claim has the same value
            p = (vu + vw).index(max(vu + vw))
            top = (u if p < n else w)[p % n + 1]
            claim = sp.Max(VecMax(block(n, u)), VecMax(block(n, w)))
            resolved = resolve_in_case(claim, top, {u, w})
            assert resolved.xreplace(at) == write_out_maxima(claim, at) == max(vu + vw)
            # merge and peel with exact integer entries
            a, c = sp.Integer(rng.randint(-3, 3)), sp.Integer(rng.randint(-3, 3))
            e = a * sp.Sum(u[k] ** 2, (k, 1, n)) + c * sp.Sum(w[i], (i, 1, n))
            assert merge_sums(e).doit().xreplace(at) == e.doit().xreplace(at)
            for extra in (1, 2):
                s = sp.Sum(g(k) * u[k], (k, 1, n + extra))
                peeled = peel_sums(s, sp.Sum(g(k), (k, 1, n)))[0]
                vals = {g(t): sp.Integer(rng.randint(-3, 3)) for t in range(1, n + extra + 1)}
                big = {**at, **{u[t]: sp.Integer(t) for t in range(n + 1, n + extra + 1)}}
                assert peeled.doit().xreplace(vals).xreplace(big) == s.doit().xreplace(vals).xreplace(big)


def test_a_sum_over_an_empty_range_is_empty_and_no_karr_identity_is_used():
    # at j = 1 the right sum runs over 1..-1: empty, so the claim is g(1) = g(1) + g(0), false
    g = sp.Function("g", real=True)
    claim = sp.Sum(g(k), (k, 1, j)) - sp.Sum(g(k), (k, 1, j - 2))
    assert prove_scalar(claim, g(j) + g(j - 1)).status == "unknown"  # never proved (nor a SoundnessError)
    J = sp.Symbol("J", integer=True, positive=True)  # from j = 2 on it holds
    shifted = sp.Sum(g(k), (k, 1, J + 1)) - sp.Sum(g(k), (k, 1, J - 1))
    assert prove_scalar(shifted, g(J + 1) + g(J)).proved


def test_a_maximum_with_a_block_that_is_not_a_plain_entry_is_not_resolved_in_a_case():
    p = sp.Dummy("p", integer=True, positive=True)
    shifted = VecMax(block(B, u), sp.Tuple(B, w[INDEX] - 10))
    negated = VecMax(block(B, u), sp.Tuple(B, -w[INDEX]))
    assert resolve_in_case(shifted, u[p], {u, w}) == shifted
    assert resolve_in_case(negated, u[p], {u, w}) == negated
    assert prove_scalar(shifted, VecMax(block(B, u))).status == "unknown"
    assert prove_scalar(negated, VecMax(block(B, u))).status == "unknown"


def test_the_audit_checks_the_claim_as_stated_with_entries_far_apart(monkeypatch):
    from symattn.errors import SoundnessError
    from symattn.proof import maxcases

    def careless(e, top, vectors):  # the case split as it was: any block of top's vector resolves
        return sp.sympify(e).replace(lambda x: isinstance(x, VecMax) and any(b[1] == top.base[INDEX] for b in x.args),
                                     lambda x: top)

    monkeypatch.setattr(maxcases, "resolve_in_case", careless)
    with pytest.raises(SoundnessError, match="differs at"):
        prove_scalar(VecMax(block(B, u), sp.Tuple(B, w[INDEX] - 10)), VecMax(block(B, u)))


def test_a_proof_by_cases_says_its_audit_of_the_claim_as_stated():
    v = prove_scalar(VecMax(block(B, u), block(B, w)), sp.Max(VecMax(block(B, u)), VecMax(block(B, w))))
    assert any("audit of the claim as stated" in str(t) for t in v.trace)


def test_verify_scalar_refutes_a_claim_about_entries_with_values_for_the_entries():
    from symattn.proof.scalar import verify_scalar

    v = verify_scalar(sp.Max(x[1], x[2]), x[1])
    assert v.status == "refuted" and v.counterexample.certificate
    assert set(v.counterexample.values) == {"x[1]", "x[2]"}
    assert verify_scalar(sp.Max(x[1], x[1]), x[1]).status == "proved"
