"""MQClientInstance.shutdown returns even when a rebalance wakeup (NOTIFY_CONSUMER_IDS_CHANGED) arrives
in the same instant as the shutdown's cancel — the race that made chapter 13's second consumer
shutdown hang (``asyncio.wait_for`` on Python 3.11 can swallow that cancel)."""

from __future__ import annotations

import asyncio

from pymq_ref.client.config import ClientConfig
from pymq_ref.client.instance import MQClientInstance


def test_shutdown_returns_when_the_rebalance_wakeup_races_the_cancel():
    async def run() -> int:
        hung = 0
        for _ in range(20):
            instance = MQClientInstance(ClientConfig("127.0.0.1:9", client_ip="127.0.0.1", instance_name="race",
                                                     rebalance_interval=30.0, poll_name_server_interval=3600,
                                                     heartbeat_broker_interval=3600))
            await instance.start()
            await asyncio.sleep(0)  # the rebalance loop is now waiting for its wakeup
            await asyncio.sleep(0)
            instance._rebalance_wakeup.set()  # a notification ...
            stop = asyncio.ensure_future(instance.shutdown())  # ... and the shutdown, in the same tick
            done, _ = await asyncio.wait({stop}, timeout=5)
            if not done:
                hung += 1
                for task in list(instance._tasks):
                    task.cancel()
                    task.cancel()
        return hung

    assert asyncio.run(run()) == 0
