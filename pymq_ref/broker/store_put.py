"""The broker's one door into the store's put path.

Every service writes through :class:`StorePutter`, which remembers the record as the store
will write it (:class:`Put`): the store itself applies the put-time delay-level rewrite
(``CommitLog.asyncPutMessage`` parks a ``DELAY`` > 0 message in ``SCHEDULE_TOPIC_XXXX``,
:func:`pymq_ref.store.delay.transform_delay_level`), and the services need to report where a
record really went (the schedule topic and queue of a parked retry, for instance).
Must not decide anything about topics, groups or transactions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.commit_log import AppendMessageResult, PutMessageResult, PutMessageStatus
from pymq_ref.store.errors import MessageIllegalError
from pymq_ref.store.message_store import MessageStore

try:  # the delay wave's rewrite (pymq_ref/store/delay.py)
    from pymq_ref.store.delay import transform_delay_level
except ImportError:  # pragma: no cover - before the delay wave landed
    transform_delay_level = None


@dataclass(slots=True)
class Put:
    result: PutMessageResult
    record: MessageRecord  # as handed to the store (after the delay rewrite)

    @property
    def ok(self) -> bool:
        return self.result.status is PutMessageStatus.PUT_OK

    @property
    def status(self) -> PutMessageStatus:
        return self.result.status

    @property
    def append_result(self) -> AppendMessageResult | None:
        return self.result.append_result


#: A put hook (5.x ``PutMessageHook.executeBeforePutMessage``): the record to store instead, or a
#: refusal (the put does not happen and this is its result).
PutHook = Callable[[MessageRecord], "MessageRecord | PutMessageResult"]


class StorePutter:
    """``put`` runs ``before_put`` (when set — the broker sets the 5.x timer hook there when the
    timer wheel is enabled), then the store's put; ``put_batch`` goes straight to the store."""

    def __init__(self, store: MessageStore, before_put: PutHook | None = None):
        self.store = store
        self.before_put = before_put

    def put(self, record: MessageRecord) -> Put:
        prepared = self._prepare(record)
        if isinstance(prepared, Put):
            return prepared
        record, stored = prepared
        return Put(self.store.put_message(record), stored)

    async def put_async(self, record: MessageRecord) -> Put:
        """:meth:`put` for a caller on an asyncio loop: under SYNC_FLUSH it waits for the group
        commit without blocking the loop (so concurrent puts share one flush)."""
        prepared = self._prepare(record)
        if isinstance(prepared, Put):
            return prepared
        record, stored = prepared
        return Put(await self.store.async_put_message(record), stored)

    def _prepare(self, record: MessageRecord):
        """(record to put, record as stored) — or the refusing :class:`Put` of the put hook."""
        if self.before_put is not None:
            hooked = self.before_put(record)
            if isinstance(hooked, PutMessageResult):
                return Put(hooked, record)
            record = hooked
        stored = record
        if transform_delay_level is not None:
            try:
                stored = transform_delay_level(record, self.store.delay_table)  # what the store will do
            except MessageIllegalError:
                pass  # the store answers MESSAGE_ILLEGAL itself
        return record, stored

    def put_batch(self, batch: MessageRecord) -> Put:
        return Put(self.store.put_messages(batch), batch)

    async def put_batch_async(self, batch: MessageRecord) -> Put:
        return Put(await self.store.async_put_messages(batch), batch)
