"""The broker server on the wire: pymq-ref's ``pymq up`` against baselines measured in the same run.

1. (CI-able, ``--quick`` < 20 s) The C++ client (PyPI ``rocketmq==0.4.4``) sync-sends 1 KiB messages
   to ``pymq up``, against a raw asyncio request/response server answering the same-sized frames to
   a blocking socket client (the floor of any Python server on this machine). Informational: it
   says how much of a bare asyncio round trip the broker's work costs.
2. (When the real 4.9.4 build exists at ``/tmp/realrmq``.) The same Java client program
   (``tools/rocketmq_broker_live/java/BrokerBench.java``) against the real 4.9.4 name server + broker
   and against ``pymq up``, 1 KiB bodies: sync send with 1 and 16 threads (ASYNC_FLUSH), 16 threads
   with SYNC_FLUSH (group commit over the wire), and a push consumer draining N stored messages.
   Goal: >= 1.0x the real broker on each. Ports: 24700-24712 (real), 24800-24812 (ours).

Usage: ``python bench/bench_broker.py [--quick] [--seconds S] [--drain N] [--skip-java]``.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tools" / "rocketmq_namesrv"))
from _common import ROOT, Row, parser, report  # noqa: E402
from procs import port_free, start, stop, wait_port  # noqa: E402

REAL = os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq")
REAL_NS, REAL_BROKER = 24700, 24711
OUR_NS, OUR_BROKER = 24800, 24811
CLIENTS = str(HERE / "_broker_clients.py")


# -- 1. the C++ client vs a raw asyncio round trip -------------------------------------------------
class RawServer:
    """An asyncio server that answers every length-prefixed frame with a frame of the same size."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.port = None
        ready = threading.Event()

        async def serve(reader, writer):
            try:
                while True:
                    head = await reader.readexactly(4)
                    body = await reader.readexactly(int.from_bytes(head, "big"))
                    writer.write(head + body)
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()

        async def main():
            server = await asyncio.start_server(serve, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            await asyncio.Event().wait()
        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(main()), daemon=True)
        self.thread.start()
        ready.wait()


def rate_of(out: str, what: str) -> float:
    m = re.search(r"RATE (\d+(?:\.\d+)?)", out)
    if not m:
        raise SystemExit(f"{what} failed: {out[-800:]}")
    return float(m.group(1))


def cpp_vs_raw(seconds: float, size: int) -> list[Row]:
    try:
        import rocketmq.client  # noqa: F401
    except Exception as e:  # the wheel or its librocketmq.so
        print(f"(skipping the C++ client row: {e})")
        return []
    from pymq_ref.broker.server.up import UpServer
    rows = []
    with tempfile.TemporaryDirectory() as d, UpServer(os.path.join(d, "store"), namesrv_port=0, broker_port=0,
                                                    settings={"mappedFileSizeCommitLog": str(64 << 20)}) as up:
        raw = RawServer()
        ours = rate_of(subprocess.run([sys.executable, CLIENTS, "cpp-send", up.namesrv_addr, "TBenchCpp", str(seconds),
                                       str(size)], capture_output=True, text=True, timeout=seconds + 120).stdout, "cpp")
        base = rate_of(subprocess.run([sys.executable, CLIENTS, "raw-rr", f"127.0.0.1:{raw.port}", str(seconds),
                                       str(size)], capture_output=True, text=True, timeout=seconds + 60).stdout, "raw")
    rows.append(Row(f"C++ client sync send {size} B, 1 thread", ours, base, "msg/s", None,
                    "baseline: raw asyncio request/response of the same frame size, blocking client"))
    return rows


# -- 2. the Java client: real 4.9.4 broker vs ours -------------------------------------------------
def conf_text(flush: str, store: str, ns_port: int, port: int) -> str:
    return (f"brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\nnamesrvAddr=127.0.0.1:{ns_port}\n"
            f"brokerIP1=127.0.0.1\nlistenPort={port}\nbrokerRole=ASYNC_MASTER\nflushDiskType={flush}\n"
            f"storePathRootDir={store}\nmappedFileSizeCommitLog={256 << 20}\nautoCreateTopicEnable=true\n")


class RealSide:
    name = "real 4.9.4"

    def __init__(self, work: str, env):
        self.work, self.env, self.procs = work, env, []
        self.namesrv = f"127.0.0.1:{REAL_NS}"

    def start(self, flush: str) -> None:
        ns_conf = os.path.join(self.work, "namesrv.conf")
        Path(ns_conf).write_text(f"listenPort={REAL_NS}\n")
        if port_free(REAL_NS):
            self.procs.append(start([f"{REAL}/run.sh", "namesrv", "-c", ns_conf], os.path.join(self.work, "ns.log"),
                                    self.env))
            wait_port(REAL_NS)
        store = os.path.join(self.work, f"real-{flush}")
        conf = os.path.join(self.work, f"broker-{flush}.conf")
        Path(conf).write_text(conf_text(flush, store, REAL_NS, REAL_BROKER))
        self.broker = start([f"{REAL}/run.sh", "broker", "-c", conf], os.path.join(self.work, f"broker-{flush}.log"),
                            self.env)
        wait_port(REAL_BROKER)
        import time
        time.sleep(3)  # registration with the name server

    def stop_broker(self) -> None:
        stop(self.broker)
        import time
        for _ in range(100):
            if port_free(REAL_BROKER + 1) and port_free(REAL_BROKER):
                break
            time.sleep(0.3)

    def close(self) -> None:
        for p in self.procs:
            stop(p)


