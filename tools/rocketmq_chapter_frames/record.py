#!/usr/bin/env python3
"""The real RocketMQ 4.9.4 Java client's frames for the book's wire sections (chapters 00, 06-09).

For each scenario, starts a fresh real 4.9.4 name server and broker (``/tmp/realrmq``, see the
README; an empty store, so CommitLog offsets in the frames start at 0) on 127.0.0.1, puts ``pymq proxy --raw`` in front of the broker and runs
``java/ChapterFrames.java`` once per scenario: ``tour`` (a send and a push consumer), ``delay``
(delay level 2), ``retry`` (a consumer that fails twice: send-back to ``%RETRY%``, then ``%DLQ%``),
``transaction`` (commit, rollback, and UNKNOW resolved by CHECK_TRANSACTION_STATE), ``filter``
(a tag subscription and an SQL92 one).

The broker registers with no reachable name server; this program registers it with the real name
server under the relay's address every two seconds, with the topic table the broker itself answers
to GET_ALL_TOPIC_CONFIG (so the client's traffic to "the broker", including topics the broker
creates on the way, such as ``%RETRY%`` and ``%DLQ%``, passes the relay). Topics are created
directly at the broker, one queue, before the run.

Writes ``tests/data/rocketmq-4.9.4-chapter-frames/<scenario>.jsonl`` (one line per frame of the
client-broker connections) and ``runs.json`` (what the Java program printed).

Usage: ``PYTHONPATH=$PWD .venv/bin/python tools/rocketmq_chapter_frames/record.py [--realrmq DIR]
[--only SCENARIO ...]`` (ports 30076, 30909, 30911, 30912, 30921 must be free; about three minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "rocketmq_namesrv"))
from procs import port_free, start, stop, wait_port  # noqa: E402

from pymq_ref.formats.beans import DataVersion  # noqa: E402
from pymq_ref.remoting import headers as H  # noqa: E402
from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper, decode_json  # noqa: E402
from pymq_ref.remoting.bodies.route import encode_register_body  # noqa: E402
from pymq_ref.remoting.codes import RequestCode as R  # noqa: E402
from pymq_ref.remoting.command import RemotingCommand  # noqa: E402
from pymq_ref.remoting.transport import RemotingClient  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-chapter-frames")
PY = sys.executable
NS, BROKER, PROXY = 30076, 30911, 30921
CLUSTER, BROKER_NAME = "DefaultCluster", "broker-a"
SCENARIOS = {"tour": "TourTopic", "delay": "DelayTopic", "retry": "RetryTopic",
             "transaction": "TxTopic", "filter": "FilterTopic"}
KEEP = ("seq", "conn", "direction", "kind", "code", "code_name", "opaque", "frame_hex")
BROKER_CONF = """brokerClusterName={cluster}
brokerName={name}
brokerId=0
namesrvAddr=127.0.0.1:{nobody}
brokerIP1=127.0.0.1
listenPort={port}
haListenPort={ha}
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
storePathRootDir={store}
storePathCommitLog={store}/commitlog
mappedFileSizeCommitLog=1048576
mappedFileSizeConsumeQueue=6000
autoCreateTopicEnable=true
enablePropertyFilter=true
transactionTimeOut=2000
transactionCheckInterval=3000
"""


async def mirror(client: RemotingClient) -> None:
    """Register the real broker with the real name server under the relay's address."""
    got = await client.invoke(f"127.0.0.1:{BROKER}", RemotingCommand(R.GET_ALL_TOPIC_CONFIG), 10)
    wrapper = decode_json(TopicConfigSerializeWrapper, got.body)
    body = encode_register_body(RegisterBrokerBody(
        TopicConfigSerializeWrapper(wrapper.topic_config_table, wrapper.data_version or DataVersion()), []), False)
    header = H.RegisterBrokerRequestHeader(
        broker_name=BROKER_NAME, broker_addr=f"127.0.0.1:{PROXY}", cluster_name=CLUSTER,
        ha_server_addr=f"127.0.0.1:{BROKER + 1}", broker_id=0, compressed=False,
        body_crc32=zlib.crc32(body) & 0x7FFFFFFF)
    ans = await client.invoke(f"127.0.0.1:{NS}", RemotingCommand(R.REGISTER_BROKER, ext_fields=header.to_ext(),
                                                                  body=body), 10)
    if ans.code != 0:
        raise SystemExit(f"mirror registration refused: {ans.code} {ans.remark}")


async def create_topic(client: RemotingClient, topic: str) -> None:
    header = H.CreateTopicRequestHeader(topic=topic, default_topic="TBW102", read_queue_nums=1, write_queue_nums=1,
                                        perm=6, topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False)
    ans = await client.invoke(f"127.0.0.1:{BROKER}", RemotingCommand(R.UPDATE_AND_CREATE_TOPIC,
                                                                      ext_fields=header.to_ext()), 10)
    if ans.code != 0:
        raise SystemExit(f"create {topic}: {ans.code} {ans.remark}")


