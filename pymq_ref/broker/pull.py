"""What ``PullMessageProcessor`` (4.9.4) does for a PULL_MESSAGE
(``broker/src/main/java/org/apache/rocketmq/broker/processor/PullMessageProcessor.java``).

Checks (each a typed :class:`~pymq_ref.broker.response.BrokerError`): broker readable, group
exists (or auto-created) and may consume, topic exists and is readable, queue id in range, the
subscription (from the request with FLAG_SUBSCRIPTION, else the one registered for the group —
the heartbeat wave fills :class:`SubscriptionTable`), SQL92 only with ``enablePropertyFilter``.
Then the store read and the mapping of its status to a response code, with the offset
correction rules (offset ≠ 0 on an empty/missing queue → PULL_OFFSET_MOVED …), the
``OFFSET_MOVED_EVENT`` record a master writes on PULL_OFFSET_MOVED, the suggest-slave hint, the
hold (long polling) of a PULL_NOT_FOUND with FLAG_SUSPEND, and the commit of the consumer
offset the request carries (FLAG_COMMIT_OFFSET, not on wake-up replays).

Must not hold threads or sockets: a held pull is answered through its callback.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from typing import Callable

from pymq_ref.formats import fastjson
from pymq_ref.formats.message import MessageRecord, iter_records
from pymq_ref.formats.properties import DELAY, KEYS, TAGS, JavaHashMap
from pymq_ref.store.clock import Clock
from pymq_ref.store.message_store import GetMessageStatus, MessageStore, TagFilter
from pymq_ref.store.store_config import BrokerRole

from .config import BrokerConfig
from .constants import MASTER_ID, RMQ_SYS_OFFSET_MOVED_EVENT, is_readable
from .long_polling import PullRequest, PullRequestHoldService
from .offsets import ConsumerOffsetManager
from .response import (FAQ_TIP, JavaExceptionError, BrokerSystemError, IllegalQueueIdError, NoPermissionError, ResponseCode,
                       SubscriptionGroupNotExistError, SubscriptionNotExistError, SubscriptionParseFailedError,
                       TopicNotExistError)
from .store_put import StorePutter
from .subscriptions import SubscriptionGroupManager
from .topics import TopicConfigManager

try:
    from pymq_ref.broker.filter import FilterError, build_filter, compile_sql92
except ImportError:  # pragma: no cover - before the filter wave landed
    build_filter = None
    FilterError = ValueError

FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x2
FLAG_SUBSCRIPTION = 0x4
FLAG_CLASS_FILTER = 0x8
FLAG_LITE_PULL_MESSAGE = 0x10


def build_sys_flag(commit_offset: bool = False, suspend: bool = True, subscription: bool = True,
                   class_filter: bool = False) -> int:
    """``PullSysFlag.buildSysFlag``."""
    return ((FLAG_COMMIT_OFFSET if commit_offset else 0) | (FLAG_SUSPEND if suspend else 0)
            | (FLAG_SUBSCRIPTION if subscription else 0) | (FLAG_CLASS_FILTER if class_filter else 0))


log = logging.getLogger("pymq_ref.broker.pull")

#: ``FAQUrl.suggestTodo(...)``: the tip 4.9.4 appends to several refusals
_NPE_QUEUE_OFFSET = ('java.lang.NullPointerException: Cannot invoke "java.lang.Long.longValue()" because the return '
                     'value of "org.apache.rocketmq.common.protocol.header.PullMessageRequestHeader.getQueueOffset()" '
                     'is null')


class PullStatus(enum.Enum):
    """What the Java client makes of the response code (``MQClientAPIImpl.processPullResponse``)."""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


CLIENT_PULL_STATUS = {ResponseCode.SUCCESS: PullStatus.FOUND, ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
                      ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
                      ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL}


def response_code_for(status: GetMessageStatus, request_offset: int) -> ResponseCode:
    """The PullMessageProcessor switch over the store's GetMessageStatus (see the book's reference appendix,
    §Response codes)."""
    if status is GetMessageStatus.FOUND:
        return ResponseCode.SUCCESS
    if status in (GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, GetMessageStatus.NO_MESSAGE_IN_QUEUE):
        return ResponseCode.PULL_OFFSET_MOVED if request_offset != 0 else ResponseCode.PULL_NOT_FOUND
    if status in (GetMessageStatus.OFFSET_FOUND_NULL, GetMessageStatus.OFFSET_OVERFLOW_ONE):
        return ResponseCode.PULL_NOT_FOUND
    if status in (GetMessageStatus.OFFSET_OVERFLOW_BADLY, GetMessageStatus.OFFSET_TOO_SMALL):
        return ResponseCode.PULL_OFFSET_MOVED
    return ResponseCode.PULL_RETRY_IMMEDIATELY  # MESSAGE_WAS_REMOVING, NO_MATCHED_MESSAGE


@dataclass
class PullMessageRequest:
    """``PullMessageRequestHeader`` + the client's address (for the offset commit log line)."""

    consumer_group: str
    topic: str
    queue_id: int
    queue_offset: int | None  # None: a request without it (4.9.4 then fails when it unboxes it)
    max_msg_nums: int = 32
    sys_flag: int = FLAG_SUSPEND | FLAG_SUBSCRIPTION
    commit_offset: int = 0
    suspend_timeout_millis: int = 15_000
    subscription: str | None = "*"
    sub_version: int = 0
    expression_type: str | None = "TAG"
    client_host: str = "127.0.0.1:50000"


