"""The lite pull consumer live: assign, poll in offset order, commit, committed, seek back."""

from __future__ import annotations

import asyncio

from pymq_ref.client.consumer.lite_pull import DefaultLitePullConsumer
from pymq_ref.client.message import Message
from pymq_ref.client.producer import DefaultMQProducer
from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.tools.cluster import LoopbackCluster


def test_assign_poll_commit_seek(tmp_path):
    async def run():
        async with LoopbackCluster(str(tmp_path), 1) as cluster:
            await cluster.create_topic("Lite", 1)
            p = DefaultMQProducer("PG_lite", cluster.namesrv_addr)
            await p.start()
            for i in range(25):
                await p.send(Message("Lite", b"%d" % i))
            await p.shutdown()
            c = DefaultLitePullConsumer("CG_lite", cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                                        auto_commit=False)
            await c.start()
            mq = MessageQueue("Lite", "broker-a", 0)
            assert await c.fetch_message_queues("Lite") == {mq}
            c.assign([mq])

            async def take(n):
                out = []
                while len(out) < n:
                    batch = await c.poll(5.0)
                    assert batch, f"nothing after {len(out)}"
                    assert len(batch) <= 10  # pullBatchSize 10
                    out += [m.queue_offset for m in batch]
                return out

            first = await take(25)
            before_commit = await c.committed(mq)
            await c.commit_sync()
            after_commit = await c.committed(mq)
            await c.seek(mq, 20)
            again = await take(5)
            await c.shutdown()
            return first, before_commit, after_commit, again

    first, before_commit, after_commit, again = asyncio.run(asyncio.wait_for(run(), 60))
    assert first == list(range(25))
    assert before_commit in (-1, 0) and after_commit == 25  # auto commit off: nothing until commit_sync
    assert again == [20, 21, 22, 23, 24]
