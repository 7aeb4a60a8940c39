"""``MessageStore``'s read API against RocketMQ 4.9.4's ``DefaultMessageStore``, call for call.

tests/data/rocketmq-4.9.4-facade/*.jsonl hold what the unmodified 4.9.4 store classes answered
to the grid of ``facade_calls.calls`` (getMessage over queues, offsets, batch sizes and tag
filters; min/max offsets; store times; CommitLog offsets; getOffsetInQueueByTime; queryMessage
with time windows) on copies of pymq_ref stores (README.md there). Our store must answer every
call the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import facade_calls as F
import recovery_scenarios as R
from pymq_ref.store.message_store import MessageStore
from store_helpers import tree_digest

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-facade"


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    root = tmp_path_factory.mktemp("facade")
    R.build_base(root / "base")
    assert tree_digest(root / "base") == json.loads((DATA.parent / "rocketmq-4.9.4-recovery" / "base.sha256.json")
                                                   .read_text())
    F.build_wide(root / "wide")
    assert tree_digest(root / "wide") == json.loads((DATA / "wide.sha256.json").read_text())
    return root


def compare(store: MessageStore, recorded: str) -> None:
    java = [json.loads(line) for line in (DATA / recorded).read_text().splitlines()]
    grid = F.calls(store)
    assert [j["call"] for j in java] == F.grid_text(grid).splitlines()  # the grid RocketMQ answered
    for j, ours in zip(java, F.run_ours(store, grid)):
        assert ours == j


@pytest.mark.parametrize("scenario", ["clean", "head_segments_deleted", "consume_queues_lost"])
def test_reads_of_a_recovered_store(bases, tmp_path, scenario):
    R.make(bases, scenario, tmp_path / "store")
    with F.open_store(tmp_path / "store") as store:
        compare(store, f"recovery-{scenario}.jsonl")


@pytest.mark.parametrize("ratio", [40, 0])
def test_pull_batches_stop_at_the_memory_or_disk_limits(bases, tmp_path, ratio):
    """accessMessageInMemoryMaxRatio 40 (this store is far smaller than RAM: in memory, 32
    messages / 256 KiB a pull) and 0 (every message counts as in disk: 8 / 64 KiB)."""
    root = tmp_path / "store"
    shutil.copytree(bases / "wide", root)
    with F.open_store(root, wide_ratio=ratio) as store:
        first = store.get_message("g", F.TOPIC, 0, 0, 32)
        assert len(first.buffers) == (28 if ratio else 7)  # 9 KiB records: the byte limit comes first
        assert first.suggest_pulling_from_slave is (ratio == 0)
        compare(store, f"wide-r{ratio}.jsonl")
