"""Power losses: the store comes back by itself with every acknowledged message that was durable.

CI (no LazyFS there): the Python fault layer of ``tests/power_loss_fs.py`` records a workload of
four writer threads (the broker's threads: group commit or flush service, reput, ConsumeQueue
flush) plus a config persister, then rebuilds what a power loss at a random point of the journal
would leave — names kept, sizes and bytes only as last synced, sometimes a sync torn half-way —
and checks each such store with :func:`power_loss_checks.check_recovered`: it opens unattended,
SYNC_FLUSH keeps every acknowledged message byte for byte with its ConsumeQueue unit and index
entry, ASYNC_FLUSH (with and without the transient store pool) loses at most what was not yet
synced, as a tail, and the doctor is clean after the restart. 70 cuts per flush mode.

The same checks against the real thing — LazyFS, the FUSE file system Jepsen uses, killed at
random moments under a writer process — are ``tools/power_loss/driver.py`` (see its README);
:func:`test_lazyfs_power_losses` runs a few of them when LazyFS is built (``PYMQ_LAZYFS`` or
``/tmp/lazyfs``), and says why it skips otherwise.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from power_loss_checks import MODES, check_recovered, expected_bytes, run_writers, workload_config
from power_loss_fs import RecordingFileSystem, materialize, tear
from pymq_ref.store import fileio
from pymq_ref.store.clock import SystemClock
from pymq_ref.store.message_store import MessageStore

CUTS_PER_MODE = 70
MESSAGES = 300


class _NoSync(fileio.FileSystem):
    """The checks run on a scratch copy: its own syncs prove nothing, so they are skipped (speed)."""

    def sync(self, fd, path):
        pass

    def sync_dir(self, path):
        pass
REPO = Path(__file__).resolve().parent.parent


def _record(live: Path, mode: str):
    """Run the workload under the recording layer; the journal, acks and persists (with markers)."""
    layer = RecordingFileSystem(str(live))
    acks, persists = [], []
    with fileio.install(layer):
        store = MessageStore.open(workload_config(live, mode), SystemClock(), threads=True, inline_dispatch=False)
        writers = run_writers(store, 4, range(MESSAGES),
                              on_ack=lambda a: acks.append((layer.mark(("ack", a.id)), a)),
                              on_persist=lambda c: persists.append((layer.mark(("persist", c)), c)))
        deadline = time.monotonic() + 30
        while len(acks) < MESSAGES and time.monotonic() < deadline:
            time.sleep(0.01)
        writers.stop()
        store.shutdown()
    assert len(acks) == MESSAGES
    return layer, acks, persists


def _intact(state, ack, segment_size: int) -> bool:
    """Are the message's bytes in the durable CommitLog of ``state``?"""
    rel = os.path.join("commitlog", f"{ack.phy - ack.phy % segment_size:020d}")
    if rel not in state.files:
        return False
    pos = ack.phy % segment_size
    want = expected_bytes(ack)
    return state.read(rel)[pos:pos + len(want)] == want


@pytest.mark.parametrize("mode", MODES)
def test_power_loss_cuts(tmp_path, mode):
    layer, acks, persists = _record(tmp_path / "live", mode)
    segment = workload_config(tmp_path, mode).mapped_file_size_commit_log
    rng = random.Random(f"cuts-{mode}")
    n = len(layer.events)
    syncs = [i for i in range(1, n) if layer.events[i][0] == "sync"]
    torn_at = set(rng.sample(syncs, CUTS_PER_MODE // 3))  # the power goes out during these syncs
    others = [i for i in range(1, n) if i not in torn_at]
    cuts = sorted(torn_at | set(rng.sample(others, CUTS_PER_MODE - len(torn_at) - 1)) | {n})
    stats = {"cuts": 0, "torn": 0, "acked": 0, "kept": 0, "lost": 0, "repairs": 0}
    for cut, state in layer.states(cuts):
        acked = [a for marker, a in acks if marker < cut]
        durable = {a.id for a in acked if _intact(state, a, segment)}
        if mode == "SYNC_FLUSH":
            # the promise itself: what was acknowledged was synced before the answer
            assert len(durable) == len(acked), f"cut {cut}: acknowledged but not durable"
        torn = cut in torn_at
        if torn:
            state = state.copy()
            tear(state, layer.events[cut], rng)
        root = tmp_path / f"cut-{cut}"
        materialize(state, str(root))
        min_counter = max((c for marker, c in persists if marker < cut), default=0)
        restart = RecordingFileSystem(str(root))  # the restart is recorded too
        with fileio.install(restart):
            result = check_recovered(str(root), mode, acked, lambda a: a.id in durable, min_counter, queries=24,
                                     doctor=False)
        # ... and the power goes out again during that restart (or once it has shut down): what it
        # kept was on disk already, so the next restart must find it all, and its work durable
        again = rng.randrange(1, len(restart.events) + 1)
        second = next(restart.states([again], initial=state))[1]
        shutil.rmtree(root)
        materialize(second, str(root))
        with fileio.install(_NoSync()):
            check_recovered(str(root), mode, result.kept, lambda a: True, min_counter, queries=24)
        stats["cuts"] += 1
        stats["torn"] += torn
        stats["acked"] += len(acked)
        stats["kept"] += len(result.kept)
        stats["lost"] += len(result.lost)
        stats["repairs"] += len(result.repairs)
        shutil.rmtree(root)
    print(f"{mode}: {stats['cuts']} cuts ({stats['torn']} torn, each followed by a second power loss during "
          f"the restart), {len(layer.events)} journal events, "
          f"{stats['acked']} acknowledged messages checked, {stats['kept']} kept, {stats['lost']} lost (unsynced "
          f"tail), {stats['repairs']} files rebuilt")
    assert stats["cuts"] == CUTS_PER_MODE and stats["torn"] > 0
    if mode == "SYNC_FLUSH":
        assert stats["lost"] == 0


def _lazyfs() -> Path | None:
    path = Path(os.environ.get("PYMQ_LAZYFS", "/tmp/lazyfs"))
    return path if (path / "mount.sh").exists() and (path / "crash.sh").exists() else None


def test_lazyfs_power_losses(tmp_path):
    """A few live power losses with LazyFS (the full runs: tools/power_loss/driver.py)."""
    lazyfs = _lazyfs()
    if lazyfs is None:
        pytest.skip("LazyFS is not built here (PYMQ_LAZYFS or /tmp/lazyfs with mount.sh and crash.sh): "
                    "build it with build-lazyfs.sh as tools/power_loss/README.md says")
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        pytest.skip("LazyFS needs /dev/fuse and fusermount3")
    out = subprocess.run([sys.executable, str(REPO / "tools" / "power_loss" / "driver.py"), "--lazyfs", str(lazyfs),
                          "--workdir", str(tmp_path), "--losses", "2", "--modes", "SYNC_FLUSH", "ASYNC_FLUSH"],
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failed" in out.stdout, out.stdout
