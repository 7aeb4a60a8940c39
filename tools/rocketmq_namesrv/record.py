#!/usr/bin/env python3
"""Record what the real RocketMQ 4.9.4 name server answers to the conversation of
``pymq_ref/namesrv/scenarios.py`` into ``tests/data/rocketmq-4.9.4-namesrv/answers.jsonl``.

Usage (needs the real build, see the README next to this file)::

    .venv/bin/python tools/rocketmq_namesrv/record.py [--realrmq /tmp/realrmq] [--port 23976]

It starts ``run.sh namesrv`` with its own user.home (so kvConfig.json and namesrv.properties go to a
temporary folder), plays the conversation (about 2.5 minutes: a silent broker takes 120 s to
expire), writes the answers, and stops the name server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from pymq_ref.namesrv.scenarios import Player, outcome_record, wait_route_gone  # noqa: E402
from procs import start, stop, wait_port  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-namesrv", "answers.jsonl")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    ap.add_argument("--port", type=int, default=23976)
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    run_sh = os.path.join(args.realrmq, "run.sh")
    if not os.path.exists(run_sh):
        print(f"no real RocketMQ build at {args.realrmq} (see tools/rocketmq_namesrv/README.md)", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="rmq-namesrv-")
    conf = os.path.join(work, "namesrv.conf")
    with open(conf, "w") as f:
        f.write(f"listenPort={args.port}\n")
    env = dict(os.environ, RMQ_USER_HOME=work)
    proc = start([run_sh, "namesrv", "-c", conf], os.path.join(work, "out.log"), env)
    try:
        wait_port(args.port)
        address = f"127.0.0.1:{args.port}"

        async def expire(step):
            return await wait_route_gone(address, step.expire)

        outcomes = asyncio.run(Player(address, expire).play())
    finally:
        stop(proc)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        for o in outcomes:
            f.write(json.dumps(outcome_record(o), ensure_ascii=False, sort_keys=True) + "\n")
    print(f"wrote {len(outcomes)} answers to {args.out} (work folder {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