@dataclass
class PullResult:
    """The response: code, remark (the store status name), header fields and the body."""

    code: ResponseCode
    remark: str | None
    next_begin_offset: int
    min_offset: int
    max_offset: int
    suggest_which_broker_id: int = MASTER_ID
    body: bytes = field(default=b"", repr=False)
    get_message_status: GetMessageStatus | None = None
    from_hold: bool = False

    @property
    def pull_status(self) -> PullStatus | None:
        return CLIENT_PULL_STATUS.get(self.code)

    def records(self) -> list[MessageRecord]:
        """The body decoded (the stored records back to back)."""
        return [r for r in iter_records(self.body, with_spans=False) if isinstance(r, MessageRecord)]


@dataclass
class SubscriptionData:
    topic: str
    sub_string: str = "*"
    expression_type: str = "TAG"
    sub_version: int = 0


class SubscriptionTable:
    """What the broker learned from heartbeats: (group, topic) -> subscription (ConsumerManager, minimal)."""

    def __init__(self):
        self.table: dict[tuple[str, str], SubscriptionData] = {}

    def register(self, group: str, data: SubscriptionData) -> None:
        self.table[(group, data.topic)] = data

    def find(self, group: str, topic: str) -> SubscriptionData | None:
        return self.table.get((group, topic))

    def has_group(self, group: str) -> bool:
        return any(g == group for g, _ in self.table)

    def replace_group(self, group: str, subscriptions: list[SubscriptionData]) -> None:
        """What the group's consumers now subscribe to (the broker server's consumer table); an
        empty list forgets the group (its last consumer left)."""
        for key in [k for k in self.table if k[0] == group]:
            del self.table[key]
        for data in subscriptions:
            self.register(group, data)


