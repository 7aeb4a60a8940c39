"""``Broker``: the broker's services in-process, over one store, driven by one scheduler.

This is the API the network layer wraps (one method per request code) and the one place where
the services are wired together. Every periodic task runs on the injected
:class:`~pymq_ref.broker.scheduler.Scheduler` — :class:`~pymq_ref.broker.scheduler.ManualScheduler`
makes a whole broker deterministic (nothing happens until ``advance``), a
:class:`~pymq_ref.broker.scheduler.ThreadScheduler` runs it in real time.

Legal call order::

    broker = Broker(store_dir, BrokerConfig(...), scheduler)   # nothing touched yet
    broker.start()          # load config/*.json, open + recover the store, start the services
    broker.send_message(...) / send_batch / pull_message / query_consumer_offset /
    update_consumer_offset / consumer_send_msg_back / end_transaction ...   # any order
    broker.shutdown()       # stop services, persist consumerOffset.json (+ delayOffset.json), close the store

A broker can be started again on the same directory after ``shutdown()`` (or after a crash:
a new ``Broker`` on the same directory recovers). Methods raise
:class:`~pymq_ref.broker.response.BrokerError` subclasses for refused requests and
:class:`~pymq_ref.broker.response.BrokerStateError` when called before ``start()``/after ``shutdown()``.

Periodic services (first run → period): consumer offsets persisted (10 s → ``flushConsumerOffsetInterval``
5 s), long-polling check (5 s, or ``shortPollingTimeMills``), transaction check
(``transactionCheckInterval`` → same), delay-level delivery (1 s → per level, see
:mod:`pymq_ref.broker.schedule`), and — only with the 5.x ``timer_wheel_enable`` store setting —
the timer wheel's enqueue, dequeue and flush tasks (:mod:`pymq_ref.broker.timer`). Held pulls are
also woken by the store's dispatch of a new message (a ``call_later(0)`` on the scheduler).

Timer messages (5.x). With ``store_config.timer_wheel_enable`` the broker owns a
:class:`~pymq_ref.broker.timer.TimerMessageStore` (``timer_config`` sizes it; its files live in
the store directory) and every put of its services first goes through the 5.x put hook
(``HookUtils.handleScheduleMessage``, registered on the store in 5.x): a message with
``TIMER_DELIVER_MS`` / ``TIMER_DELAY_SEC`` / ``TIMER_DELAY_MS`` is parked in
``rmq_sys_wheel_timer`` and put back into its topic when due. Without the setting (the default,
as 4.9.4) those properties are stored like any other.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import random
from typing import Callable

from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.clean_service import RetentionOptions
from pymq_ref.store.store_config import BrokerRole, MessageStoreConfig

from .config import BrokerConfig
from .offsets import ConsumerOffsetManager
from .pull import PullMessageProcessor, PullMessageRequest, PullResult, SubscriptionData, SubscriptionTable
from .rebalance_lock import RebalanceLockManager
from .reply import ReplyMessage, ReplyMessageProcessor
from .response import BrokerStateError, QueryNotFoundError, ResponseCode
from .retry import ConsumerSendMsgBackProcessor, ConsumerSendMsgBackRequest, SendBackResult
from .scheduler import ManualScheduler, Scheduler, Timer
from .send import SendMessageProcessor, SendMessageRequest, SendResult
from .store_put import StorePutter
from .subscriptions import SubscriptionGroupManager
from .topics import TopicConfigManager
from .transaction import (CheckTransactionState, EndTransactionRequest, EndTransactionResult,
                          TransactionalMessageCheckService, TransactionalMessageService)

try:
    from .schedule import ScheduleMessageService
except ImportError:  # pragma: no cover - before the delay wave landed
    ScheduleMessageService = None

from pymq_ref.store.commit_log import PutMessageResult, PutMessageStatus
from pymq_ref.store.errors import MessageIllegalError

from .timer import TimerConfig, TimerMessageRejected, TimerMessageStore

#: 5.x statuses of a refused timer put -> the 4.9.4 status carrying the same response code
#: (5.x answers MESSAGE_ILLEGAL for an illegal timer, SYSTEM_ERROR for the other two).
_log = logging.getLogger("pymq_ref.broker")

#: 5.1.4's remarks for a put the timer refused (SendMessageProcessor.handlePutMessageResult)
TIMER_ILLEGAL_REMARK = ("timer message illegal, the delay time should not be bigger than the max delay %dms; or if set "
                        "del msg, the delay time should be bigger than the current time")
TIMER_FLOW_CONTROL_REMARK = ("timer message is under flow control, max num limit is %d or the current value is greater "
                             "than %d and less than %d, trigger random flow control")
TIMER_NOT_ENABLE_REMARK = "accurate timer message is not enabled, timerWheelEnable is %s"



def timer_refusal_remark(status: PutMessageStatus, config: TimerConfig) -> str:
    """5.1.4's remark for a put its timer refused with ``status``."""
    congest = config.timer_congest_num_each_slot
    if status is PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL:
        return TIMER_ILLEGAL_REMARK % (config.timer_max_delay_sec * 1000)
    if status is PutMessageStatus.WHEEL_TIMER_FLOW_CONTROL:
        return TIMER_FLOW_CONTROL_REMARK % (congest * 2, congest, congest * 2)
    return TIMER_NOT_ENABLE_REMARK % str(config.timer_wheel_enable).lower()


