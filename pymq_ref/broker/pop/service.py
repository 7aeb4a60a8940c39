"""``PopService``: what 5.1.4's ``PopMessageProcessor``, ``AckMessageProcessor`` and
``ChangeInvisibleTimeProcessor`` do, on the broker facade's store, topics, groups and offsets.

POP (``pop``). Per queue of the topic (and of the POP retry topic ``%RETRY%<group>_<topic>``;
one POP in five looks at the retry topic first), under the queue's POP lock: read from the
group's consume offset, write one checkpoint (CK) for what was read into revive queue
``reviveQid`` (round robin over ``reviveQueueNum``), advance the consume offset past it, and
hand out the messages, each with its *extra info* in ``POP_CK``. The messages stay "invisible":
nobody else gets them, and unless they are acked before ``popTime + invisibleTime`` the revive
service puts them into the retry topic (:mod:`.revive`).

ACK (``ack``) writes an ``AckMsg`` into the CK's revive queue. CHANGE_INVISIBLETIME
(``change_invisible_time``) writes a new one-message CK (pop time now, the new invisible time)
and then acks the message under its old CK; the answer is the new extra info.

Simplification (said where it matters): 5.1.4 runs CKs through ``PopBufferMergeService``; with
its default ``enablePopBufferMerge=false`` a CK is stored at once and the consume offset is
committed once it is stored — which is what :meth:`PopService.pop` does in one step. Orderly POP
(``order=true``, revive queue 999) is not implemented: it is refused with MESSAGE_ILLEGAL.
5.1.4 also refuses POP unless the store's ``timerWheelEnable`` is on; pymq-ref serves POP either
way (see :mod:`.revive_log` for what the wheel changes).

Thread-safe (the per-queue POP locks + one lock for the counters); never blocks on I/O other
than the store's own.
"""

from __future__ import annotations

import enum
import random
import threading
from dataclasses import dataclass, field

from pymq_ref.formats import pop
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.message_store import GetMessageStatus, TagFilter

from ..constants import PERM_READ, PERM_WRITE, is_readable
from ..response import (BrokerError, BrokerSystemError, MessageIllegalResponseError, NoPermissionError,
                        ResponseCode, SubscriptionGroupNotExistError, TopicNotExistError)
from .config import PopConfig
from .locks import QueueLockManager, lock_key
from .revive_log import ack_message, batch_ack_message, ck_message

CONSUME_INIT_MODE_MIN = 0  # ConsumeInitMode.MIN
CONSUME_INIT_MODE_MAX = 1  # ConsumeInitMode.MAX


class NoMessageError(BrokerError):
    """ACK / CHANGE_INVISIBLETIME for an offset outside the queue (5.x ``NO_MESSAGE``)."""

    code = ResponseCode.NO_MESSAGE


class PopStatus(enum.Enum):
    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"          # the remoting answer is POLLING_TIMEOUT (210) or PULL_NOT_FOUND
    POLLING_FULL = "POLLING_FULL"


@dataclass
class PopRequest:
    """``PopMessageRequestHeader`` (5.1.4)."""

    consumer_group: str
    topic: str
    queue_id: int = -1                 # -1: every readable queue
    max_msg_nums: int = 32
    invisible_time: int = 60_000
    poll_time: int = 0
    born_time: int = 0
    init_mode: int = CONSUME_INIT_MODE_MAX
    exp_type: str = "TAG"
    exp: str | None = "*"
    order: bool = False
    attempt_id: str | None = None


