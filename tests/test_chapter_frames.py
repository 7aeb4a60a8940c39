"""The real 4.9.4 Java client's requests of the book's wire sections (chapters 00, 06-09), recorded
against the real 4.9.4 broker (tools/rocketmq_chapter_frames/), replayed to ``pymq up`` over real
sockets: every answer has the recorded code, pulls return the recorded messages, and the store
holds what the mechanism leaves."""

from __future__ import annotations

import asyncio
import pathlib

import pytest

from pymq_ref.broker.server.up import UpServer
from pymq_ref.formats.beans import TopicConfig
from pymq_ref.formats.message import iter_records
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.replay import conversation, load_capture, replay_blocking

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-chapter-frames"
TOPICS = {"tour": "TourTopic", "delay": "DelayTopic", "retry": "RetryTopic", "transaction": "TxTopic",
          "filter": "FilterTopic"}
#: what the recording broker ran with beyond the defaults (tools/rocketmq_chapter_frames/record.py)
SETTINGS = {"enablePropertyFilter": "true", "transactionTimeOut": "2000", "transactionCheckInterval": "3000"}
#: messages each scenario leaves in its topic's queue 0, and in other queues
LEFT = {"tour": {("TourTopic", 0): 1},
        "delay": {("DelayTopic", 0): 1, ("SCHEDULE_TOPIC_XXXX", 1): 1},
        "retry": {("RetryTopic", 0): 1, ("%RETRY%RetryConsumer", 0): 1, ("%DLQ%RetryConsumer", 0): 1},
        "transaction": {("TxTopic", 0): 2, ("RMQ_SYS_TRANS_HALF_TOPIC", 0): 4, ("RMQ_SYS_TRANS_OP_HALF_TOPIC", 0): 3},
        "filter": {("FilterTopic", 0): 4}}


def start_up(tmp_path, topic: str) -> UpServer:
    """A fresh ``pymq up`` with the scenario's topic, as each scenario was recorded against a fresh broker."""
    server = UpServer(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SETTINGS).start()
    server.call(server.broker.topics.update_topic_config, TopicConfig(topic, 1, 1, 6, "SINGLE_TAG"))
    return server


def keys(answer) -> list[str]:
    if answer is None or answer.code != ResponseCode.SUCCESS or not answer.body:
        return []
    return [r.properties.get("KEYS") for r in iter_records(answer.body)]


def test_every_scenario_was_recorded():
    for scenario in TOPICS:
        records = load_capture(DATA / f"{scenario}.jsonl")
        assert any(r["direction"] == "c2s" for r in records), scenario


@pytest.mark.parametrize("scenario", list(TOPICS))
def test_replayed_answers_have_the_recorded_codes(tmp_path, scenario):
    up = start_up(tmp_path, TOPICS[scenario])
    try:
        conv = conversation(load_capture(DATA / f"{scenario}.jsonl"))
        async def caught_up(ex):  # before a pull: the store has dispatched everything it appended
            while ex.request.code == RequestCode.PULL_MESSAGE and up.call(up.broker.store.dispatch_behind_bytes):
                await asyncio.sleep(0.01)

        exchanges, pushed = replay_blocking(up.broker_addr, conv, timeout=15.0, wait_for_server=30.0,
                                            before_request=caught_up)
        compared = 0
        for ex in exchanges:
            if ex.skipped or ex.request.is_oneway:
                continue
            assert ex.error is None, (ex.record["seq"], ex.request.code_name, ex.error)
            assert ex.ours.code == ex.recorded.code, (ex.record["seq"], ex.request.code_name, ex.ours.code,
                                                      ex.ours.remark, ex.recorded.code, ex.recorded.remark)
            if ex.request.code == RequestCode.PULL_MESSAGE:
                assert keys(ex.ours) == keys(ex.recorded), ex.record["seq"]
            compared += 1
        assert compared >= 5
        if scenario == "transaction":
            assert [sr.command.code for sr in pushed].count(RequestCode.CHECK_TRANSACTION_STATE) >= 1
        for (topic, queue_id), count in LEFT[scenario].items():
            assert up.call(up.broker.get_max_offset, topic, queue_id) == count, (topic, queue_id)
    finally:
        up.stop()
