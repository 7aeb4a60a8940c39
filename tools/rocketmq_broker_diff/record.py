#!/usr/bin/env python3
"""Record what the real RocketMQ 4.9.4 broker answers to the differential scenario
(``tests/broker_diff_scenario.py``) and the store it leaves, into ``tests/data/rocketmq-4.9.4-broker-diff/``:

* ``answers.jsonl`` — one line per step: the outcome (answer / none / error), the answer frame as
  bytes, and the frames the broker sent on that step's connection by itself;
* ``store.json`` — the broker's store after a clean shutdown, decoded with pymq_ref's decoders
  (``tests/broker_diff_store.py``): CommitLog records, ConsumeQueue units, index entries, config files.

Usage (needs the real build, see ``tools/REAL_ROCKETMQ.md``)::

    PYTHONPATH=$PWD .venv/bin/python tools/rocketmq_broker_diff/record.py [--realrmq /tmp/realrmq]

Ports 25701-25712 on 127.0.0.1; about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "rocketmq_broker_admin"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from realbroker import RealBroker  # noqa: E402

from broker_diff_scenario import BROKER_CONF, HASH_SLOTS, Player  # noqa: E402
from broker_diff_store import store_document  # noqa: E402

OUT = os.path.join(ROOT, "tests", "data", "rocketmq-4.9.4-broker-diff")
NS, BROKER, PROXY = 25701, 25711, 25705


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realrmq", default=os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq"))
    args = ap.parse_args()
    if not os.path.exists(os.path.join(args.realrmq, "run.sh")):
        print(f"no real RocketMQ build at {args.realrmq}", file=sys.stderr)
        return 2
    rb = RealBroker(args.realrmq, NS, BROKER, PROXY, "", conf=BROKER_CONF, proxy_on=False).start()

    async def settle():
        await asyncio.sleep(0.05)  # the real broker's reput dispatches within a millisecond or two

    try:
        outcomes = asyncio.run(Player(f"127.0.0.1:{BROKER}", settle).play())
    finally:
        rb.stop()  # SIGTERM: a clean shutdown (offsets persisted, files flushed)
    doc = store_document(rb.store, HASH_SLOTS)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "answers.jsonl"), "w", encoding="utf-8") as f:
        for o in outcomes:
            f.write(json.dumps(dataclasses.asdict(o), sort_keys=True) + "\n")
    with open(os.path.join(OUT, "store.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=0)  # key order kept: it is the order in the files
    print(f"wrote {len(outcomes)} answers and the store ({len(doc['commitlog'])} records) to {OUT}; "
          f"work folder {rb.work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
