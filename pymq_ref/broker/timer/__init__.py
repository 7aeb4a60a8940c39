"""The RocketMQ 5.x timer wheel: arbitrary delivery times (see the book's reference appendix, §Timer files).

:mod:`.hook` is the put side (``HookUtils``), :mod:`.files` the TimerLog / TimerWheel / timercheck
files (layouts in :mod:`pymq_ref.formats.timer`), :mod:`.service` the ``TimerMessageStore``.
"""

from .config import TimerConfig
from .convert import convert
from .files import TimerCheckpoint, TimerLog, TimerWheel
from .hook import (TIMER_DEL_UNIQKEY, TIMER_DELAY_MS, TIMER_DELAY_SEC, TIMER_DELIVER_MS, TIMER_DEQUEUE_MS,
                   TIMER_ENQUEUE_MS, TIMER_OUT_MS, TIMER_ROLL_TIMES, TIMER_TOPIC, TimerMessageRejected,
                   handle_schedule_message, normalize_deliver_ms)
from .service import TimerMessageStore, TimerStats

__all__ = ["TimerConfig", "TimerMessageStore", "TimerStats", "TimerLog", "TimerWheel", "TimerCheckpoint",
           "TimerMessageRejected", "handle_schedule_message", "normalize_deliver_ms", "convert", "TIMER_TOPIC",
           "TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS", "TIMER_OUT_MS", "TIMER_ENQUEUE_MS",
           "TIMER_DEQUEUE_MS", "TIMER_ROLL_TIMES", "TIMER_DEL_UNIQKEY"]
