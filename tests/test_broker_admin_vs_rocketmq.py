"""mqadmin's everyday commands against pymq-ref's broker, checked against the real 4.9.4 broker.

``tools/rocketmq_broker_admin/record_mqadmin.py`` recorded every frame between mqadmin (updateTopic,
topicList, topicRoute, topicStatus, clusterList, brokerStatus, getBrokerConfig, updateSubGroup,
consumerProgress, consumerConnection, queryMsgById, queryMsgByKey, queryMsgByOffset,
resetOffsetByTime twice, deleteTopic — plus the recorder's sends, heartbeat and offsets) and a real
4.9.4 broker. Here the same requests, on as many connections, go to our broker over real sockets,
and every answer must equal the recorded one — code, remark, flag, serialization, header fields,
body (JSON in the same key order, stored records decoded field by field) — modulo times, hosts,
ports and the store host inside message ids. The requests the broker sends the clients on its own
(NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET) must be the same too.
"""

from __future__ import annotations

import asyncio
import pathlib

import pytest

from broker_admin_replay import dispatched, load_frames, normalize, pair_up, properties_text, replay
from pymq_ref.broker.server.config import parse_broker_conf
from pymq_ref.broker.server.controller import BrokerController

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-broker-admin" / "frames.jsonl"

#: GET_BROKER_CONFIG keys whose values depend on the machine or the run (paths, ports, addresses)
CONFIG_MACHINE_KEYS = {"listenPort", "haListenPort", "storePathRootDir", "storePathCommitLog", "brokerIP2"}
#: GET_BROKER_CONFIG differences kept on purpose: key -> why
CONFIG_DELIBERATE = {
    "rocketmqHome": "the Java installation folder; pymq-ref has none",
    "namesrvAddr": "the recording's broker.conf named a name server; the replayed broker is started without one",
    "bitMapLengthConsumeQueueExt": "a 4.9.4 broker overwrites it at start with its bloom filter's length (112, "
                                   "ConsumerFilterManager); pymq-ref's store keeps MessageStoreConfig's 64 "
                                   "(only used with enableConsumeQueueExt)",
}


def conf(store: str) -> str:
    """The recording's broker.conf (realbroker.py), on a free port and without a name server."""
    return ("brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\nbrokerIP1=127.0.0.1\nlistenPort=0\n"
            "brokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n"
            f"storePathRootDir={store}\nstorePathCommitLog={store}/commitlog\nmappedFileSizeCommitLog=1048576\n"
            "mappedFileSizeConsumeQueue=6000\nautoCreateTopicEnable=true\n")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    store = tmp_path_factory.mktemp("admin-store")

    async def run():
        bc = BrokerController(parse_broker_conf(conf(str(store))), register=False, vip_channel=False)
        await bc.start()
        try:
            return await replay(pair_up(load_frames(str(DATA))), bc.address,
                                before_each=lambda: dispatched(bc.broker.store))
        finally:
            await bc.stop()
    return asyncio.run(run())


def ordered(value):
    """A normalized answer with every JSON object as a list of pairs: key order counts."""
    if isinstance(value, dict):
        return [(repr(k), ordered(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [ordered(v) for v in value]
    return value


def test_the_recording_covers_every_mqadmin_command(replayed):
    steps = {ex.step for ex in replayed.exchanges}
    for command in ("updateTopic", "topicStatus", "clusterList", "brokerStatus", "getBrokerConfig", "updateSubGroup",
                    "consumerProgress", "consumerConnection", "queryMsgById", "queryMsgByKey", "queryMsgByOffset",
                    "resetOffsetByTime", "resetOffsetByTime-all-queues", "deleteTopic"):
        assert command in steps
    codes = {ex.request.code for ex in replayed.exchanges}
    assert {17, 215, 202, 28, 26, 200, 208, 203, 300, 33, 12, 11, 222, 38, 34, 35, 15, 310} <= codes


def test_every_answer_equals_the_real_brokers(replayed):
    differ = []
    for ex in replayed.exchanges:
        if ex.recorded is None:
            continue
        assert ex.ours_error is None, (ex.seq, ex.request.code_name, ex.ours_error)
        real, ours = normalize(ex.recorded, ex.request.code), normalize(ex.ours, ex.request.code)
        if ordered(real) != ordered(ours):
            differ.append((ex.seq, ex.step, ex.request.code_name, real, ours))
    assert not differ, differ[0]
    assert sum(ex.recorded is not None for ex in replayed.exchanges) >= 40


def test_refusals_word_for_word(replayed):
    """resetOffsetByTime before every queue has an offset: 4.9.4's SYSTEM_ERROR and its remark."""
    [ex] = [e for e in replayed.exchanges if e.step == "resetOffsetByTime" and e.request.code == 222]
    assert (ex.ours.code, ex.ours.remark) == (ex.recorded.code, ex.recorded.remark) == (
        1, "THe consumer group <AdminGroup> not exist")


def test_the_broker_tells_clients_the_same(replayed):
    assert replayed.pushed_real
    for conn, real in replayed.pushed_real.items():
        ours = replayed.pushed_ours.get(conn, [])
        assert [c.code for c in ours] == [c.code for c in real], conn
        for r, o in zip(real, ours):
            assert ordered(normalize(o, -1)) == ordered(normalize(r, -1))


def test_get_broker_config_lists_4_9_4s_settings(replayed):
    [ex] = [e for e in replayed.exchanges if e.request.code == 26]
    real, ours = properties_text(ex.recorded.body), properties_text(ex.ours.body)
    assert set(real) - set(ours) == {"rocketmqHome", "namesrvAddr"}
    assert set(ours) <= set(real)
    differ = {k: (real[k], ours[k]) for k in set(real) & set(ours)
              if real[k] != ours[k] and k not in CONFIG_MACHINE_KEYS}
    assert set(differ) == set(CONFIG_DELIBERATE) - {"rocketmqHome", "namesrvAddr"}, differ