@dataclass(frozen=True)
class PoppedMessage:
    """One popped message as the consumer sees it: the stored record with the request's topic and
    ``POP_CK`` = its extra info (for a message from the retry topic, as 5.1.4 re-encodes it)."""

    record: MessageRecord
    real_topic: str             # where it is stored (the topic or the POP retry topic)
    queue_id: int
    queue_offset: int
    commit_log_offset: int
    extra_info: str
    raw: bytes = b""            # the stored record's bytes (what a POP_MESSAGE response carries for it)

    @property
    def receipt_handle(self) -> str:
        """What the 5.x proxy gives a gRPC client (``ReceiptHandle.encode``)."""
        return pop.receipt_handle(self.extra_info, self.commit_log_offset)

    @property
    def reconsume_times(self) -> int:
        return self.record.reconsume_times

    @property
    def retry(self) -> bool:
        return self.real_topic.startswith(pop.RETRY_GROUP_TOPIC_PREFIX)


@dataclass
class PopResult:
    status: PopStatus
    pop_time: int
    invisible_time: int
    revive_qid: int
    rest_num: int = 0
    messages: list[PoppedMessage] = field(default_factory=list)
    start_offset_info: str = ""
    msg_offset_info: str = ""
    checkpoints: list[pop.PopCheckPoint] = field(default_factory=list)


@dataclass
class AckRequest:
    """``AckMessageRequestHeader``: ``topic`` is the real topic (the retry topic for a retried message)."""

    consumer_group: str
    topic: str
    queue_id: int
    offset: int
    extra_info: str  # or its parsed pop.ExtraInfo


@dataclass
class ChangeInvisibleTimeRequest:
    """``ChangeInvisibleTimeRequestHeader``."""

    consumer_group: str
    topic: str
    queue_id: int
    offset: int
    extra_info: str
    invisible_time: int


@dataclass(frozen=True)
class ChangeInvisibleTimeResult:
    pop_time: int
    invisible_time: int
    revive_qid: int
    extra_info: str  # the message's new extra info (what the next ack / change must send)


