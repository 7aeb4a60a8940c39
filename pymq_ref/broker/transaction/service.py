"""``TransactionalMessageServiceImpl`` + ``EndTransactionProcessor`` + the check listener (4.9.4).

* :meth:`TransactionalMessageService.prepare_message` — store a half message
  (``broker/src/main/java/org/apache/rocketmq/broker/transaction/queue/TransactionalMessageServiceImpl.java``).
* :meth:`TransactionalMessageService.end_transaction` — COMMIT / ROLLBACK
  (``broker/src/main/java/org/apache/rocketmq/broker/processor/EndTransactionProcessor.java``): validate against
  the half record, write the real message (commit), then the op message
  (``TransactionalMessageServiceImpl.deletePrepareMessage``).
* :meth:`TransactionalMessageService.check` — one round of the check service
  (``TransactionalMessageServiceImpl.check``): walk the
  half queue from ``CID_RMQ_SYS_TRANS``'s offset, pair half messages with op messages, re-put
  half messages that need a check and call the producer back, discard after ``transactionCheckMax``
  checks into ``TRANS_CHECK_MAX_TIME_TOPIC``, commit both consumer offsets.

Theory of operation: nothing is ever deleted. A half message is "resolved" when an op message
(tag ``d``) in ``RMQ_SYS_TRANS_OP_HALF_TOPIC`` names its half-queue offset; the check loop keeps
a consumer offset on each of the two queues and re-appends (rather than rewrites) every half
message it must look at again, so a restart at any point resumes from the last committed
offsets and at worst checks a transaction once more — never loses one.

Differences from 4.9.4 (all documented in the report): an END_TRANSACTION must point at a
record in the half topic (4.9.4 would "commit" any record carrying ``PGROUP``); with
``transactionEndIdempotent`` (default) a repeated END_TRANSACTION for a transaction already
resolved writes no second real message; the check loop stops where 4.9.4 would spin until its
60 s time limit (a failed re-put, an op queue exhausted before a message is old enough), since
an injected clock does not move inside the loop.

Must not sleep or start threads: the broker schedules :meth:`check` and the producer callbacks.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord, decode_record, encode_message
from pymq_ref.formats.msgid import offset_msg_id
from pymq_ref.formats.properties import PGROUP, REAL_QID, REAL_TOPIC, UNIQ_KEY, JavaHashMap
from pymq_ref.store.clock import Clock
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.message_store import GetMessageStatus, MessageStore

from ..config import BrokerConfig
from ..constants import (CID_SYS_RMQ_TRANS, PERM_READ, PERM_WRITE, RMQ_SYS_TRANS_HALF_TOPIC,
                         RMQ_SYS_TRANS_OP_HALF_TOPIC)
from ..messages import ext_properties
from ..offsets import ConsumerOffsetManager
from ..response import (BrokerError, MessageNotFoundError, ResponseCode, TransactionAlreadyResolvedError,
                        TransactionStateError)
from ..send import raise_for_put
from ..store_put import Put, StorePutter
from ..topics import TopicConfigManager
from . import bridge
from .bridge import (CHECK_IMMUNITY_TIME_IN_SECONDS, REMOVE_TAG, TRAN_PREPARED_QUEUE_OFFSET, TRANSACTION_CHECK_TIMES,
                     TRANSACTION_COMMIT_TYPE, TRANSACTION_NOT_TYPE, TRANSACTION_ROLLBACK_TYPE)

MAX_PROCESS_TIME_LIMIT = 60_000
MAX_RETRY_COUNT_WHEN_HALF_NULL = 1
OP_PULL_BATCH = 32
TCMT_QUEUE_NUMS = 1


class PullStatus(enum.Enum):
    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


_BRIDGE_STATUS = {
    GetMessageStatus.FOUND: PullStatus.FOUND, GetMessageStatus.NO_MATCHED_MESSAGE: PullStatus.NO_MATCHED_MSG,
    GetMessageStatus.NO_MESSAGE_IN_QUEUE: PullStatus.NO_NEW_MSG, GetMessageStatus.OFFSET_OVERFLOW_ONE: PullStatus.NO_NEW_MSG,
}


@dataclass
class BridgePullResult:
    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    msg_found_list: list[MessageRecord] | None


@dataclass
class EndTransactionRequest:
    """``EndTransactionRequestHeader``."""

    producer_group: str
    tran_state_table_offset: int
    commit_log_offset: int
    commit_or_rollback: int
    from_transaction_check: bool = False
    msg_id: str | None = None
    transaction_id: str | None = None


@dataclass
class EndTransactionResult:
    code: ResponseCode
    action: str  # "commit" | "rollback"
    half: MessageRecord
    committed: Put | None = None  # the real message (commit)
    op: Put | None = None  # the op message, None when it already existed (idempotent duplicate)
    duplicate: bool = False


@dataclass
class CheckTransactionState:
    """A CHECK_TRANSACTION_STATE request
    (``broker/src/main/java/org/apache/rocketmq/broker/client/net/Broker2Client.java``,
    ``checkProducerTransactionState``): header fields and the body, which is
    the half message encoded like a stored record with topic/queue restored to the real ones."""

    producer_group: str
    tran_state_table_offset: int
    commit_log_offset: int
    msg_id: str | None
    transaction_id: str | None
    offset_msg_id: str
    body: bytes = field(repr=False)

    @property
    def message(self) -> MessageRecord:
        return decode_record(self.body, 0, with_spans=False)


@dataclass
class CheckRoundStats:
    """What one :meth:`TransactionalMessageService.check` round did (for tests and the book)."""

    half_offset_before: int = 0
    half_offset_after: int = 0
    op_offset_before: int = 0
    op_offset_after: int = 0
    checks: list[CheckTransactionState] = field(default_factory=list)
    discarded: list[MessageRecord] = field(default_factory=list)
    immunity_copies: int = 0
    resolved_skipped: int = 0


def _java_long(text: str | None) -> int:
    try:
        return int(text) if text is not None and text.strip() == text else -1
    except ValueError:
        return -1


class TransactionalMessageService:
    def __init__(self, config: BrokerConfig, clock: Clock, store: MessageStore, putter: StorePutter,
                 topics: TopicConfigManager, offsets: ConsumerOffsetManager,
                 send_check: Callable[[CheckTransactionState], None]):
        self.config = config
        self.clock = clock
        self.store = store
        self.putter = putter
        self.topics = topics
        self.offsets = offsets
        self.send_check = send_check
        #: pymq-ref idempotence: UNIQ_KEY (or "@<offset>") -> decision (8/12, None = unknown after restart)
        self.resolved: dict[str, int | None] = {}
        #: half-queue offsets that already have an op message
        self.ops_written: set[int] = set()

    @property
    def broker_host(self) -> Host:
        return self.config.store_host

    # -- half messages ---------------------------------------------------------------------
    def prepare_message(self, msg: MessageRecord) -> Put:
        return self.putter.put(bridge.parse_half_message_inner(msg))

    # -- the store as a queue (TransactionalMessageBridge.getMessage) ----------------------
    def _pull(self, topic: str, queue_id: int, offset: int, nums: int) -> BridgePullResult:
        r = self.store.get_message(CID_SYS_RMQ_TRANS, topic, queue_id, offset, nums, None)
        status = _BRIDGE_STATUS.get(r.status, PullStatus.OFFSET_ILLEGAL)
        found = r.records() if status is PullStatus.FOUND else None
        return BridgePullResult(status, r.next_begin_offset, r.min_offset, r.max_offset, found)

    def fetch_consume_offset(self, topic: str, queue_id: int) -> int:
        offset = self.offsets.query_offset(CID_SYS_RMQ_TRANS, topic, queue_id)
        if offset == -1:
            offset = self.store.get_min_offset_in_queue(topic, queue_id)  # 0 for a queue never written
        return offset

    def update_consume_offset(self, topic: str, queue_id: int, offset: int) -> None:
        self.offsets.commit_offset(CID_SYS_RMQ_TRANS, topic, queue_id, offset, str(self.broker_host))

    def fetch_message_queues(self) -> list[int]:
        tc = self.topics.select_topic_config(RMQ_SYS_TRANS_HALF_TOPIC)
        if tc is None:
            tc = self.topics.create_topic_in_send_message_back_method(RMQ_SYS_TRANS_HALF_TOPIC, 1,
                                                                      PERM_WRITE | PERM_READ, 0)
        return list(range(tc.read_queue_nums)) if tc.read_queue_nums > 0 else []

    # -- op messages ------------------------------------------------------------------------
    def put_op_message(self, half: MessageRecord) -> Put:
        """``deletePrepareMessage``: the op message naming ``half``'s queue offset."""
        put = self.putter.put(bridge.op_message_inner(half.queue_id, half.queue_offset, self.clock.now_ms(),
                                                      self.broker_host))
        if put.ok:
            self.ops_written.add(half.queue_offset)
        return put

    def rebuild_resolved(self) -> int:
        """Re-learn which transactions have op messages (at broker start): scan the op queue(s),
        look each named half message up, remember its UNIQ_KEY. Returns the op messages seen."""
        seen = 0
        for qid in self.store.consume_queue_table.get(RMQ_SYS_TRANS_OP_HALF_TOPIC, {}):
            offset = self.store.get_min_offset_in_queue(RMQ_SYS_TRANS_OP_HALF_TOPIC, qid)
            while True:
                r = self._pull(RMQ_SYS_TRANS_OP_HALF_TOPIC, qid, offset, OP_PULL_BATCH)
                if r.msg_found_list is None:
                    break
                for op in r.msg_found_list:
                    seen += 1
                    h = _java_long(op.body.decode("utf-8", "replace"))
                    if op.tags != REMOVE_TAG or h < 0:
                        continue
                    self.ops_written.add(h)
                    phy = self.store.get_commit_log_offset_in_queue(RMQ_SYS_TRANS_HALF_TOPIC, qid, h)
                    half = self.store.look_message_by_offset(phy) if phy or h == 0 else None
                    if half is not None and half.topic == RMQ_SYS_TRANS_HALF_TOPIC and half.queue_offset == h:
                        self.resolved.setdefault(self._txn_key(half), None)
                offset = r.next_begin_offset
        return seen

    @staticmethod
    def _txn_key(half: MessageRecord) -> str:
        return half.properties.get(UNIQ_KEY) or f"@{half.phy_offset}"

    # -- END_TRANSACTION --------------------------------------------------------------------
    def end_transaction(self, req: EndTransactionRequest) -> EndTransactionResult | None:
        """COMMIT (8) / ROLLBACK (12) a half message; None (no response) for UNKNOW (0) or any
        other value. Raises a :class:`~pymq_ref.broker.response.BrokerError` and writes nothing
        when the request does not match a half message."""
        state = req.commit_or_rollback
        if state not in (TRANSACTION_COMMIT_TYPE, TRANSACTION_ROLLBACK_TYPE):
            return None
        half = self.store.look_message_by_offset(req.commit_log_offset) if req.commit_log_offset >= 0 else None
        if half is None:
            raise MessageNotFoundError("Find prepared transaction message failed")
        if half.topic != RMQ_SYS_TRANS_HALF_TOPIC:
            raise TransactionStateError(f"the record at commit log offset {req.commit_log_offset} is in topic "
                                        f"{half.topic}, not {RMQ_SYS_TRANS_HALF_TOPIC}: not a half message")
        pgroup = half.properties.get(PGROUP)
        if pgroup is None:
            raise TransactionStateError("The half message has no PGROUP property (4.9.4: NullPointerException)")
        if pgroup != req.producer_group:
            raise TransactionStateError("The producer group wrong")
        if half.queue_offset != req.tran_state_table_offset:
            raise TransactionStateError("The transaction state table offset wrong")
        if half.phy_offset != req.commit_log_offset:
            raise TransactionStateError("The commit log offset wrong")
        action = "commit" if state == TRANSACTION_COMMIT_TYPE else "rollback"
        key = self._txn_key(half)
        if self.config.transaction_end_idempotent and key in self.resolved:
            before = self.resolved[key]
            if before is not None and before != state:
                raise TransactionAlreadyResolvedError(
                    f"transaction {key} was already {'committed' if before == TRANSACTION_COMMIT_TYPE else 'rolled back'}; "
                    f"refusing to {action} it")
            op = None if half.queue_offset in self.ops_written else self.put_op_message(half)
            return EndTransactionResult(ResponseCode.SUCCESS, action, half, None, op, duplicate=True)
        committed = None
        if state == TRANSACTION_COMMIT_TYPE:
            if REAL_TOPIC not in half.properties or _java_long(half.properties.get(REAL_QID)) < 0:
                raise TransactionStateError("The half message has no REAL_TOPIC/REAL_QID to restore")
            committed = self.putter.put(bridge.end_message_transaction(half, req.commit_log_offset))
            if committed.status not in (PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_DISK_TIMEOUT,
                                        PutMessageStatus.FLUSH_SLAVE_TIMEOUT, PutMessageStatus.SLAVE_NOT_AVAILABLE):
                raise_for_put(committed.result)
        op = self.put_op_message(half)
        self.resolved[key] = state
        return EndTransactionResult(ResponseCode.SUCCESS, action, half, committed, op)

    # -- the check round --------------------------------------------------------------------
    def _fill_op_remove_map(self, remove_map: dict[int, int], op_qid: int, op_offset: int, mini_offset: int,
                            done_op: list[int]) -> BridgePullResult:
        r = self._pull(RMQ_SYS_TRANS_OP_HALF_TOPIC, op_qid, op_offset, OP_PULL_BATCH)
        if r.status in (PullStatus.OFFSET_ILLEGAL, PullStatus.NO_MATCHED_MSG):
            self.update_consume_offset(RMQ_SYS_TRANS_OP_HALF_TOPIC, op_qid, r.next_begin_offset)
            return r
        if r.status is PullStatus.NO_NEW_MSG or r.msg_found_list is None:
            return r
        for op in r.msg_found_list:
            h = _java_long(op.body.decode("utf-8", "replace"))
            if op.tags == REMOVE_TAG:
                if h < mini_offset:
                    done_op.append(op.queue_offset)
                else:
                    remove_map[h] = op.queue_offset
        return r

    def _need_discard(self, props: JavaHashMap, check_max: int) -> bool:
        raw = props.get(TRANSACTION_CHECK_TIMES)
        times = 1
        if raw is not None:
            times = _java_long(raw) if _java_long(raw) <= 2**31 - 1 else -1
            if times >= check_max:
                return True
            times += 1
        props[TRANSACTION_CHECK_TIMES] = str(times)
        return False

    def _need_skip(self, ext: MessageRecord) -> bool:
        return self.clock.now_ms() - ext.born_timestamp > self.store.config.file_reserved_time * 3_600_000

    def check(self, transaction_timeout: int | None = None, check_max: int | None = None) -> CheckRoundStats:
        """One round over every half queue (``TransactionalMessageServiceImpl.check``)."""
        timeout = self.config.transaction_time_out if transaction_timeout is None else transaction_timeout
        check_max = self.config.transaction_check_max if check_max is None else check_max
        stats = CheckRoundStats()
        for qid in self.fetch_message_queues():
            self._check_queue(qid, timeout, check_max, stats)
        return stats

    def _check_queue(self, qid: int, timeout: int, check_max: int, stats: CheckRoundStats) -> None:
        start = self.clock.now_ms()
        op_qid = qid
        half_offset = self.fetch_consume_offset(RMQ_SYS_TRANS_HALF_TOPIC, qid)
        op_offset = self.fetch_consume_offset(RMQ_SYS_TRANS_OP_HALF_TOPIC, op_qid)
        stats.half_offset_before, stats.op_offset_before = half_offset, op_offset
        done_op: list[int] = []
        remove_map: dict[int, int] = {}
        pull = self._fill_op_remove_map(remove_map, op_qid, op_offset, half_offset, done_op)
        null_count = 1
        new_offset = i = half_offset
        while True:
            if self.clock.now_ms() - start > MAX_PROCESS_TIME_LIMIT:
                break
            if i in remove_map:
                done_op.append(remove_map.pop(i))
                stats.resolved_skipped += 1
            else:
                got = self._pull(RMQ_SYS_TRANS_HALF_TOPIC, qid, i, 1)
                if not got.msg_found_list:
                    null_count += 1
                    if null_count - 1 > MAX_RETRY_COUNT_WHEN_HALF_NULL or got.status is PullStatus.NO_NEW_MSG:
                        break
                    i = new_offset = got.next_begin_offset
                    continue
                ext = got.msg_found_list[0]
                props = ext_properties(ext)
                if self._need_discard(props, check_max) or self._need_skip(ext):
                    self._resolve_discard_msg(ext, props, stats)
                    i += 1
                    new_offset = i
                    continue
                if ext.store_timestamp >= start:
                    break
                age = self.clock.now_ms() - ext.born_timestamp
                immunity = timeout
                immunity_raw = props.get(CHECK_IMMUNITY_TIME_IN_SECONDS)
                if immunity_raw is not None:
                    value = _java_long(immunity_raw)
                    immunity = timeout if value == -1 else value * 1000
                    if age < immunity and self._check_prepare_queue_offset(remove_map, done_op, ext, props, stats):
                        i += 1
                        new_offset = i
                        continue
                elif 0 <= age < immunity:
                    break
                op_msgs = pull.msg_found_list
                need_check = ((op_msgs is None and age > immunity)
                              or (op_msgs is not None and op_msgs[-1].born_timestamp - start > timeout)
                              or age <= -1)
                if need_check:
                    copy = self.putter.put(bridge.renew_half_message_inner(ext, props))
                    if not copy.ok:
                        break  # 4.9.4 retries the same offset until its 60 s limit
                    self._resolve_half_msg(ext, props, copy, stats)
                else:
                    if op_msgs is None:
                        break  # no more op messages and not old enough: 4.9.4 spins until the time limit
                    pull = self._fill_op_remove_map(remove_map, op_qid, pull.next_begin_offset, half_offset, done_op)
                    continue
            i += 1
            new_offset = i
        if new_offset != half_offset:
            self.update_consume_offset(RMQ_SYS_TRANS_HALF_TOPIC, qid, new_offset)
        new_op_offset = op_offset
        for off in sorted(done_op):
            if off == new_op_offset:
                new_op_offset += 1
            else:
                break
        if new_op_offset != op_offset:
            self.update_consume_offset(RMQ_SYS_TRANS_OP_HALF_TOPIC, op_qid, new_op_offset)
        stats.half_offset_after, stats.op_offset_after = new_offset, new_op_offset

    def _check_prepare_queue_offset(self, remove_map, done_op, ext, props, stats) -> bool:
        raw = props.get(TRAN_PREPARED_QUEUE_OFFSET)
        if raw is not None:
            prepared = _java_long(raw)
            if prepared == -1:
                return False
            if prepared in remove_map:
                done_op.append(remove_map.pop(prepared))
                return True
        ok = self.putter.put(bridge.renew_immunity_half_message_inner(ext, props)).ok
        stats.immunity_copies += ok
        return ok

    def _resolve_discard_msg(self, ext: MessageRecord, props: JavaHashMap, stats: CheckRoundStats) -> None:
        tc = self.topics.create_topic_of_tran_check_max_time(TCMT_QUEUE_NUMS, PERM_READ | PERM_WRITE)
        put = self.putter.put(bridge.check_max_time_message_inner(ext, props, 0 % tc.write_queue_nums))
        stats.discarded.append(put.record)

    def _resolve_half_msg(self, ext: MessageRecord, props: JavaHashMap, copy: Put, stats: CheckRoundStats) -> None:
        """``resolveHalfMsg`` → ``sendCheckMessage`` for the re-put copy."""
        ar = copy.append_result
        uniq = props.get(UNIQ_KEY)
        real_qid = _java_long(props.get(REAL_QID))
        body_record = ext.replace(topic=props.get(REAL_TOPIC) or ext.topic,
                                  queue_id=real_qid if real_qid >= 0 else ext.queue_id,
                                  queue_offset=ar.logics_offset, phy_offset=ar.wrote_offset,
                                  properties=dict(props.items()), properties_string=None, total_size=None)
        check = CheckTransactionState(
            producer_group=props.get(PGROUP, ""), tran_state_table_offset=ar.logics_offset,
            commit_log_offset=ar.wrote_offset, msg_id=uniq, transaction_id=uniq,
            offset_msg_id=offset_msg_id(ar.store_host, ar.wrote_offset), body=encode_message(body_record))
        stats.checks.append(check)
        self.send_check(check)


__all__ = ["TransactionalMessageService", "EndTransactionRequest", "EndTransactionResult", "CheckTransactionState",
           "CheckRoundStats", "PullStatus", "TRANSACTION_COMMIT_TYPE", "TRANSACTION_ROLLBACK_TYPE",
           "TRANSACTION_NOT_TYPE", "BrokerError"]
