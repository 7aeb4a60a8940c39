"""The schedulers every broker service runs on."""

from __future__ import annotations

import threading

from pymq_ref.broker.scheduler import ManualScheduler, ThreadScheduler
from pymq_ref.store.clock import ManualClock


def test_manual_scheduler_runs_in_time_order_and_only_when_advanced():
    clock = ManualClock(1000)
    sched = ManualScheduler(clock)
    seen = []
    sched.call_later(50, lambda: seen.append(("b", clock.now_ms())))
    sched.call_later(10, lambda: seen.append(("a", clock.now_ms())))
    dropped = sched.call_later(20, lambda: seen.append(("x", clock.now_ms())))
    dropped.cancel()
    sched.call_later(10, lambda: sched.call_later(5, lambda: seen.append(("c", clock.now_ms()))))
    assert seen == [] and sched.pending() == 3
    assert sched.advance(30) == 3
    assert seen == [("a", 1010), ("c", 1015)] and clock.now_ms() == 1030
    sched.advance(100)
    assert seen[-1] == ("b", 1050) and clock.now_ms() == 1130 and sched.pending() == 0


def test_thread_scheduler_runs_callbacks_and_survives_errors():
    sched = ThreadScheduler().start()
    done = threading.Event()
    sched.call_later(0, lambda: 1 / 0)
    sched.call_later(20, done.set)
    try:
        assert done.wait(5)
        assert len(sched.errors) == 1 and isinstance(sched.errors[0], ZeroDivisionError)
    finally:
        sched.stop()
