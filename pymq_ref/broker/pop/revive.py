"""``PopReviveService`` (5.1.4): read each revive queue, pair CK and ACK records, and put every
message of a CK that was not acked by its revive time into the POP retry topic.

One round per revive queue (every ``reviveInterval`` on the broker's scheduler):

1. read the queue from the revive group's offset + 1 (``CID_RMQ_SYS_REVIVE_GROUP`` keeps, per
   revive queue, the queue offset of the last CK it finished) to its end;
2. every CK goes into a map under ``topic+group+queueId+startOffset+popTime``; every ACK (and
   batch ACK) sets its bit in the CK with the same key;
3. in revive-offset order, each CK whose revive time is more than ``ackTimeInterval + 1 s`` in
   the past is revived — each un-acked message looked up by queue offset and re-put with
   ``reconsumeTimes + 1`` and ``1ST_POP_TIME`` (``reviveRetry``) into ``%RETRY%<group>_<topic>``
   (a message that came from the retry topic goes back there) — and the group's revive offset
   moves to it, up to the first CK not yet due.

Deviations from 5.1.4: 5.x decides "due" from the newest deliver time it has read and stops at
the first CK not yet due — its revive log runs through the timer wheel, so records appear in the
order they fall due. pymq-ref compares with the clock and also works without the wheel, where the
revive log is in write order (a CK with a long invisible time may precede a short one): due CKs
behind a pending one are revived too, and their re-put messages acked in the revive log so that
re-reading them (the offset cannot pass the pending CK yet) never revives them twice. CKs of a
deleted topic or group are skipped, as in 5.x. There is no DLQ here: 5.x moves a message to the DLQ when it is
*received* past the group's max attempts (:mod:`.receive`).

Must not hand out messages; it only writes retries and commits revive offsets.
"""

from __future__ import annotations

import dataclasses
import threading

from pymq_ref.formats import pop
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import JavaHashMap
from pymq_ref.store.message_store import GetMessageStatus

from ..messages import ext_properties
from ..scheduler import Timer
from .revive_log import ack_message


