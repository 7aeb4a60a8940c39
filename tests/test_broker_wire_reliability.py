"""The broker server when things go wrong: kill -9 under load with SYNC_FLUSH (50 trials from our
remoting client, and trials with the official C++ client against ``pymq up``), a bounded soak
(8 producers x 4 consumers), clients that vanish mid-pull, mid-send and mid-transaction, and fuzzed
frames at the live broker. Everything over real sockets against ``pymq broker`` processes. The
refusals' codes and remarks are checked against the real 4.9.4 broker's recorded answers by
``tests/test_broker_diff_vs_rocketmq.py`` (missing header fields, unknown topics, bad SQL,
oversized bodies, malformed frames).

Knobs: ``PYMQ_KILL_TRIALS`` (default 50), ``PYMQ_CPP_KILL_TRIALS`` (default 2), ``PYMQ_FUZZ_CASES``
(default 300), ``PYMQ_SOAK_SECONDS`` (default 4; the soak of the issue runs minutes:
``PYMQ_SOAK_SECONDS=300``), ``PYMQ_TEST_PORT_BASE`` (default: the first base from 25100 whose 81 ports are free; this file uses
base..base+80).
"""

from __future__ import annotations

import asyncio
import os
import time

import pytest

import broker_kill
from broker_kill import Zygote, run_trial

KILL_TRIALS = int(os.environ.get("PYMQ_KILL_TRIALS", "50"))
PARALLEL = 4
#: ports of this file (127.0.0.1): four trial slots, each listenPort = base + 2 (VIP channel = base)


def _free_port_base(start: int = 25100, span: int = 81) -> int:
    """The first base from ``start`` (steps of 200) whose ``span`` ports are all free on 127.0.0.1: a
    leftover listener must not answer in a trial broker's place."""
    import socket
    for base in range(start, 32000 - span, 200):
        socks = []
        try:
            for port in range(base, base + span):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {span} free ports from {start}")


PORT_BASE = int(os.environ.get("PYMQ_TEST_PORT_BASE") or _free_port_base())


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


# -- soak --------------------------------------------------------------------------------------------
SOAK_SECONDS = float(os.environ.get("PYMQ_SOAK_SECONDS", "4"))
SOAK_TOPIC, SOAK_GROUP, SOAK_QUEUES = "SoakTopic", "SoakGroup", 8


async def started_broker(tmp_path, name: str, port: int, extra: dict | None = None, flush: str = "ASYNC_FLUSH"):
    """A ``pymq broker`` forked by the zygote, listening on ``port``; returns (process, conf path, store)."""
    store = str(tmp_path / name)
    conf = broker_kill.broker_conf(store, port).replace("flushDiskType=SYNC_FLUSH", f"flushDiskType={flush}")
    conf += "".join(f"{k}={v}\n" for k, v in (extra or {}).items())
    conf_path = str(tmp_path / f"{name}.conf")
    with open(conf_path, "w") as f:
        f.write(conf)
    proc = broker_kill.start_broker(conf_path, str(tmp_path / f"{name}.log"))
    await broker_kill.wait_listening(port, proc)
    return proc, conf_path, store


def stop_broker(proc) -> None:
    import signal
    proc.signal(signal.SIGTERM)
    proc.wait(60)


