"""The official 5.x Python client (``rocketmq-python-client`` 5.1.2) against ``pymq up --grpc``:
Producer (normal, delay, transactional) and SimpleConsumer (receive, ack, change invisible duration,
a retry with its attempt count, the DLQ after the maximum attempts), a broker restart between
receive and ack, malformed requests and vanishing streams.

Real sockets on 127.0.0.1 (ports from ``$PYMQ_PORT_RANGE`` when set). The gRPC endpoint accepts
invisible times from 1 s (``minInvisibleTimeMillsForRecv``; 10 s by default) so that retries come
back within seconds, and long polls shorter than 5 s (``grpcClientConsumerMinLongPollingTimeoutMillis``). Waits are polls with a generous deadline, never timed assertions.
"""

from __future__ import annotations

import time

import grpc
import pytest

rocketmq = pytest.importorskip("rocketmq.v5.client", reason="rocketmq-python-client (the 5.x client) is not installed")

from rocketmq import (ClientConfiguration, Credentials, FilterExpression, Message, Producer,  # noqa: E402
                      SimpleConsumer, TransactionChecker, TransactionResolution)
from rocketmq.grpc_protocol import definition_pb2 as pb  # noqa: E402
from rocketmq.grpc_protocol import service_pb2 as spb  # noqa: E402
from rocketmq.grpc_protocol import service_pb2_grpc  # noqa: E402

from pymq_ref.tools.ports import free_ports  # noqa: E402
from pymq_ref.broker.grpc import GrpcConfig  # noqa: E402
from pymq_ref.broker.server.up import UpServer  # noqa: E402
from pymq_ref.formats.beans import SubscriptionGroupConfig, TopicConfig  # noqa: E402

from broker_server_helpers import SMALL_STORE  # noqa: E402

TOPICS = {"PopNormal": None, "PopChange": None, "PopRetry": None, "PopDelay": "DELAY", "PopTx": "TRANSACTION",
          "PopRestart": None, "PopForward": None, "PopBatch": None}
SETTINGS = {**SMALL_STORE, "transactionCheckInterval": "1000", "transactionTimeOut": "1000"}


def start_up(store: str, ports: list[int]) -> UpServer:
    ns, broker, grpc_port = ports  # the broker binds broker (VIP), broker + 2 (listen) and broker + 3 (HA)
    config = GrpcConfig(min_invisible_time_ms_for_recv=1000, min_long_polling_ms=0,
                        topic_message_types={t: k for t, k in TOPICS.items() if k})
    up = UpServer(store, namesrv_port=ns, broker_port=broker + 2, settings=SETTINGS,
                  grpc=f"127.0.0.1:{grpc_port}", grpc_config=config).start()

    def setup():
        b = up.broker
        for topic in TOPICS:
            if b.topics.select_topic_config(topic) is None:
                b.topics.update_topic_config(TopicConfig(topic, read_queue_nums=2, write_queue_nums=2))
        b.subscriptions.update_subscription_group_config(SubscriptionGroupConfig("GidRetry", retry_max_times=1))
    up.call(setup)
    return up


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    server = start_up(str(tmp_path_factory.mktemp("grpc") / "store"), free_ports(3, spacing=5))
    yield server
    server.stop()


def conf(up) -> ClientConfiguration:
    return ClientConfiguration(up.up.grpc.endpoint, Credentials(), request_timeout=5)


def message(topic: str, body: bytes, tag: str = "TagA", **props) -> Message:
    m = Message()
    m.topic, m.body, m.tag = topic, body, tag
    for k, v in props.items():
        m.add_property(k, v)
    return m


def receive_until(consumer: SimpleConsumer, want, invisible: int, deadline_s: float = 20.0) -> list:
    """Receive until ``want(messages)`` holds (or the deadline passes); the messages seen last."""
    end = time.monotonic() + deadline_s
    got: list = []
    while time.monotonic() < end:
        got = consumer.receive(16, invisible)
        if want(got):
            return got
    return got


