"""The broker server over real sockets: ``pymq up`` (embedded name server + broker) driven by our
remoting client — routes, sends, pulls (held and answered later), offsets, heartbeats, consumer
lists, NOTIFY_CONSUMER_IDS_CHANGED, unregistering — and ``pymq up`` as a user runs it."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time

from pymq_ref.broker.server.config import parse_broker_conf
from pymq_ref.broker.server.up import UpServer, run_up
from pymq_ref.formats.message import iter_records
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import (ConsumerData, HeartbeatData, ProducerData, SubscriptionData, TopicRouteData,
                                      decode_json, encode_body)
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand

from broker_server_helpers import SMALL_STORE, RecordingClient, pull, send_v2


def route(client, namesrv: str, topic: str):
    return client.invoke(namesrv, RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                                                          H.GetRouteInfoRequestHeader(topic=topic)))


def heartbeat(client_id: str, group: str, topic: str) -> RemotingCommand:
    hb = HeartbeatData(client_id=client_id, consumer_data_set=[ConsumerData(
        group_name=group, consume_type="CONSUME_PASSIVELY", message_model="CLUSTERING",
        consume_from_where="CONSUME_FROM_FIRST_OFFSET", subscription_data_set=[SubscriptionData(topic=topic, sub_string="*")])],
        producer_data_set=[ProducerData("PG")])
    return RemotingCommand.request(RequestCode.HEART_BEAT, None, encode_body(hb))


def test_up_serves_a_producer_and_a_consumer_over_the_wire(tmp_path):
    async def main():
        async with run_up(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
            c = RecordingClient()
            try:
                r = await route(c, up.namesrv_addr, "TBW102")  # registered at start
                assert r.code == 0
                assert decode_json(TopicRouteData, r.body).broker_datas[0].broker_addrs == {0: up.broker_addr}

                sent = await c.invoke(up.broker_addr, send_v2("T1", b"hello", queue_id=1))
                assert sent.code == 0 and sent.remark is None
                ext = sent.ext()
                assert ext["queueId"] == "1" and ext["queueOffset"] == "0"
                assert ext["MSG_REGION"] == "DefaultRegion" and ext["TRACE_ON"] == "true"
                for _ in range(100):  # the new topic is registered oneway right after its creation
                    if (await route(c, up.namesrv_addr, "T1")).code == 0:
                        break
                    await asyncio.sleep(0.05)
                else:
                    raise AssertionError("T1 never appeared in the name server")

                for _ in range(100):  # the reput thread dispatches the message
                    found = await c.invoke(up.broker_addr, pull("CG", "T1", 1, 0))
                    if found.code == 0:
                        break
                    await asyncio.sleep(0.02)
                assert found.remark == "FOUND"
                assert found.ext()["nextBeginOffset"] == "1" and found.ext()["maxOffset"] == "1"
                [record] = list(iter_records(found.body, with_spans=False))
                assert record.body == b"hello" and record.topic == "T1" and record.queue_id == 1
                assert str(record.born_host).startswith("127.0.0.1:")

                offs = H.UpdateConsumerOffsetRequestHeader(consumer_group="CG", topic="T1", queue_id=1, commit_offset=1)
                assert (await c.invoke(up.broker_addr, RemotingCommand.request(RequestCode.UPDATE_CONSUMER_OFFSET, offs))).code == 0
                q = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.QUERY_CONSUMER_OFFSET, H.QueryConsumerOffsetRequestHeader(consumer_group="CG", topic="T1", queue_id=1)))
                assert (q.code, q.ext()["offset"]) == (0, "1")
                q = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.QUERY_CONSUMER_OFFSET, H.QueryConsumerOffsetRequestHeader(consumer_group="CG", topic="T1", queue_id=0)))
                assert q.code == 0 and q.ext()["offset"] == "0"  # nothing committed, the queue's start is in memory
                mx = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.GET_MAX_OFFSET, H.GetMaxOffsetRequestHeader(topic="T1", queue_id=1)))
                assert (mx.code, mx.ext()["offset"]) == (0, "1")
                mn = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.GET_MIN_OFFSET, H.GetMinOffsetRequestHeader(topic="T1", queue_id=1)))
                assert (mn.code, mn.ext()["offset"]) == (0, "0")
                stored_at = record.store_timestamp
                early = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.GET_EARLIEST_MSG_STORETIME, H.GetEarliestMsgStoretimeRequestHeader(topic="T1", queue_id=1)))
                assert early.ext()["timestamp"] == str(stored_at)
                search = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, H.SearchOffsetRequestHeader(topic="T1", queue_id=1, timestamp=stored_at)))
                assert (search.code, search.ext()["offset"]) == (0, "0")

                # a consumer joins: the broker lists it, tells it to rebalance, creates the group's retry topic
                assert (await c.invoke(up.broker_addr, heartbeat("client-1", "CG", "T1"))).code == 0
                notify = await c.wait_for(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED)
                assert notify.is_oneway and notify.ext() == {"consumerGroup": "CG"}
                lst = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.GET_CONSUMER_LIST_BY_GROUP, H.GetConsumerListByGroupRequestHeader(consumer_group="CG")))
                assert lst.code == 0 and lst.body == b'{"consumerIdList":["client-1"]}'
                assert up.broker.broker.topics.select_topic_config("%RETRY%CG").read_queue_nums == 1
                # without FLAG_SUBSCRIPTION a pull uses what the heartbeat registered
                assert (await c.invoke(up.broker_addr, pull("CG", "T1", 1, 0, sys_flag=0))).code == 0

                un = H.UnregisterClientRequestHeader(client_id="client-1", consumer_group="CG", producer_group="PG")
                assert (await c.invoke(up.broker_addr, RemotingCommand.request(RequestCode.UNREGISTER_CLIENT, un))).code == 0
                lst = await c.invoke(up.broker_addr, RemotingCommand.request(
                    RequestCode.GET_CONSUMER_LIST_BY_GROUP, H.GetConsumerListByGroupRequestHeader(consumer_group="CG")))
                assert (lst.code, lst.remark) == (1, "no consumer for this group, CG")
                gone = await c.invoke(up.broker_addr, pull("CG", "T1", 1, 0, sys_flag=0))
                assert (gone.code, gone.remark) == (24, "the consumer's group info not exist"
                                                  "\nSee http://rocketmq.apache.org/docs/faq/ for further details.")

                unknown = await c.invoke(up.broker_addr, RemotingCommand.request(9999))
                assert (unknown.code, unknown.remark) == (3, f" request type {9999} not supported")
            finally:
                await c.close()
    asyncio.run(main())


def test_a_held_pull_is_answered_when_the_message_arrives(tmp_path):
    async def main():
        async with run_up(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
            c = RecordingClient()
            try:
                await c.invoke(up.broker_addr, send_v2("T2", b"first", queue_id=0))
                for _ in range(100):
                    if (await c.invoke(up.broker_addr, pull("CG2", "T2", 0, 0))).code == 0:
                        break
                    await asyncio.sleep(0.02)
                held = asyncio.ensure_future(c.invoke(up.broker_addr, pull("CG2", "T2", 0, 1, suspend_ms=20_000), 30))
                await asyncio.sleep(0.3)
                assert not held.done()  # PULL_NOT_FOUND with SUSPEND: no answer yet
                await c.invoke(up.broker_addr, send_v2("T2", b"second", queue_id=0))
                answer = await held  # woken by the dispatch of "second", long before the 20 s hold
                assert answer.code == 0 and answer.ext()["nextBeginOffset"] == "2"
                assert [r.body for r in iter_records(answer.body, with_spans=False)] == [b"second"]
            finally:
                await c.close()
    asyncio.run(main())


def test_broker_conf_names_and_defaults():
    s = parse_broker_conf("brokerClusterName=C1\nbrokerName=b1\nbrokerId=3\nlistenPort=24100\nflushDiskType=SYNC_FLUSH\n"
                          "namesrvAddr=127.0.0.1:1;127.0.0.1:2\nnoSuchSetting=1\nstorePathRootDir=/tmp/s\n")
    assert (s.broker.broker_cluster_name, s.broker.broker_name, s.broker.listen_port) == ("C1", "b1", 24100)
    assert s.broker.broker_id == 0  # a master is broker 0, whatever the file says (BrokerStartup)
    assert s.store.flush_disk_type.name == "SYNC_FLUSH" and s.store.ha_listen_port == 24101
    assert s.namesrv_addr == ["127.0.0.1:1", "127.0.0.1:2"] and s.unknown_keys == ["noSuchSetting"]
    d = parse_broker_conf("")
    assert d.broker.listen_port == 10911 and d.store.store_path_root_dir == os.path.join(os.path.expanduser("~"), "store")


def test_up_server_from_sync_code_and_a_clean_store_after_stop(tmp_path):
    store = tmp_path / "store"
    with UpServer(str(store), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
        assert os.path.exists(store / "abort")

        async def send():
            c = RecordingClient()
            try:
                return await c.invoke(up.broker_addr, send_v2("T3", b"x"))
            finally:
                await c.close()
        assert asyncio.run(send()).code == 0
        for _ in range(200):  # the reput thread dispatches it
            if up.call(lambda: up.broker.get_max_offset("T3", 0)) == 1:
                break
            time.sleep(0.01)
        assert up.call(lambda: up.broker.get_max_offset("T3", 0)) == 1
    assert not os.path.exists(store / "abort")  # shut down cleanly


def test_pymq_up_prints_where_everything_is_and_stops_on_sigterm(tmp_path):
    store = tmp_path / "store"
    proc = subprocess.Popen([sys.executable, "-m", "pymq_ref.cli", "up", "--store", str(store), "--namesrv-port", "0",
                             "--broker-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline, lines = time.time() + 30, []
        while time.time() < deadline and not any("NAMESRV_ADDR=" in line for line in lines):
            lines.append(proc.stdout.readline())
        text = "".join(lines)
        namesrv = re.search(r"NAMESRV_ADDR=(\S+)", text).group(1)
        assert f"store: {store}" in text

        async def ask():
            c = RecordingClient()
            try:
                return await route(c, namesrv, "TBW102")
            finally:
                await c.close()
        assert asyncio.run(ask()).code == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "name server and broker stopped" in err
    assert not (store / "abort").exists()


def test_sync_flush_sends_share_group_commits_over_the_wire(tmp_path):
    async def main():
        settings = dict(SMALL_STORE, flushDiskType="SYNC_FLUSH")
        async with run_up(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=settings) as up:
            c = RecordingClient()
            try:
                answers = await asyncio.gather(*(c.invoke(up.broker_addr, send_v2("TS", b"%d" % i, queue_id=0))
                                                 for i in range(64)))
                assert [a.code for a in answers] == [0] * 64
                assert sorted(int(a.ext()["queueOffset"]) for a in answers) == list(range(64))
                store = up.broker.broker.store
                assert store.commit_log.queue.flushed_where >= store.commit_log.max_offset  # acknowledged = on disk
                assert store.group_commit.rounds < 64  # pipelined sends shared flushes
            finally:
                await c.close()
    asyncio.run(main())


def test_clients_that_vanish_or_send_garbage_do_not_stop_the_broker(tmp_path):
    async def main():
        async with run_up(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
            gone = RecordingClient()
            held = asyncio.ensure_future(gone.invoke(up.broker_addr, pull("CGV", "TV", 0, 0, suspend_ms=20_000), 30))
            bad = await gone.invoke(up.broker_addr, RemotingCommand.request(RequestCode.HEART_BEAT, None, b"{not json"))
            assert bad.code == 1 and "HeartbeatData" in bad.remark  # a typed refusal, not a dead connection
            await asyncio.sleep(0.2)
            await gone.close()  # vanishes while its pull is held
            await asyncio.gather(held, return_exceptions=True)
            c = RecordingClient()
            try:
                assert (await c.invoke(up.broker_addr, send_v2("TV", b"after", queue_id=0))).code == 0
                for _ in range(100):
                    answer = await c.invoke(up.broker_addr, pull("CGV", "TV", 0, 0))
                    if answer.code == 0:
                        break
                    await asyncio.sleep(0.02)
                assert [r.body for r in iter_records(answer.body, with_spans=False)] == [b"after"]
            finally:
                await c.close()
    asyncio.run(main())