def test_soak_8_producers_4_consumers_nothing_lost_no_duplicates(tmp_path, zygote):
    """Eight producers send for ``PYMQ_SOAK_SECONDS`` while four consumers of one group long-poll
    their two queues each (one pull in flight per queue) and commit as they go; then the consumers
    drain. Every acknowledged
    message is consumed exactly once (no failure: no duplicates), the committed offsets reach the
    queues' ends, and the store is doctor-clean after a clean stop."""
    from pymq_ref.formats.message import iter_records
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codes import RequestCode as R
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.transport import RemotingClient
    from pymq_ref.tools.doctor import run_doctor
    from broker_diff_scenario import heartbeat

    port = PORT_BASE + 32 + 2
    addr = f"127.0.0.1:{port}"

    async def main():
        proc, _, store = await started_broker(tmp_path, "soak", port)
        clients = []

        def client(name):
            c = RemotingClient(name=name)
            clients.append(c)
            return c
        try:
            admin = client("soak-admin")
            assert (await admin.invoke(addr, RemotingCommand(R.UPDATE_AND_CREATE_TOPIC, ext_fields=H.CreateTopicRequestHeader(
                topic=SOAK_TOPIC, default_topic="TBW102", read_queue_nums=SOAK_QUEUES, write_queue_nums=SOAK_QUEUES,
                perm=6, topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False).to_ext()), 10)).code == 0
            acked: list[str] = []
            consumed: list[str] = []
            stop_sending = asyncio.Event()
            drained = asyncio.Event()

            async def producer(n):
                c = client(f"soak-producer-{n}")
                i = 0
                while not stop_sending.is_set():
                    key = f"p{n}-{i}"
                    ans = await c.invoke(addr, broker_kill.send_request(key, key.encode() * 8, (n + i) % SOAK_QUEUES,
                                                                        SOAK_TOPIC), 10)
                    assert ans.code == 0, (ans.code, ans.remark)
                    acked.append(key)
                    i += 1

            async def consumer(k):
                c = client(f"soak-consumer-{k}")
                hb = heartbeat([(SOAK_TOPIC, "*", "TAG")], group=SOAK_GROUP)
                assert (await c.invoke(addr, hb, 10)).code == 0

                async def queue_loop(q):
                    off = 0
                    while True:
                        done = drained.is_set()  # once sending stopped, no long polling: drain and stop
                        ans = await c.invoke(addr, RemotingCommand(R.PULL_MESSAGE, ext_fields=H.PullMessageRequestHeader(
                            consumer_group=SOAK_GROUP, topic=SOAK_TOPIC, queue_id=q, queue_offset=off, max_msg_nums=32,
                            sys_flag=0x1 | 0x4 | (0 if done else 0x2), commit_offset=off, suspend_timeout_millis=1000,
                            subscription="*", sub_version=0, expression_type="TAG").to_ext()), 10)
                        if ans.code == 0:
                            consumed.extend(r.properties["UNIQ_KEY"] for r in iter_records(ans.body))
                        if ans.code in (0, 19, 20, 21):
                            off = int(ans.ext()["nextBeginOffset"])
                        if done and ans.code != 0:
                            await c.invoke(addr, RemotingCommand(R.UPDATE_CONSUMER_OFFSET, ext_fields=H.UpdateConsumerOffsetRequestHeader(
                                consumer_group=SOAK_GROUP, topic=SOAK_TOPIC, queue_id=q, commit_offset=off).to_ext()), 10)
                            return
                await asyncio.gather(queue_loop(2 * k), queue_loop(2 * k + 1))

            consumers = [asyncio.ensure_future(consumer(k)) for k in range(4)]
            producers = [asyncio.ensure_future(producer(n)) for n in range(8)]
            await asyncio.sleep(SOAK_SECONDS)
            stop_sending.set()
            await asyncio.gather(*producers)

            async def dispatched_total() -> int:  # what the ConsumeQueues hold (the reput runs behind the puts)
                total = 0
                for q in range(SOAK_QUEUES):
                    mx = await admin.invoke(addr, RemotingCommand(R.GET_MAX_OFFSET, ext_fields=H.GetMaxOffsetRequestHeader(
                        topic=SOAK_TOPIC, queue_id=q).to_ext()), 10)
                    total += int(mx.ext()["offset"])
                return total
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while await dispatched_total() < len(acked) and loop.time() < deadline:
                await asyncio.sleep(0.05)
            drained.set()  # every acknowledged message is in a queue: consumers may stop at the end
            await asyncio.wait_for(asyncio.gather(*consumers), 60)
            committed = []
            for q in range(SOAK_QUEUES):
                mx = await admin.invoke(addr, RemotingCommand(R.GET_MAX_OFFSET, ext_fields=H.GetMaxOffsetRequestHeader(
                    topic=SOAK_TOPIC, queue_id=q).to_ext()), 10)
                co = await admin.invoke(addr, RemotingCommand(R.QUERY_CONSUMER_OFFSET, ext_fields=H.QueryConsumerOffsetRequestHeader(
                    consumer_group=SOAK_GROUP, topic=SOAK_TOPIC, queue_id=q).to_ext()), 10)
                committed.append((int(mx.ext()["offset"]), int(co.ext()["offset"])))
            return acked, consumed, committed, store, proc
        finally:
            for c in clients:
                await c.close()

    acked, consumed, committed, store, proc = asyncio.run(main())
    stop_broker(proc)
    print(f"soak: {len(acked)} messages sent in {SOAK_SECONDS} s by 8 producers, {len(consumed)} consumed by 4 consumers")
    assert len(acked) >= 100
    assert set(consumed) == set(acked), f"lost: {sorted(set(acked) - set(consumed))[:5]}"
    assert len(consumed) == len(set(consumed)), "a message was consumed twice without any failure"
    assert all(mx == co for mx, co in committed), committed
    report = run_doctor(store, broker_kill.doctor_options())
    assert report.clean, report.text()


