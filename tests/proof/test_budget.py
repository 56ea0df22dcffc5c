"""Time budgets: an attempt that runs out of time ends as "unknown", never as an escaped alarm."""

import signal
import time

import pytest
import sympy as sp

import symattn as sa
from symattn.errors import BudgetExceeded
from symattn.proof import budget as B

n, m, d_k, d_v = sa.dims("n m d_k d_v")
Q, K, V = sp.MatrixSymbol("Q", d_k, n), sp.MatrixSymbol("K", d_k, m), sp.MatrixSymbol("V", d_v, m)


def _timer_is_off():
    """Our ticking has stopped (a test runner's own timer, if any, may run on)."""
    return (
        signal.getsignal(signal.SIGALRM) is not B._alarm
        and signal.getitimer(signal.ITIMER_REAL)[1] != B.TICK
        and not B._ACTIVE
    )


def _with_outer_timer(seconds, handler):
    """Run with an interval timer of our own, as pytest-timeout's guard is; restore what was."""
    saved = signal.signal(signal.SIGALRM, handler)
    before = signal.setitimer(signal.ITIMER_REAL, seconds)
    return saved, before


def test_a_timer_running_before_a_proof_runs_on_after_it():
    calls = []
    saved, before = _with_outer_timer(30.0, lambda *a: calls.append(a))
    try:
        sa.verify(sa.attention(2 * Q, K, V), sa.attention(Q, K, V), budget=2.0)
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 20.0 < remaining <= 30.0  # not cancelled by the budget's own ticking
        assert not calls and signal.getsignal(signal.SIGALRM) is not B._alarm
    finally:
        signal.setitimer(signal.ITIMER_REAL, *before)
        signal.signal(signal.SIGALRM, saved)


def test_a_timer_due_inside_a_limited_block_reaches_its_own_handler():
    class Guard(BaseException):
        pass

    def guard(*_):
        raise Guard()

    saved, before = _with_outer_timer(0.1, guard)
    try:
        with pytest.raises(Guard):
            with B.Budget(5.0).limit(5.0, "long step"):
                t = time.perf_counter()
                while time.perf_counter() - t < 2.0:
                    pass
        assert _timer_is_off() and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, *before)
        signal.signal(signal.SIGALRM, saved)


def test_tiny_budgets_give_verdicts_not_escaped_alarms():
    seen = set()
    for k in range(120):
        v = sa.verify(sa.attention(2 * Q, K, V), sa.attention(Q, K, V), budget=(0.02, 0.04, 0.07, 0.1)[k % 4])
        seen.add(v.status)
        assert v.status in ("refuted", "unknown")
        assert _timer_is_off()
    assert "unknown" in seen  # the budgets are small enough to run out


def test_an_alarm_that_escapes_every_block_becomes_budget_exceeded_and_stops_the_timer():
    budget = B.Budget(5.0)
    with pytest.raises(BudgetExceeded, match="between two steps"):
        with B.guarded():
            with budget.limit(5.0, "outer"):
                pass
            raise B._Expired()  # as if a tick landed after the block, before its cleanup
    assert _timer_is_off()


def test_nested_limits_expire_the_inner_block_first():
    budget = B.Budget(5.0)
    with budget.limit(2.0, "outer"):
        with pytest.raises(BudgetExceeded, match="inner exceeded"):
            with budget.limit(0.05, "inner"):
                t = time.perf_counter()
                while time.perf_counter() - t < 1.0:
                    pass
        assert B._ACTIVE and B._ACTIVE[0].armed  # the outer block still runs, with its own limit
    assert _timer_is_off()


def test_an_alarm_swallowed_where_exceptions_cannot_escape_is_raised_again():
    # a garbage-collector callback or a __del__ reports an exception and drops it; the block must
    # still end, not run on without a limit
    # (the whole busy loop sits inside the try, so that the first alarm cannot land outside it; one
    # swallowed elsewhere, by a collector callback of a library, is told again all the same)
    swallowed = []
    with pytest.raises(BudgetExceeded, match="step exceeded"):
        with B.Budget(5.0).limit(0.05, "step"):
            t = time.perf_counter()
            while True:
                try:
                    while time.perf_counter() - t < 5.0:
                        pass
                    break
                except B._Expired:
                    if swallowed:
                        raise
                    swallowed.append(time.perf_counter() - t)
    assert swallowed and swallowed[0] < 4.0 and _timer_is_off()
