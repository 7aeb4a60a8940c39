"""``apache.rocketmq.v2.MessagingService`` on the broker facade: what the 5.1.4 proxy does in its
local mode (``proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/``), with the broker in-process.

Each RPC maps onto one facade call and nothing else holds state about messages:

===============================  ==============================================================
QueryRoute / QueryAssignment     the topic's config → queues on this endpoint (``RouteActivity``)
Heartbeat                        validates the group; remembers the client
SendMessage                      ``Broker.send_message`` per message (TIMER_DELIVER_MS for delay,
                                 TRAN_MSG + PGROUP=topic for transactions)
ReceiveMessage (server stream)   ``PopService.pop`` over all queues, long polling until a message
                                 arrives or the polling time is up; max attempts → DLQ
AckMessage                       ``PopService.ack`` per entry (receipt handle → real topic)
ChangeInvisibleDuration          ``PopService.change_invisible_time`` → the new receipt handle
ForwardMessageToDeadLetterQueue  CONSUMER_SEND_MSG_BACK with delay level -1, then ack
EndTransaction                   ``Broker.end_transaction`` for the half message sent by this endpoint
Telemetry (bidi stream)          settings in → settings out; transaction checks pushed as
                                 RecoverOrphanedTransactionCommand
NotifyClientTermination          forgets the client (its streams, transaction checkers)
===============================  ==============================================================

Errors a client causes are answered in the response's ``Status`` (``apache.rocketmq.v2.Code``) as
the proxy does; bytes that are not the request message are refused by grpcio itself
(``INTERNAL``); a handler's unexpected exception becomes ``INTERNAL_SERVER_ERROR`` — the endpoint
keeps serving. Thread-safe: facade calls are serialised by one lock; long polls wait outside it.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field

import grpc
from rocketmq.grpc_protocol import definition_pb2 as pb
from rocketmq.grpc_protocol import service_pb2 as spb
from rocketmq.grpc_protocol import service_pb2_grpc

from pymq_ref.broker.pop import PopRequest
from pymq_ref.broker.pop.receive import ReceiveFilter, apply_filter, forward_to_dead_letter_queue, max_attempts
from pymq_ref.broker.pop.service import ChangeInvisibleTimeRequest, AckRequest
from pymq_ref.broker.response import BrokerError, ResponseCode
from pymq_ref.broker.send import SendMessageRequest
from pymq_ref.broker.transaction import EndTransactionRequest
from pymq_ref.formats import pop
from pymq_ref.formats.hosts import Host

from .convert import ACCEPT, GrpcRequestError, build_message, message_queues, status, timestamp_ms, to_proto_message

log = logging.getLogger(__name__)
Code = pb.Code
TRANSACTION_COMMIT, TRANSACTION_ROLLBACK, TRANSACTION_NOT_TYPE = 8, 12, 0

#: BrokerError response codes → the v2 code the proxy answers with (``ResponseBuilder.buildStatus``)
BROKER_CODE = {ResponseCode.TOPIC_NOT_EXIST: Code.TOPIC_NOT_FOUND,
               ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: Code.CONSUMER_GROUP_NOT_FOUND,
               ResponseCode.NO_PERMISSION: Code.FORBIDDEN, ResponseCode.MESSAGE_ILLEGAL: Code.BAD_REQUEST,
               ResponseCode.NO_MESSAGE: Code.INVALID_RECEIPT_HANDLE, ResponseCode.SYSTEM_BUSY: Code.TOO_MANY_REQUESTS,
               ResponseCode.SERVICE_NOT_AVAILABLE: Code.INTERNAL_SERVER_ERROR,
               ResponseCode.SUBSCRIPTION_PARSE_FAILED: Code.ILLEGAL_FILTER_EXPRESSION,
               ResponseCode.TRANSACTION_FAILED: Code.INVALID_TRANSACTION_ID}


@dataclass(frozen=True)
class GrpcConfig:
    """The ``ProxyConfig`` values this endpoint uses (5.1.4 names, defaults unless said)."""

    min_invisible_time_ms_for_recv: int = 10_000     # minInvisibleTimeMillsForRecv
    max_invisible_time_ms: int = 12 * 3600 * 1000    # maxInvisibleTimeMills
    default_invisible_time_ms: int = 60_000          # defaultInvisibleTimeMills (auto_renew)
    max_batch: int = 32
    min_long_polling_ms: int = 5_000                 # grpcClientConsumerMinLongPollingTimeoutMillis
    max_long_polling_ms: int = 20_000                # grpcClientConsumerMaxLongPollingTimeoutMillis
    request_timeout_ms: int = 3_000                  # the client's request timeout when it sent none
    grpc_producer_max_attempts: int = 3              # grpcClientProducerMaxAttempts
    max_message_size: int = 4 * 1024 * 1024
    #: topic → TopicMessageType name (NORMAL, FIFO, DELAY, TRANSACTION, MIXED); 5.x keeps it in the
    #: topic's ``message.type`` attribute, which 4.9.4 topics do not have: NORMAL by default, as 5.1.4.
    topic_message_types: dict = field(default_factory=dict)
    enable_topic_message_type_check: bool = True
    #: a route asked for an unknown topic creates it from TBW102 (4 queues), as a 4.9.4 broker with
    #: ``autoCreateTopicEnable`` does on a first send — 5.x clients ask for the route before sending.
    #: pymq-ref's addition (a 5.x proxy answers TOPIC_NOT_FOUND); only when the broker allows it.
    auto_create_topic: bool = True
    #: enableBatchAck: one BatchAckMsg per checkpoint for an AckMessage's entries (5.1.4 default: off)
    enable_batch_ack: bool = False


@dataclass
class ClientInfo:
    client_id: str
    client_type: int = pb.ClientType.CLIENT_TYPE_UNSPECIFIED
    group: str | None = None
    topics: tuple[str, ...] = ()
    streams: list = field(default_factory=list)   # queues of open telemetry streams


def _client_id(context) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "x-mq-client-id":
            return value
    return ""


def _peer_host(context) -> str:
    peer = context.peer() or ""
    return peer.split(":", 1)[1] if peer.startswith(("ipv4:", "ipv6:")) else peer


class MessagingService(service_pb2_grpc.MessagingServiceServicer):
    def __init__(self, broker, endpoint: tuple[str, int], config: GrpcConfig | None = None, runner=None):
        self.broker = broker
        self.endpoint = endpoint
        self.config = config or GrpcConfig()
        self.lock = threading.RLock()
        #: ``runner(fn)`` runs a facade call where the facade lives and returns its result: by default
        #: here under one lock; ``pymq up`` passes one that runs it on the broker's event loop.
        self.runner = runner or self._locked
        self.clients: dict[str, ClientInfo] = {}
        self.transactions: dict[tuple[str, str], tuple[int, int, str]] = {}  # (group, txid) -> (phy, qoff, msgid)
        self._clients_lock = threading.Lock()

    # -- helpers ----------------------------------------------------------------------------------
    def _locked(self, fn):
        with self.lock:
            return fn()

    def _call(self, fn):
        return self.runner(fn)

    def _client(self, context) -> ClientInfo:
        cid = _client_id(context)
        with self._clients_lock:
            return self.clients.setdefault(cid, ClientInfo(cid))

    def _broker_pb(self) -> pb.Broker:
        host, port = self.endpoint
        return pb.Broker(name=self.broker.config.broker_name, id=0,
                         endpoints=pb.Endpoints(scheme=pb.AddressScheme.IPv4,
                                                addresses=[pb.Address(host=host, port=port)]))

    def _topic_type(self, topic: str) -> str:
        return self.config.topic_message_types.get(topic, "NORMAL")

    @staticmethod
    def _error_status(e: Exception) -> pb.Status:
        if isinstance(e, GrpcRequestError):
            return status(e.code, e.message)
        if isinstance(e, BrokerError):
            return status(BROKER_CODE.get(e.code, Code.INTERNAL_SERVER_ERROR), str(e))
        if isinstance(e, pop.PopRecordError):
            return status(Code.INVALID_RECEIPT_HANDLE, str(e))
        log.exception("gRPC handler failed")
        return status(Code.INTERNAL_SERVER_ERROR, f"{type(e).__name__}: {e}")

    def _validate_topic(self, resource: pb.Resource) -> str:
        name = resource.name
        if not name or len(name) > 127 or any(not (c.isalnum() or c in "%|-_") for c in name):
            raise GrpcRequestError(Code.ILLEGAL_TOPIC, f"topic name {name!r} is illegal")
        return name

    def _validate_group(self, resource: pb.Resource) -> str:
        name = resource.name
        if not name or len(name) > 255 or any(not (c.isalnum() or c in "%|-_") for c in name):
            raise GrpcRequestError(Code.ILLEGAL_CONSUMER_GROUP, f"consumer group {name!r} is illegal")
        return name

    def _topic_config(self, topic: str):
        tc = self.broker.topics.select_topic_config(topic)
        if tc is None:
            raise GrpcRequestError(Code.TOPIC_NOT_FOUND, f"topic not found: {topic}")
        return tc

    # -- QueryRoute / QueryAssignment -----------------------------------------------------------------
    def _route_topic_config(self, topic: str):
        tc = self.broker.topics.select_topic_config(topic)
        if tc is None and self.config.auto_create_topic and self.broker.config.auto_create_topic_enable:
            tc = self.broker.topics.create_topic_in_send_message_method(topic, "TBW102", 4)
        if tc is None:
            raise GrpcRequestError(Code.TOPIC_NOT_FOUND, f"topic not found: {topic}")
        return tc

    def QueryRoute(self, request, context):
        try:
            topic = self._validate_topic(request.topic)
            tc = self._call(lambda: self._route_topic_config(topic))
            queues = message_queues(request.topic, tc.read_queue_nums, tc.write_queue_nums, tc.perm,
                                    self._broker_pb(), ACCEPT.get(self._topic_type(topic), ACCEPT["NORMAL"]))
            return spb.QueryRouteResponse(status=status(Code.OK), message_queues=queues)
        except Exception as e:  # noqa: BLE001 - every failure is answered in the status
            return spb.QueryRouteResponse(status=self._error_status(e))

    def QueryAssignment(self, request, context):
        try:
            topic = self._validate_topic(request.topic)
            self._validate_group(request.group)
            tc = self._call(lambda: self._topic_config(topic))
            assignments = []
            if tc.perm & 4 and tc.read_queue_nums > 0:
                mq = pb.MessageQueue(topic=request.topic, id=-1, permission=pb.Permission.READ_WRITE,
                                     broker=self._broker_pb(), accept_message_types=ACCEPT.get(
                                         self._topic_type(topic), ACCEPT["NORMAL"]))
                assignments.append(pb.Assignment(message_queue=mq))
            return spb.QueryAssignmentResponse(status=status(Code.OK), assignments=assignments)
        except Exception as e:  # noqa: BLE001
            return spb.QueryAssignmentResponse(status=self._error_status(e))

    # -- Heartbeat / NotifyClientTermination ------------------------------------------------------------
    def Heartbeat(self, request, context):
        try:
            client = self._client(context)
            client.client_type = request.client_type or client.client_type
            if request.client_type in (pb.ClientType.SIMPLE_CONSUMER, pb.ClientType.PUSH_CONSUMER):
                client.group = self._validate_group(request.group)
            return spb.HeartbeatResponse(status=status(Code.OK))
        except Exception as e:  # noqa: BLE001
            return spb.HeartbeatResponse(status=self._error_status(e))

    def NotifyClientTermination(self, request, context):
        cid = _client_id(context)
        with self._clients_lock:
            client = self.clients.pop(cid, None)
        if client is not None:
            for q in client.streams:
                q.put(None)
            self._unregister_checkers(client)
        return spb.NotifyClientTerminationResponse(status=status(Code.OK))

    # -- SendMessage ------------------------------------------------------------------------------------
    def SendMessage(self, request, context):
        try:
            if not request.messages:
                raise GrpcRequestError(Code.MESSAGE_CORRUPTED, "no message to send")
            topic = self._validate_topic(request.messages[0].topic)
            entries = []
            for message in request.messages:
                if message.topic.name != topic:
                    raise GrpcRequestError(Code.MESSAGE_CORRUPTED, "topic in message is not same")
                built = build_message(message, topic, _peer_host(context))
                self._check_message_type(topic, built.message_type)
                req = SendMessageRequest(
                    topic=topic, body=built.body, properties=built.properties, producer_group=topic,
                    sys_flag=built.sys_flag, born_timestamp=built.born_timestamp or self.broker.clock.now_ms(),
                    born_host=_host(_peer_host(context)), queue_id=-1)

                def send(req=req):
                    self._topic_config(topic)
                    return self.broker.send_message(req)
                result = self._call(send)
                txid = ""
                if built.message_type == pb.MessageType.TRANSACTION:
                    txid = message.system_properties.message_id
                    self.transactions[(topic, txid)] = (result.commit_log_offsets[0] if result.commit_log_offsets
                                                        else -1, result.queue_offset, result.offset_msg_id)
                entries.append(spb.SendResultEntry(status=status(Code.OK), message_id=result.msg_id or "",
                                                   transaction_id=txid, offset=result.queue_offset))
            return spb.SendMessageResponse(status=status(Code.OK), entries=entries)
        except Exception as e:  # noqa: BLE001
            st = self._error_status(e)
            return spb.SendMessageResponse(status=st, entries=[spb.SendResultEntry(status=st)])

    def _check_message_type(self, topic: str, message_type: int) -> None:
        if not self.config.enable_topic_message_type_check:
            return
        accepted = ACCEPT.get(self._topic_type(topic), ACCEPT["NORMAL"])
        if message_type not in accepted:
            raise GrpcRequestError(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
                                   f"topic {topic} accepts {[pb.MessageType.Name(t) for t in accepted]}, "
                                   f"not {pb.MessageType.Name(message_type)}")

    # -- ReceiveMessage -------------------------------------------------------------------------------
    def ReceiveMessage(self, request, context):
        try:
            group = self._validate_group(request.group)
            topic = self._validate_topic(request.message_queue.topic)
            c = self.config
            if request.auto_renew:
                invisible = c.default_invisible_time_ms
            else:
                invisible = request.invisible_duration.ToMilliseconds() if request.HasField("invisible_duration") else 0
                if not c.min_invisible_time_ms_for_recv <= invisible <= c.max_invisible_time_ms:
                    raise GrpcRequestError(Code.ILLEGAL_INVISIBLE_TIME,
                                           f"the invisibleTime is out of range [{c.min_invisible_time_ms_for_recv}, "
                                           f"{c.max_invisible_time_ms}]: {invisible}")
            batch = request.batch_size
            if not 0 < batch <= c.max_batch:
                raise GrpcRequestError(Code.BAD_REQUEST, f"batch size {batch} is out of range [1, {c.max_batch}]")
            # ReceiveMessageActivity: the polling time, clamped, and never past the client's deadline
            remaining = context.time_remaining()
            remaining_ms = int(remaining * 1000) if remaining is not None else 1 << 62
            if request.HasField("long_polling_timeout"):
                polling = request.long_polling_timeout.ToMilliseconds()
            else:
                polling = remaining_ms - c.request_timeout_ms // 2
            polling = min(max(polling, c.min_long_polling_ms), c.max_long_polling_ms)
            if polling > remaining_ms:
                if remaining_ms < c.min_long_polling_ms:
                    raise GrpcRequestError(Code.ILLEGAL_POLLING_TIME, "The deadline time remaining is not enough "
                                                                      "for polling, please check network condition")
                polling = remaining_ms
            polling = max(0, min(polling, remaining_ms - 200))  # answer just before the deadline, not after
            expr = request.filter_expression
            exp_type = "SQL92" if expr.type == pb.FilterType.SQL else "TAG"
            exp = expr.expression or "*"
            flt = ReceiveFilter(max_attempts(self.broker, group), exp if exp_type == "TAG" else "*")
            deadline = time.monotonic() + polling / 1000
            while True:
                def pop_round():
                    result = self.broker.pop_message(PopRequest(group, topic, -1, batch, invisible, exp_type=exp_type,
                                                                exp=exp, poll_time=polling))
                    return apply_filter(self.broker.pop, group, topic, result.messages, flt)
                kept = self._call(pop_round)
                if kept or time.monotonic() >= deadline or not context.is_active():
                    break
                self._wait_for_arrival(deadline)
            if not kept:
                yield spb.ReceiveMessageResponse(status=status(Code.MESSAGE_NOT_FOUND, "no new message"))
                return
            yield spb.ReceiveMessageResponse(status=status(Code.OK))
            yield spb.ReceiveMessageResponse(delivery_timestamp=timestamp_ms(self.broker.clock.now_ms()))
            for i, msg in enumerate(kept):
                if not context.is_active():
                    self._nack(group, kept[i:])  # the client is gone: let the rest come back soon
                    return
                yield spb.ReceiveMessageResponse(message=to_proto_message(
                    msg.record, topic, request.message_queue.topic.resource_namespace, msg.receipt_handle))
        except Exception as e:  # noqa: BLE001
            yield spb.ReceiveMessageResponse(status=self._error_status(e))

    def _wait_for_arrival(self, deadline: float) -> None:
        cond = self.broker.pop.arrival
        with cond:
            cond.wait(timeout=max(0.0, min(deadline - time.monotonic(), 0.5)))

    def _nack(self, group: str, messages) -> None:
        """``processThrowableWhenWriteMessage``: undelivered messages get a 1 s invisible time."""
        for msg in messages:
            try:
                req = ChangeInvisibleTimeRequest(group, msg.real_topic, msg.queue_id, msg.queue_offset,
                                                 msg.extra_info, 1000)
                self._call(lambda req=req: self.broker.change_invisible_time(req))
            except Exception:  # noqa: BLE001 - best effort, as in 5.x
                log.exception("nack after a vanished stream failed")

    # -- AckMessage / ChangeInvisibleDuration / ForwardMessageToDeadLetterQueue --------------------------
    def AckMessage(self, request, context):
        try:
            group = self._validate_group(request.group)
            topic = self._validate_topic(request.topic)
            if not request.entries:
                raise GrpcRequestError(Code.BAD_REQUEST, "no ack entry")
        except Exception as e:  # noqa: BLE001
            return spb.AckMessageResponse(status=self._error_status(e))
        def ack_batch():  # enableBatchAck: one bAck record per checkpoint
            acks, out = [], []
            for entry in request.entries:
                try:
                    handle = pop.parse_receipt_handle(entry.receipt_handle)
                except pop.PopRecordError as e:
                    out.append(e)
                    continue
                acks.append((handle.real_topic(topic, group), handle.queue_id, handle.queue_offset, handle))
                out.append(None)
            results = iter(self.broker.pop.batch_ack(group, acks))
            return [e if e is not None else next(results) for e in out]

        def ack_all():  # one trip to where the facade lives for the whole batch
            if self.config.enable_batch_ack:
                return ack_batch()
            out = []
            for entry in request.entries:
                try:
                    handle = pop.parse_receipt_handle(entry.receipt_handle)
                    self.broker.ack_message(AckRequest(group, handle.real_topic(topic, group), handle.queue_id,
                                                       handle.queue_offset, handle))
                    out.append(None)
                except Exception as e:  # noqa: BLE001
                    out.append(e)
            return out
        outcomes = self._call(ack_all)
        entries, failed = [], 0
        for entry, error in zip(request.entries, outcomes):
            st = status(Code.OK) if error is None else self._error_status(error)
            failed += error is not None
            entries.append(spb.AckMessageResultEntry(message_id=entry.message_id, receipt_handle=entry.receipt_handle,
                                                     status=st))
        overall = (status(Code.OK) if not failed else entries[0].status if len(entries) == 1
                   else status(Code.MULTIPLE_RESULTS))
        return spb.AckMessageResponse(status=overall, entries=entries)

    def ChangeInvisibleDuration(self, request, context):
        try:
            group = self._validate_group(request.group)
            topic = self._validate_topic(request.topic)
            invisible = request.invisible_duration.ToMilliseconds()
            if not 0 <= invisible <= self.config.max_invisible_time_ms:
                raise GrpcRequestError(Code.ILLEGAL_INVISIBLE_TIME, f"the invisibleTime is out of range: {invisible}")
            handle = pop.parse_receipt_handle(request.receipt_handle)
            req = ChangeInvisibleTimeRequest(group, handle.real_topic(topic, group), handle.queue_id,
                                             handle.queue_offset, request.receipt_handle, invisible)
            changed = self._call(lambda: self.broker.change_invisible_time(req))
            new_handle = pop.receipt_handle(changed.extra_info, handle.commit_log_offset)
            return spb.ChangeInvisibleDurationResponse(status=status(Code.OK), receipt_handle=new_handle)
        except Exception as e:  # noqa: BLE001
            return spb.ChangeInvisibleDurationResponse(status=self._error_status(e))

    def ForwardMessageToDeadLetterQueue(self, request, context):
        try:
            group = self._validate_group(request.group)
            topic = self._validate_topic(request.topic)
            handle = pop.parse_receipt_handle(request.receipt_handle)
            if handle.commit_log_offset is None or handle.commit_log_offset < 0:
                raise GrpcRequestError(Code.INVALID_RECEIPT_HANDLE, "commit log offset is empty")
            self._call(lambda: forward_to_dead_letter_queue(self.broker.pop, group, handle, topic, request.message_id))
            return spb.ForwardMessageToDeadLetterQueueResponse(status=status(Code.OK))
        except Exception as e:  # noqa: BLE001
            return spb.ForwardMessageToDeadLetterQueueResponse(status=self._error_status(e))

    # -- transactions ---------------------------------------------------------------------------------
    def EndTransaction(self, request, context):
        try:
            topic = self._validate_topic(request.topic)
            if not request.transaction_id.strip():
                raise GrpcRequestError(Code.INVALID_TRANSACTION_ID, "transaction id cannot be empty")
            data = self.transactions.get((topic, request.transaction_id))
            if data is None:
                raise GrpcRequestError(Code.INVALID_TRANSACTION_ID,
                                       f"transaction {request.transaction_id} of {topic} is not known here")
            kind = {pb.TransactionResolution.COMMIT: TRANSACTION_COMMIT,
                    pb.TransactionResolution.ROLLBACK: TRANSACTION_ROLLBACK}.get(request.resolution,
                                                                                 TRANSACTION_NOT_TYPE)
            if kind != TRANSACTION_NOT_TYPE:
                phy, qoff, offset_msg_id = data
                req = EndTransactionRequest(
                    producer_group=topic, tran_state_table_offset=qoff, commit_log_offset=phy,
                    commit_or_rollback=kind,
                    from_transaction_check=request.source == pb.TransactionSource.SOURCE_SERVER_CHECK,
                    msg_id=offset_msg_id, transaction_id=request.transaction_id)
                self._call(lambda: self.broker.end_transaction(req))
                self.transactions.pop((topic, request.transaction_id), None)
            return spb.EndTransactionResponse(status=status(Code.OK))
        except Exception as e:  # noqa: BLE001
            return spb.EndTransactionResponse(status=self._error_status(e))

    def _register_checkers(self, client: ClientInfo) -> None:
        for topic in client.topics:
            checker = self._checker_for(client)
            self._call(lambda t=topic, c=checker: self.broker.register_transaction_checker(t, c))

    def _unregister_checkers(self, client: ClientInfo) -> None:
        for topic in client.topics:
            self._call(lambda t=topic: self.broker.register_transaction_checker(t, None))

    def _checker_for(self, client: ClientInfo):
        def check(producer_group: str, check) -> None:
            msg = check.message
            txid = check.transaction_id or msg.properties.get("UNIQ_KEY") or check.msg_id
            self.transactions[(producer_group, txid)] = (check.commit_log_offset, check.tran_state_table_offset,
                                                        check.offset_msg_id)
            record = msg.replace(topic=producer_group)
            cmd = spb.TelemetryCommand(recover_orphaned_transaction_command=spb.RecoverOrphanedTransactionCommand(
                message=to_proto_message(record, producer_group), transaction_id=txid))
            for q in list(client.streams):
                q.put(cmd)
                break
        return check

    # -- Telemetry -----------------------------------------------------------------------------------
    def _settings_reply(self, client: ClientInfo, settings: pb.Settings) -> pb.Settings:
        """``GrpcClientSettingsManager``: the client's settings completed with the server's."""
        out = pb.Settings()
        out.CopyFrom(settings)
        if settings.client_type == pb.ClientType.PRODUCER:
            out.backoff_policy.CopyFrom(pb.RetryPolicy(max_attempts=self.config.grpc_producer_max_attempts))
            out.backoff_policy.exponential_backoff.initial.FromMilliseconds(10)
            out.backoff_policy.exponential_backoff.max.FromMilliseconds(1000)
            out.backoff_policy.exponential_backoff.multiplier = 2.0
            out.publishing.max_body_size = self.config.max_message_size
            out.publishing.validate_message_type = self.config.enable_topic_message_type_check
        elif settings.HasField("subscription"):
            group = settings.subscription.group.name
            sgc = self._call(lambda: self.broker.subscriptions.find_subscription_group_config(group)) if group else None
            retry_max = sgc.retry_max_times if sgc is not None else 16
            out.backoff_policy.CopyFrom(pb.RetryPolicy(max_attempts=retry_max + 1))
            out.backoff_policy.customized_backoff.next.add().FromMilliseconds(1000)
            out.subscription.fifo = False
            out.subscription.receive_batch_size = self.config.max_batch
            if not settings.subscription.HasField("long_polling_timeout"):
                out.subscription.long_polling_timeout.FromSeconds(20)
        return out

    def Telemetry(self, request_iterator, context):
        client = self._client(context)
        outbox: queue.Queue = queue.Queue()
        client.streams.append(outbox)

        def read() -> None:
            try:
                for cmd in request_iterator:
                    if cmd.HasField("settings"):
                        s = cmd.settings
                        client.client_type = s.client_type
                        if s.client_type == pb.ClientType.PRODUCER:
                            old = client.topics
                            client.topics = tuple(t.name for t in s.publishing.topics)
                            if old != client.topics:
                                self._register_checkers(client)
                        elif s.HasField("subscription"):
                            client.group = s.subscription.group.name
                        outbox.put(spb.TelemetryCommand(status=status(Code.OK),
                                                        settings=self._settings_reply(client, s)))
                    # thread stack traces, verify results: nothing to do
            except grpc.RpcError:
                pass  # the client went away
            except Exception:  # noqa: BLE001
                log.exception("telemetry stream reader failed")
            finally:
                outbox.put(None)

        reader = threading.Thread(target=read, name=f"telemetry-{client.client_id}", daemon=True)
        reader.start()
        try:
            while context.is_active():
                try:
                    item = outbox.get(timeout=0.5)
                except queue.Empty:
                    continue
                if item is None:
                    break
                yield item
        finally:
            if outbox in client.streams:
                client.streams.remove(outbox)


def _host(text: str) -> Host:
    host, _, port = text.rpartition(":")
    try:
        return Host(host or "127.0.0.1", int(port))
    except ValueError:
        return Host("127.0.0.1", 0)