# -- clients that vanish ------------------------------------------------------------------------------
def test_clients_that_vanish_mid_pull_mid_send_and_mid_transaction(tmp_path, zygote):
    """* mid-pull: a long-polling pull whose connection closes before a message arrives — the
      broker's late answer goes nowhere, it keeps serving, the message is pulled by someone else;
    * mid-send: a frame cut off when its client vanishes stores nothing; a complete send whose
      client vanishes before the answer is stored exactly once;
    * mid-transaction: a producer vanishes after its half message; the broker asks another live
      producer of the same group (CHECK_TRANSACTION_STATE over that producer's own connection),
      which commits it (END_TRANSACTION from the check) — the message becomes visible once."""
    from pymq_ref.formats.message import iter_records
    from pymq_ref.formats.properties import encode_properties
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.bodies import HeartbeatData, ProducerData, encode_body
    from pymq_ref.remoting.codec import encode
    from pymq_ref.remoting.codes import RequestCode as R
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.dispatch import RequestDispatcher
    from pymq_ref.remoting.transport import RemotingClient
    from pymq_ref.tools.doctor import run_doctor

    port = PORT_BASE + 40 + 2
    addr = f"127.0.0.1:{port}"
    topic = "VanishTopic"

    def pull(offset, suspend_ms=0, q=0):
        return RemotingCommand(R.PULL_MESSAGE, ext_fields=H.PullMessageRequestHeader(
            consumer_group="VanishGroup", topic=topic, queue_id=q, queue_offset=offset, max_msg_nums=32,
            sys_flag=0x4 | (0x2 if suspend_ms else 0), commit_offset=0, suspend_timeout_millis=suspend_ms,
            subscription="*", sub_version=0, expression_type="TAG").to_ext())

    def send(key, q=0, tx=False):
        props = {"UNIQ_KEY": key, "KEYS": key, "WAIT": "true"}
        if tx:
            props.update(TRAN_MSG="true", PGROUP="TxGroup")
        return RemotingCommand(R.SEND_MESSAGE_V2, ext_fields=H.SendMessageRequestHeaderV2(
            producer_group="TxGroup" if tx else "PG", topic=topic, default_topic="TBW102", default_topic_queue_nums=1,
            queue_id=q, sys_flag=0x4 if tx else 0, flag=0,
            born_timestamp=int(time.time() * 1000),  # a half message born over 72 h ago is skipped, never checked
            properties=encode_properties(props), reconsume_times=0, unit_mode=False, batch=False).to_ext(),
            body=key.encode())

    async def keys_in_queue(c, q=0):
        ans = await c.invoke(addr, pull(0, q=q), 10)
        return [r.properties["UNIQ_KEY"] for r in iter_records(ans.body)] if ans.code == 0 else []

    async def main():
        proc, _, store = await started_broker(tmp_path, "vanish", port, {
            "transactionTimeOut": "500", "transactionCheckInterval": "500"})
        steady = RemotingClient(name="steady")
        try:
            assert (await steady.invoke(addr, RemotingCommand(R.UPDATE_AND_CREATE_TOPIC, ext_fields=H.CreateTopicRequestHeader(
                topic=topic, default_topic="TBW102", read_queue_nums=1, write_queue_nums=1, perm=6,
                topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False).to_ext()), 10)).code == 0
            # mid-pull: hold a pull, vanish, then the message arrives
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(encode(pull(0, suspend_ms=15000).with_(opaque=7)))
            await w.drain()
            await asyncio.sleep(0.3)
            w.close()
            await asyncio.sleep(0.1)
            assert (await steady.invoke(addr, send("after-vanished-pull"), 10)).code == 0
            await asyncio.sleep(0.3)
            assert await keys_in_queue(steady) == ["after-vanished-pull"]
            # mid-send: half a frame, then gone; a whole frame, then gone before the answer
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(encode(send("never-stored"))[:50])
            await w.drain()
            w.close()
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(encode(send("stored-once").with_(opaque=9)))
            await w.drain()
            w.close()
            await asyncio.sleep(0.5)
            assert await keys_in_queue(steady) == ["after-vanished-pull", "stored-once"]
            # mid-transaction: producer A sends a half message and vanishes; producer B stays
            checks: list[RemotingCommand] = []
            b_client = RemotingClient(RequestDispatcher(default=lambda req, ch: checks.append((req, ch)) or None),
                                      name="producer-b")
            a_client = RemotingClient(name="producer-a")
            hb = RemotingCommand(R.HEART_BEAT, body=encode_body(HeartbeatData("127.0.0.1@producer-b",
                                                                               [ProducerData("TxGroup")], [])))
            assert (await b_client.invoke(addr, hb, 10)).code == 0
            half = await a_client.invoke(addr, send("tx-of-a-vanished-producer", tx=True), 10)
            assert half.code == 0
            await a_client.close()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 20
            while not checks and loop.time() < deadline:
                await asyncio.sleep(0.1)
            assert checks, "the broker never asked the live producer"
            check, channel = checks[0]
            assert check.code == R.CHECK_TRANSACTION_STATE
            h = check.header(H.CheckTransactionStateRequestHeader)
            assert h.msg_id == "tx-of-a-vanished-producer"
            channel.invoke_oneway(RemotingCommand(R.END_TRANSACTION, ext_fields=H.EndTransactionRequestHeader(
                producer_group="TxGroup", tran_state_table_offset=h.tran_state_table_offset,
                commit_log_offset=h.commit_log_offset, commit_or_rollback=8, from_transaction_check=True,
                msg_id=h.msg_id, transaction_id=h.transaction_id).to_ext(), flag=2))
            deadline = loop.time() + 10
            while loop.time() < deadline:
                keys = await keys_in_queue(steady)
                if "tx-of-a-vanished-producer" in keys:
                    break
                await asyncio.sleep(0.1)
            assert keys == ["after-vanished-pull", "stored-once", "tx-of-a-vanished-producer"]
            await b_client.close()
            return proc, store
        finally:
            await steady.close()

    proc, store = asyncio.run(main())
    stop_broker(proc)
    report = run_doctor(store, broker_kill.doctor_options())
    assert report.clean, report.text()


