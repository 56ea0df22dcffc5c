"""Time budgets for proof attempts: an attempt that would explode ends, it does not hang."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

from ..errors import BudgetExceeded


class Budget:
    """A deadline shared by the strategies of one :func:`verify` call."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.start = time.perf_counter()
        self.deadline = self.start + seconds

    def left(self) -> float:
        return self.deadline - time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def check(self, what: str = "") -> None:
        if self.left() <= 0:
            raise BudgetExceeded(f"time budget of {self.seconds:g} s used up{' in ' + what if what else ''}")

    @contextmanager
    def limit(self, seconds: float | None = None, what: str = ""):
        """Run the block with a hard limit (SIGALRM, main thread only), capped by the budget.

        The alarm raises :class:`_Expired`, a BaseException, so that library code catching
        ``Exception`` cannot swallow it; it fires again every 50 ms until the block is left,
        and leaves the block as :class:`BudgetExceeded`.
        """
        cap = self.left() if seconds is None else min(seconds, self.left())
        if cap <= 0:
            raise BudgetExceeded(f"time budget used up before {what or 'this step'}")
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            yield
            self.check(what)
            return

        def alarm(signum, frame):
            raise _Expired()

        old = signal.signal(signal.SIGALRM, alarm)
        previous = signal.setitimer(signal.ITIMER_REAL, cap, 0.05)
        try:
            yield
        except _Expired:
            raise BudgetExceeded(f"{what or 'step'} exceeded its {cap:.2f} s limit") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            if previous[0]:
                signal.setitimer(signal.ITIMER_REAL, *previous)


class _Expired(BaseException):
    """Raised by the alarm inside a limited block (not an Exception, so nothing swallows it)."""
