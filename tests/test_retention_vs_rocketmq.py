"""Retention against RocketMQ 4.9.4: which files one clean round deletes, and what is left.

tests/data/rocketmq-4.9.4-retention/aged_<k>.jsonl: the unmodified 4.9.4 store classes opened a
copy of the recovery base store (``recovery_scenarios.build_base``) whose first ``k`` CommitLog
segments were last modified 73 hours earlier, called ``executeDeleteFilesManually()`` and ran one
round of ``CleanCommitLogService`` then ``CleanConsumeQueueService`` (README.md there). Our store
does the same with a manual clock and must leave the same files, offsets, units and index answers.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import recovery_scenarios as R
from store_helpers import tree_digest
from pymq_ref.store.clean_service import RetentionOptions
from pymq_ref.store.clock import ManualClock

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-retention"
NOW = 1_795_262_400_000  # 2026-11-21T12:00:00Z: not the deleteWhen hour (04), so only the manual delete acts


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("retention") / "base"
    R.build_base(root)
    assert tree_digest(root) == json.loads((DATA.parent / "rocketmq-4.9.4-recovery" / "base.sha256.json").read_text())
    return root


@pytest.mark.parametrize("aged", [1, 3, 8, 9])
def test_a_manual_clean_round_leaves_what_rocketmq_leaves(base, tmp_path, aged):
    root = tmp_path / "store"
    shutil.copytree(base, root)
    expired = (NOW - 73 * 3_600_000) / 1000
    for seg in sorted((root / "commitlog").iterdir())[:aged]:
        os.utime(seg, (expired, expired))

    def clean(store):
        store.execute_delete_files_manually()
        store.clean_service.run_once()

    ours = R.readback(root, ManualClock(NOW), clean,
                      retention=RetentionOptions(disk_usage_probe=lambda path: 0.28, time_zone="UTC"))
    rocketmq = [json.loads(line) for line in (DATA / f"aged_{aged}.jsonl").read_text().splitlines()]
    head_keys = ("minPhyOffset", "maxPhyOffset", "queues", "files")
    # RocketMQ's retention report has no checkpoint line: heads, units (with their messages), queries
    assert R.comparable(ours, head_keys)[:3] == R.comparable(rocketmq, head_keys)[:3]
    assert len(ours[0]["files"]["commitlog"]) == 9 - min(aged, 8)  # never the last segment