# -- fuzzed frames ------------------------------------------------------------------------------------
FUZZ_CASES = int(os.environ.get("PYMQ_FUZZ_CASES", "300"))


def fuzz_cases(seed: int, n: int) -> list[bytes]:
    """Valid frames of the requests clients send (send, batch, pull, heartbeat, offsets, admin), each
    damaged one way: bytes flipped, cut short, a length field changed, header values replaced by
    nonsense (text in numbers, huge and negative numbers, unknown codes), or plain noise."""
    import json as _json
    import random

    from broker_diff_scenario import (GROUP, TOPIC, batch, create_topic, heartbeat, offsets, pull, query, req, send)
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codec import encode
    from pymq_ref.remoting.codes import RequestCode as R

    rng = random.Random(seed)
    seeds = [send(TOPIC, 1), send(TOPIC, 2, code=R.SEND_MESSAGE), batch(TOPIC, 5, 2, 0), pull(TOPIC, 0, 0),
             heartbeat([(TOPIC, "*", "TAG")]), create_topic("FuzzTopic"), query("key1"),
             offsets(R.GET_MAX_OFFSET, H.GetMaxOffsetRequestHeader, TOPIC, 0),
             req(R.GET_CONSUME_STATS, H.GetConsumeStatsRequestHeader(consumer_group=GROUP)),
             req(R.UPDATE_CONSUMER_OFFSET, H.UpdateConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC,
                                                                                 queue_id=0, commit_offset=1))]
    nonsense = ["", "x", "-1", "-2147483649", "99999999999999999999", "1e9", "null", "\u00e9\u0000", "%RETRY%",
                "a" * 300, "true"]
    out = []
    for _ in range(n):
        cmd = rng.choice(seeds).with_(opaque=rng.randrange(1 << 31))
        frame = bytearray(encode(cmd))
        how = rng.randrange(6)
        if how == 0:  # flip bytes anywhere
            for _ in range(rng.randint(1, 8)):
                frame[rng.randrange(len(frame))] = rng.randrange(256)
        elif how == 1:  # cut short
            frame = frame[:rng.randrange(1, len(frame))]
        elif how == 2:  # a length field changed
            pos = rng.choice([0, 4])
            frame[pos:pos + 4] = rng.choice([0, 3, 7, len(frame) + 1000, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 24]).to_bytes(4, "big")
        elif how in (3, 4):  # header values replaced (the frame itself stays well-formed)
            hlen = int.from_bytes(frame[4:8], "big") & 0xFFFFFF
            header = _json.loads(bytes(frame[8:8 + hlen]))
            body = bytes(frame[8 + hlen:])
            target = header.get("extFields") or header
            for key in rng.sample(sorted(target), k=min(len(target), rng.randint(1, 3))):
                target[key] = rng.choice(nonsense)
            if rng.random() < 0.3:
                header["code"] = rng.choice([-1, 0, 9999, 1 << 31, "x", None])
            raw = _json.dumps(header).encode()
            frame = bytearray((4 + len(raw) + len(body)).to_bytes(4, "big") + len(raw).to_bytes(4, "big") + raw + body)
        else:  # noise
            frame = bytearray(rng.randbytes(rng.randint(1, 200)))
        out.append(bytes(frame))
    return out