@pytest.fixture(scope="module")
def producer(up):
    p = Producer(conf(up), ("PopNormal", "PopChange", "PopRetry", "PopDelay", "PopForward", "PopBatch"))
    p.startup()
    yield p
    p.shutdown()


def consumer_for(up, group: str, topic: str, await_s: int = 2) -> SimpleConsumer:
    c = SimpleConsumer(conf(up), group, {topic: FilterExpression("*")}, await_duration=await_s)
    c.startup()
    return c


def test_send_receive_ack(up, producer):
    receipts = [producer.send(message("PopNormal", f"n{i}".encode(), user=f"u{i}")) for i in range(3)]
    c = consumer_for(up, "GidNormal", "PopNormal")
    try:
        got = receive_until(c, lambda ms: len(ms) >= 3, invisible=30)
        assert sorted(m.body for m in got) == [b"n0", b"n1", b"n2"]
        assert {m.message_id for m in got} == {r.message_id for r in receipts}
        assert all(m.delivery_attempt == 1 and m.tag == "TagA" and m.topic == "PopNormal" for m in got)
        assert sorted(m.properties["user"] for m in got) == ["u0", "u1", "u2"]
        for m in got:
            c.ack(m)
        assert c.receive(16, 30) == []  # acked: nothing comes back (2 s of long polling)
    finally:
        c.shutdown()


def test_change_invisible_duration_brings_a_message_back_sooner(up, producer):
    producer.send(message("PopChange", b"c0"))
    c = consumer_for(up, "GidChange", "PopChange")
    try:
        [m] = receive_until(c, lambda ms: len(ms) == 1, invisible=60)
        old_handle = m.receipt_handle
        c.change_invisible_duration(m, 1)
        assert m.receipt_handle != old_handle
        [again] = receive_until(c, lambda ms: len(ms) == 1, invisible=60)
        assert (again.body, again.delivery_attempt, again.topic) == (b"c0", 2, "PopChange")
        c.ack(again)
    finally:
        c.shutdown()


def test_unacked_comes_back_as_a_retry_then_goes_to_the_dlq(up, producer):
    producer.send(message("PopRetry", b"r0"))
    c = consumer_for(up, "GidRetry", "PopRetry")  # retryMaxTimes 1: maxAttempts 2
    try:
        [first] = receive_until(c, lambda ms: len(ms) == 1, invisible=1)
        [second] = receive_until(c, lambda ms: len(ms) == 1, invisible=1)
        assert [(m.body, m.delivery_attempt) for m in (first, second)] == [(b"r0", 1), (b"r0", 2)]
        assert second.message_id == first.message_id and second.topic == "PopRetry"
        # not acked again: on its third delivery the endpoint moves it to %DLQ%GidRetry instead

        def dlq():
            b = up.broker
            got = b.store.get_message("x", "%DLQ%GidRetry", 0, 0, 8)
            return [(r.body, r.reconsume_times) for r in got.records()]
        end = time.monotonic() + 20
        while time.monotonic() < end and not up.call(dlq):
            assert c.receive(16, 1) == []
        assert up.call(dlq) == [(b"r0", 3)]
    finally:
        c.shutdown()


def test_delay_message(up, producer):
    m = message("PopDelay", b"d0")
    m.delivery_timestamp = int(time.time()) + 2
    sent_at = time.time()
    producer.send(m)
    c = consumer_for(up, "GidDelay", "PopDelay", await_s=3)
    try:
        [got] = receive_until(c, lambda ms: len(ms) == 1, invisible=30)
        assert got.body == b"d0" and got.message_type == pb.MessageType.DELAY
        assert got.delivery_timestamp == m.delivery_timestamp * 1000
        assert time.time() >= m.delivery_timestamp - 1 >= sent_at - 1  # not before its time (1 s wheel slot)
        c.ack(got)
    finally:
        c.shutdown()