async def keep_mirroring(client: RemotingClient) -> None:
    while True:
        await mirror(client)
        await asyncio.sleep(2)


def lines_of(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


async def run_scenario(realrmq: str, scenario: str, classes: str) -> dict:
    """One scenario against a fresh real name server + broker (an empty store, so CommitLog offsets in
    the frames start at 0, as in a fresh ``pymq up``)."""
    run_sh = os.path.join(realrmq, "run.sh")
    work = tempfile.mkdtemp(prefix=f"rmq-chapter-{scenario}-")
    env = dict(os.environ, RMQ_USER_HOME=work)
    for port in (NS, BROKER, BROKER - 2, BROKER + 1, PROXY):
        deadline = time.time() + 60
        while not port_free(port):
            if time.time() > deadline:
                raise SystemExit(f"port {port} is busy")
            await asyncio.sleep(0.5)
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={NS}\n")
    with open(os.path.join(work, "broker.conf"), "w") as f:
        f.write(BROKER_CONF.format(cluster=CLUSTER, name=BROKER_NAME, nobody=PROXY + 2, port=BROKER, ha=BROKER + 1,
                                   store=os.path.join(work, "store")))
    capture = os.path.join(work, "broker.jsonl")
    procs = []
    client = RemotingClient(name="recorder")
    mirroring = None
    try:
        procs.append(start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], f"{work}/ns.log", env))
        procs.append(start([run_sh, "broker", "-c", os.path.join(work, "broker.conf")], f"{work}/broker.log", env))
        procs.append(start([PY, "-m", "pymq_ref.cli", "proxy", "--listen", f"127.0.0.1:{PROXY}", "--to",
                            f"127.0.0.1:{BROKER}", "--jsonl", capture, "--raw"], f"{work}/proxy.log",
                           dict(os.environ, PYTHONPATH=ROOT)))
        for port in (NS, BROKER, PROXY):
            wait_port(port, 90)
        await asyncio.sleep(5)  # JVMs just started: let them settle before the client's first (3 s) timeouts
        await create_topic(client, SCENARIOS[scenario])
        mirroring = asyncio.ensure_future(keep_mirroring(client))
        await asyncio.sleep(1)
        t0 = time.time()
        proc = await asyncio.create_subprocess_exec(
            run_sh, "class", "ChapterFrames", f"127.0.0.1:{NS}", scenario, SCENARIOS[scenario],
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=dict(env, RMQ_EXTRA_CP=classes))
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), 240)
        except asyncio.TimeoutError:
            proc.kill()
            out, _ = await proc.communicate()
        text = out.decode("utf-8", "replace").splitlines()
        run = {"exit": proc.returncode, "seconds": round(time.time() - t0, 1),
               "output": [l for l in text if l.startswith(("SENT", "RECV", "LOCAL", "CHECK", "AFTER", "DONE", "FAILED"))]}
        print(scenario, json.dumps(run, indent=1), flush=True)
        await asyncio.sleep(2)  # the last frames (unregistration) pass the relay
        frames = [r for r in lines_of(capture) if "frame_hex" in r]
        if run["exit"] != 0:
            return run
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, f"{scenario}.jsonl"), "w", encoding="utf-8") as f:
            for rec in frames:
                f.write(json.dumps({"scenario": scenario, **{k: rec[k] for k in KEEP if k in rec}}, sort_keys=True) + "\n")
        print(f"{scenario}: {len(frames)} frames; work folder {work}", flush=True)
        return run
    finally:
        if mirroring is not None:
            mirroring.cancel()
        await client.close()
        for proc in reversed(procs):
            stop(proc)


async def record(realrmq: str, only: list[str]) -> int:
    classes = tempfile.mkdtemp(prefix="rmq-chapter-classes-")
    with open(os.path.join(realrmq, "classpath"), encoding="utf-8") as f:
        cp = f.read().strip()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", classes, os.path.join(HERE, "java", "ChapterFrames.java")],
                   check=True)
    runs = {}
    for scenario in only:
        for attempt in range(3):  # a busy machine can time out the client's first route query: try again
            runs[scenario] = await run_scenario(realrmq, scenario, classes)
            if runs[scenario]["exit"] == 0:
                break
    path = os.path.join(OUT, "runs.json")
    old = json.load(open(path)) if os.path.exists(path) else {}
    old.update(runs)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(old, f, indent=1, sort_keys=True)
    return 0 if all(r["exit"] == 0 for r in runs.values()) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    ap.add_argument("--only", nargs="*", choices=list(SCENARIOS), default=list(SCENARIOS))
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.realrmq, "run.sh")):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
    return asyncio.run(record(args.realrmq, args.only))


if __name__ == "__main__":
    sys.exit(main())
