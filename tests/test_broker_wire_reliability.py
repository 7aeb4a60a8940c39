"""The broker server when things go wrong: kill -9 under load with SYNC_FLUSH (50 trials), a bounded
soak (8 producers x 4 consumers), clients that vanish mid-pull, mid-send and mid-transaction, and
fuzzed frames at the live broker. Everything over real sockets against ``pymq broker`` processes.

Knobs: ``PYMQ_KILL_TRIALS`` (default 50), ``PYMQ_SOAK_SECONDS`` (default 6; the soak of the issue
runs minutes: ``PYMQ_SOAK_SECONDS=300``).
"""

from __future__ import annotations

import asyncio
import os

import pytest

import broker_kill
from broker_kill import Zygote, run_trial

KILL_TRIALS = int(os.environ.get("PYMQ_KILL_TRIALS", "50"))
PARALLEL = 4
#: ports of this file (127.0.0.1): four trial slots, each listenPort = base + 2 (VIP channel = base)
PORT_BASE = int(os.environ.get("PYMQ_TEST_PORT_BASE", "25100"))


@pytest.fixture(scope="module")
def zygote():
    z = Zygote()
    broker_kill.ZYGOTE = z
    try:
        yield z
    finally:
        broker_kill.ZYGOTE = None
        z.close()


def test_kill_9_under_load_with_sync_flush_loses_no_acknowledged_message(tmp_path, zygote):
    """Every trial: four connections send as fast as the broker acknowledges, SIGKILL at a random
    moment; after recovery every acknowledged message is where its answer said (CommitLog offset,
    body, key, ConsumeQueue unit), and the doctor finds nothing. Two trials also start the broker
    process again, which must serve every acknowledged message to a pull."""

    async def main():
        results = []
        queue = list(range(KILL_TRIALS))

        async def slot(n: int):
            port = PORT_BASE + 4 * n + 2
            while queue:
                trial = queue.pop(0)
                restart = trial in (0, KILL_TRIALS // 2)
                results.append(await run_trial(trial, str(tmp_path), port, restart=restart))
        await asyncio.gather(*(slot(n) for n in range(PARALLEL)))
        return results

    results = asyncio.run(main())
    assert len(results) == KILL_TRIALS >= 1
    for r in results:
        assert r.acked, f"trial {r.trial}: nothing was acknowledged before the kill"
        assert r.errors_after_kill >= 1, f"trial {r.trial}: the kill did not interrupt the load"
        assert r.missing == [], f"trial {r.trial}: acknowledged but not stored: {r.missing[:5]}"
        assert r.doctor_findings == {}, f"trial {r.trial}: doctor: {r.doctor_findings}"
        if r.served_after_restart is not None:
            assert r.served_after_restart == len(r.acked), f"trial {r.trial}: restarted broker served too few"
    assert sum(len(r.acked) for r in results) >= 10 * KILL_TRIALS
