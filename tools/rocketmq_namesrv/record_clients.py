#!/usr/bin/env python3
"""Real clients against both name servers: the real RocketMQ 4.9.4 broker registers with the real
4.9.4 name server and with pymq-ref's at once; then mqadmin and the real Java client (a producer
and a push consumer, ``java/RoundTrip.java``) run against each name server in turn.

Writes to ``tests/data/rocketmq-4.9.4-namesrv/``:

* ``clients.jsonl`` — every frame the real broker, mqadmin and the Java client exchanged with the
  REAL name server (captured by ``pymq proxy --raw``); ``tests/test_namesrv_replay_clients.py``
  replays the requests against pymq-ref's name server and compares the answers;
* ``mqadmin.json`` — what each mqadmin command printed against each name server, and whether the
  two agree once what depends on the moment (traffic numbers) is masked;
* ``roundtrip.json`` — the Java client's round trip through each name server.

Usage: ``.venv/bin/python tools/rocketmq_namesrv/record_clients.py [--realrmq /tmp/realrmq]``
(ports 23876-23977 and 23909-23912 must be free; about two minutes).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-namesrv")
sys.path.insert(0, HERE)
from procs import start, stop, wait_port  # noqa: E402
PY = sys.executable
REAL_NS, REAL_PX, OUR_NS, OUR_PX, BROKER = 23976, 23977, 23876, 23877, 23911
TOPIC = "RoundTripTopic"


def mqadmin(run_sh: str, env, *args) -> str:
    out = subprocess.run([run_sh, "mqadmin", *args], env=env, capture_output=True, text=True, timeout=120)
    lines = [line for line in (out.stdout + out.stderr).splitlines()
             if line.strip() and not line.startswith(("SLF4J", "WARNING", "Java HotSpot"))
             and "Unknown channel option" not in line]
    return "\n".join(lines)


def normalize(command: str, text: str) -> object:
    """What must agree between the two name servers in a command's output."""
    if command == "clusterList":
        return [line.split()[:5] for line in text.splitlines()]
    if command == "topicList":
        return sorted(text.splitlines())
    if command == "getNamesrvConfig":
        return sorted(line.split("=")[0].strip() for line in text.splitlines() if "=" in line)
    if command == "topicRoute":
        return re.sub(r"\s+", "", text)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    args = ap.parse_args()
    run_sh = os.path.join(args.realrmq, "run.sh")
    if not os.path.exists(run_sh):
        print(f"no real RocketMQ build at {args.realrmq} (see README.md)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="rmq-clients-")
    env = dict(os.environ, RMQ_USER_HOME=work)
    classes = os.path.join(work, "classes")
    subprocess.run(["javac", "-nowarn", "-cp", open(os.path.join(args.realrmq, "classpath")).read().strip(),
                    "-d", classes, os.path.join(HERE, "java", "RoundTrip.java")], check=True)
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={REAL_NS}\n")
    with open(os.path.join(work, "broker.conf"), "w") as f:
        f.write(f"brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\n"
                f"namesrvAddr=127.0.0.1:{REAL_PX};127.0.0.1:{OUR_PX}\nbrokerIP1=127.0.0.1\nlistenPort={BROKER}\n"
                f"haListenPort={BROKER + 1}\nbrokerRole=ASYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n"
                f"storePathRootDir={work}/store\nmappedFileSizeCommitLog=67108864\nautoCreateTopicEnable=true\n")
    capture = os.path.join(work, "real.jsonl")
    procs = []
    try:
        procs.append(start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], f"{work}/real-ns.log", env))
        procs.append(start([PY, "-m", "pymq_ref.cli", "namesrv", "--listen", f"127.0.0.1:{OUR_NS}",
                            "--kv-config", f"{work}/ours-kv.json"], f"{work}/our-ns.log"))
        wait_port(REAL_NS)
        wait_port(OUR_NS)
        procs.append(start([PY, "-m", "pymq_ref.cli", "proxy", "--listen", f"127.0.0.1:{REAL_PX}", "--to",
                            f"127.0.0.1:{REAL_NS}", "--jsonl", capture, "--raw"], f"{work}/px-real.log"))
        procs.append(start([PY, "-m", "pymq_ref.cli", "proxy", "--listen", f"127.0.0.1:{OUR_PX}", "--to",
                            f"127.0.0.1:{OUR_NS}", "--jsonl", f"{work}/ours.jsonl", "--raw"], f"{work}/px-ours.log"))
        wait_port(REAL_PX)
        wait_port(OUR_PX)
        procs.append(start([run_sh, "broker", "-c", os.path.join(work, "broker.conf")], f"{work}/broker.log", env))
        wait_port(BROKER)
        time.sleep(3)
        print(mqadmin(run_sh, env, "updateTopic", "-n", f"127.0.0.1:{REAL_PX}", "-c", "DefaultCluster", "-t", TOPIC,
                      "-r", "4", "-w", "4"))
        time.sleep(2)
        # 4.9.4's mqadmin has no getKvConfig: GET_KV_CONFIG is what updateOrderConf -m get sends
        commands = [("clusterList",), ("topicList",), ("topicRoute", "-t", TOPIC), ("getNamesrvConfig",),
                    ("updateKvConfig", "-s", "pymqNs", "-k", "key1", "-v", "value1"),
                    ("updateOrderConf", "-t", TOPIC, "-m", "put", "-v", "broker-a:4"),
                    ("updateOrderConf", "-t", TOPIC, "-m", "get"),
                    ("deleteKvConfig", "-s", "pymqNs", "-k", "key1"),
                    ("updateOrderConf", "-t", TOPIC, "-m", "delete"),
                    ("updateOrderConf", "-t", TOPIC, "-m", "get")]
        results = {"real": {}, "ours": {}}
        agree = {}
        for c in commands:
            key = " ".join(c)
            for _attempt in range(3):  # the broker may re-register between the two runs: ask again
                for side, port in (("real", REAL_PX), ("ours", OUR_PX)):
                    results[side][key] = mqadmin(run_sh, env, c[0], "-n", f"127.0.0.1:{port}", *c[1:])
                agree[key] = normalize(c[0], results["real"][key]) == normalize(c[0], results["ours"][key])
                if agree[key] or c[0] in ("updateKvConfig", "deleteKvConfig", "updateOrderConf"):
                    break
        trips = {}
        for side, port in (("real", REAL_PX), ("ours", OUR_PX)):
            t0 = time.time()
            out = subprocess.run([run_sh, "class", "RoundTrip", f"127.0.0.1:{port}", TOPIC, f"RT_{side}", "10"],
                                 env=dict(env, RMQ_EXTRA_CP=classes), capture_output=True, text=True, timeout=180)
            trips[side] = {"exit": out.returncode, "seconds": round(time.time() - t0, 1),
                           "output": [l for l in out.stdout.splitlines() if l.startswith(("sent", "received"))]}
        os.makedirs(OUT, exist_ok=True)
        with open(os.path.join(OUT, "mqadmin.json"), "w") as f:
            json.dump({"outputs": results, "agree": agree}, f, indent=1, ensure_ascii=False)
        with open(os.path.join(OUT, "roundtrip.json"), "w") as f:
            json.dump(trips, f, indent=1)
    finally:
        for proc in reversed(procs):
            stop(proc)
    with open(capture) as src, open(os.path.join(OUT, "clients.jsonl"), "w") as dst:
        for line in src:
            rec = json.loads(line)
            dst.write(json.dumps({k: rec[k] for k in ("seq", "conn", "direction", "kind", "code", "opaque",
                                                      "frame_hex") if k in rec}, sort_keys=True) + "\n")
    print(json.dumps({"agree": agree, "roundtrip": {k: (v["exit"], v["output"][-1:]) for k, v in trips.items()}},
                     indent=1))
    print(f"work folder: {work}")
    return 0 if all(agree.values()) and all(v["exit"] == 0 for v in trips.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