class PullMessageProcessor:
    def __init__(self, config: BrokerConfig, clock: Clock, store: MessageStore, putter: StorePutter,
                 topics: TopicConfigManager, subscriptions: SubscriptionGroupManager,
                 offsets: ConsumerOffsetManager, subscription_table: SubscriptionTable, scheduler):
        self.config = config
        self.clock = clock
        self.store = store
        self.putter = putter
        self.topics = topics
        self.subscriptions = subscriptions
        self.offsets = offsets
        self.subscription_table = subscription_table
        self.hold_service = PullRequestHoldService(config, clock, scheduler, store, self.execute_request_when_wakeup)
        self.offset_moved_events: int = 0
        self._compiled_filters: dict = {}  # SQL92 text -> compiled expression (None: does not compile)

    # -- filter ---------------------------------------------------------------------------------
    def build_message_filter(self, topic: str, expression: str | None, expression_type: str | None,
                             pulled_with_subscription: bool = False):
        """``ExpressionMessageFilter``, or with ``filterSupportRetry`` ``ExpressionForRetryMessageFilter``:
        a pull of ``%RETRY%<group>`` then applies the group's SQL92 filter of each message's
        original topic (``RETRY_TOPIC``), as registered by the heartbeat (:meth:`consumer_filter`)."""
        try:
            if build_filter is not None:
                if self.config.filter_support_retry:
                    return build_filter(expression_type or "TAG", expression, topic=topic,
                                        filter_support_retry=True, lookup=self.consumer_filter)
                return build_filter(expression_type or "TAG", expression, topic=topic)
            if (expression_type or "TAG") != "TAG":
                raise ValueError(f"expression type {expression_type} needs the filter module")
            return TagFilter(expression)
        except (FilterError, ValueError) as e:
            if (expression_type or "TAG") == "SQL92" and pulled_with_subscription:
                # 4.9.4: ConsumerFilterManager.build logs the error and returns null, the assert
                # after it is off in production, and a filter without data matches every message
                log.warning("SQL92 subscription %r does not compile (%s): every message matches, as in 4.9.4",
                            expression, e)
                return TagFilter("*")
            log.info("parse the consumer's subscription %r failed: %s", expression, e)
            raise SubscriptionParseFailedError("parse the consumer's subscription failed") from None

    def consumer_filter(self, topic: str, group: str):
        """``ConsumerFilterManager.get(topic, group)``: the compiled SQL92 expression of the group's
        registered subscription to ``topic``; None for none, a TAG subscription, or one that does
        not compile (RocketMQ registers no filter data for those)."""
        sd = self.subscription_table.find(group, topic)
        if sd is None or sd.expression_type != "SQL92" or not sd.sub_string:
            return None
        compiled = self._compiled_filters.get(sd.sub_string, False)
        if compiled is False:
            try:
                compiled = compile_sql92(sd.sub_string)
            except FilterError:
                compiled = None
            if len(self._compiled_filters) >= 1024:
                self._compiled_filters.clear()
            self._compiled_filters[sd.sub_string] = compiled
        return compiled

    # -- processRequest ----------------------------------------------------------------------
    def pull_message(self, req: PullMessageRequest, callback: Callable[[PullResult], None] | None = None,
                     *, broker_allow_suspend: bool = True) -> PullResult | None:
        """Answer the pull, or hold it (returns None) and later call ``callback`` with the answer.

        Without a callback a pull is never held (answered PULL_NOT_FOUND at once).
        """
        c = self.config
        if not is_readable(c.broker_permission):
            raise NoPermissionError(f"the broker[{c.broker_ip1}] pulling message is forbidden")
        sgc = self.subscriptions.find_subscription_group_config(req.consumer_group)
        if sgc is None:
            raise SubscriptionGroupNotExistError(f"subscription group [{req.consumer_group}] does not exist, {FAQ_TIP}")
        if not sgc.consume_enable:
            raise NoPermissionError(f"subscription group no permission, {req.consumer_group}")
        has_suspend = bool(req.sys_flag & FLAG_SUSPEND)
        has_commit = bool(req.sys_flag & FLAG_COMMIT_OFFSET)
        suspend_timeout = req.suspend_timeout_millis if has_suspend else 0
        tc = self.topics.select_topic_config(req.topic)
        if tc is None:
            raise TopicNotExistError(f"topic[{req.topic}] not exist, apply first please! {FAQ_TIP}")
        if not is_readable(tc.perm):
            raise NoPermissionError(f"the topic[{req.topic}] pulling message is forbidden")
        if req.queue_id < 0 or req.queue_id >= tc.read_queue_nums:
            raise IllegalQueueIdError(f"queueId[{req.queue_id}] is illegal, topic:[{req.topic}] "
                                      f"topicConfig.readQueueNums:[{tc.read_queue_nums}] consumer:[{req.client_host}]")
        if req.sys_flag & FLAG_SUBSCRIPTION:
            expression, expression_type = req.subscription, req.expression_type or "TAG"
            message_filter = self.build_message_filter(req.topic, expression, expression_type, True)
        else:
            if not self.subscription_table.has_group(req.consumer_group):
                raise SubscriptionNotExistError(f"the consumer's group info not exist{FAQ_TIP}")
            sd = self.subscription_table.find(req.consumer_group, req.topic)
            if sd is None:
                raise SubscriptionNotExistError(f"the consumer's subscription not exist{FAQ_TIP}")
            if sd.sub_version < req.sub_version:
                from .response import BrokerError
                raise BrokerError("the consumer's subscription not latest", ResponseCode.SUBSCRIPTION_NOT_LATEST)
            expression_type = sd.expression_type
            message_filter = self.build_message_filter(req.topic, sd.sub_string, expression_type)
        if (expression_type or "TAG") != "TAG" and not c.enable_property_filter:
            raise BrokerSystemError(f"The broker does not support consumer to filter message by {expression_type}")

        if req.queue_offset is None:  # the fast-decoded header skips @CFNotNull: the getter's null is unboxed here
            raise JavaExceptionError(_NPE_QUEUE_OFFSET)
        r = self.store.get_message(req.consumer_group, req.topic, req.queue_id, req.queue_offset,
                                   req.max_msg_nums, message_filter)
        code = response_code_for(r.status, req.queue_offset)
        suggest = MASTER_ID
        if c.slave_read_enable:
            suggest = sgc.which_broker_when_consume_slowly if r.suggest_pulling_from_slave else sgc.broker_id
        result = PullResult(code, r.status.value, r.next_begin_offset, r.min_offset, r.max_offset, suggest,
                            b"".join(r.buffers) if code is ResponseCode.SUCCESS else b"", r.status,
                            from_hold=not broker_allow_suspend)
        answer: PullResult | None = result
        if code is ResponseCode.PULL_NOT_FOUND and broker_allow_suspend and has_suspend and callback is not None:
            hold = suspend_timeout if c.long_polling_enable else c.short_polling_time_mills
            self.hold_service.suspend_pull_request(req.topic, req.queue_id, PullRequest(
                req, callback, hold, self.clock.now_ms(), req.queue_offset, message_filter))
            answer = None
        elif code is ResponseCode.PULL_OFFSET_MOVED and self.store.config.broker_role is not BrokerRole.SLAVE:
            self.generate_offset_moved_event(req, r.next_begin_offset)
        if broker_allow_suspend and has_commit and self.store.config.broker_role is not BrokerRole.SLAVE:
            self.offsets.commit_offset(req.consumer_group, req.topic, req.queue_id, req.commit_offset, req.client_host)
        return answer

    def execute_request_when_wakeup(self, pr: PullRequest) -> None:
        """Re-run a held pull in no-suspend mode and answer it through its callback."""
        if pr.answered:
            return
        pr.answered = True
        try:
            result = self.pull_message(pr.request, pr.callback, broker_allow_suspend=False)
        except Exception as e:  # the answer is then an error response
            result = e
        pr.callback(result)

    # -- OFFSET_MOVED_EVENT --------------------------------------------------------------------
    def generate_offset_moved_event(self, req: PullMessageRequest, offset_new: int) -> None:
        """``generateOffsetMovedEvent``: a record in ``OFFSET_MOVED_EVENT`` (tags and keys = the group)."""
        c = self.config
        body = fastjson.dumps({"consumerGroup": req.consumer_group,
                               "messageQueue": {"brokerName": c.broker_name, "queueId": req.queue_id,
                                                "topic": req.topic},
                               "offsetNew": offset_new, "offsetRequest": req.queue_offset}, pretty=False)
        props = JavaHashMap()
        props[TAGS] = req.consumer_group
        props[DELAY] = "0"
        props[KEYS] = req.consumer_group
        record = MessageRecord(topic=RMQ_SYS_OFFSET_MOVED_EVENT, body=body.encode("utf-8"),
                               properties=dict(props.items()), queue_id=0, sys_flag=0,
                               born_timestamp=self.clock.now_ms(), born_host=c.store_host, store_host=c.store_host)
        if self.putter.put(record).ok:
            self.offset_moved_events += 1
