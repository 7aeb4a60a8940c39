#!/usr/bin/env python3
"""The real RocketMQ 4.9.4 Java client's scenarios against the REAL 4.9.4 broker, every broker frame recorded.

The real name server and broker run on 127.0.0.1; a ``pymq proxy --raw`` relay sits in front of the
broker. As in ``tools/rocketmq_client_frames/record.py``, the broker runs without ``namesrvAddr`` and
this program registers ``broker-a`` with the name server at the relay's address (re-registered every
30 s on the same connection), with every topic the scenarios use (their topics, the ``%RETRY%`` topics
of their groups, the DLQ, the reply topic), so that all the clients' broker traffic passes the relay.
Then each scenario of ``java/LiveClient.java`` runs once (see README.md).

Writes ``tests/data/rocketmq-4.9.4-broker-live/<scenario>.jsonl`` (one line per frame: the proxy's
``conn`` / ``seq`` / ``time`` / ``direction`` / ``kind`` / ``code`` / ``opaque`` and ``frame_hex``) and
``runs.json`` (each run's exit status and printed lines).

Usage: ``.venv/bin/python tools/rocketmq_broker_live/record.py [--realrmq /tmp/realrmq] [SCENARIO ...]``
(ports 24600, 24609-24612 and 24621 must be free; a few minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "rocketmq_namesrv"))
from procs import start, stop, wait_port  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-broker-live")
NS, BROKER, BROKER_PX = 24600, 24611, 24621
KEEP = ("seq", "time", "conn", "direction", "kind", "code", "opaque", "frame_hex")

#: scenario -> (message count, consumer groups) — as LiveClient.java names them for topic TJ_<scenario>
SCENARIOS = {
    "sync-push": (10, ["CG_{t}"]),
    "async-oneway-batch": (5, ["CG_{t}"]),
    "request-reply": (3, ["CG_RESP_{t}"]),
    "transaction": (3, ["CG_TX_{t}"]),
    "retry-dlq": (1, ["CG_RETRY_{t}"]),
    "orderly": (12, ["CG_ORDER_{t}"]),
    "lite-pull": (8, ["CG_LITE_{t}", "CG_LITE_ASSIGN_{t}"]),
    "delay": (1, ["CG_DELAY_{t}"]),
    "tag-sql": (9, ["CG_TAG_{t}", "CG_SQL_{t}"]),
}


def topic_of(scenario: str) -> str:
    return "TJ_" + scenario.replace("-", "_")


def topic_table():
    from pymq_ref.formats.beans import TopicConfig
    table = {"TBW102": TopicConfig("TBW102", 8, 8, 7, "SINGLE_TAG"),
             "DefaultCluster_REPLY_TOPIC": TopicConfig("DefaultCluster_REPLY_TOPIC", 1, 1, 6, "SINGLE_TAG")}
    for scenario, (_, groups) in SCENARIOS.items():
        t = topic_of(scenario)
        table[t] = TopicConfig(t, 4, 4, 6, "SINGLE_TAG")
        for g in groups:
            g = g.format(t=t)
            table[f"%RETRY%{g}"] = TopicConfig(f"%RETRY%{g}", 1, 1, 6, "SINGLE_TAG")
            table[f"%DLQ%{g}"] = TopicConfig(f"%DLQ%{g}", 1, 1, 6, "SINGLE_TAG")
    return table


class Registration:
    """REGISTER_BROKER of broker-a at the relay's address, every 30 s on one open connection."""

    def __init__(self):
        from pymq_ref.formats.beans import DataVersion
        from pymq_ref.remoting import headers as H
        from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper
        from pymq_ref.remoting.bodies.route import encode_register_body
        from pymq_ref.remoting.codes import RequestCode
        from pymq_ref.remoting.command import RemotingCommand
        body = encode_register_body(RegisterBrokerBody(TopicConfigSerializeWrapper(
            topic_table(), DataVersion(1, int(time.time() * 1000))), []))
        header = H.RegisterBrokerRequestHeader(broker_name="broker-a", broker_addr=f"127.0.0.1:{BROKER_PX}",
                                               cluster_name="DefaultCluster", ha_server_addr=f"127.0.0.1:{BROKER + 1}",
                                               broker_id=0, compressed=False, body_crc32=zlib.crc32(body) & 0x7FFFFFFF)
        self.request = RemotingCommand.request(RequestCode.REGISTER_BROKER, header, body)
        self.sock = socket.create_connection(("127.0.0.1", NS), 5)
        self.stopped = threading.Event()
        self.opaque = 0
        self.send()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def send(self) -> None:
        from pymq_ref.remoting.codec import encode
        self.opaque += 1
        self.sock.sendall(encode(self.request.with_(opaque=self.opaque)))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("the name server closed the registration connection")
            data += chunk

    def _loop(self) -> None:
        while not self.stopped.wait(30):
            self.send()

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    ap.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    args = ap.parse_args()
    run_sh = os.path.join(args.realrmq, "run.sh")
    if not os.path.exists(run_sh):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="rmq-broker-live-")
    env = dict(os.environ, RMQ_USER_HOME=work)
    classes = os.path.join(work, "classes")
    subprocess.run(["javac", "-nowarn", "-cp", open(os.path.join(args.realrmq, "classpath")).read().strip(),
                    "-d", classes, os.path.join(HERE, "java", "LiveClient.java")], check=True)
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={NS}\n")
    with open(os.path.join(work, "broker.conf"), "w") as f:
        f.write(f"brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\nbrokerIP1=127.0.0.1\n"
                f"listenPort={BROKER}\nbrokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n"
                f"storePathRootDir={work}/store\nmappedFileSizeCommitLog=67108864\nautoCreateTopicEnable=true\n"
                f"enablePropertyFilter=true\ntransactionCheckInterval=2000\ntransactionTimeOut=2000\n")
    capture = os.path.join(work, "broker.jsonl")
    procs, runs, marks = [], {}, {}
    registration = None
    try:
        procs.append(start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], f"{work}/ns.log", env))
        procs.append(start([run_sh, "broker", "-c", os.path.join(work, "broker.conf")], f"{work}/broker.log", env))
        wait_port(NS)
        wait_port(BROKER)
        procs.append(start([sys.executable, "-m", "pymq_ref.cli", "proxy", "--listen", f"127.0.0.1:{BROKER_PX}", "--to",
                            f"127.0.0.1:{BROKER}", "--jsonl", capture, "--raw"], f"{work}/px.log"))
        wait_port(BROKER_PX)
        registration = Registration()
        for scenario in args.scenarios:
            count = SCENARIOS[scenario][0]
            marks[scenario] = sum(1 for _ in open(capture)) if os.path.exists(capture) else 0
            t0 = time.time()
            out = subprocess.run([run_sh, "class", "LiveClient", f"127.0.0.1:{NS}", scenario, topic_of(scenario), str(count)],
                                 env=dict(env, RMQ_EXTRA_CP=classes), capture_output=True, text=True, timeout=300)
            runs[scenario] = {"exit": out.returncode, "seconds": round(time.time() - t0, 1),
                              "output": [line for line in out.stdout.splitlines()
                                         if not line.startswith(("RECV", " ")) and "INFO" not in line and "WARN" not in line]}
            print(scenario, runs[scenario]["exit"], runs[scenario]["output"][-1:], flush=True)
            time.sleep(2)  # the last frames (unregistration) pass the relay
        marks["end"] = sum(1 for _ in open(capture))
    finally:
        if registration is not None:
            registration.close()
        for proc in reversed(procs):
            stop(proc)
    os.makedirs(OUT, exist_ok=True)
    recs = [json.loads(line) for line in open(capture)]
    order = list(args.scenarios) + ["end"]
    for scenario, nxt in zip(order, order[1:]):
        with open(os.path.join(OUT, f"{scenario}.jsonl"), "w") as f:
            for rec in recs[marks[scenario]:marks[nxt]]:
                if "frame_hex" in rec:
                    f.write(json.dumps({k: rec[k] for k in KEEP if k in rec}, sort_keys=True) + "\n")
    old = {}
    path = os.path.join(OUT, "runs.json")
    if os.path.exists(path):
        old = json.load(open(path))
    old.update(runs)
    with open(path, "w") as f:
        json.dump(old, f, indent=1, sort_keys=True)
    print(f"work folder: {work}")
    return 0 if all(r["exit"] == 0 for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
