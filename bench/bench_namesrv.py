"""GET_ROUTEINFO_BY_TOPIC from 16 concurrent clients: pymq-ref's name server against the real
RocketMQ 4.9.4 name server, with the same Java client program, side by side in one run.

Both name servers get the same broker registration (three brokers, a topic on two of them, sent
as frames by ``pymq_ref/namesrv/scenarios.py``), then ``tools/rocketmq_namesrv/java/RouteBench.java``
— 16 threads calling ``NettyRemotingClient.invokeSync`` as the Java client's ``MQClientAPIImpl``
does — asks each for the route of that topic for a fixed time, alternating. Goal: >= 1.0x.

Needs the real build (``/tmp/realrmq`` or ``PYMQ_REAL_ROCKETMQ``, see
``tools/rocketmq_namesrv/README.md``) and ``javac``; without them it prints why and exits 0.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools" / "rocketmq_namesrv"))
from _common import ROOT, Row, interleaved_best, parser, report  # noqa: E402
from procs import port_free as free, start, stop, wait_port  # noqa: E402

THREADS = 16
REAL_PORT, OUR_PORT = 23986, 23886


def register(address: str) -> None:
    from pymq_ref.namesrv.scenarios import A_TOPICS, B_TOPICS, C_TOPICS, register as reg
    from pymq_ref.remoting.codec import decode, encode

    async def main():
        host, port = address.rsplit(":", 1)
        for i, cmd in enumerate([reg("broker-a", "127.0.0.1:40911", "C1", 0, A_TOPICS, 1),
                                 reg("broker-b", "127.0.0.1:41911", "C1", 0, B_TOPICS, 1),
                                 reg("broker-c", "127.0.0.1:42911", "C2", 0, C_TOPICS, 1)]):
            r, w = await asyncio.open_connection(host, int(port))
            w.write(encode(cmd.with_(opaque=i)))
            await w.drain()
            head = await r.readexactly(4)
            assert decode(head + await r.readexactly(int.from_bytes(head, "big"))).command.code == 0
            keep.append(w)  # a closed connection would take its broker away
    keep: list = []
    loop = asyncio.new_event_loop()
    loop.run_until_complete(main())
    register.keep = (loop, keep)


def run_java(run_sh: str, classes: str, address: str, seconds: int, env) -> float:
    out = subprocess.run([run_sh, "class", "RouteBench", address, "TopicShared", str(THREADS), str(seconds)],
                         env=dict(env, RMQ_EXTRA_CP=classes), capture_output=True, text=True, timeout=seconds + 60)
    m = re.search(r"requests=(\d+) seconds=(\d+) errors=(\d+)", out.stdout)
    if not m or int(m.group(3)):
        raise SystemExit(f"RouteBench failed against {address}: {out.stdout[-500:]} {out.stderr[-500:]}")
    return int(m.group(1)) / int(m.group(2))


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    realrmq = os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq")
    run_sh = os.path.join(realrmq, "run.sh")
    if not os.path.exists(run_sh) or not shutil.which("javac"):
        print(f"bench_namesrv: skipped — needs the real RocketMQ 4.9.4 build at {realrmq} (PYMQ_REAL_ROCKETMQ) "
              "and javac; see tools/rocketmq_namesrv/README.md")
        return 0
    if not (free(REAL_PORT) and free(OUR_PORT)):
        print(f"bench_namesrv: ports {REAL_PORT}/{OUR_PORT} are taken")
        return 2
    seconds = 3 if args.quick else 10
    repeat = args.repeat or (1 if args.quick else 3)
    work = tempfile.mkdtemp(prefix="bench-namesrv-")
    env = dict(os.environ, RMQ_USER_HOME=work)
    classes = os.path.join(work, "classes")
    subprocess.run(["javac", "-nowarn", "-cp", open(os.path.join(realrmq, "classpath")).read().strip(), "-d", classes,
                    str(ROOT / "tools" / "rocketmq_namesrv" / "java" / "RouteBench.java")], check=True)
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={REAL_PORT}\n")
    procs = [start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], env=env),
             start([sys.executable, "-m", "pymq_ref.cli", "namesrv", "--listen", f"127.0.0.1:{OUR_PORT}",
                    "--kv-config", os.path.join(work, "kv.json")])]
    try:
        wait_port(REAL_PORT)
        wait_port(OUR_PORT)
        register(f"127.0.0.1:{REAL_PORT}")
        real_keep = register.keep
        register(f"127.0.0.1:{OUR_PORT}")
        o, b = interleaved_best(lambda: run_java(run_sh, classes, f"127.0.0.1:{OUR_PORT}", seconds, env),
                                lambda: run_java(run_sh, classes, f"127.0.0.1:{REAL_PORT}", seconds, env), repeat)
        del real_keep
    finally:
        for p in procs:
            stop(p)
    rows = [Row(f"GET_ROUTEINFO_BY_TOPIC, {THREADS} Java client threads", o, b, "req/s", 1.0,
                "same Java program (NettyRemotingClient.invokeSync) against each; baseline: the real 4.9.4 name server")]
    return report("bench_namesrv", "Name server vs the real RocketMQ 4.9.4 name server (route lookups)", rows,
                  {"threads": THREADS, "seconds": seconds, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
