"""``pymq send`` / ``pymq consume`` as a user runs them (subprocesses, a loopback cluster), their
errors, and rebalancing live: consumers with each allocation strategy share a topic's queues of two
brokers without overlap, and queues move when a consumer joins and when one leaves."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from pymq_ref.client.allocate import AllocateMessageQueueByConfig, strategy_for_name
from pymq_ref.client.config import ClientConfig
from pymq_ref.client.consumer.consume import ConsumeConcurrentlyStatus
from pymq_ref.client.consumer.push import DefaultMQPushConsumer
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.tools.cluster import LoopbackCluster

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pymq(*args, timeout=90):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("NAMESRV_ADDR", None)
    return subprocess.run([sys.executable, "-m", "pymq_ref.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


class ClusterThread:
    """A loopback cluster on its own event loop in a thread, for tests that run subprocesses."""

    def __init__(self, base, brokers=1, settings=None):
        import threading
        self.loop = asyncio.new_event_loop()
        self.cluster = LoopbackCluster(str(base), brokers, settings=settings)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.call(self.cluster.start())

    def call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def close(self):
        self.call(self.cluster.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_pymq_send_and_consume(tmp_path):
    ct = ClusterThread(tmp_path)
    try:
        ns = ct.cluster.namesrv_addr
        sent = pymq("send", "-n", ns, "--topic", "CliT", "--body", "héllo", "--tags", "TagA", "--keys", "k1 k2",
                    "--count", "3")
        assert sent.returncode == 0, sent.stderr
        lines = sent.stdout.splitlines()
        assert len(lines) == 3 and all(line.startswith("SEND_OK msgId=") for line in lines)
        (tmp_path / "body.bin").write_bytes(b"from a file")
        for mode in ("async", "oneway"):
            r = pymq("send", "-n", ns, "--topic", "CliT", "--file", str(tmp_path / "body.bin"), "--mode", mode)
            assert r.returncode == 0 and len(r.stdout.splitlines()) == 1, r.stderr
        assert pymq("send", "-n", ns, "--topic", "CliT", "--body", "x", "--mode", "oneway").stdout.startswith("ONEWAY")
        got = pymq("consume", "-n", ns, "--topic", "CliT", "--group", "CG_tags", "--from", "first", "--count", "3",
                   "--format", "jsonl", "--tag", "TagA", "--idle", "30")
        assert got.returncode == 0, got.stderr
        msgs = [json.loads(x) for x in got.stdout.splitlines()]
        assert [(m["body"], m["tags"], m["keys"]) for m in msgs] == [("héllo", "TagA", "k1 k2")] * 3
        everything = pymq("consume", "-n", ns, "--topic", "CliT", "--group", "CG_all", "--from", "first",
                          "--count", "6", "--idle", "30")
        assert everything.returncode == 0 and len(everything.stdout.splitlines()) == 6, everything.stderr
        assert sum("body='from a file'" in line for line in everything.stdout.splitlines()) == 2
        idle = pymq("consume", "-n", ns, "--topic", "CliT", "--group", "CG_all", "--count", "1", "--idle", "2")
        assert idle.returncode == 1 and idle.stdout == ""  # all committed: gave up after 2 s without a message
    finally:
        ct.close()


def test_pymq_consume_sql92(tmp_path):
    from pymq_ref.client.blocking import Producer
    from pymq_ref.client.message import Message

    for enabled in ("true", "false"):
        ct = ClusterThread(tmp_path / enabled, settings={"enablePropertyFilter": enabled})
        try:
            ns = ct.cluster.namesrv_addr
            with Producer("PG_sql", ns) as p:
                for i in range(6):
                    p.send(Message("SqlT", b"m%d" % i, properties={"a": str(i)}))
            r = pymq("consume", "-n", ns, "--topic", "SqlT", "--group", "CG_sql", "--from", "first",
                     "--sql", "a >= 3 AND a <> 4", "--count", "2", "--idle", "20")
            if enabled == "true":
                assert r.returncode == 0, r.stderr
                assert sorted(line.split("body=")[1] for line in r.stdout.splitlines()) == ["'m3'", "'m5'"]
            else:  # CHECK_CLIENT_CONFIG refused: the consumer does not start
                assert r.returncode == 2 and "Check client in broker error" in r.stderr, r.stderr
        finally:
            ct.close()


def test_pymq_send_errors_are_one_line(tmp_path):
    ct = ClusterThread(tmp_path, brokers=0)  # a name server without brokers: no route, not even TBW102's
    try:
        r = pymq("send", "-n", ct.cluster.namesrv_addr, "--topic", "Nowhere", "--body", "x")
        assert r.returncode == 2 and r.stderr.strip().startswith("pymq send: error: No route info of this topic: Nowhere")
        assert len(r.stderr.strip().splitlines()) == 1
    finally:
        ct.close()
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    r = pymq("send", "-n", dead, "--topic", "T", "--body", "x")
    assert r.returncode == 2 and "connect to" in r.stderr and "failed" in r.stderr
    r = pymq("send", "-n", dead, "--topic", "bad topic", "--body", "x")
    assert r.returncode == 2 and "illegal characters" in r.stderr


def _consumer(ns, group, topic, strategy, seen):
    config = ClientConfig(ns, rebalance_interval=1.0)
    c = DefaultMQPushConsumer(group, config=config, allocate_strategy=strategy,
                              consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(topic)

    async def listener(msgs, context):
        seen.extend(m.msg_id for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c.register_message_listener(listener)
    return c


def _owned(c, topic):
    return {mq for mq in c.rebalance.process_queue_table if mq.topic == topic}


async def _settle(consumers, topic, mq_all, timeout=30):
    """Wait until each consumer owns exactly what its strategy allocates it among these consumers."""
    cids = sorted(c.instance.client_id for c in consumers)
    expected = [set(c.rebalance.strategy.allocate(c.group, c.instance.client_id, sorted(mq_all), cids))
                for c in consumers]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owned = [_owned(c, topic) for c in consumers]
        if owned == expected:
            return owned
        await asyncio.sleep(0.05)
    raise AssertionError(f"expected {expected}, owned {owned}")


@pytest.mark.parametrize("name", ["AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONFIG"])
def test_rebalance_splits_queues_with_each_strategy_and_moves_them(tmp_path, name):
    topic = "Rebalance"

    async def run():
        async with LoopbackCluster(str(tmp_path), 2) as cluster:
            await cluster.create_topic(topic, 4)
            ns = cluster.namesrv_addr
            all_mqs = [MessageQueue(topic, b, q) for b in ("broker-a", "broker-b") for q in range(4)]

            def strategy(i):
                if name == "CONFIG":  # each consumer is told its queues: the first half, the second half
                    return AllocateMessageQueueByConfig(all_mqs[:4] if i == 0 else all_mqs[4:])
                return strategy_for_name(name)

            seen = []
            first = _consumer(ns, "CG_rb", topic, strategy(0), seen)
            await first.start()
            if name != "CONFIG":
                assert len((await _settle([first], topic, all_mqs))[0]) == 8  # alone: every queue
            second = _consumer(ns, "CG_rb", topic, strategy(1), seen)
            await second.start()
            owned = await _settle([first, second], topic, all_mqs)  # joined: as the strategy splits them
            assert not owned[0] & owned[1] and owned[0] | owned[1] == set(all_mqs)
            rounds = [r for r in first.rebalance.history if r.topic == topic and r.removed]
            if name != "CONFIG":
                assert rounds and len(rounds[-1].consumer_ids) == 2  # the first gave queues away
            await second.shutdown()  # left: (except CONFIG) the first takes everything back
            if name != "CONFIG":
                assert len((await _settle([first], topic, all_mqs))[0]) == 8
            await first.shutdown()
            return owned

    owned = asyncio.run(asyncio.wait_for(run(), 120))
    if name in ("AVG", "AVG_BY_CIRCLE", "CONFIG"):
        assert {len(o) for o in owned} == {4}
