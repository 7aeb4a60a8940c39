"""``TransactionalMessageCheckService``: run a check round every ``transactionCheckInterval``.

The first round runs one interval after :meth:`start` (``waitForRunning`` then ``onWaitEnd``),
then every interval, on the broker's scheduler. Must not sleep or start threads.
Call order: ``start()`` → (rounds run by the scheduler; ``run_once()`` any time) → ``shutdown()``.
"""

from __future__ import annotations

from typing import Callable

from ..scheduler import Scheduler, Timer
from .service import CheckRoundStats, TransactionalMessageService


class TransactionalMessageCheckService:
    def __init__(self, scheduler: Scheduler, service: TransactionalMessageService, interval_ms: int,
                 on_round: Callable[[CheckRoundStats], None] | None = None):
        self.scheduler = scheduler
        self.service = service
        self.interval_ms = interval_ms
        self.on_round = on_round
        self.rounds: list[CheckRoundStats] = []
        self._timer: Timer | None = None
        self._stopped = True

    def start(self) -> None:
        self._stopped = False
        self._timer = self.scheduler.call_later(self.interval_ms, self._tick)

    def _tick(self) -> None:
        if self._stopped:
            return
        try:
            self.run_once()
        finally:
            if not self._stopped:
                self._timer = self.scheduler.call_later(self.interval_ms, self._tick)

    def run_once(self) -> CheckRoundStats:
        stats = self.service.check()
        self.rounds.append(stats)
        if len(self.rounds) > 1000:
            del self.rounds[:500]
        if self.on_round is not None:
            self.on_round(stats)
        return stats

    def shutdown(self) -> None:
        self._stopped = True
        if self._timer is not None:
            self._timer.cancel()