def test_fuzzed_frames_at_the_live_broker(tmp_path, zygote):
    """Hundreds of damaged frames, sixteen connections at a time, at a live ``pymq broker`` holding
    messages: each is answered with a well-formed response, or its connection closed, or ignored —
    the broker keeps serving (a probe after every batch), every message stored before is pulled back
    intact, and the store is doctor-clean after a clean stop."""
    from broker_diff_scenario import TOPIC, create_topic, pull, send
    from pymq_ref.formats.message import iter_records
    from pymq_ref.remoting.codec import decode
    from pymq_ref.remoting.codes import RequestCode as R
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.errors import FrameError
    from pymq_ref.remoting.transport import RemotingClient
    from pymq_ref.tools.doctor import run_doctor

    port = PORT_BASE + 48 + 2
    addr = f"127.0.0.1:{port}"

    async def one(frame: bytes) -> str:
        r, w = await asyncio.open_connection("127.0.0.1", port)
        try:
            w.write(frame)
            await w.drain()
            try:
                data = await asyncio.wait_for(r.read(1 << 20), 0.3)
            except asyncio.TimeoutError:
                return "none"
            except (ConnectionError, OSError):
                return "closed"
            if not data:
                return "closed"
            try:
                answer = decode(data).command
            except FrameError as e:
                raise AssertionError(f"the broker answered a malformed frame {frame[:64].hex()} with bytes that "
                                     f"do not decode: {e}") from None
            return "answer" if answer.is_response else "request"  # e.g. NOTIFY_CONSUMER_IDS_CHANGED after a heartbeat
        finally:
            w.close()

    async def main():
        proc, _, store = await started_broker(tmp_path, "fuzz", port)
        c = RemotingClient(name="fuzz-steady")
        try:
            assert (await c.invoke(addr, create_topic(TOPIC), 10)).code == 0
            before = []
            for i in range(20):
                ans = await c.invoke(addr, send(TOPIC, 100 + i, queue_id=0), 10)
                assert ans.code == 0
                before.append(f"diff body {100 + i}".encode())
            cases = fuzz_cases(seed=12, n=FUZZ_CASES)
            outcomes = []
            for start in range(0, len(cases), 16):
                outcomes += await asyncio.gather(*(one(f) for f in cases[start:start + 16]))
                probe = await c.invoke(addr, RemotingCommand(R.GET_BROKER_RUNTIME_INFO), 10)
                assert probe.code == 0 and proc.poll() is None
            await asyncio.sleep(0.5)
            got = await c.invoke(addr, pull(TOPIC, 0, 0, group="FuzzCheck"), 10)
            bodies = [r.body for r in iter_records(got.body)] if got.code == 0 else []
            return outcomes, before, bodies, store, proc
        finally:
            await c.close()

    outcomes, before, bodies, store, proc = asyncio.run(main())
    stop_broker(proc)
    assert len(outcomes) == FUZZ_CASES
    assert {"answer", "closed"} <= set(outcomes)
    assert bodies[:20] == before  # the fuzzing may have stored more (a damaged send can still be a send)
    report = run_doctor(store, broker_kill.doctor_options())
    assert report.clean, report.text()


# -- kill -9 under load from the C++ client --------------------------------------------------------------
CPP_TRIALS = int(os.environ.get("PYMQ_CPP_KILL_TRIALS", "2"))


