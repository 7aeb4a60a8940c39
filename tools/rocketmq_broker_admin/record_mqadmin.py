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

Usage: ``.venv/bin/python tools/rocketmq_broker_admin/record_mqadmin.py [--realrmq /tmp/realrmq]``
(ports 25600-25620 must be free; about two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
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
        await mark(name)
        proc = await asyncio.create_subprocess_exec(*rb.mqadmin_argv(*args), env=rb.env,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
        text = clean_output(out.decode("utf-8", "replace"))
        outputs[name] = {"argv": list(args), "exit": proc.returncode, "output": text}
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.realrmq, "run.sh")):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
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


if __name__ == "__main__":
    sys.exit(main())
