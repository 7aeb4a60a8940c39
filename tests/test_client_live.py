"""pymq-ref's client live against pymq-ref's broker (a loopback cluster on 127.0.0.1), in every mode
of issue 13 — and its requests compared with those the real RocketMQ 4.9.4 broker accepted from it
(``tests/data/rocketmq-4.9.4-client-live/``, recorded by ``tools/rocketmq_client_live/record.py``).

Each scenario (``tests/client_scenarios.py``) asserts its own outcome; the comparison then checks
that every request shape the client sent here (code, header keys, deterministic values, property
names, body kind) is one the real broker answered (in any scenario: when a retry topic's route
appears is a matter of timing), and that every kind of request the client sent the real broker in
that scenario was sent here too.
"""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from pymq_ref.broker.server import PROCESSOR_MODULES
from pymq_ref.tools.cluster import LoopbackCluster

from client_scenarios import SCENARIOS, Context, shape_key

DATA = os.path.join(os.path.dirname(__file__), "data", "rocketmq-4.9.4-client-live", "requests.jsonl")

#: broker processors a scenario needs beyond send/pull/offsets/heartbeats
NEEDS = {"orderly": "pymq_ref.broker.server.lock", "push": "pymq_ref.broker.server.send_back",
         "transaction": "pymq_ref.broker.server.transaction", "reply": "pymq_ref.broker.server.reply"}
#: scenarios that read what ``produce`` sent
AFTER_PRODUCE = {"push", "tags", "broadcasting", "lite"}


def recorded() -> list[dict]:
    with open(DATA, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _scenario_of(s: dict) -> str:
    return s["scenario"].split("-")[0] if s["scenario"].startswith(("reply", "lite")) else s["scenario"]


def test_recorded_requests_were_accepted_by_the_real_broker():
    rows = recorded()
    assert len(rows) > 50
    for row in rows:
        codes = set(row["response_codes"])
        if row["name"] == "GET_ROUTEINFO_BY_TOPIC":
            assert codes <= {0, 17}, row  # 17: no route yet (the producer then uses TBW102's)
        elif row["oneway"]:
            assert codes == {None}, row
        else:
            assert 0 in codes, row
    names = {r["name"] for r in rows}
    assert {"SEND_MESSAGE_V2", "SEND_BATCH_MESSAGE", "SEND_REPLY_MESSAGE_V2", "PULL_MESSAGE", "HEART_BEAT",
            "LOCK_BATCH_MQ", "UNLOCK_BATCH_MQ", "CONSUMER_SEND_MSG_BACK", "END_TRANSACTION", "QUERY_CONSUMER_OFFSET",
            "UPDATE_CONSUMER_OFFSET", "GET_CONSUMER_LIST_BY_GROUP", "UNREGISTER_CLIENT"} <= names


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_against_pymq_broker(name, tmp_path):
    need = NEEDS.get(name)
    if need and need not in PROCESSOR_MODULES:
        pytest.skip(f"pymq-ref's broker does not serve this yet ({need} is not in PROCESSOR_MODULES)")

    async def run():
        settings = {"transactionCheckInterval": "2000", "transactionTimeOut": "1000"}
        async with LoopbackCluster(str(tmp_path / "cluster"), 1, settings=settings) as cluster:
            ctx = Context(cluster.namesrv_addr, f"L{time.monotonic_ns() % 10**8}_", offset_dir=str(tmp_path / "offsets"))
            if name in AFTER_PRODUCE:
                await SCENARIOS["produce"](ctx)
                ctx.log.clear()
            result = await SCENARIOS[name](ctx)
            return ctx.log, result

    log, result = asyncio.run(asyncio.wait_for(run(), 150))
    real = [r for r in recorded() if _scenario_of(r) == name]
    real_keys = {shape_key(r, with_scenario=False) for r in recorded()}
    ours = [s for s in log if _scenario_of(s) == name]
    unknown = sorted({shape_key(s, with_scenario=False) for s in ours} - real_keys)
    assert not unknown, "requests the real broker never saw from this scenario:\n" + "\n".join(unknown)
    real_kinds = {(r["scenario"], r["role"], r["name"]) for r in real}
    our_kinds = {(s["scenario"], s["role"], s["name"]) for s in ours}
    assert real_kinds <= our_kinds, sorted(real_kinds - our_kinds)
