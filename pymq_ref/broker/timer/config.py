"""``TimerConfig``: the 5.1.4 ``MessageStoreConfig`` settings of the timer wheel (snake_case names).

4.9.4 has no timer wheel, so these do not live in :class:`~pymq_ref.store.store_config.MessageStoreConfig`.
``timer_slots_total`` is pymq-ref only: RocketMQ fixes it at 7 × 86400 = 604800 (``TIMER_WHEEL_TTL_DAY``
days of one-second slots, independent of the precision); tests and the book use a small wheel.
"""

from __future__ import annotations

from dataclasses import dataclass

from pymq_ref.formats.timer import DEFAULT_SLOTS_TOTAL

TIMER_BLANK_SLOTS = 60
INT_MAX = 2**31 - 1


@dataclass
class TimerConfig:
    timer_wheel_enable: bool = True
    timer_precision_ms: int = 1000
    timer_roll_window_slot: int = 3600 * 24 * 2
    timer_max_delay_sec: int = 3600 * 24 * 3
    timer_flush_interval_ms: int = 1000
    mapped_file_size_timer_log: int = 100 * 1024 * 1024
    timer_congest_num_each_slot: int = INT_MAX
    timer_skip_unknown_error: bool = False
    timer_stop_enqueue: bool = False
    timer_stop_dequeue: bool = False
    # -- pymq-ref only ----------------------------------------------------------------------
    timer_slots_total: int = DEFAULT_SLOTS_TOTAL

    @property
    def roll_window_slots(self) -> int:
        """The constructor's clamp: outside ``[2, slots_total - 60]`` means ``slots_total - 60``."""
        w = self.timer_roll_window_slot
        if w > self.timer_slots_total - TIMER_BLANK_SLOTS or w < 2:
            return self.timer_slots_total - TIMER_BLANK_SLOTS
        return w

    def __post_init__(self) -> None:
        if self.timer_slots_total - TIMER_BLANK_SLOTS < 2:
            raise ValueError(f"timer_slots_total must be at least {TIMER_BLANK_SLOTS + 2} (the roll window is "
                             f"clamped to slots_total - {TIMER_BLANK_SLOTS}), got {self.timer_slots_total}")
        if self.timer_precision_ms <= 0:
            raise ValueError(f"timer_precision_ms must be positive, got {self.timer_precision_ms}")
