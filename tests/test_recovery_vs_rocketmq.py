"""Our recovery against RocketMQ 4.9.4's, over the damaged stores of ``recovery_scenarios``.

tests/data/rocketmq-4.9.4-recovery/<scenario>.jsonl is what the unmodified 4.9.4 store classes
reported after opening a copy of the scenario (``load()``, ``start()``, reput to the end): min/max
physical offset, ``[min, max)`` of every queue, every unit with the message at its offset, and
the store's raw ``queryMessage`` answer for every key (README.md there). Our store opens another
copy and must report the same, field for field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import recovery_scenarios as R

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-recovery"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("recovery") / "base"
    R.build_base(root)
    digest = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
              for p in sorted(root.rglob("*")) if p.is_file()}
    assert digest == json.loads((DATA / "base.sha256.json").read_text()), \
        "the base store changed: RocketMQ's answers no longer apply (README.md)"
    return root


def comparable(lines: list[dict]) -> tuple:
    head = {k: lines[0][k] for k in ("abortBefore", "loaded", "minPhyOffset", "maxPhyOffset", "queues")}
    units = sorted((u["topic"], u["queueId"], u["queueOffset"], u["phyOffset"], u["size"], u["tagsCode"],
                    None if u["message"] is None else (u["message"]["queueOffset"], u["message"]["storeTimestamp"],
                                                       json.dumps(u["message"]["properties"], sort_keys=True)))
                   for u in lines if u["kind"] == "unit")
    queries = sorted((q["topic"], q["key"], tuple(q["phyOffsets"])) for q in lines if q["kind"] == "query")
    return head, units, queries


def test_every_scenario_has_rocketmq_answer():
    assert sorted(p.stem for p in DATA.glob("*.jsonl")) == sorted(R.SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(R.SCENARIOS))
def test_recovery_keeps_what_rocketmq_keeps(base, tmp_path, scenario):
    root = tmp_path / scenario
    R.make(base, scenario, root)
    ours = comparable(R.readback(root))
    rocketmq = comparable([json.loads(line) for line in (DATA / f"{scenario}.jsonl").read_text().splitlines()])
    assert ours[0] == rocketmq[0]
    assert ours[1] == rocketmq[1]
    assert ours[2] == rocketmq[2]