class OurSide:
    name = "pymq-ref"

    def __init__(self, work: str, env):
        self.work, self.env = work, env
        self.namesrv = f"127.0.0.1:{OUR_NS}"

    def start(self, flush: str) -> None:
        conf = os.path.join(self.work, f"ours-{flush}.conf")
        Path(conf).write_text(f"flushDiskType={flush}\nmappedFileSizeCommitLog={256 << 20}\n")
        self.broker = start([sys.executable, "-m", "pymq_ref.cli", "up", "--store", os.path.join(self.work, f"ours-{flush}"),
                             "--namesrv-port", str(OUR_NS), "--broker-port", str(OUR_BROKER), "-c", conf],
                            os.path.join(self.work, f"ours-{flush}.log"), self.env)
        wait_port(OUR_BROKER)

    def stop_broker(self) -> None:
        stop(self.broker)

    def close(self) -> None:
        pass


def java(env, classes: str, namesrv: str, *args, timeout: float = 900) -> str:
    out = subprocess.run([f"{REAL}/run.sh", "class", "BrokerBench", namesrv, *map(str, args)],
                         env=dict(env, RMQ_EXTRA_CP=classes), capture_output=True, text=True, timeout=timeout)
    return out.stdout + out.stderr[-500:]


def java_rows(seconds: float, drain: int, size: int) -> list[Row]:
    if not os.path.exists(f"{REAL}/run.sh") or shutil.which("javac") is None:
        print(f"(skipping the Java rows: no real RocketMQ build at {REAL} or no javac)")
        return []
    work = tempfile.mkdtemp(prefix="bench-broker-")
    env = dict(os.environ, RMQ_USER_HOME=os.path.join(work, "home"))
    classes = os.path.join(work, "classes")
    cp = Path(REAL, "classpath").read_text().strip()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", classes,
                    str(ROOT / "tools" / "rocketmq_broker_live" / "java" / "BrokerBench.java")], check=True)
    results: dict[tuple[str, str], float] = {}
    real, ours = RealSide(work, env), OurSide(work, env)
    try:
        for flush, cases in (("ASYNC_FLUSH", [("send1", 1), ("send16", 16), ("drain", 0)]),
                             ("SYNC_FLUSH", [("send16", 16)])):
            for side in (real, ours):  # one broker at a time: the machine is shared
                side.start(flush)
                try:
                    for case, threads in cases:
                        topic = f"TB_{case}_{flush}"
                        if case == "drain":
                            java(env, classes, side.namesrv, "fill", topic, drain, size)
                            out = java(env, classes, side.namesrv, "drain", topic, drain)
                        else:
                            out = java(env, classes, side.namesrv, "send", topic, threads, seconds, size)
                        results[(side.name, f"{case} {flush}")] = rate_of(out, f"{side.name} {case} {flush}")
                        print(f"  {side.name:<10} {case:<7} {flush:<11} {results[(side.name, f'{case} {flush}')]:,.0f} msg/s",
                              flush=True)
                finally:
                    side.stop_broker()
    finally:
        real.close()
    names = {"send1 ASYNC_FLUSH": f"Java sync send {size} B, 1 thread", "send16 ASYNC_FLUSH": f"Java sync send {size} B, 16 threads",
             "send16 SYNC_FLUSH": f"Java sync send {size} B, 16 threads, SYNC_FLUSH",
             "drain ASYNC_FLUSH": f"Java push consumer drains {drain:,} msgs"}
    return [Row(label, results[("pymq-ref", key)], results[("real 4.9.4", key)], "msg/s", 1.0,
                "baseline: the real RocketMQ 4.9.4 broker, same client program")
            for key, label in names.items() if ("pymq-ref", key) in results and ("real 4.9.4", key) in results]


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=None, help="seconds per send measurement")
    p.add_argument("--drain", type=int, default=100_000, help="messages the push consumer drains")
    p.add_argument("--skip-java", action="store_true", help="only the C++ client row")
    args = p.parse_args()
    seconds = args.seconds or (4.0 if args.quick else 10.0)
    rows = cpp_vs_raw(seconds, 1024)
    if not args.quick and not args.skip_java:
        rows += java_rows(seconds, args.drain, 1024)
    return report("bench_broker", "The broker server: pymq up vs raw asyncio and vs the real 4.9.4 broker", rows,
                  {"seconds": seconds, "drain": args.drain, "body_bytes": 1024, "quick": args.quick})


if __name__ == "__main__":
    sys.exit(main())