def test_kill_9_under_load_from_the_official_cpp_client(tmp_path, zygote):
    """``pymq up`` (SYNC_FLUSH) killed with SIGKILL while the official C++ client (PyPI
    ``rocketmq==0.4.4``) sync-sends to it: every message the client saw acknowledged is in the
    recovered store, in its ConsumeQueue at the queue offset the client was told; doctor clean."""
    pytest.importorskip("rocketmq.client")
    import random
    import signal
    import sys

    from pymq_ref.broker.server.config import parse_broker_conf
    from pymq_ref.formats.message import iter_records
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codes import RequestCode as R
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.transport import RemotingClient
    from pymq_ref.store.message_store import MessageStore
    from pymq_ref.tools.doctor import run_doctor

    here = os.path.dirname(os.path.abspath(__file__))
    topic = "CppKillTopic"

    async def trial(n: int, slot: int) -> dict:
        rng = random.Random(n)
        ns_port, br_port = PORT_BASE + 60 + 8 * slot, PORT_BASE + 64 + 8 * slot
        store = str(tmp_path / f"cpp-{n}")
        conf_path = str(tmp_path / f"cpp-{n}.conf")
        conf = broker_kill.broker_conf(store, br_port)
        with open(conf_path, "w") as f:
            f.write(conf)
        up = zygote.start(conf_path, str(tmp_path / f"cpp-{n}.log"), [
            "up", "--store", store, "--namesrv-port", str(ns_port), "--broker-port", str(br_port), "-c", conf_path])
        c = RemotingClient(name="cpp-kill-admin")
        producer = None
        acked: dict[str, int] = {}
        try:
            await broker_kill.wait_listening(br_port, up)
            assert (await c.invoke(f"127.0.0.1:{br_port}", RemotingCommand(R.UPDATE_AND_CREATE_TOPIC, ext_fields=H.CreateTopicRequestHeader(
                topic=topic, default_topic="TBW102", read_queue_nums=4, write_queue_nums=4, perm=6,
                topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False).to_ext()), 10)).code == 0
            for _ in range(100):  # the broker registers the new topic with the embedded name server
                r = await c.invoke(f"127.0.0.1:{ns_port}", RemotingCommand(R.GET_ROUTEINFO_BY_TOPIC, ext_fields={"topic": topic}), 10)
                if r.code == 0:
                    break
                await asyncio.sleep(0.05)
            producer = await asyncio.create_subprocess_exec(
                sys.executable, os.path.join(here, "cpp_kill_producer.py"), f"127.0.0.1:{ns_port}", topic,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, cwd=str(tmp_path))
            loop = asyncio.get_running_loop()
            kill_at = None
            while True:
                line = await asyncio.wait_for(producer.stdout.readline(), 30)
                if not line:
                    break
                words = line.decode().split()
                if words[0] == "acked":
                    acked[words[1]] = int(words[2])
                    if kill_at is None:
                        kill_at = loop.time() + rng.uniform(0.2, 0.8)
                    elif loop.time() >= kill_at and up.poll() is None:
                        broker_kill.kill(up)  # mid-load: the client has a send in flight or about to be
                elif words[0] == "error":
                    break
            assert up.poll() is not None, "the C++ producer stopped before the kill"
        finally:
            await c.close()
            if producer is not None and producer.returncode is None:
                producer.kill()
                await producer.wait()
            if up.poll() is None:
                broker_kill.kill(up)
        return {"store": store, "conf": conf, "acked": acked}

    async def main():
        results, queue = [], list(range(CPP_TRIALS))

        async def slot(k):
            while queue:
                results.append(await trial(queue.pop(0), k))
        await asyncio.gather(slot(0), slot(1))
        return results

    for r in asyncio.run(main()):
        assert r["acked"], "nothing acknowledged before the kill"
        settings = parse_broker_conf(r["conf"])
        found: dict[str, tuple] = {}
        with MessageStore.open(settings.store) as ms:
            ms.do_reput()
            for name in sorted(os.listdir(os.path.join(r["store"], "commitlog"))):
                with open(os.path.join(r["store"], "commitlog", name), "rb") as f:
                    for rec in iter_records(f.read(), base=int(name)):
                        if getattr(rec, "topic", None) == topic:
                            found[rec.properties.get("KEYS")] = (rec.queue_id, rec.queue_offset, rec.phy_offset)
            for key, queue_offset in r["acked"].items():
                assert key in found, f"{key} acknowledged but not stored"
                qid, qoff, phy = found[key]
                assert qoff == queue_offset and ms.get_commit_log_offset_in_queue(topic, qid, qoff) == phy
        report = run_doctor(r["store"], broker_kill.doctor_options())
        assert report.clean, report.text()