class PopReviveService:
    """Legal call order: ``PopReviveService(pop_service)`` → ``start()`` → (rounds run on the
    scheduler; ``revive_round(qid)`` runs one by hand) → ``shutdown()``."""

    def __init__(self, service):
        self.service = service
        self.broker = service.broker
        self.config = service.config
        self.clock = service.clock
        self.revive_topic = service.revive_topic
        self._timers: list[Timer] = []
        self._lock = threading.Lock()
        self._running = False
        self.revived: list[tuple[pop.PopCheckPoint, int]] = []
        self._scan: dict[int, tuple[int, int, dict[str, pop.PopCheckPoint]]] = {}  # qid -> (offset, next, CKs)  # (CK, queue offset) of every re-put, for the book

    def start(self) -> None:
        self._running = True
        first = self.clock.now_ms() + self.config.revive_interval
        for qid in range(self.config.revive_queue_num):
            self._schedule(qid, first)

    def _schedule(self, qid: int, due: int) -> None:
        def run() -> None:
            if not self._running or self.broker.state != "running":
                return
            try:
                self.revive_round(qid)
            finally:
                self._schedule(qid, max(due + self.config.revive_interval, self.clock.now_ms()))
        self._timers.append(self.broker.scheduler.call_at(due, run))
        if len(self._timers) > 4 * self.config.revive_queue_num:
            self._timers = [t for t in self._timers if not t.cancelled][-2 * self.config.revive_queue_num:]

    def shutdown(self) -> None:
        self._running = False
        for t in self._timers:
            t.cancel()
        self._timers.clear()

    # -- one round ---------------------------------------------------------------------------------
    def revive_offset(self, qid: int) -> int:
        return self.broker.offsets.query_offset(pop.REVIVE_GROUP, self.revive_topic, qid)

    def _read(self, qid: int, start: int) -> tuple[list[MessageRecord], int]:
        """Records of revive queue ``qid`` from ``start`` (at most ``revive_scan_max``) and the next offset."""
        store, out, offset = self.broker.store, [], start
        while len(out) < self.config.revive_scan_max:
            got = store.get_message(pop.REVIVE_GROUP, self.revive_topic, qid, offset, 32)
            if got.status is not GetMessageStatus.FOUND:
                if got.status in (GetMessageStatus.OFFSET_TOO_SMALL,) and got.next_begin_offset > offset:
                    offset = got.next_begin_offset  # the revive log was cleaned below us
                    continue
                break
            out.extend(got.records())
            offset = got.next_begin_offset
        return out, offset

    def revive_round(self, qid: int) -> int:
        """One scan of revive queue ``qid``; the number of messages re-put.

        The pairing state is kept between rounds (``_scan[qid]``: the CKs read so far with their ACKs
        applied, and where to read next), so a round reads only what was written since the last one;
        it is rebuilt from the committed revive offset after a restart."""
        with self._lock:
            old = self.revive_offset(qid)
            scan = self._scan.get(qid)
            if scan is None or scan[0] != old:
                scan = (old, old + 1, {})
            _, next_read, checkpoints = scan
            records, next_read = self._read(qid, next_read)
            for record in records:
                try:
                    item = pop.decode_by_tag(record.tags, record.body)
                except pop.PopRecordError:
                    continue  # a damaged record is skipped, as fastjson's exception skips it in 5.x
                if isinstance(item, pop.PopCheckPoint):
                    if item.topic is None or item.cid is None:
                        continue
                    checkpoints[item.merge_key()] = dataclasses.replace(item, revive_offset=record.queue_offset)
                elif isinstance(item, (pop.AckMsg, pop.BatchAckMsg)):
                    ck = checkpoints.get(item.merge_key())
                    if ck is None:
                        continue
                    offsets = item.ack_offset_list if isinstance(item, pop.BatchAckMsg) else (item.ack_offset,)
                    for ack_offset in offsets:
                        index = ck.index_of_ack(ack_offset)
                        if index > -1:
                            ck = ck.with_ack(index)
                    checkpoints[item.merge_key()] = ck
            now = self.clock.now_ms()
            new_offset, count, blocked = old, 0, False
            for ck in sorted(checkpoints.values(), key=lambda c: c.revive_offset):
                if now - ck.revive_time <= pop.ACK_TIME_INTERVAL + pop.SECOND:
                    blocked = True  # the offset stops here; later CKs that are due are still revived
                    continue
                normal = pop.parse_normal_topic(ck.topic, ck.cid)
                if (self.broker.topics.select_topic_config(normal) is not None
                        and self.broker.subscriptions.find_subscription_group_config(ck.cid) is not None):
                    count += self._revive_ck(ck, qid, self_ack=blocked)
                if blocked:  # kept (the offset cannot pass it yet) but done: all its bits set
                    checkpoints[ck.merge_key()] = dataclasses.replace(ck, bit_map=(1 << max(ck.num, 0)) - 1)
                else:
                    new_offset = ck.revive_offset
                    del checkpoints[ck.merge_key()]
            if new_offset > old:
                self.broker.offsets.commit_offset(pop.REVIVE_GROUP, self.revive_topic, qid, new_offset,
                                                  "127.0.0.1")
            self._scan[qid] = (new_offset, next_read, checkpoints)
            if count:
                self.service.on_message_arriving()
            return count

    def _revive_ck(self, ck: pop.PopCheckPoint, qid: int, self_ack: bool = False) -> int:
        """Re-put the un-acked messages of ``ck``; with ``self_ack`` (the CK lies beyond the revive
        offset, which an earlier CK still holds back) each re-put message is also acked in the
        revive log, so that the next rounds, which read this CK again, do not revive it twice."""
        count = 0
        for index, offset in pop.iter_unacked(ck):
            got = self.broker.store.get_message(ck.cid, ck.topic, ck.queue_id, offset, 1)
            records = got.records() if got.status is GetMessageStatus.FOUND else []
            if not records or records[0].queue_offset != offset:
                continue  # the message is gone (retention); 5.x logs and skips it too
            if self._revive_retry(ck, records[0]):
                self.revived.append((ck, offset))
                count += 1
                if self_ack:
                    ack = pop.AckMsg(offset, ck.start_offset, ck.cid, ck.topic, ck.queue_id, ck.pop_time,
                                     ck.broker_name)
                    self.broker.putter.put(ack_message(ack, ck.invisible_time, self.revive_topic, qid,
                                                       self.clock.now_ms(), self.broker.config.store_host))
        return count

    def _revive_retry(self, ck: pop.PopCheckPoint, msg: MessageRecord) -> bool:
        """``reviveRetry``: the message into the POP retry topic, queue 0, reconsumeTimes + 1."""
        retry = self.service.ensure_retry_topic(ck.topic, ck.cid)
        props = JavaHashMap(ext_properties(msg).items())
        if msg.reconsume_times == 0 or props.get(pop.FIRST_POP_TIME) is None:
            props[pop.FIRST_POP_TIME] = str(ck.pop_time)
        host = self.broker.config.store_host
        record = MessageRecord(topic=retry, body=msg.body, properties=dict(props.items()), queue_id=0,
                               flag=msg.flag, sys_flag=msg.sys_flag, born_timestamp=msg.born_timestamp,
                               born_host=host, store_host=host, reconsume_times=msg.reconsume_times + 1)
        return self.broker.putter.put(record).ok
