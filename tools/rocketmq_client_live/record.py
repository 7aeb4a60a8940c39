"""Run pymq-ref's client scenarios (tests/client_scenarios.py) against a live RocketMQ 4.9.4 name
server + broker and record every request shape the client sent with the real broker's answer code.

    .venv/bin/python tools/rocketmq_client_live/record.py --namesrv 127.0.0.1:26876 [--scenario NAME ...]

Writes tests/data/rocketmq-4.9.4-client-live/requests.jsonl (one distinct request shape per line,
sorted, with the answer codes seen) and results.json (each scenario's outcome). See the README.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from client_scenarios import SCENARIOS, Context, shape_key  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-client-live")


def merge(log: list[dict]) -> list[dict]:
    """Distinct shapes, each with the sorted set of answer codes it got."""
    by_key: dict[str, dict] = {}
    for s in log:
        entry = by_key.setdefault(shape_key(s), {k: v for k, v in s.items() if k != "response_code"} | {"response_codes": []})
        code = s["response_code"]
        if code not in entry["response_codes"]:
            entry["response_codes"].append(code)
    out = list(by_key.values())
    for e in out:
        e["response_codes"].sort(key=lambda c: (c is None, c if c is not None else 0))
    return sorted(out, key=shape_key)


async def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--namesrv", required=True)
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args(argv)
    names = args.scenario or list(SCENARIOS)
    ctx = Context(args.namesrv, f"R{int(time.time())}_", offset_dir=tempfile.mkdtemp())
    results = {}
    for name in names:
        began = time.monotonic()
        results[name] = await SCENARIOS[name](ctx)
        results[name]["seconds"] = round(time.monotonic() - began, 1)
        print(name, results[name], flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "requests.jsonl"), "w", encoding="utf-8") as f:
        for entry in merge(ctx.log):
            f.write(json.dumps(entry, sort_keys=True) + "\n")
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"broker": "RocketMQ 4.9.4", "scenarios": results}, f, indent=1, sort_keys=True, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
