#!/usr/bin/env python3
"""Record what the real RocketMQ 4.9.4 answers to the conformance scenarios, then check that the
kit passes 100% against it.

Usage (needs the real build, see the README next to this file)::

    .venv/bin/python tools/rocketmq_conformance/record.py [--realrmq /tmp/realrmq] [--namesrv-port 27876]
        [--broker-port 27911] [--only PATTERN]

It starts ``run.sh namesrv`` and ``run.sh broker`` (the broker.conf below, in a temporary folder),
plays every scenario in recording mode and writes the answers to
``pymq_ref/oracle/conformance/data/rocketmq-4.9.4.json``; then plays them again, compared with
what was just recorded, with a fresh run id (so different topics, ids and times), and writes that
run's report to ``tests/data/rocketmq-4.9.4-conformance/`` (report.txt, report.json, report.html).
Both processes are stopped at the end. ``--check`` records nothing: it runs the ``pymq conformance``
command itself against the real broker and exits with its status (0: every scenario passed).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "rocketmq_namesrv"))

from procs import port_free, start, stop, wait_port  # noqa: E402

from pymq_ref.oracle.conformance import expected, render_html, render_json, render_text  # noqa: E402
from pymq_ref.oracle.conformance.runner import PASS, Runner, expectations  # noqa: E402
from pymq_ref.oracle.conformance.scenarios import select  # noqa: E402

REPORT_DIR = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-conformance")

BROKER_CONF = """brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=0
namesrvAddr=127.0.0.1:{namesrv}
brokerIP1=127.0.0.1
listenPort={port}
brokerRole=ASYNC_MASTER
flushDiskType=ASYNC_FLUSH
storePathRootDir={store}
mappedFileSizeCommitLog=67108864
autoCreateTopicEnable=true
enablePropertyFilter=true
transactionCheckInterval=1000
transactionTimeOut=1000
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    ap.add_argument("--namesrv-port", type=int, default=27876)
    ap.add_argument("--broker-port", type=int, default=27911)
    ap.add_argument("--only", help="record only these scenarios (merged into the existing recording)")
    ap.add_argument("--keep-running", action="store_true", help="leave the processes running (prints their pids)")
    ap.add_argument("--check", action="store_true",
                    help="record nothing: run `pymq conformance` (the command itself) against the real broker and "
                         "exit with its status")
    args = ap.parse_args()
    run_sh = os.path.join(args.realrmq, "run.sh")
    if not os.path.exists(run_sh):
        print(f"no real RocketMQ build at {args.realrmq} (see tools/rocketmq_conformance/README.md)", file=sys.stderr)
        return 2
    for port in (args.namesrv_port, args.broker_port, args.broker_port - 2, args.broker_port + 1):
        if not port_free(port):
            print(f"port {port} is in use", file=sys.stderr)
            return 2
    work = tempfile.mkdtemp(prefix="rmq-conformance-")
    with open(os.path.join(work, "namesrv.conf"), "w") as f:
        f.write(f"listenPort={args.namesrv_port}\n")
    with open(os.path.join(work, "broker.conf"), "w") as f:
        f.write(BROKER_CONF.format(namesrv=args.namesrv_port, port=args.broker_port, store=os.path.join(work, "store")))
    env = dict(os.environ, RMQ_USER_HOME=work)
    procs = [start([run_sh, "namesrv", "-c", os.path.join(work, "namesrv.conf")], os.path.join(work, "ns.log"), env)]
    broker, namesrv = f"127.0.0.1:{args.broker_port}", f"127.0.0.1:{args.namesrv_port}"
    try:
        wait_port(args.namesrv_port)
        procs.append(start([run_sh, "broker", "-c", os.path.join(work, "broker.conf")],
                           os.path.join(work, "broker.log"), env))
        wait_port(args.broker_port)
        asyncio.run(asyncio.sleep(3))  # the first registration with the name server
        if args.check:
            import subprocess
            cmd = [sys.executable, "-m", "pymq_ref.cli", "conformance", broker, "--namesrv", namesrv, "--no-hex"]
            return subprocess.run(cmd + (["--only", args.only] if args.only else []), env=dict(
                os.environ, PYTHONPATH=ROOT)).returncode
        scenarios = select(args.only)
        say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
        recorded = asyncio.run(Runner(broker, namesrv, record=True, progress=say).run(scenarios))
        bad = [r for r in recorded if r.status != PASS or any(s.failures for s in r.steps)]
        for r in bad:
            say(f"RECORDING PROBLEM {r.id}: {r.status} {r.reason} {[s.failures for s in r.steps if s.failures]}")
        table = expectations(recorded)
        if args.only and os.path.exists(expected.DEFAULT_PATH):
            table = {**expected.load()["scenarios"], **table}
        expected.save(expected.DEFAULT_PATH, table, "Apache RocketMQ 4.9.4 name server + broker (run.sh), "
                      "broker.conf: " + BROKER_CONF.replace("\n", "; ").strip("; "))
        results = asyncio.run(Runner(broker, namesrv, expected=table, progress=say).run(scenarios))
        os.makedirs(REPORT_DIR, exist_ok=True)
        shown_broker, shown_ns = "127.0.0.1:BROKER", "127.0.0.1:NAMESRV"
        with open(os.path.join(REPORT_DIR, "report.txt"), "w") as f:
            f.write(render_text(results, broker=shown_broker, namesrv=shown_ns) + "\n")
        with open(os.path.join(REPORT_DIR, "report.json"), "w") as f:
            f.write(render_json(results, broker=shown_broker, namesrv=shown_ns) + "\n")
        with open(os.path.join(REPORT_DIR, "report.html"), "w") as f:
            f.write(render_html(results, broker=shown_broker, namesrv=shown_ns))
        print(render_text(results, broker=broker, namesrv=namesrv, timings=True))
        if args.keep_running:
            print("pids:", [p.pid for p in procs], "work:", work)
            procs = []
        return 0 if not bad and all(r.status == PASS for r in results) else 1
    finally:
        for p in reversed(procs):
            stop(p)


if __name__ == "__main__":
    sys.exit(main())
