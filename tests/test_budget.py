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
    return signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and not B._ACTIVE


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