class PopService:
    """Legal call order: ``PopService(broker, config)`` after ``broker.start()`` → any of
    ``pop`` / ``ack`` / ``change_invisible_time`` → the broker's shutdown."""

    def __init__(self, broker, config: PopConfig | None = None):
        self.broker = broker
        self.config = config or PopConfig()
        self.clock = broker.clock
        self.locks = QueueLockManager(self.clock, self.config.lock_time)
        self.revive_topic = pop.revive_topic(broker.config.broker_cluster_name)
        self.broker_name = broker.config.broker_name
        self._rng = random.Random(broker.config.random_seed)
        self._ck_number = 0
        self._lock = threading.Lock()
        self.arrival = threading.Condition()  # notified on every new message (long polling)
        self.active = False

    def activate(self) -> None:
        """On first use: the revive topic, the revive service's rounds, arrival notifications.
        (A broker that never serves POP keeps its 4.9.4 topics, timers and listener.)"""
        with self._lock:
            if self.active:
                return
            self.active = True
        self._ensure_revive_topic()
        store = self.broker.store
        listener = store.message_arriving_listener
        if listener is None:
            store.message_arriving_listener = self.on_message_arriving
        else:
            store.message_arriving_listener = lambda req: (listener(req), self.on_message_arriving(req))
        from pymq_ref.store.store_config import BrokerRole
        if self.broker.store_config.broker_role is not BrokerRole.SLAVE:
            self.broker.pop_revive.start()

    # -- topics ----------------------------------------------------------------------------------
    def _ensure_revive_topic(self) -> None:
        from pymq_ref.store.config_files import TopicConfig
        topics = self.broker.topics
        tc = topics.select_topic_config(self.revive_topic)
        if tc is None or tc.read_queue_nums != self.config.revive_queue_num:
            tc = TopicConfig(self.revive_topic)
            tc.read_queue_nums = tc.write_queue_nums = self.config.revive_queue_num
            tc.perm = PERM_READ | PERM_WRITE
            topics.update_topic_config(tc)
        topics.system_topics.add(self.revive_topic)

    def ensure_retry_topic(self, topic: str, group: str) -> str:
        """``PopReviveService.addRetryTopicIfNoExit``: 1 queue, perm 6, the group's offset there set to 0."""
        from pymq_ref.store.config_files import TopicConfig
        retry = topic if topic.startswith(pop.RETRY_GROUP_TOPIC_PREFIX) else pop.pop_retry_topic(topic, group)
        if self.broker.topics.select_topic_config(retry) is None:
            tc = TopicConfig(retry)
            tc.read_queue_nums = tc.write_queue_nums = 1
            tc.perm = PERM_READ | PERM_WRITE
            self.broker.topics.update_topic_config(tc)
            if self.broker.offsets.query_offset(group, retry, 0) < 0:
                self.broker.offsets.commit_offset(group, retry, 0, 0, "initPopRetryOffset")
        return retry

    # -- arrivals (long polling) -------------------------------------------------------------------
    def on_message_arriving(self, _req=None) -> None:
        with self.arrival:
            self.arrival.notify_all()

    # -- POP_MESSAGE -----------------------------------------------------------------------------
    def _check_pop(self, req: PopRequest):
        c = self.broker.config
        if not is_readable(c.broker_permission):
            raise NoPermissionError(f"the broker[{c.broker_ip1}] pop message is forbidden")
        if req.max_msg_nums > self.config.pop_max_msg_nums or req.max_msg_nums <= 0:
            raise BrokerSystemError(f"the broker[{c.broker_ip1}] pop message's num is greater than 32"
                                    if req.max_msg_nums > 0 else f"maxMsgNums {req.max_msg_nums} is not positive")
        if req.invisible_time <= 0:
            raise MessageIllegalResponseError(f"invisibleTime {req.invisible_time} is not positive")
        if req.order:
            raise MessageIllegalResponseError("orderly POP is not implemented by pymq-ref")
        tc = self.broker.topics.select_topic_config(req.topic)
        if tc is None:
            raise TopicNotExistError(f"topic[{req.topic}] not exist, apply first please!")
        if not is_readable(tc.perm):
            raise NoPermissionError(f"the topic[{req.topic}] peeking message is forbidden")
        if req.queue_id >= tc.read_queue_nums:
            raise BrokerSystemError(f"queueId[{req.queue_id}] is illegal, topic:[{req.topic}] "
                                    f"topicConfig.readQueueNums:[{tc.read_queue_nums}]")
        sgc = self.broker.subscriptions.find_subscription_group_config(req.consumer_group)
        if sgc is None:
            raise SubscriptionGroupNotExistError(f"subscription group [{req.consumer_group}] does not exist")
        if not sgc.consume_enable:
            raise NoPermissionError(f"subscription group no permission, {req.consumer_group}")
        return tc

    def pop(self, req: PopRequest) -> PopResult:
        """One POP round (no waiting): what was found, or NO_NEW_MSG."""
        self.broker._running()
        self.activate()
        tc = self._check_pop(req)
        with self._lock:
            revive_qid = self._ck_number % self.config.revive_queue_num
            self._ck_number += 1
            random_q = self._rng.randrange(100)
        pop_time = self.clock.now_ms()
        result = PopResult(PopStatus.NO_NEW_MSG, pop_time, req.invisible_time, revive_qid)
        tag_filter = TagFilter(req.exp if (req.exp_type or "TAG").upper() == "TAG" else "*")
        retry_topic = pop.pop_retry_topic(req.topic, req.consumer_group)
        retry_tc = self.broker.topics.select_topic_config(retry_topic)
        need_retry = random_q % 5 == 0
        start_info, offset_info = [], []

        def queues(config):
            if req.queue_id >= 0 and config is tc:
                return [req.queue_id]
            n = config.read_queue_nums
            return [(random_q + i) % n for i in range(n)]

        rest = 0
        if need_retry and retry_tc is not None:
            for q in queues(retry_tc):
                rest += self._pop_queue(req, True, retry_topic, q, result, TagFilter("*"), start_info, offset_info)
        for q in queues(tc):
            rest += self._pop_queue(req, False, req.topic, q, result, tag_filter, start_info, offset_info)
        if not need_retry and retry_tc is not None and len(result.messages) < req.max_msg_nums:
            for q in queues(retry_tc):
                rest += self._pop_queue(req, True, retry_topic, q, result, TagFilter("*"), start_info, offset_info)
        if result.messages:
            result.status = PopStatus.FOUND
        result.rest_num = rest
        result.start_offset_info = ";".join(start_info)
        result.msg_offset_info = ";".join(offset_info)
        return result

    def _pop_offset(self, group: str, topic: str, queue_id: int, init_mode: int) -> int:
        """``getPopOffset`` / ``getInitOffset`` (the init offset is committed)."""
        offset = self.broker.offsets.query_offset(group, topic, queue_id)
        if offset >= 0:
            return offset
        store = self.broker.store
        if init_mode == CONSUME_INIT_MODE_MIN:
            return store.get_min_offset_in_queue(topic, queue_id)
        if (self.config.init_pop_offset_by_check_msg_in_mem and store.get_min_offset_in_queue(topic, queue_id) <= 0
                and store.get_max_offset_in_queue(topic, queue_id) > 0
                and not store.check_in_disk_by_consume_offset(topic, queue_id, 0)):
            offset = 0
        else:
            offset = max(store.get_max_offset_in_queue(topic, queue_id) - 1, 0)
        self.broker.offsets.commit_offset(group, topic, queue_id, offset, "getPopOffset")
        return offset

    def _pop_queue(self, req: PopRequest, is_retry: bool, topic: str, queue_id: int, result: PopResult,
                   tag_filter: TagFilter, start_info: list[str], offset_info: list[str]) -> int:
        """``popMsgFromQueue``: the number of messages left behind in this queue."""
        store, group = self.broker.store, req.consumer_group
        key = lock_key(topic, group, queue_id)
        if not self.locks.try_lock(key):
            return max(store.get_max_offset_in_queue(topic, queue_id) - self._pop_offset(group, topic, queue_id,
                                                                                          req.init_mode), 0)
        try:
            offset = self._pop_offset(group, topic, queue_id, req.init_mode)
            want = req.max_msg_nums - len(result.messages)
            if want <= 0:
                return max(store.get_max_offset_in_queue(topic, queue_id) - offset, 0)
            got = store.get_message(group, topic, queue_id, offset, want, tag_filter)
            if got.status in (GetMessageStatus.OFFSET_TOO_SMALL, GetMessageStatus.OFFSET_OVERFLOW_BADLY,
                              GetMessageStatus.OFFSET_FOUND_NULL):
                self.broker.offsets.commit_offset(group, topic, queue_id, got.next_begin_offset, "pop")
                offset = got.next_begin_offset
                got = store.get_message(group, topic, queue_id, offset, want, tag_filter)
            records = got.records()
            if records:
                ck = pop.PopCheckPoint(
                    start_offset=offset, pop_time=result.pop_time, invisible_time=req.invisible_time, bit_map=0,
                    num=len(records), queue_id=queue_id, topic=topic, cid=group,
                    queue_offset_diff=tuple(r.queue_offset - offset for r in records), broker_name=self.broker_name)
                put = self.broker.putter.put(ck_message(ck, self.revive_topic, result.revive_qid,
                                                        self.clock.now_ms(), self.broker.config.store_host))
                if not put.ok:
                    raise BrokerSystemError(f"put ck msg error: {put.status.name}")
                result.checkpoints.append(ck)
                self.broker.offsets.commit_offset(group, topic, queue_id, got.next_begin_offset, "pop")
                start_info.append(f"{pop.RETRY_TOPIC if is_retry else pop.NORMAL_TOPIC} {queue_id} {offset}")
                offset_info.append(f"{pop.RETRY_TOPIC if is_retry else pop.NORMAL_TOPIC} {queue_id} "
                                   + ",".join(str(r.queue_offset) for r in records))
                for record, raw in zip(records, got.buffers):
                    result.messages.append(self._popped(req, record, topic, offset, result, raw))
            elif got.status in (GetMessageStatus.NO_MATCHED_MESSAGE, GetMessageStatus.NO_MATCHED_LOGIC_QUEUE,
                                GetMessageStatus.OFFSET_FOUND_NULL, GetMessageStatus.MESSAGE_WAS_REMOVING) \
                    and got.next_begin_offset > offset:
                # addCkMock: nothing to hand out, the offset moves past the filtered messages
                self.broker.offsets.commit_offset(group, topic, queue_id, got.next_begin_offset, "pop")
            return max(got.max_offset - got.next_begin_offset, 0)
        finally:
            self.locks.unlock(key)

    def _popped(self, req: PopRequest, record: MessageRecord, topic: str, ck_offset: int,
                result: PopResult, raw: bytes = b"") -> PoppedMessage:
        extra = pop.build_extra_info(ck_offset, result.pop_time, req.invisible_time, result.revive_qid, topic,
                                     self.broker_name, record.queue_id, record.queue_offset)
        props = dict(record.properties)
        props.setdefault(pop.POP_CK, extra)
        shown_topic = topic if (self.config.pop_response_return_actual_retry_topic
                                or not topic.startswith(pop.RETRY_GROUP_TOPIC_PREFIX)) else req.topic
        return PoppedMessage(record.replace(topic=shown_topic, properties=props), topic, record.queue_id,
                             record.queue_offset, record.phy_offset, extra, bytes(raw))

    # -- ACK_MESSAGE -------------------------------------------------------------------------------
    def _check_offset(self, topic: str, queue_id: int, offset: int) -> None:
        tc = self.broker.topics.select_topic_config(topic)
        if tc is None:
            raise TopicNotExistError(f"topic[{topic}] not exist, apply first please!")
        if queue_id >= tc.read_queue_nums or queue_id < 0:
            raise MessageIllegalResponseError(f"queueId[{queue_id}] is illegal, topic:[{topic}] "
                                              f"topicConfig.readQueueNums:[{tc.read_queue_nums}]")
        lo = self.broker.store.get_min_offset_in_queue(topic, queue_id)
        hi = self.broker.store.get_max_offset_in_queue(topic, queue_id)
        if offset < lo or offset > hi:
            raise NoMessageError(f"offset is illegal, key:{topic}@{queue_id}, commit:{offset}, store:{lo}~{hi}")

    def _extra(self, text) -> pop.ExtraInfo:
        if isinstance(text, pop.ExtraInfo):
            return text  # already parsed by the caller (the gRPC layer's receipt handle)
        try:
            return pop.parse_extra_info(text)
        except pop.PopRecordError as e:
            raise MessageIllegalResponseError(f"bad extraInfo: {e}") from None

    def ack(self, req: AckRequest) -> None:
        """``appendAck``: an ``AckMsg`` into the CK's revive queue, due at the CK's revive time."""
        self.broker._running()
        self.activate()
        self._check_offset(req.topic, req.queue_id, req.offset)
        info = self._extra(req.extra_info)
        if info.is_order:
            raise MessageIllegalResponseError("orderly POP is not implemented by pymq-ref")
        self._put_ack(req.consumer_group, req.topic, req.queue_id, req.offset, info)

    def _put_ack(self, group: str, topic: str, queue_id: int, offset: int, info: pop.ExtraInfo) -> pop.AckMsg:
        ack = pop.AckMsg(ack_offset=offset, start_offset=info.ck_queue_offset, consumer_group=group, topic=topic,
                         queue_id=queue_id, pop_time=info.pop_time, broker_name=info.broker_name)
        if not 0 <= info.revive_qid < self.config.revive_queue_num:
            raise MessageIllegalResponseError(f"reviveQid {info.revive_qid} is not a revive queue")
        put = self.broker.putter.put(ack_message(ack, info.invisible_time, self.revive_topic, info.revive_qid,
                                                 self.clock.now_ms(), self.broker.config.store_host))
        if not put.ok:
            raise BrokerSystemError(f"put ack msg error: {put.status.name}")
        return ack

    def batch_ack(self, group: str, acks) -> list[Exception | None]:
        """``BATCH_ACK_MESSAGE`` as the 5.x proxy uses it with ``enableBatchAck``: ``acks`` are
        ``(real topic, queue id, offset, extra info)``; one ``BatchAckMsg`` (tag ``bAck``) per checkpoint
        instead of one ACK record per message. The outcome of each ack, in order (None = done)."""
        self.broker._running()
        self.activate()
        outcomes: list[Exception | None] = []
        groups: dict[tuple, tuple[pop.ExtraInfo, str, int, list[int]]] = {}
        for topic, queue_id, offset, extra in acks:
            try:
                self._check_offset(topic, queue_id, offset)
                info = self._extra(extra)
                if info.is_order or not 0 <= info.revive_qid < self.config.revive_queue_num:
                    raise MessageIllegalResponseError("orderly POP or a bad reviveQid in extraInfo")
            except BrokerError as e:
                outcomes.append(e)
                continue
            key = (topic, queue_id, info.ck_queue_offset, info.pop_time, info.invisible_time, info.revive_qid,
                   info.broker_name)
            groups.setdefault(key, (info, topic, queue_id, []))[3].append(offset)
            outcomes.append(None)
        for info, topic, queue_id, offsets in groups.values():
            ack = pop.BatchAckMsg(tuple(offsets), info.ck_queue_offset, group, topic, queue_id, info.pop_time,
                                  info.broker_name)
            put = self.broker.putter.put(batch_ack_message(ack, info.invisible_time, self.revive_topic, info.revive_qid,
                                                           self.clock.now_ms(), self.broker.config.store_host))
            if not put.ok:
                raise BrokerSystemError(f"put batch ack msg error: {put.status.name}")
        return outcomes

    # -- CHANGE_MESSAGE_INVISIBLETIME ----------------------------------------------------------------
    def change_invisible_time(self, req: ChangeInvisibleTimeRequest) -> ChangeInvisibleTimeResult:
        """A new one-message CK (pop time = now, the new invisible time), then the old one acked."""
        self.broker._running()
        self.activate()
        self._check_offset(req.topic, req.queue_id, req.offset)
        info = self._extra(req.extra_info)
        if info.is_order:
            raise MessageIllegalResponseError("orderly POP is not implemented by pymq-ref")
        if req.invisible_time < 0:
            raise MessageIllegalResponseError(f"invisibleTime {req.invisible_time} is negative")
        if not 0 <= info.revive_qid < self.config.revive_queue_num:
            raise MessageIllegalResponseError(f"reviveQid {info.revive_qid} is not a revive queue")
        now = self.clock.now_ms()
        ck = pop.PopCheckPoint(start_offset=req.offset, pop_time=now, invisible_time=req.invisible_time, bit_map=0,
                               num=1, queue_id=req.queue_id, topic=req.topic, cid=req.consumer_group,
                               queue_offset_diff=(0,), broker_name=info.broker_name)
        put = self.broker.putter.put(ck_message(ck, self.revive_topic, info.revive_qid, now,
                                                self.broker.config.store_host))
        if not put.ok:
            raise BrokerSystemError(f"put ck msg error: {put.status.name}")
        self._put_ack(req.consumer_group, req.topic, req.queue_id, req.offset, info)
        extra = pop.build_extra_info(req.offset, now, req.invisible_time, info.revive_qid, req.topic,
                                     info.broker_name, req.queue_id, req.offset)
        return ChangeInvisibleTimeResult(now, req.invisible_time, info.revive_qid, extra)
