"""What real RocketMQ 4.9.4 programs said to the real 4.9.4 name server, said again to ours.

``tools/rocketmq_namesrv/record_clients.py`` captured (with ``pymq proxy --raw``) every frame the
real 4.9.4 broker (registering every 30 s and after a topic was created), mqadmin (clusterList,
topicList, topicRoute, updateTopic, getNamesrvConfig, updateKvConfig, updateOrderConf,
deleteKvConfig) and the real Java producer and push consumer exchanged with the real name server.
Here each connection's requests are sent, in the captured order, to pymq-ref's name server, and
every answer is compared with the real one — code, remark, ext fields, body — and byte for byte
except GET_NAMESRV_CONFIG, whose values are each machine's paths.

The same run also had every client work through pymq-ref's name server (``roundtrip.json``: the
Java round trip received all its messages; ``mqadmin.json``: every command printed the same thing
through both name servers); those need Java and are checked here only as recorded facts.
"""

from __future__ import annotations

import asyncio
import json
import pathlib

import pytest

from pymq_ref.namesrv import NamesrvController
from pymq_ref.remoting.codec import decode
from pymq_ref.remoting.codes import RequestCode

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-namesrv"


def captured() -> list[dict]:
    return [json.loads(line) for line in (DATA / "clients.jsonl").read_text().splitlines()]


def replay(tmp_path) -> list[tuple[dict, dict, bytes | None]]:
    """(request record, real response record, our response frame) for every two-way request."""
    frames = captured()
    answers = {}
    for rec in frames:
        if rec["direction"] == "s2c" and rec["kind"] == "response":
            answers[(rec["conn"], rec["opaque"])] = rec

    async def run():
        ns = await NamesrvController("127.0.0.1", 0, kv_config_path=str(tmp_path / "kv.json"), scan=False).start()
        conns: dict[int, tuple] = {}
        out = []
        try:
            for rec in frames:
                if rec["direction"] != "c2s":
                    continue
                if rec["conn"] not in conns:
                    conns[rec["conn"]] = await asyncio.open_connection(*ns.address.rsplit(":", 1))
                reader, writer = conns[rec["conn"]]
                writer.write(bytes.fromhex(rec["frame_hex"]))
                await writer.drain()
                real = answers.get((rec["conn"], rec["opaque"]))
                if rec["kind"] != "request" or real is None:
                    continue
                head = await asyncio.wait_for(reader.readexactly(4), 5)
                mine = head + await reader.readexactly(int.from_bytes(head, "big"))
                out.append((rec, real, mine))
        finally:
            for _, writer in conns.values():
                writer.close()
            await ns.stop()
        return out

    return asyncio.run(run())


@pytest.fixture(scope="module")
def exchanges(tmp_path_factory):
    return replay(tmp_path_factory.mktemp("replay"))


def test_the_capture_holds_every_kind_of_client():
    codes = {rec["code"] for rec in captured() if rec["direction"] == "c2s"}
    assert {RequestCode.REGISTER_BROKER, RequestCode.GET_ROUTEINFO_BY_TOPIC, RequestCode.GET_BROKER_CLUSTER_INFO,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, RequestCode.GET_NAMESRV_CONFIG, RequestCode.PUT_KV_CONFIG,
            RequestCode.GET_KV_CONFIG, RequestCode.DELETE_KV_CONFIG} <= codes


def test_every_real_answer_is_ours(exchanges):
    assert len(exchanges) > 20
    for request, real, mine in exchanges:
        real_frame = bytes.fromhex(real["frame_hex"])
        theirs, ours = decode(real_frame).command, decode(mine).command
        what = f"{request['code']} on connection {request['conn']} (opaque {request['opaque']})"
        assert (ours.code, ours.remark, ours.flag, ours.language, ours.ext_fields) == \
            (theirs.code, theirs.remark, theirs.flag, theirs.language, theirs.ext_fields), what
        if request["code"] == RequestCode.GET_NAMESRV_CONFIG:
            keys = lambda body: sorted(line.split("=")[0] for line in body.decode().splitlines())  # noqa: E731
            assert keys(ours.body) == keys(theirs.body), what
        else:
            assert mine == real_frame, what


def test_the_live_run_agreed():
    mqadmin = json.loads((DATA / "mqadmin.json").read_text())
    assert mqadmin["agree"] and all(mqadmin["agree"].values())
    trips = json.loads((DATA / "roundtrip.json").read_text())
    assert trips["real"]["exit"] == 0 and trips["ours"]["exit"] == 0
    assert trips["ours"]["output"][-1] == "received 10 of 10"