class Checker(TransactionChecker):
    def __init__(self):
        self.checked = []

    def check(self, message: Message) -> TransactionResolution:
        self.checked.append(message.body)
        return TransactionResolution.COMMIT


def test_transactional_producer_commit_rollback_and_check(up):
    checker = Checker()
    p = Producer(conf(up), ("PopTx",), checker)
    p.startup()
    c = consumer_for(up, "GidTx", "PopTx")
    try:
        for body, action in ((b"t-commit", "commit"), (b"t-rollback", "rollback"), (b"t-unknown", None)):
            tx = p.begin_transaction()
            p.send(message("PopTx", body), tx)
            if action:
                getattr(tx, action)()
        seen = set()
        end = time.monotonic() + 25
        while time.monotonic() < end and seen != {b"t-commit", b"t-unknown"}:
            for m in c.receive(16, 30):
                assert m.message_type == pb.MessageType.TRANSACTION
                seen.add(m.body)
                c.ack(m)
        assert seen == {b"t-commit", b"t-unknown"}  # the rollback never shows, the check committed the third
        assert b"t-unknown" in checker.checked and b"t-rollback" not in checker.checked
    finally:
        c.shutdown()
        p.shutdown()


def test_restart_between_receive_and_ack(tmp_path):
    ports = free_ports(3, spacing=5)
    store = str(tmp_path / "store")
    up = start_up(store, ports)
    try:
        p = Producer(conf(up), ("PopRestart",))
        p.startup()
        for i in range(2):
            p.send(message("PopRestart", f"s{i}".encode()))
        p.shutdown()
        c = consumer_for(up, "GidRestart", "PopRestart")
        got = receive_until(c, lambda ms: len(ms) >= 2, invisible=3)
        assert sorted(m.body for m in got) == [b"s0", b"s1"]
        acked = next(m for m in got if m.body == b"s0")
        c.ack(acked)
        c.shutdown()
    finally:
        up.stop()
    up = start_up(store, ports)
    try:
        c = consumer_for(up, "GidRestart", "PopRestart")
        [back] = receive_until(c, lambda ms: len(ms) == 1, invisible=30)
        assert (back.body, back.delivery_attempt) == (b"s1", 2)  # one attempt made before, this is the second
        c.ack(back)
        assert c.receive(16, 30) == []  # nothing acked comes back, nothing twice
        c.shutdown()
    finally:
        up.stop()


