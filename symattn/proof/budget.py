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

        One interval timer ticks while any limited block runs; at each tick the alarm raises
        :class:`_Expired` (a BaseException, so that library code catching ``Exception`` cannot
        swallow it) once for a block whose deadline has passed, and the block is left as
        :class:`BudgetExceeded`. A tick that lands between the end of a block and its cleanup
        propagates to the enclosing block, or out of the outermost one, where :func:`guarded`
        turns it into :class:`BudgetExceeded` and stops the timer.
        """
        cap = self.left() if seconds is None else min(seconds, self.left())
        if cap <= 0:
            raise BudgetExceeded(f"time budget used up before {what or 'this step'}")
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            yield
            self.check(what)
            return
        entry = _Limit(time.perf_counter() + cap)
        outermost = not _ACTIVE
        epoch = _STATE["epoch"]
        if outermost:
            _start_timer()
        _ACTIVE.append(entry)
        try:
            yield
        except _Expired:
            raise BudgetExceeded(f"{what or 'step'} exceeded its {cap:.2f} s limit") from None
        finally:
            entry.armed = False
            if epoch == _STATE["epoch"]:  # not already cleaned up by guarded()
                if entry in _ACTIVE:
                    del _ACTIVE[_ACTIVE.index(entry):]
                if outermost:
                    _stop_timer()


#: seconds between two ticks of the alarm while a limited block runs
TICK = 0.02

_ACTIVE: list = []  # the limited blocks now running in the main thread, outermost first
# "saved": the SIGALRM handler found when the timer started; "outer": the deadline and interval of
# an interval timer that was already running then (a test runner's own guard, say), or None
_STATE = {"epoch": 0, "saved": signal.SIG_DFL, "outer": None}


#: seconds after which an expired block that is still running is told again: the first alarm can
#: be swallowed where no exception may escape (a garbage-collector callback, a ``__del__``)
REFIRE = 0.5


class _Limit:
    __slots__ = ("deadline", "armed", "fired")

    def __init__(self, deadline: float):
        self.deadline, self.armed, self.fired = deadline, True, None


class _Expired(BaseException):
    """Raised by the alarm inside a limited block (not an Exception, so nothing swallows it)."""


def _alarm(signum, frame):
    now = time.perf_counter()
    outer = _STATE["outer"]
    if outer is not None and now >= outer[0]:
        # the timer that was running before ours is due: its handler runs, as it would have
        _STATE["outer"] = (now + outer[1], outer[1]) if outer[1] > 0 else None
        if callable(_STATE["saved"]):
            _STATE["saved"](signum, frame)
    for entry in _ACTIVE:
        if entry.armed and now >= entry.deadline and (entry.fired is None or now - entry.fired >= REFIRE):
            # not at every tick: the next one must not land in the block's own cleanup
            entry.fired = now
            raise _Expired()


def _start_timer():
    """Tick every TICK seconds; an interval timer already running is remembered, not lost."""
    _STATE["saved"] = signal.signal(signal.SIGALRM, _alarm)
    remaining, interval = signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    _STATE["outer"] = (time.perf_counter() + remaining, interval) if remaining > 0 else None


def _stop_timer():
    """Stop ticking, and give back the handler and the timer that ran before (what is left of it)."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, _STATE["saved"])
    outer, _STATE["outer"] = _STATE["outer"], None
    if outer is not None:
        signal.setitimer(signal.ITIMER_REAL, max(outer[0] - time.perf_counter(), 1e-3), outer[1])


@contextmanager
def guarded():
    """The outermost frame of a proof attempt: an alarm that escaped every limited block (it fired
    between a block's end and its cleanup) becomes :class:`BudgetExceeded`, and the timer stops."""
    try:
        yield
    except _Expired:
        for entry in _ACTIVE:
            entry.armed = False
        if threading.current_thread() is threading.main_thread():
            _STATE["epoch"] += 1  # cleanup code of blocks left behind must not touch the timer now
            del _ACTIVE[:]
            _stop_timer()
        raise BudgetExceeded("the time budget ran out between two steps") from None
