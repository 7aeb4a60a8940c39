"""pymq-ref's client against the RocketMQ 4.9.4 Java client, same broker, same workload, one run:

* sync sends of 1 KiB bodies from 1 and from 16 concurrent senders (messages/s; ours: one producer,
  16 coroutines; Java: one producer, 16 threads — ``tools/rocketmq_client_live/java/ClientBench.java``);
* a push consumer draining N messages from the first offset (messages/s from ``start()`` until the
  N-th message; N = 100,000, 10,000 with ``--quick``), each side with a new consumer group.

The broker is pymq-ref's (``pymq up`` in a subprocess, so the client under test has this process to
itself); with ``--real-namesrv ADDR`` the same workloads also run against a real 4.9.4 broker already
listening there. Goals (issue 13): ours / Java >= 0.7 for both. Needs the real build (``/tmp/realrmq``
or ``PYMQ_REAL_ROCKETMQ``) and ``javac`` for the baseline; without them it says so and exits 0.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, Row, parser, report  # noqa: E402

from pymq_ref.tools.ports import free_port  # noqa: E402

REAL = os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq")
JAVA_SOURCE = ROOT / "tools" / "rocketmq_client_live" / "java" / "ClientBench.java"
BODY = 1024


def start_up(store: str) -> tuple[subprocess.Popen, str]:
    ns_port = free_port()
    broker_port = 0
    for _ in range(50):
        broker_port = free_port()
        if broker_port > 2:
            break
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "pymq_ref.cli", "up", "--store", store, "--namesrv-port",
                             str(ns_port), "--broker-port", str(broker_port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", broker_port), 1).close()
            time.sleep(1.0)  # registration with the name server
            return proc, f"127.0.0.1:{ns_port}"
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("pymq up exited early")
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("pymq up did not start")


def java(classes: str, *args, timeout: float = 300) -> str:
    env = dict(os.environ, RMQ_EXTRA_CP=classes, RMQ_USER_HOME=tempfile.mkdtemp(prefix="rmq-home-"))
    out = subprocess.run([os.path.join(REAL, "run.sh"), "class", "ClientBench", *map(str, args)], env=env,
                         capture_output=True, text=True, timeout=timeout)
    return out.stdout


def java_send(classes, ns, topic, threads, seconds) -> float:
    out = java(classes, ns, "send", topic, threads, seconds, BODY, timeout=seconds + 120)
    m = re.search(r"sent=(\d+) seconds=([\d.]+) errors=(\d+)", out)
    if not m:
        raise SystemExit(f"ClientBench send failed: {out[-500:]}")
    return int(m.group(1)) / float(m.group(2))


def java_drain(classes, ns, topic, group, count) -> float:
    out = java(classes, ns, "drain", topic, group, count, 240, timeout=300)
    m = re.search(r"consumed=(\d+) seconds=([\d.]+)", out)
    if not m or int(m.group(1)) < count:
        raise SystemExit(f"ClientBench drain failed: {out[-500:]}")
    return count / float(m.group(2))


async def ours_send(ns: str, topic: str, senders: int, seconds: float) -> float:
    from pymq_ref.client.message import Message
    from pymq_ref.client.producer import DefaultMQProducer

    body = bytes(ord("a") + i % 26 for i in range(BODY))
    p = DefaultMQProducer("PG_bench_py", ns)
    await p.start()
    await p.send(Message(topic, body))
    state = {"measuring": False, "stop": False, "sent": 0, "errors": 0}

    async def sender():
        while not state["stop"]:
            try:
                r = await p.send(Message(topic, body))
                if state["measuring"]:
                    state["sent" if r.send_status.value == "SEND_OK" else "errors"] += 1
            except Exception:
                if state["measuring"]:
                    state["errors"] += 1

    tasks = [asyncio.create_task(sender()) for _ in range(senders)]
    await asyncio.sleep(1.0)
    state["measuring"] = True
    start = time.perf_counter()
    await asyncio.sleep(seconds)
    state["measuring"] = False
    elapsed = time.perf_counter() - start
    state["stop"] = True
    await asyncio.gather(*tasks)
    await p.shutdown()
    return state["sent"] / elapsed


async def fill(ns: str, topic: str, count: int) -> None:
    from pymq_ref.client.message import Message
    from pymq_ref.client.producer import DefaultMQProducer

    body = b"d" * BODY
    p = DefaultMQProducer("PG_bench_fill", ns)
    await p.start()
    await p.send(Message(topic, body))
    sent = 1
    while sent < count:
        n = min(64, count - sent)
        await asyncio.gather(*(p.send_batch([Message(topic, body) for _ in range(16)]) for _ in range(n // 16)),
                             *(p.send(Message(topic, body)) for _ in range(n % 16)))
        sent += n
    await p.shutdown()


async def ours_drain(ns: str, topic: str, group: str, count: int) -> float:
    from pymq_ref.client.consumer.consume import ConsumeConcurrentlyStatus
    from pymq_ref.client.consumer.push import DefaultMQPushConsumer

    c = DefaultMQPushConsumer(group, ns, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(topic, "*")
    done = asyncio.Event()
    seen = [0]

    async def listener(msgs, context):
        seen[0] += len(msgs)
        if seen[0] >= count:
            done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c.register_message_listener(listener)
    start = time.perf_counter()
    await c.start()
    await asyncio.wait_for(done.wait(), 600)
    elapsed = time.perf_counter() - start
    await c.shutdown()
    return count / elapsed


def run_set(label: str, ns: str, classes: str, args, rows: list[Row]) -> None:
    seconds = 3 if args.quick else 10
    count = 10_000 if args.quick else 100_000
    repeat = args.repeat or (1 if args.quick else 2)
    stamp = int(time.time())
    for senders in (1, 16):
        topic = f"BenchSend{senders}_{stamp}"
        best_o = best_j = 0.0
        for _ in range(repeat):
            best_o = max(best_o, asyncio.run(ours_send(ns, topic, senders, seconds)))
            best_j = max(best_j, java_send(classes, ns, topic, senders, seconds))
        rows.append(Row(f"{label}: sync send 1 KiB, {senders} sender{'s' * (senders > 1)}", best_o, best_j,
                        "msg/s", 0.7))
    topic = f"BenchDrain_{stamp}"
    asyncio.run(fill(ns, topic, count))
    best_o = best_j = 0.0
    for i in range(repeat):
        # alternate who drains first (the first reader may find the pages colder)
        if i % 2 == 0:
            best_j = max(best_j, java_drain(classes, ns, topic, f"CG_bench_java_{stamp}_{i}", count))
            best_o = max(best_o, asyncio.run(ours_drain(ns, topic, f"CG_bench_py_{stamp}_{i}", count)))
        else:
            best_o = max(best_o, asyncio.run(ours_drain(ns, topic, f"CG_bench_py_{stamp}_{i}", count)))
            best_j = max(best_j, java_drain(classes, ns, topic, f"CG_bench_java_{stamp}_{i}", count))
    rows.append(Row(f"{label}: push drain of {count:,}", best_o, best_j, "msg/s", 0.7))


def main(argv=None) -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--real-namesrv", metavar="ADDR", help="also run against a real 4.9.4 broker registered there")
    args = p.parse_args(argv)
    if not os.path.exists(os.path.join(REAL, "run.sh")) or shutil.which("javac") is None:
        print(f"bench_client: skipped: the Java baseline needs the real RocketMQ 4.9.4 build at {REAL} and javac")
        return 0
    classes = tempfile.mkdtemp(prefix="clientbench-")
    with open(os.path.join(REAL, "classpath"), encoding="utf-8") as f:
        cp = f.read().strip()
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", classes, str(JAVA_SOURCE)], check=True)
    rows: list[Row] = []
    store = tempfile.mkdtemp(prefix="bench-client-up-")
    proc, ns = start_up(os.path.join(store, "store"))
    try:
        run_set("pymq broker", ns, classes, args, rows)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(store, ignore_errors=True)
    if args.real_namesrv:
        run_set("real 4.9.4 broker", args.real_namesrv, classes, args, rows)
    return report("bench_client", "pymq-ref's client vs the RocketMQ 4.9.4 Java client (same broker, same run)",
                  rows, {"quick": args.quick, "body": BODY})


if __name__ == "__main__":
    sys.exit(main())