def test_malformed_requests_and_vanishing_streams(up):
    endpoint = up.up.grpc.endpoint
    with grpc.insecure_channel(endpoint) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        raw = channel.unary_unary("/apache.rocketmq.v2.MessagingService/SendMessage",
                                  request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as e:
            raw(b"\xff\xff\xff\xff not a protobuf", timeout=5)
        assert e.value.code() is grpc.StatusCode.INTERNAL  # grpcio refuses bytes that do not parse
        r = stub.SendMessage(spb.SendMessageRequest(), timeout=5)
        assert r.status.code == pb.Code.MESSAGE_CORRUPTED
        bad_topic = pb.Message(topic=pb.Resource(name="bad topic!"), body=b"x")
        assert stub.SendMessage(spb.SendMessageRequest(messages=[bad_topic]), timeout=5).status.code == \
            pb.Code.ILLEGAL_TOPIC
        ack = stub.AckMessage(spb.AckMessageRequest(group=pb.Resource(name="G"), topic=pb.Resource(name="PopNormal"),
                                                    entries=[spb.AckMessageEntry(message_id="m",
                                                                                 receipt_handle="1 2 x")]), timeout=5)
        assert ack.status.code == pb.Code.INVALID_RECEIPT_HANDLE
        recv = list(stub.ReceiveMessage(spb.ReceiveMessageRequest(
            group=pb.Resource(name="G"), message_queue=pb.MessageQueue(topic=pb.Resource(name="PopNormal")),
            batch_size=1), timeout=5))
        assert [x.status.code for x in recv] == [pb.Code.ILLEGAL_INVISIBLE_TIME]
        assert stub.QueryAssignment(spb.QueryAssignmentRequest(topic=pb.Resource(name="NoSuchTopic"),
                                                               group=pb.Resource(name="G")),
                                    timeout=5).status.code == pb.Code.TOPIC_NOT_FOUND
        created = stub.QueryRoute(spb.QueryRouteRequest(topic=pb.Resource(name="AutoCreated")), timeout=5)
        assert created.status.code == pb.Code.OK and len(created.message_queues) == 4  # autoCreateTopicEnable
        # streams whose client goes away: a long poll and a telemetry stream, both cancelled
        req = spb.ReceiveMessageRequest(group=pb.Resource(name="GidGone"),
                                        message_queue=pb.MessageQueue(topic=pb.Resource(name="PopNormal")),
                                        batch_size=1, invisible_duration={"seconds": 5},
                                        long_polling_timeout={"seconds": 10})
        call = stub.ReceiveMessage(req, timeout=15)
        tel = stub.Telemetry(iter([spb.TelemetryCommand(settings=pb.Settings(client_type=pb.ClientType.PRODUCER))]),
                             timeout=15)
        first = next(tel)
        assert first.status.code == pb.Code.OK and first.settings.publishing.max_body_size == 4 * 1024 * 1024
        time.sleep(0.3)
        call.cancel()
        tel.cancel()
        for _ in range(3):  # still serving
            r = stub.QueryRoute(spb.QueryRouteRequest(topic=pb.Resource(name="PopNormal")), timeout=5)
            assert r.status.code == pb.Code.OK and len(r.message_queues) == 2


def test_forward_to_dlq_and_query_assignment(up, producer):
    """What a PushConsumer of the 5.x clients uses: QueryAssignment, and ForwardMessageToDeadLetterQueue."""
    producer.send(message("PopForward", b"f0"))
    with grpc.insecure_channel(up.up.grpc.endpoint) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        a = stub.QueryAssignment(spb.QueryAssignmentRequest(topic=pb.Resource(name="PopForward"),
                                                            group=pb.Resource(name="GidForward")), timeout=5)
        assert a.status.code == pb.Code.OK and [x.message_queue.id for x in a.assignments] == [-1]
        req = spb.ReceiveMessageRequest(group=pb.Resource(name="GidForward"),
                                        message_queue=pb.MessageQueue(topic=pb.Resource(name="PopForward")),
                                        batch_size=4, invisible_duration={"seconds": 30},
                                        long_polling_timeout={"seconds": 3})
        msgs = []
        end = time.monotonic() + 10
        while not msgs and time.monotonic() < end:
            msgs = [r.message for r in stub.ReceiveMessage(req, timeout=10) if r.HasField("message")]
        [m] = msgs
        fwd = stub.ForwardMessageToDeadLetterQueue(spb.ForwardMessageToDeadLetterQueueRequest(
            group=pb.Resource(name="GidForward"), topic=pb.Resource(name="PopForward"),
            receipt_handle=m.system_properties.receipt_handle, message_id=m.system_properties.message_id,
            delivery_attempt=1, max_delivery_attempts=17), timeout=5)
        assert fwd.status.code == pb.Code.OK

    def dlq():
        got = up.broker.store.get_message("x", "%DLQ%GidForward", 0, 0, 8)
        return [r.body for r in got.records()]
    end = time.monotonic() + 10
    while time.monotonic() < end and not up.call(dlq):
        time.sleep(0.05)
    assert up.call(dlq) == [b"f0"]


def test_too_many_open_streams_are_refused_not_queued(up):
    """Each open stream holds a worker thread: past the limit a call is refused (RESOURCE_EXHAUSTED)
    at once; once the streams are gone the endpoint serves again."""
    from pymq_ref.broker.grpc import GrpcServer
    [port] = free_ports(1, spacing=5)
    server = GrpcServer(up.broker, f"127.0.0.1:{port}", up.up.grpc.config, max_workers=4, max_concurrent_rpcs=2,
                        runner=lambda fn: up.call(fn)).start()
    try:
        with grpc.insecure_channel(server.endpoint) as channel:
            stub = service_pb2_grpc.MessagingServiceStub(channel)
            hold = spb.ReceiveMessageRequest(group=pb.Resource(name="GidHold"),
                                             message_queue=pb.MessageQueue(topic=pb.Resource(name="PopRestart")),
                                             batch_size=1, invisible_duration={"seconds": 5},
                                             long_polling_timeout={"seconds": 20})
            streams = [stub.ReceiveMessage(hold, timeout=30) for _ in range(2)]
            time.sleep(0.5)
            with pytest.raises(grpc.RpcError) as e:
                stub.QueryRoute(spb.QueryRouteRequest(topic=pb.Resource(name="PopNormal")), timeout=5)
            assert e.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            for s in streams:
                s.cancel()
            end = time.monotonic() + 10
            while True:
                try:
                    r = stub.QueryRoute(spb.QueryRouteRequest(topic=pb.Resource(name="PopNormal")), timeout=5)
                    break
                except grpc.RpcError as err:  # the cancelled long polls notice within 0.5 s
                    assert err.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and time.monotonic() < end
                    time.sleep(0.1)
            assert r.status.code == pb.Code.OK
    finally:
        server.stop()


def test_batch_ack_endpoint(up, producer):
    """``enableBatchAck``: one AckMessage of several receipt handles becomes one bAck record."""
    import dataclasses

    from pymq_ref.broker.grpc import GrpcServer
    for i in range(3):
        producer.send(message("PopBatch", f"b{i}".encode()))
    [port] = free_ports(1, spacing=5)
    config = dataclasses.replace(up.up.grpc.config, enable_batch_ack=True)
    server = GrpcServer(up.broker, f"127.0.0.1:{port}", config, runner=lambda fn: up.call(fn)).start()
    try:
        c = SimpleConsumer(ClientConfiguration(server.endpoint, Credentials(), request_timeout=5), "GidBatch",
                           {"PopBatch": FilterExpression("*")}, await_duration=2)
        c.startup()
        try:
            got = receive_until(c, lambda ms: len(ms) >= 3, invisible=2)
            assert sorted(m.body for m in got) == [b"b0", b"b1", b"b2"]
            with grpc.insecure_channel(server.endpoint) as channel:
                stub = service_pb2_grpc.MessagingServiceStub(channel)
                r = stub.AckMessage(spb.AckMessageRequest(
                    group=pb.Resource(name="GidBatch"), topic=pb.Resource(name="PopBatch"),
                    entries=[spb.AckMessageEntry(message_id=m.message_id, receipt_handle=m.receipt_handle)
                             for m in got]), timeout=5)
                assert r.status.code == pb.Code.OK and [e.status.code for e in r.entries] == [pb.Code.OK] * 3

            def batch_acks():
                b = up.broker
                out = []
                for q in range(b.pop.config.revive_queue_num):
                    got = b.store.get_message("x", b.pop.revive_topic, q, 0, 1024)
                    out += [r.body for r in got.records() if r.tags == "bAck" and b"PopBatch" in r.body]
                return out
            end = time.monotonic() + 10
            while not up.call(batch_acks) and time.monotonic() < end:
                time.sleep(0.05)
            checkpoints = {tuple(m.receipt_handle.split(" ")[i] for i in (0, 1, 6)) for m in got}
            assert len(up.call(batch_acks)) == len(checkpoints)  # one record per checkpoint, not per message
            assert c.receive(16, 2) == [] and c.receive(16, 2) == []  # acked: none comes back
        finally:
            c.shutdown()
    finally:
        server.stop()
