"""The adversarial corpus (tests/corpus.py): no false claim is proved, no true claim is refuted.

"unknown" is allowed for both (and counted by ``python benchmarks/corpus_report.py``); a
refusal (ClaimError) only for entries whose two sides hold two objects that print alike. Any
other exception from verify is a failure: a claim gets a verdict, not a traceback.
"""

import collections

import pytest
from corpus import CORPUS, decide, is_failure

import symattn as sa


def test_corpus_is_large_and_balanced():
    truths = collections.Counter(e.expect for e in CORPUS)
    assert len(CORPUS) >= 150
    assert min(truths[True], truths[False]) >= 0.4 * len(CORPUS), truths
    assert len({e.name for e in CORPUS}) == len(CORPUS)


def test_corpus_covers_every_trap():
    families = {e.family for e in CORPUS}
    for trap in ("true only at dimension 1", "true only for H = 1", "true only when d_k = d_v", "off by 10^-15",
                 "explicit entries", "colliding names", "nested binders"):
        assert trap in families, trap


def test_failure_rule_can_fail():
    true, false = (next(e for e in CORPUS if e.expect is truth and not e.refusable) for truth in (True, False))
    assert is_failure(true, "refuted") and is_failure(true, "refused")
    assert is_failure(false, "proved general") and is_failure(false, "proved at dims")
    assert not is_failure(true, "unknown") and not is_failure(false, "unknown")


@pytest.mark.parametrize("entry", CORPUS, ids=[e.name for e in CORPUS])
def test_corpus_claim_is_never_decided_wrongly(entry):
    outcome, verdict, why = decide(entry)
    assert outcome != "refused" or entry.refusable, f"{entry.name}: refused, but nothing in it prints alike: {why}"
    if entry.expect:
        assert outcome != "refuted", f"true claim {entry.name} refuted:\n{verdict.explain()}"
    else:
        assert not outcome.startswith("proved"), f"false claim {entry.name} {outcome}:\n{verdict.explain()}"
    assert not is_failure(entry, outcome)
    if verdict is not None:
        assert isinstance(verdict, sa.Verdict)
