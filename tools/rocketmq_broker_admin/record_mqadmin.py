#!/usr/bin/env python3
"""Record what 4.9.4's ``mqadmin`` everyday commands send to a real 4.9.4 broker and what it answers.

A real name server + broker run in a temporary folder with ``pymq proxy`` in front of the broker
(see ``realbroker.py`` for why the registration is mirrored). This program sends a few messages
with keys and a consumer heartbeat through the relay (so queries and consumer commands have
something to show), then runs each mqadmin command, and writes to
``tests/data/rocketmq-4.9.4-broker-admin/``:

* ``frames.jsonl`` — every frame between the clients and the broker, both directions, decoded and
  as bytes, each tagged with the mqadmin command (``step``) that was running;
* ``outputs.json`` — what each mqadmin command printed, and its exit status.

With ``--against ours`` the same commands (the same real mqadmin) run against ``pymq up`` instead,
and ``mqadmin-vs-ours.json`` gets what each printed there and whether it agrees with what it
printed against the real broker once times, addresses, ports, paths, ids and statistics are
masked (``normalize``).

Usage: ``.venv/bin/python tools/rocketmq_broker_admin/record_mqadmin.py [--realrmq /tmp/realrmq] [--against ours]``
(ports 25600-25620 must be free; about two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from realbroker import ROOT, RealBroker, clean_output  # noqa: E402

from pymq_ref.formats.properties import encode_properties  # noqa: E402
from pymq_ref.remoting import headers as H  # noqa: E402
from pymq_ref.remoting.bodies import (ConsumerData, HeartbeatData, ProducerData, SubscriptionData,  # noqa: E402
                                      encode_body)
from pymq_ref.remoting.codes import RequestCode as R  # noqa: E402
from pymq_ref.remoting.command import RemotingCommand  # noqa: E402
from pymq_ref.remoting.dispatch import RequestDispatcher  # noqa: E402
from pymq_ref.remoting.transport import RemotingClient  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-broker-admin")
NS, BROKER, PROXY = 25601, 25611, 25605
TOPIC, GROUP, PGROUP = "AdminTopic", "AdminGroup", "AdminProducer"
CLIENT_ID = "127.0.0.1@admin-recorder"
BORN = 1_700_000_000_000


def send_request(i: int) -> RemotingCommand:
    props = {"KEYS": f"key{i % 3}", "TAGS": "TagA" if i % 2 == 0 else "TagB",
             "UNIQ_KEY": f"7F00000100002A9F0000000000{i:06X}", "WAIT": "true"}
    header = H.SendMessageRequestHeaderV2(producer_group=PGROUP, topic=TOPIC, default_topic="TBW102",
                                          default_topic_queue_nums=4, queue_id=i % 4, sys_flag=0,
                                          born_timestamp=BORN + i, flag=0, properties=encode_properties(props),
                                          reconsume_times=0, unit_mode=False, batch=False)
    return RemotingCommand(R.SEND_MESSAGE_V2, ext_fields=header.to_ext(), body=f"admin body {i}".encode())


def heartbeat() -> RemotingCommand:
    data = HeartbeatData(CLIENT_ID, [ProducerData(PGROUP)], [ConsumerData(
        GROUP, "CONSUME_PASSIVELY", "CLUSTERING", "CONSUME_FROM_LAST_OFFSET",
        [SubscriptionData(False, TOPIC, "*", [], [], 1, "TAG")], False)])
    return RemotingCommand(R.HEART_BEAT, body=encode_body(data))


async def main_async(rb: RealBroker, marks: list) -> dict:
    client = RemotingClient(RequestDispatcher(default=lambda req, ch: None), name="recorder")
    outputs: dict[str, dict] = {}

    async def mark(step: str) -> None:
        marks.append((time.time(), step))
        await asyncio.sleep(0.3)

    async def mqadmin(name: str, *args: str) -> str:
        await rb.mirror_registration(client)  # topics the recorder's own requests created (a heartbeat's %RETRY%)
        await mark(name)
        for attempt in range(4):  # a loaded machine makes the JVM client time out: ask again
            proc = await asyncio.create_subprocess_exec(*rb.mqadmin_argv(*args), env=rb.env,
                                                        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(proc.communicate(), 120)
            text = clean_output(out.decode("utf-8", "replace"))
            if "RemotingTimeoutException" not in text and "RemotingSendRequestException" not in text:
                break
            print(f"--- {name}: the JVM client timed out (attempt {attempt + 1}), again", flush=True)
            await asyncio.sleep(2)
        outputs[name] = {"argv": list(args), "exit": proc.returncode, "output": text, "attempts": attempt + 1}
        print(f"--- {name} (exit {proc.returncode})\n{text[:600]}", flush=True)
        await asyncio.sleep(1.5)  # the relay records the JVM's last frames (UNREGISTER_CLIENT) before the next mark
        await rb.mirror_registration(client)
        return text

    n = rb.ns_addr
    await rb.mirror_registration(client)
    await mqadmin("updateTopic", "updateTopic", "-n", n, "-b", rb.proxy_addr, "-t", TOPIC, "-r", "4", "-w", "4")
    await mark("python: sends")
    msg_ids = []
    for i in range(8):
        ans = await client.invoke(rb.proxy_addr, send_request(i), 10)
        msg_ids.append(ans.ext().get("msgId"))
    await mark("python: heartbeat and offsets")
    await client.invoke(rb.proxy_addr, heartbeat(), 10)
    for q in range(2):
        hdr = H.UpdateConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC, queue_id=q, commit_offset=1)
        await client.invoke(rb.proxy_addr, RemotingCommand(R.UPDATE_CONSUMER_OFFSET, ext_fields=hdr.to_ext()), 10)
    await mqadmin("topicList", "topicList", "-n", n)
    await mqadmin("topicRoute", "topicRoute", "-n", n, "-t", TOPIC)
    await mqadmin("topicStatus", "topicStatus", "-n", n, "-t", TOPIC)
    await mqadmin("clusterList", "clusterList", "-n", n)
    await mqadmin("brokerStatus", "brokerStatus", "-n", n, "-b", rb.proxy_addr)
    await mqadmin("getBrokerConfig", "getBrokerConfig", "-n", n, "-b", rb.proxy_addr)
    await mqadmin("updateSubGroup", "updateSubGroup", "-n", n, "-b", rb.proxy_addr, "-g", GROUP, "-r", "3")
    await client.invoke(rb.proxy_addr, heartbeat(), 10)
    await mqadmin("consumerProgress", "consumerProgress", "-n", n, "-g", GROUP)
    await mqadmin("consumerConnection", "consumerConnection", "-n", n, "-g", GROUP)
    # mqadmin sends VIEW_MESSAGE_BY_ID to the store host inside the id (the broker itself, not the
    # relay): the recorder sends the same request through the relay so that it is recorded
    await mqadmin("queryMsgById", "queryMsgById", "-n", n, "-i", msg_ids[0])
    await mark("python: VIEW_MESSAGE_BY_ID")
    from pymq_ref.formats.msgid import parse_offset_msg_id
    phy = parse_offset_msg_id(msg_ids[0])[1]
    hdr = H.ViewMessageRequestHeader(offset=phy)
    await client.invoke(rb.proxy_addr, RemotingCommand(R.VIEW_MESSAGE_BY_ID, ext_fields=hdr.to_ext()), 10)
    await mqadmin("queryMsgByKey", "queryMsgByKey", "-n", n, "-t", TOPIC, "-k", "key1")
    await mqadmin("queryMsgByOffset", "queryMsgByOffset", "-n", n, "-t", TOPIC, "-b", "broker-a", "-i", "1",
                  "-o", "0")
    await client.invoke(rb.proxy_addr, heartbeat(), 10)
    # queues 2 and 3 have no committed offset yet: 4.9.4 refuses (SYSTEM_ERROR); then again with all four
    await mqadmin("resetOffsetByTime", "resetOffsetByTime", "-n", n, "-g", GROUP, "-t", TOPIC, "-s", str(BORN))
    await mark("python: offsets of queues 2 and 3")
    for q in (2, 3):
        hdr = H.UpdateConsumerOffsetRequestHeader(consumer_group=GROUP, topic=TOPIC, queue_id=q, commit_offset=2)
        await client.invoke(rb.proxy_addr, RemotingCommand(R.UPDATE_CONSUMER_OFFSET, ext_fields=hdr.to_ext()), 10)
    await mqadmin("resetOffsetByTime-all-queues", "resetOffsetByTime", "-n", n, "-g", GROUP, "-t", TOPIC,
                  "-s", str(BORN))
    await mqadmin("deleteTopic", "deleteTopic", "-n", n, "-c", "DefaultCluster", "-t", TOPIC)
    await mark("end")
    await client.close()
    return {"msg_ids": msg_ids, "outputs": outputs}


class OursUp:
    """``pymq up`` (our name server + broker in one process) with RealBroker's interface."""

    def __init__(self, realrmq: str, ns: int, broker: int):
        import tempfile
        self.run_sh = os.path.join(realrmq, "run.sh")
        self.ns, self.broker = ns, broker
        self.work = tempfile.mkdtemp(prefix="pymq-up-")
        self.env = dict(os.environ, RMQ_USER_HOME=self.work)
        self.proc = None

    proxy_addr = property(lambda self: f"127.0.0.1:{self.broker}")
    ns_addr = property(lambda self: f"127.0.0.1:{self.ns}")

    def start(self) -> "OursUp":
        from realbroker import PY, start, wait_port
        conf = os.path.join(self.work, "broker.conf")
        with open(conf, "w") as f:
            f.write("brokerClusterName=DefaultCluster\nbrokerName=broker-a\nmappedFileSizeCommitLog=1048576\n"
                    "mappedFileSizeConsumeQueue=6000\nautoCreateTopicEnable=true\n")
        self.proc = start([PY, "-m", "pymq_ref.cli", "up", "--store", os.path.join(self.work, "store"),
                           "--namesrv-port", str(self.ns), "--broker-port", str(self.broker), "-c", conf, "-v"],
                          os.path.join(self.work, "up.log"))
        wait_port(self.ns, 60)
        wait_port(self.broker, 60)
        return self

    def stop(self) -> None:
        from realbroker import stop
        if self.proc is not None:
            stop(self.proc)

    async def mirror_registration(self, client) -> None:
        await asyncio.sleep(0.5)  # our broker registers a new topic with our name server by itself

    def mqadmin_argv(self, *args: str) -> list[str]:
        return [self.run_sh, "mqadmin", *args]


