"""Push-consumer flow control live: while the listener is stuck, a queue's cached messages stay
under ``pull_threshold_for_queue`` (+ one pull batch) and its cached bytes under
``pull_threshold_size_for_queue``; released, everything is consumed."""

from __future__ import annotations

import asyncio
import time

from pymq_ref.client.consumer.consume import ConsumeConcurrentlyStatus
from pymq_ref.client.consumer.push import DefaultMQPushConsumer
from pymq_ref.client.message import Message
from pymq_ref.client.producer import DefaultMQProducer
from pymq_ref.tools.cluster import LoopbackCluster


def test_cached_messages_stay_under_the_thresholds(tmp_path):
    async def run():
        async with LoopbackCluster(str(tmp_path), 1) as cluster:
            await cluster.create_topic("Flow", 1)
            p = DefaultMQProducer("PG_flow", cluster.namesrv_addr, compress_msg_body_over_howmuch=10**9)
            await p.start()
            for i in range(60):
                await p.send(Message("Flow", b"%d" % i))
            await p.shutdown()
            release = asyncio.Event()
            seen = []

            async def listener(msgs, context):
                await release.wait()
                seen.extend(msgs)
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

            c = DefaultMQPushConsumer("CG_flow", cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                                      pull_threshold_for_queue=10, pull_batch_size=4)
            c.subscribe("Flow")
            c.register_message_listener(listener)
            await c.start()
            pq = None
            peak_count = 0
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                pq = next((q for mq, q in c.rebalance.process_queue_table.items() if mq.topic == "Flow"), None)
                if pq is not None:
                    peak_count = max(peak_count, pq.msg_count)
                await asyncio.sleep(0.02)
            first_phase = (peak_count, pq.msg_count)
            release.set()
            while len(seen) < 60 and time.monotonic() < deadline + 30:
                await asyncio.sleep(0.05)
            await c.shutdown()
            return first_phase, len(seen)

    (peak, cached), consumed = asyncio.run(asyncio.wait_for(run(), 90))
    assert 10 < peak <= 10 + 4  # a pull happens while msg_count <= threshold, adding at most one batch
    assert cached == peak
    assert consumed == 60


def test_cached_bytes_stay_under_the_size_threshold(tmp_path):
    async def run():
        async with LoopbackCluster(str(tmp_path), 1) as cluster:
            await cluster.create_topic("FlowSize", 1)
            p = DefaultMQProducer("PG_flow", cluster.namesrv_addr, compress_msg_body_over_howmuch=10**9)
            await p.start()
            for i in range(40):
                await p.send(Message("FlowSize", bytes([65 + i % 26]) * 100_000))
            await p.shutdown()
            release = asyncio.Event()

            async def listener(msgs, context):
                await release.wait()
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

            c = DefaultMQPushConsumer("CG_flow", cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                                      pull_batch_size=4, pull_threshold_size_for_queue=1)
            c.subscribe("FlowSize")
            c.register_message_listener(listener)
            await c.start()
            peak = 0
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                for mq, q in c.rebalance.process_queue_table.items():
                    if mq.topic == "FlowSize":
                        peak = max(peak, q.msg_size)
                await asyncio.sleep(0.02)
            release.set()
            await c.shutdown()
            return peak

    peak = asyncio.run(asyncio.wait_for(run(), 90))
    assert 1024 * 1024 < peak <= 1024 * 1024 + 4 * 100_000  # over 1 MiB stops pulling; one batch can cross it


def test_a_message_consumed_too_long_is_sent_back_and_stops_holding_the_offset(tmp_path):
    async def run():
        async with LoopbackCluster(str(tmp_path), 1) as cluster:
            await cluster.create_topic("Slow", 1)
            p = DefaultMQProducer("PG_slow", cluster.namesrv_addr)
            await p.start()
            for i in range(5):
                await p.send(Message("Slow", b"%d" % i))
            await p.shutdown()
            stuck = asyncio.Event()

            async def listener(msgs, context):
                if msgs[0].body == b"0":
                    await stuck.wait()  # never returns within the test
                return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

            c = DefaultMQPushConsumer("CG_slow", cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                                      consume_timeout=0.01)  # 0.6 s instead of 15 min
            c.subscribe("Slow")
            c.register_message_listener(listener)
            await c.start()
            service = c.consume_service
            deadline = time.monotonic() + 20
            while not service.expired_sent_back and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            mq = next(mq for mq in c.rebalance.process_queue_table if mq.topic == "Slow")
            pq = c.rebalance.process_queue_table[mq]
            result = ([m.body for m in service.expired_sent_back], pq.cached_offsets, c.offset_store.offset_table[mq])
            stuck.set()
            await c.shutdown()
            return result

    sent_back, cached, committed = asyncio.run(asyncio.wait_for(run(), 60))
    assert sent_back == [b"0"]
    assert cached == [] and committed == 5  # no longer held back by offset 0
