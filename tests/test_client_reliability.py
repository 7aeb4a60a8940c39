"""The client when things fail (issue 13, Reliability): a broker killed under a producer, a consumer
killed mid-batch, brokers that answer slowly or with errors — and clean shutdowns with no task or
thread left behind. Real sockets on 127.0.0.1; brokers are pymq-ref's (a loopback cluster) or, for
the misbehaving ones, small servers that answer exactly as told."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from pymq_ref.client.blocking import Producer as BlockingProducer
from pymq_ref.client.config import ClientConfig
from pymq_ref.client.consumer.consume import ConsumeConcurrentlyStatus
from pymq_ref.client.consumer.lite_pull import DefaultLitePullConsumer
from pymq_ref.client.consumer.push import DefaultMQPushConsumer
from pymq_ref.client.errors import MQBrokerError, MQClientError
from pymq_ref.client.message import Message
from pymq_ref.client.producer import DefaultMQProducer
from pymq_ref.remoting.bodies.bean import encode_body
from pymq_ref.remoting.bodies.consumer import GetConsumerListByGroupResponseBody
from pymq_ref.remoting.bodies.route import BrokerData, QueueData, TopicRouteData
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.headers.offsets import GetMaxOffsetResponseHeader
from pymq_ref.remoting.transport import RemotingServer
from pymq_ref.tools.cluster import LoopbackCluster

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _other_tasks() -> set:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()}


async def _drain_all(cluster: LoopbackCluster, topic: str, group: str) -> collections.Counter:
    """Every message of ``topic`` on every broker, counted by UNIQ_KEY (a fresh lite pull consumer)."""
    c = DefaultLitePullConsumer(group, cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    await c.start()
    try:
        c.assign(await c.fetch_message_queues(topic))
        counts: collections.Counter = collections.Counter()
        idle = 0
        while idle < 3:
            msgs = await c.poll(0.5)
            idle = 0 if msgs else idle + 1
            counts.update(m.msg_id for m in msgs)
        return counts
    finally:
        await c.shutdown()


# -- two brokers, one killed ----------------------------------------------------------------------

@pytest.mark.parametrize("fault_enable, processes", [(True, False), (False, False), (True, True)],
                         ids=["latency-fault-on", "latency-fault-off", "latency-fault-on-sigkill"])
def test_producer_fails_over_when_a_broker_dies(tmp_path, fault_enable, processes):
    """In-process brokers stop (closing their sockets); broker subprocesses get SIGKILL and recover
    their store (abort file) when started again for the count."""
    topic = "Failover"

    async def run():
        async with LoopbackCluster(str(tmp_path), 2, processes=processes) as cluster:
            await cluster.create_topic(topic, 4)
            producer = DefaultMQProducer("PG_failover", cluster.namesrv_addr, send_latency_fault_enable=fault_enable,
                                         send_msg_timeout=5.0)
            attempts = []
            producer.on_attempt = attempts.append
            await producer.start()
            acked, killed_at = [], None
            try:
                for i in range(120):
                    if i == 40:
                        await cluster.kill_broker("broker-a")
                        killed_at = len(attempts)
                    result = await producer.send(Message(topic, b"m-%d" % i))
                    acked.append(result)
            finally:
                await producer.shutdown()
            await cluster.start_broker("broker-a")  # its store holds what it acknowledged before dying
            await cluster.create_topic(topic, 4)
            stored = await _drain_all(cluster, topic, "CG_failover_check")
            return acked, attempts, killed_at, stored

    acked, attempts, killed_at, stored = asyncio.run(asyncio.wait_for(run(), 120))
    assert len(acked) == 120 and all(r.send_status.value == "SEND_OK" for r in acked)
    before = {r.message_queue.broker_name for r in acked[:40]}
    assert before == {"broker-a", "broker-b"}
    assert {r.message_queue.broker_name for r in acked[40:]} == {"broker-b"}
    failed_on_a = [a for a in attempts[killed_at:] if a["error"] and a["broker"] == "broker-a"]
    if fault_enable:
        assert len(failed_on_a) == 1  # then broker-a is paused for 600 s: no send tries it again
    else:
        assert len(failed_on_a) > 1  # plain round robin keeps trying it first until the route changes
    # every acknowledged message is stored exactly once, on one of the brokers
    for r in acked:
        assert stored[r.msg_id] == 1, (r, stored[r.msg_id])


# -- a consumer killed mid-batch ------------------------------------------------------------------

def test_consumer_killed_mid_batch_every_message_consumed_at_least_once(tmp_path):
    topic, group, total = "KillConsumer", "CG_kill", 300

    async def run():
        async with LoopbackCluster(str(tmp_path / "cluster"), 1) as cluster:
            await cluster.create_topic(topic, 8)
            survivor_seen = []  # (msg_id, consumed after the kill?)
            killed = asyncio.Event()
            config = ClientConfig(cluster.namesrv_addr, rebalance_interval=1.0)
            survivor = DefaultMQPushConsumer(group, config=config, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
            survivor.subscribe(topic)

            async def listener(msgs, context):
                survivor_seen.extend((m.msg_id, killed.is_set()) for m in msgs)
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

            survivor.register_message_listener(listener)
            await survivor.start()
            env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
            victim = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "pymq_ref.cli", "consume", "-n", cluster.namesrv_addr, "--topic", topic,
                "--group", group, "--from", "first", "--format", "jsonl", "--pace", "20",
                stdout=subprocess.PIPE, env=env)
            owned = lambda: [mq for mq in survivor.rebalance.process_queue_table if mq.topic == topic]
            deadline = time.monotonic() + 60
            while len(owned()) != 4 and time.monotonic() < deadline:  # the victim joined: 4 queues each
                await asyncio.sleep(0.05)
            assert len(owned()) == 4
            await asyncio.sleep(1.0)  # let the victim's own rebalance settle before anything is sent
            p = DefaultMQProducer("PG_kill", cluster.namesrv_addr)
            await p.start()
            sent = {(await p.send(Message(topic, b"%d" % i))).msg_id for i in range(total)}
            await p.shutdown()
            victim_seen = []
            while len(victim_seen) < 30:  # the victim consumes its queues slowly; killed mid-way
                line = await asyncio.wait_for(victim.stdout.readline(), 60)
                assert line, "the consumer process ended early"
                victim_seen.append(json.loads(line)["msg_id"])
            victim.send_signal(signal.SIGKILL)
            killed.set()
            rest = await victim.stdout.read()
            victim_seen += [json.loads(x)["msg_id"] for x in rest.splitlines() if x.strip()]
            await victim.wait()
            deadline = time.monotonic() + 60
            while sent - set(victim_seen) - {m for m, _ in survivor_seen} and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            await survivor.shutdown()
            return sent, victim_seen, survivor_seen

    sent, victim_seen, survivor_seen = asyncio.run(asyncio.wait_for(run(), 150))
    consumed = set(victim_seen) | {m for m, _ in survivor_seen}
    assert consumed == sent  # at least once
    counts = collections.Counter(victim_seen + [m for m, _ in survivor_seen])
    duplicates = {m for m, n in counts.items() if n > 1}
    assert all(n == 1 for n in collections.Counter(victim_seen).values())
    assert all(n == 1 for n in collections.Counter(m for m, _ in survivor_seen).values())
    # a duplicate is a message the victim consumed but had not committed, redelivered after the kill
    for m in duplicates:
        assert m in victim_seen
        assert all(after for mid, after in survivor_seen if mid == m)
    assert len(duplicates) <= len(victim_seen)
    print(f"victim consumed {len(victim_seen)}, survivor {len(survivor_seen)}, duplicates {len(duplicates)}")


# -- misbehaving brokers --------------------------------------------------------------------------

class FakeCluster:
    """A name server and brokers that answer as told: ``behaviour[code](request) -> response | None``
    (None: never answer). Counts every request per (broker, code)."""

    def __init__(self, brokers: dict[str, dict]):
        self.behaviours = brokers
        self.counts: collections.Counter = collections.Counter()
        self.servers: dict[str, RemotingServer] = {}
        self.namesrv: RemotingServer | None = None

    async def start(self):
        for name, behaviour in self.behaviours.items():
            d = RequestDispatcher(default=self._serve(name, behaviour))
            self.servers[name] = await RemotingServer(d, name=name).start()
        self.namesrv = await RemotingServer(RequestDispatcher(default=self._namesrv), name="ns").start()
        return self

    def _serve(self, name, behaviour):
        async def serve(request, channel):
            self.counts[(name, request.code)] += 1
            fn = behaviour.get(request.code)
            if fn is None:
                return RemotingCommand.response(0)
            result = fn(request)
            if result is None:
                await asyncio.Event().wait()  # never answers
            return result
        return serve

    def _namesrv(self, request, channel):
        route = TopicRouteData(
            queue_datas=[QueueData(n, 2, 2, 6) for n in self.servers],
            broker_datas=[BrokerData("C", n, {0: s.address}) for n, s in self.servers.items()])
        return RemotingCommand.response(0, body=encode_body(route))

    async def stop(self):
        for s in list(self.servers.values()) + [self.namesrv]:
            await s.stop()


def _error(code):
    return lambda request: RemotingCommand.response(code, f"told to answer {code}")


def test_retryable_broker_errors_are_retried_three_times_on_alternating_brokers():
    async def run():
        fake = await FakeCluster({"b1": {310: _error(1)}, "b2": {310: _error(1)}}).start()
        p = DefaultMQProducer("PG", fake.namesrv.address)
        await p.start()
        try:
            with pytest.raises(MQClientError, match=r"Send \[3\] times, still failed") as e:
                await p.send(Message("T", b"x"))
            assert isinstance(e.value.__cause__, MQBrokerError) and e.value.__cause__.code == 1
        finally:
            await p.shutdown()
            await fake.stop()
        return fake.counts
    counts = asyncio.run(run())
    assert counts[("b1", 310)] + counts[("b2", 310)] == 3
    assert counts[("b1", 310)] >= 1 and counts[("b2", 310)] >= 1  # each retry avoids the last broker


def test_non_retryable_broker_error_is_raised_after_one_attempt():
    async def run():
        fake = await FakeCluster({"b1": {310: _error(13)}}).start()
        p = DefaultMQProducer("PG", fake.namesrv.address)
        await p.start()
        try:
            with pytest.raises(MQBrokerError) as e:
                await p.send(Message("T", b"x"))
            assert e.value.code == 13 and "told to answer 13" in str(e.value)
            # async sends do not retry broker error codes either
            with pytest.raises(MQBrokerError):
                await p.send_async(Message("T", b"y"))
        finally:
            await p.shutdown()
            await fake.stop()
        return fake.counts
    assert asyncio.run(run())[("b1", 310)] == 2


def test_silent_broker_times_out_within_the_send_budget_and_shutdown_leaves_nothing():
    async def run():
        fake = await FakeCluster({"b1": {310: lambda r: None}}).start()
        p = DefaultMQProducer("PG", fake.namesrv.address, send_msg_timeout=0.5)
        await p.start()
        with pytest.raises(MQClientError, match="call timeout"):
            await p.send(Message("T", b"x"))  # the first attempt uses the whole budget: no retry
        pending = [p.send_async(Message("T", b"%d" % i), timeout=30) for i in range(3)]
        await asyncio.sleep(0.1)
        await p.shutdown()  # returns although three sends are still waiting for an answer
        assert all(t.done() for t in pending)
        await fake.stop()
        return fake.counts, _other_tasks()
    counts, leftover = asyncio.run(run())
    assert counts[("b1", 310)] == 4
    assert not leftover


def test_consumer_against_an_erroring_broker_keeps_trying_and_shuts_down_cleanly():
    async def run():
        behaviour = {RequestCode.PULL_MESSAGE: _error(1),
                     RequestCode.GET_CONSUMER_LIST_BY_GROUP: lambda r: RemotingCommand.response(
                         0, body=encode_body(GetConsumerListByGroupResponseBody(consumer_id_list=[cid[0]]))),
                     RequestCode.QUERY_CONSUMER_OFFSET: _error(22),
                     RequestCode.GET_MAX_OFFSET: lambda r: RemotingCommand.response(
                         0, header=GetMaxOffsetResponseHeader(offset=0))}
        fake = await FakeCluster({"b1": behaviour}).start()
        c = DefaultMQPushConsumer("CG", fake.namesrv.address)
        cid = [None]
        c.subscribe("T")
        c.register_message_listener(lambda msgs, ctx: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
        c.config.instance_name = "fixed"
        cid[0] = c.config.build_client_id()
        c.config.change_instance_name_to_pid = lambda: None
        await c.start()
        deadline = time.monotonic() + 20
        while fake.counts[("b1", RequestCode.PULL_MESSAGE)] < 8 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await c.shutdown()
        await fake.stop()
        return fake.counts, _other_tasks()
    counts, leftover = asyncio.run(run())
    assert counts[("b1", RequestCode.PULL_MESSAGE)] >= 8  # four queues (topic + retry), pulled again after 3 s
    assert not leftover


def test_blocking_facade_shutdown_returns_and_stops_its_thread():
    async def serve(fake_holder, ready, stop):
        fake = await FakeCluster({"b1": {310: lambda r: None}}).start()
        fake_holder.append(fake)
        ready.set()
        await stop.wait()
        await fake.stop()

    before = set(threading.enumerate())
    holder, ready_evt = [], threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    t = threading.Thread(target=lambda: (asyncio.set_event_loop(loop), loop.run_until_complete(
        serve(holder, ready_evt, stop))), daemon=True)
    t.start()
    ready_evt.wait(10)
    producer = BlockingProducer("PG", holder[0].namesrv.address, send_msg_timeout=30.0)
    producer.start()
    future = producer.send_async(Message("T", b"never answered"))
    producer.shutdown()
    assert future.done()
    loop.call_soon_threadsafe(stop.set)
    t.join(10)
    assert set(threading.enumerate()) <= before