#: what differs between two runs whatever the broker: times, addresses, ports, paths, ids, statistics
_MASKS = [(re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(,\d{3})?"), "<time>"),
          (re.compile(r"\b\d+\.\d+\.\d+\.\d+(:\d+)?\b"), "<addr>"),
          (re.compile(r"/tmp/[^\s,\]:]*"), "<path>"),
          (re.compile(r"\b[0-9A-F]{32}\b"), "<id>"),
          (re.compile(r"\b1[6-9]\d{11}\b"), "<ms>"),
          (re.compile(r"mqadmin-\d+|@\d+"), "<instance>")]
#: per command: lines or columns whose values are statistics or machine figures
_STAT_LINES = {"brokerStatus", "getBrokerConfig"}


def normalize(command: str, text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        if command == "getBrokerConfig" and line.startswith("rocketmqHome"):
            continue  # the Java installation folder: pymq-ref has none
        # queryMsgById/ByOffset print whether each group consumed the message by comparing the store
        # host inside the message with the broker address the name server holds; recorded through
        # the relay those differ (the broker's port vs the relay's), so 4.9.4 said NOT_CONSUME_YET
        # there where it says CONSUMED against a broker reached directly, as ours is
        line = re.sub(r"trackType=\w+", "trackType=<see normalize>", line)
        for pattern, mask in _MASKS:
            line = pattern.sub(mask, line)
        if command in _STAT_LINES and ":" in line or command == "getBrokerConfig" and "=" in line:
            line = re.split(r"\s*[:=]\s", line, maxsplit=1)[0]  # the key only
        if command == "clusterList" and "V4_9_4" in line:
            line = line.split("V4_9_4")[0] + "V4_9_4"
        if command == "consumerProgress" and line.startswith(("Consume TPS", "Diff Total")):
            line = line.split(":")[0]
        out.append(" ".join(line.split()))
    return sorted(out) if command in _STAT_LINES | {"topicList"} else out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    ap.add_argument("--against", choices=("real", "ours"), default="real")
    ap.add_argument("--compare-only", action="store_true", help="only compare the stored outputs again")
    args = ap.parse_args()
    if args.compare_only:
        return compare()
    if not os.path.exists(os.path.join(args.realrmq, "run.sh")):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
    if args.against == "ours":
        return against_ours(args.realrmq)
    import tempfile
    capture = os.path.join(tempfile.mkdtemp(prefix="rmq-admin-cap-"), "frames.jsonl")
    rb = RealBroker(args.realrmq, NS, BROKER, PROXY, capture).start()
    marks: list = []
    try:
        result = asyncio.run(main_async(rb, marks))
    finally:
        rb.stop()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "outputs.json"), "w") as f:
        json.dump(result, f, indent=1, ensure_ascii=False, sort_keys=True)
    n = 0
    with open(capture) as src, open(os.path.join(OUT, "frames.jsonl"), "w") as dst:
        for line in src:
            rec = json.loads(line)
            step = [s for t, s in marks if t <= rec["time"]]
            rec["step"] = step[-1] if step else "start"
            keep = {k: rec[k] for k in ("seq", "conn", "direction", "kind", "code", "code_name", "opaque", "remark",
                                        "request_code", "step", "frame_hex") if k in rec}
            dst.write(json.dumps(keep, sort_keys=True, ensure_ascii=False) + "\n")
            n += 1
    print(f"wrote {n} frames to {OUT} (work folder {rb.work})")
    return 0


