#!/usr/bin/env python3
"""What the real RocketMQ 4.9.4 Java client says on the wire, in both serializations.

The real 4.9.4 name server and broker run on 127.0.0.1; two ``pymq proxy --raw`` relays sit in
front of them. The real Java producer + push consumer (``tools/rocketmq_namesrv/java/RoundTrip.java``)
sends and receives two messages, once with the default JSON headers and once with
``-Drocketmq.serialize.type=ROCKETMQ`` (the binary header). mqadmin creates the topic through the
broker relay first.

For the client's traffic to the broker to pass a relay, the route must name the relay: the real
broker runs without a name server (``namesrvAddr`` unset), and this program registers ``broker-a``
with the real name server under the relay's address (one REGISTER_BROKER frame, built by pymq-ref,
whose answer the real name server gives as usual). Everything else is the unmodified 4.9.4 programs.

Writes ``tests/data/rocketmq-4.9.4-client-frames/frames.jsonl``: one line per frame, with ``run``
(``json`` | ``rocketmq``), ``peer`` (``namesrv`` | ``broker``), the proxy's ``conn`` / ``seq`` /
``direction`` / ``kind`` / ``code`` / ``opaque`` and ``frame_hex``.

Usage: ``.venv/bin/python tools/rocketmq_client_frames/record.py [--realrmq /tmp/realrmq]``
(ports 27009-27012, 27021, 27076, 27077 must be free; about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-client-frames")
PY = sys.executable
NS, NS_PX, BROKER, BROKER_PX = 27076, 27077, 27011, 27021
TOPIC = "WireTopic"
KEEP = ("seq", "conn", "direction", "kind", "code", "opaque", "frame_hex")


def wait_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"nothing listens on {port} after {timeout} s")


def start(cmd: list[str], log: str, env=None) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env, start_new_session=True)


def stop(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def register_relay() -> tuple[socket.socket, int]:
    """REGISTER_BROKER for broker-a at the broker relay's address, on a connection that must stay
    open (the name server forgets a broker whose connection closes); returns it and the answer's code."""
    from pymq_ref.formats.beans import DataVersion, TopicConfig
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper
    from pymq_ref.remoting.bodies.route import encode_register_body
    from pymq_ref.remoting.codec import decode, encode
    from pymq_ref.remoting.codes import RequestCode
    from pymq_ref.remoting.command import RemotingCommand

    table = {"TBW102": TopicConfig("TBW102", 8, 8, 7, "SINGLE_TAG"), TOPIC: TopicConfig(TOPIC, 4, 4, 6, "SINGLE_TAG")}
    version = DataVersion(1, int(time.time() * 1000))
    body = encode_register_body(RegisterBrokerBody(TopicConfigSerializeWrapper(table, version), []))
    header = H.RegisterBrokerRequestHeader(broker_name="broker-a", broker_addr=f"127.0.0.1:{BROKER_PX}",
                                           cluster_name="DefaultCluster", ha_server_addr=f"127.0.0.1:{BROKER + 1}",
                                           broker_id=0, compressed=False, body_crc32=zlib.crc32(body) & 0x7FFFFFFF)
    sock = socket.create_connection(("127.0.0.1", NS), 5)
    sock.sendall(encode(RemotingCommand.request(RequestCode.REGISTER_BROKER, header, body)))
    data = b""
    while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
        chunk = sock.recv(65536)
        if not chunk:
            raise SystemExit("the name server closed the registration connection")
        data += chunk
    return sock, decode(data).command.code


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    args = ap.parse_args()
    run_sh = os.path.join(args.realrmq, "run.sh")
    if not os.path.exists(run_sh):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="rmq-client-frames-")
    env = dict(os.environ, RMQ_USER_HOME=work)
    classes = os.path.join(work, "classes")
    subprocess.run(["javac", "-nowarn", "-cp", open(os.path.join(args.realrmq, "classpath")).read().strip(),
                    "-d", classes, os.path.join(ROOT, "tools", "rocketmq_namesrv", "java", "RoundTrip.java")], check=True)
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={NS}\n")
    with open(os.path.join(work, "broker.conf"), "w") as f:
        f.write(f"brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\nbrokerIP1=127.0.0.1\n"
                f"listenPort={BROKER}\nhaListenPort={BROKER + 1}\nbrokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n"
                f"storePathRootDir={work}/store\nmappedFileSizeCommitLog=67108864\nautoCreateTopicEnable=true\n")
    captures = {peer: os.path.join(work, f"{peer}.jsonl") for peer in ("namesrv", "broker")}
    procs, runs = [], {}
    try:
        procs.append(start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], f"{work}/ns.log", env))
        procs.append(start([run_sh, "broker", "-c", os.path.join(work, "broker.conf")], f"{work}/broker.log", env))
        wait_port(NS)
        wait_port(BROKER)
        for peer, (listen, target) in {"namesrv": (NS_PX, NS), "broker": (BROKER_PX, BROKER)}.items():
            procs.append(start([PY, "-m", "pymq_ref.cli", "proxy", "--listen", f"127.0.0.1:{listen}", "--to",
                                f"127.0.0.1:{target}", "--jsonl", captures[peer], "--raw"], f"{work}/px-{peer}.log"))
            wait_port(listen)
        relay_registration, code = register_relay()
        print("register the relay:", code)
        out = subprocess.run([run_sh, "mqadmin", "updateTopic", "-n", f"127.0.0.1:{NS}", "-b", f"127.0.0.1:{BROKER_PX}",
                              "-t", TOPIC, "-r", "4", "-w", "4"], env=env, capture_output=True, text=True, timeout=120)
        print("updateTopic:", out.returncode)
        marks = {}
        for run, props in (("json", []), ("rocketmq", ["-Drocketmq.serialize.type=ROCKETMQ"])):
            marks[run] = {peer: sum(1 for _ in open(path)) if os.path.exists(path) else 0
                          for peer, path in captures.items()}
            t0 = time.time()
            out = subprocess.run([run_sh, "class", *props, "RoundTrip", f"127.0.0.1:{NS_PX}", TOPIC, f"Wire_{run}", "2"],
                                 env=dict(env, RMQ_EXTRA_CP=classes), capture_output=True, text=True, timeout=180)
            runs[run] = {"exit": out.returncode, "seconds": round(time.time() - t0, 1),
                         "output": [l for l in out.stdout.splitlines() if l.startswith(("sent", "received"))]}
            print(run, runs[run])
            time.sleep(2)  # let the last frames (unregistration) pass the relays
        marks["end"] = {peer: sum(1 for _ in open(path)) for peer, path in captures.items()}
    finally:
        for proc in reversed(procs):
            stop(proc)
    os.makedirs(OUT, exist_ok=True)
    lines = []
    for peer, path in captures.items():
        recs = [json.loads(line) for line in open(path)]
        for run, nxt in (("json", "rocketmq"), ("rocketmq", "end")):
            for rec in recs[marks[run][peer]:marks[nxt][peer]]:
                if "frame_hex" in rec:
                    lines.append({"run": run, "peer": peer, **{k: rec[k] for k in KEEP if k in rec}})
    with open(os.path.join(OUT, "frames.jsonl"), "w") as f:
        for rec in lines:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
    with open(os.path.join(OUT, "runs.json"), "w") as f:
        json.dump(runs, f, indent=1)
    print(f"{len(lines)} frames; work folder: {work}")
    return 0 if all(r["exit"] == 0 for r in runs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
