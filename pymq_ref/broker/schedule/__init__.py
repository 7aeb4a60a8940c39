"""Delay levels: delivering what the put path parked in ``SCHEDULE_TOPIC_XXXX`` (see the book's reference appendix,
§Delay levels).

The put-time rewrite itself is :func:`pymq_ref.store.delay.transform_delay_level` (the store
applies it); this package is the broker side: :class:`ScheduleMessageService` and ``messageTimeup``.
"""

from .service import (DELAY_FOR_A_PERIOD, DELAY_FOR_A_WHILE, FIRST_DELAY_TIME, DelayOffsetFileError,
                      ScheduleMessageService, ScheduleStats)
from .timeup import ScheduledMessageError, message_timeup

__all__ = ["ScheduleMessageService", "ScheduleStats", "DelayOffsetFileError", "ScheduledMessageError",
           "message_timeup", "FIRST_DELAY_TIME", "DELAY_FOR_A_WHILE", "DELAY_FOR_A_PERIOD"]