def against_ours(realrmq: str) -> int:
    up = OursUp(realrmq, NS, BROKER).start()
    try:
        result = asyncio.run(main_async(up, []))
    finally:
        up.stop()
    return compare(result["outputs"])


def compare(ours: dict | None = None) -> int:
    """Whether mqadmin printed the same against both brokers (``ours``: this run's outputs, else the
    ones stored in mqadmin-vs-ours.json); writes mqadmin-vs-ours.json."""
    with open(os.path.join(OUT, "outputs.json")) as f:
        real = json.load(f)["outputs"]
    if ours is None:
        with open(os.path.join(OUT, "mqadmin-vs-ours.json")) as f:
            ours = json.load(f)["outputs"]
    agree = {name: normalize(name.split("-")[0], real[name]["output"]) == normalize(name.split("-")[0], o["output"])
             for name, o in ours.items()}
    with open(os.path.join(OUT, "mqadmin-vs-ours.json"), "w") as f:
        json.dump({"outputs": ours, "agree": agree}, f, indent=1, ensure_ascii=False, sort_keys=True)
    for name, ok in agree.items():
        if not ok:
            a = normalize(name.split("-")[0], real[name]["output"])
            b = normalize(name.split("-")[0], ours[name]["output"])
            print(f"--- {name} differs:\n  real: {a[:12]}\n  ours: {b[:12]}")
    print(json.dumps(agree, indent=1))
    return 0 if all(agree.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