TransactionChecker = Callable[[str, CheckTransactionState], None]


class Broker:
    def __init__(self, store_dir: str, config: BrokerConfig | None = None, scheduler: Scheduler | None = None, *,
                 store_config: MessageStoreConfig | None = None,
                 check_transaction_state: TransactionChecker | None = None, store_threads: bool = False,
                 schedule_service: bool = True, timer_config: TimerConfig | None = None,
                 store_retention: RetentionOptions | None = None, pop_config=None):
        self.store_dir = os.fspath(store_dir)
        self.config = config or BrokerConfig()
        self.scheduler = scheduler or ManualScheduler()
        self.clock = self.scheduler.clock
        if store_config is None:
            store_config = MessageStoreConfig(store_path_root_dir=self.store_dir)
        elif store_config.store_path_root_dir != self.store_dir:
            raise ValueError(f"store_config.store_path_root_dir {store_config.store_path_root_dir!r} "
                             f"is not store_dir {self.store_dir!r}")
        if self.config.total_physical_memory_size is not None:
            store_config = dataclasses.replace(store_config,
                                               total_physical_memory_size=self.config.total_physical_memory_size)
        self.store_config = store_config
        self.store_threads = store_threads
        self.store_retention = store_retention  # the store's disk probe, time zone, ratios (clean_service.py)
        self.check_transaction_state = check_transaction_state
        self.transaction_checkers: dict[str, TransactionChecker] = {}
        self.use_schedule_service = schedule_service and ScheduleMessageService is not None
        self.state = "new"
        self.store: MessageStore | None = None
        self.timer_config = timer_config
        self.timer_store: TimerMessageStore | None = None
        self._timers: list[Timer] = []
        self.pop_config = pop_config  # 5.x POP settings (pymq_ref.broker.pop.PopConfig), None = defaults

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> "Broker":
        if self.state != "new":
            raise BrokerStateError(f"start() called in state {self.state}; create a new Broker to restart")
        c, root = self.config, self.store_dir
        self.topics = TopicConfigManager(root, c, self.clock)
        self.subscriptions = SubscriptionGroupManager(root, c, self.clock)
        self.offsets = ConsumerOffsetManager(root)
        self.topics.load()
        self.offsets.load()
        self.subscriptions.load()
        self.store = MessageStore.open(self.store_config, self.clock, threads=self.store_threads,
                                       retention=self.store_retention)
        self.putter = StorePutter(self.store)
        if self.store_config.timer_wheel_enable:
            timer_config = dataclasses.replace(self.timer_config or TimerConfig(), timer_wheel_enable=True)
            self.timer_store = TimerMessageStore(self.store, self.scheduler, timer_config, root=self.store_dir)
            self.timer_store.load()  # recover the wheel from the TimerLog
            self.putter.before_put = self._timer_hook
        self.rng = random.Random(c.random_seed)
        self.transactions = TransactionalMessageService(c, self.clock, self.store, self.putter, self.topics,
                                                        self.offsets, self._send_check)
        self.sender = SendMessageProcessor(c, self.clock, self.topics, self.subscriptions, self.putter.put,
                                           self.putter.put_batch, self.transactions.prepare_message, self.rng,
                                           self.store.disk_util)
        self.reply = ReplyMessageProcessor(self.sender, self.putter)
        self.rebalance_locks = RebalanceLockManager()
        self.sender.max_message_size = self.store_config.max_message_size
        self.send_back = ConsumerSendMsgBackProcessor(c, self.clock, self.store, self.putter, self.topics,
                                                      self.subscriptions, self.sender)
        self.subscription_table = SubscriptionTable()
        self.puller = PullMessageProcessor(c, self.clock, self.store, self.putter, self.topics, self.subscriptions,
                                           self.offsets, self.subscription_table, self.scheduler)
        self.hold_service = self.puller.hold_service
        self.check_service = TransactionalMessageCheckService(self.scheduler, self.transactions,
                                                              c.transaction_check_interval)
        self.schedule_service = (ScheduleMessageService(self.store, self.scheduler, self.store_config)
                                 if self.use_schedule_service else None)
        self.transactions.rebuild_resolved()
        if self.store_config.broker_role is not BrokerRole.SLAVE and c.long_polling_enable:
            self.store.message_arriving_listener = self.hold_service.on_message_arriving
        from .pop import PopReviveService, PopService  # 5.x POP (pop/ imports this module's neighbours)
        self.pop = PopService(self, self.pop_config)  # inactive until the first POP request (or a revive topic)
        self.pop_revive = PopReviveService(self.pop)
        self.hold_service.start()
        self._schedule_offset_persist(self.clock.now_ms() + 10_000)
        if self.store_config.broker_role is not BrokerRole.SLAVE:
            if self.schedule_service is not None:
                self.schedule_service.start()
            if self.timer_store is not None:
                self.timer_store.start()
            self.check_service.start()
        self.state = "running"
        if self.topics.select_topic_config(self.pop.revive_topic) is not None:
            self.pop.activate()  # POP was used before this start: revive what is pending
        return self

    def _schedule_offset_persist(self, due: int) -> None:
        def run() -> None:
            if self.state != "running":
                return
            self.offsets.persist()
            self._schedule_offset_persist(due + self.config.flush_consumer_offset_interval)
        self._timers.append(self.scheduler.call_at(due, run))
        if len(self._timers) > 64:
            self._timers = [t for t in self._timers if not t.cancelled][-8:]

    def shutdown(self) -> None:
        """Stop the services, persist the consumer offsets, shut the store down (idempotent)."""
        if self.state != "running":
            self.state = "shutdown"
            return
        self.state = "shutdown"
        for t in self._timers:
            t.cancel()
        self.hold_service.shutdown()
        self.check_service.shutdown()
        self.pop_revive.shutdown()
        if self.schedule_service is not None:
            self.schedule_service.shutdown()
        if self.timer_store is not None:
            self.timer_store.shutdown()  # timercheck + TimerLog flushed (the wheel is rebuilt on load)
        self.store.message_arriving_listener = None
        self.store.shutdown()
        self.offsets.persist()

    def _timer_hook(self, record):
        """The 5.x put hook: the record to store, or the refusal as a put result."""
        try:
            return self.timer_store.handle_schedule_message(record)
        except TimerMessageRejected as e:
            _log.info("timer message refused: %s", e)
            status = PutMessageStatus[e.status]
            return PutMessageResult(status, error=timer_refusal_remark(status, self.timer_store.config))
        except MessageIllegalError:  # a DELAY that is not an int: the store refuses it itself
            return record

    def __enter__(self) -> "Broker":
        return self if self.state == "running" else self.start()

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def _running(self) -> None:
        if self.state != "running":
            raise BrokerStateError(f"the broker is {self.state}; call start() first" if self.state == "new"
                                   else f"the broker is {self.state}")

    # -- SEND_MESSAGE / SEND_BATCH_MESSAGE ----------------------------------------------------
    def send_message(self, request: SendMessageRequest | None = None, /, **fields) -> SendResult:
        """Store one message (or a batch when ``batch=True``). Fields: see :class:`SendMessageRequest`."""
        self._running()
        return self.sender.send_message(request or SendMessageRequest(**fields))

    def send_batch(self, request: SendMessageRequest | None = None, /, **fields) -> SendResult:
        """SEND_BATCH_MESSAGE: ``body`` is a batch body (:func:`pymq_ref.formats.batch.encode_batch`)."""
        self._running()
        return self.sender.send_batch(request or SendMessageRequest(batch=True, **fields))

    async def send_message_async(self, request: SendMessageRequest) -> SendResult:
        """:meth:`send_message` (or :meth:`send_batch` for a batch request) for a caller on an asyncio
        loop: the same checks and record; under SYNC_FLUSH the put waits for the group commit without
        blocking the loop, so concurrent sends share a flush. Half messages take the plain path."""
        self._running()
        if request.batch:
            batch, queue_id, uniq = self.sender.build_batch(request)
            return self.sender.batch_result(request, queue_id, uniq, await self.putter.put_batch_async(batch))
        record, queue_id, half = self.sender.build_message(request)
        put = self.transactions.prepare_message(record) if half else await self.putter.put_async(record)
        return self.sender.send_result(record, queue_id, put)

    # -- PULL_MESSAGE ------------------------------------------------------------------------
    def pull_message(self, request: PullMessageRequest | None = None, /,
                     callback: Callable[[PullResult | Exception], None] | None = None, **fields) -> PullResult | None:
        """Answer a pull now, or — PULL_NOT_FOUND with FLAG_SUSPEND and a ``callback`` — hold it and
        return None; the callback later gets the :class:`PullResult` (or the error of the re-run)."""
        self._running()
        return self.puller.pull_message(request or PullMessageRequest(**fields), callback)

    def register_subscription(self, group: str, topic: str, expression: str = "*", expression_type: str = "TAG",
                              sub_version: int = 0) -> None:
        """What a HEART_BEAT tells the broker (used by pulls without FLAG_SUBSCRIPTION)."""
        self.subscription_table.register(group, SubscriptionData(topic, expression, expression_type, sub_version))

    # -- offsets ------------------------------------------------------------------------------
    def query_consumer_offset(self, group: str, topic: str, queue_id: int) -> int:
        """QUERY_CONSUMER_OFFSET: the committed offset; 0 for a queue whose first message is still
        in memory; else :class:`QueryNotFoundError` (22)."""
        self._running()
        offset = self.offsets.query_offset(group, topic, queue_id)
        if offset >= 0:
            return offset
        min_offset = self.store.get_min_offset_in_queue(topic, queue_id)
        if min_offset <= 0 and not self.store.check_in_disk_by_consume_offset(topic, queue_id, 0):
            return 0
        raise QueryNotFoundError("Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")

    def update_consumer_offset(self, group: str, topic: str, queue_id: int, commit_offset: int,
                               client_host: str = "") -> ResponseCode:
        """UPDATE_CONSUMER_OFFSET: stored in memory, persisted by the periodic task / shutdown."""
        self._running()
        self.offsets.commit_offset(group, topic, queue_id, commit_offset, client_host)
        return ResponseCode.SUCCESS

    def get_max_offset(self, topic: str, queue_id: int) -> int:
        self._running()
        return self.store.get_max_offset_in_queue(topic, queue_id)

    def get_min_offset(self, topic: str, queue_id: int) -> int:
        self._running()
        return self.store.get_min_offset_in_queue(topic, queue_id)

    def search_offset_by_timestamp(self, topic: str, queue_id: int, timestamp: int) -> int:
        self._running()
        return self.store.search_offset_by_time(topic, queue_id, timestamp)

    def get_earliest_msg_store_time(self, topic: str, queue_id: int) -> int:
        """GET_EARLIEST_MSG_STORETIME: the store time of the queue's first message; -1 for none."""
        self._running()
        return self.store.get_message_store_timestamp(topic, queue_id, self.store.get_min_offset_in_queue(topic, queue_id))

    # -- LOCK_BATCH_MQ / UNLOCK_BATCH_MQ ----------------------------------------------------------
    def lock_batch_mq(self, group: str, mqs, client_id: str) -> list:
        """The queues of ``mqs`` now locked by ``client_id`` (orderly consumption; see :mod:`.rebalance_lock`)."""
        self._running()
        return self.rebalance_locks.try_lock_batch(group, mqs, client_id, self.clock.now_ms())

    def unlock_batch_mq(self, group: str, mqs, client_id: str) -> None:
        self._running()
        self.rebalance_locks.unlock_batch(group, mqs, client_id)

    # -- SEND_REPLY_MESSAGE ------------------------------------------------------------------------
    def build_reply_message(self, request: SendMessageRequest) -> ReplyMessage:
        """Check a reply like a send and build its record (the caller pushes it to the requester)."""
        self._running()
        return self.reply.build_reply(request)

    def store_reply_message(self, reply: ReplyMessage):
        """Store a built reply (``storeReplyMessageEnable``); returns the :class:`~.store_put.Put`."""
        self._running()
        return self.reply.store_reply(reply)

    # -- CONSUMER_SEND_MSG_BACK -----------------------------------------------------------------
    def consumer_send_msg_back(self, request: ConsumerSendMsgBackRequest | None = None, /, **fields) -> SendBackResult:
        self._running()
        return self.send_back.consumer_send_msg_back(request or ConsumerSendMsgBackRequest(**fields))

    # -- END_TRANSACTION / CHECK_TRANSACTION_STATE -------------------------------------------
    def end_transaction(self, request: EndTransactionRequest | None = None, /,
                        **fields) -> EndTransactionResult | None:
        """Commit (8) / roll back (12) a half message; None (no response) for 0 (UNKNOW)."""
        self._running()
        if self.store_config.broker_role is BrokerRole.SLAVE:
            from .response import BrokerError
            raise BrokerError("END_TRANSACTION on a slave", ResponseCode.SLAVE_NOT_AVAILABLE)
        return self.transactions.end_transaction(request or EndTransactionRequest(**fields))

    def register_transaction_checker(self, producer_group: str, checker: TransactionChecker | None) -> None:
        """The "live channel" of a producer group: where CHECK_TRANSACTION_STATE goes (None removes it)."""
        if checker is None:
            self.transaction_checkers.pop(producer_group, None)
        else:
            self.transaction_checkers[producer_group] = checker

    def _send_check(self, check: CheckTransactionState) -> None:
        """``sendCheckMessage``: asynchronously (next scheduler turn), to the group's checker if any."""
        checker = self.transaction_checkers.get(check.producer_group) or self.check_transaction_state
        if checker is not None:
            self.scheduler.call_later(0, lambda: checker(check.producer_group, check))

    def check_transactions_now(self):
        """Run one transaction check round immediately (what the periodic service does)."""
        self._running()
        return self.check_service.run_once()

    # -- 5.x POP: POP_MESSAGE / ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME (pymq_ref.broker.pop) ----
    @staticmethod
    def _pop_request(cls, args, fields):
        return args[0] if len(args) == 1 and isinstance(args[0], cls) and not fields else cls(*args, **fields)

    def pop_message(self, *args, **fields):
        """One POP round: :class:`~pymq_ref.broker.pop.PopResult` (no waiting; see the gRPC layer for polling).
        Arguments: a :class:`~pymq_ref.broker.pop.PopRequest` or its fields."""
        from .pop import PopRequest
        self._running()
        return self.pop.pop(self._pop_request(PopRequest, args, fields))

    def ack_message(self, *args, **fields) -> None:
        """An :class:`~pymq_ref.broker.pop.AckRequest` (or its fields: group, real topic, queue, offset, extra info)."""
        from .pop import AckRequest
        self._running()
        self.pop.ack(self._pop_request(AckRequest, args, fields))

    def change_invisible_time(self, *args, **fields):
        """A :class:`~pymq_ref.broker.pop.ChangeInvisibleTimeRequest` (or its fields); the new extra info."""
        from .pop import ChangeInvisibleTimeRequest
        self._running()
        return self.pop.change_invisible_time(self._pop_request(ChangeInvisibleTimeRequest, args, fields))
