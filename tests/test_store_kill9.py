"""kill -9 reliability: a writer process is SIGKILLed at random points; recovery must keep every
acknowledged message byte for byte and leave the derived files consistent.

A killed process loses nothing that reached the page cache, so on Linux both flush modes must keep
every acknowledged message; SYNC_FLUSH additionally guarantees it across an OS crash (not
simulated here). With the transient store pool (ASYNC_FLUSH+POOL) acknowledged messages still in
the write buffer die with the process: what survives must be exactly the acknowledged messages
up to the recovered end, byte for byte, and only a tail may be missing. Each trial reuses the
same directory, so recovery runs on top of recovery.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from pymq_ref.formats.message import MessageRecord, decode_record, encode_message
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import FlushDiskType
from store_helpers import kill_test_config, kill_test_message

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _run_and_kill(root: str, mode: str, start: int, writers: int, kind: str, kill_after_acks: int,
                  rng) -> list[tuple]:
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "store_kill_writer.py"), root, mode, str(start),
                             str(writers), kind], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    acks = []
    try:
        line = proc.stdout.readline()
        assert line.startswith(b"READY"), (line, proc.stderr.read())
        deadline = time.monotonic() + 10
        while len(acks) < kill_after_acks and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith(b"ACK"):
                acks.append(tuple(int(x) for x in line.split()[1:]))
        time.sleep(rng.random() * 0.01)  # land the kill somewhere inside a later put
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
    finally:
        proc.wait()
    for line in rest.split(b"\n"):
        if line.startswith(b"ACK") and len(line.split()) == 6:
            acks.append(tuple(int(x) for x in line.split()[1:]))
    assert proc.returncode == -signal.SIGKILL
    return acks


def _check_store(root: str, mode: FlushDiskType, acked: list[tuple], new: list[tuple] = (),
                 may_lose_tail: bool = False) -> list[tuple]:
    """Check the recovered store; returns the acknowledged messages it keeps (``acked`` + what
    survives of ``new``, the last trial's: all of it unless ``may_lose_tail``)."""
    store = MessageStore.open(kill_test_config(root, mode))
    try:
        cl = store.commit_log
        end = cl.max_offset
        kept = [a for a in new if not may_lose_tail or a[1] + _size(a[0]) <= end]
        assert all(a[1] >= end for a in new if a not in kept), "a lost message below the recovered end"
        for i, phy, queue_id, queue_offset, ts in acked + kept:
            m = kill_test_message(i)
            expected = encode_message(m.replace(queue_offset=queue_offset, phy_offset=phy, store_timestamp=ts))
            assert cl.get_data(phy, len(expected)) == expected, f"acknowledged message {i} at {phy} lost or changed"
            unit = store.find_consume_queue(m.topic, queue_id, create=False).get_unit(queue_offset)
            assert unit is not None and unit.phy_offset == phy
        # every ConsumeQueue unit points at a valid record of the right topic/queue/size/tagsCode
        for cq in store._all_cqs():
            for index in range(cq.min_offset_in_queue, cq.max_offset_in_queue):
                unit = cq.get_unit(index)
                rec = decode_record(cl.get_data(unit.phy_offset, unit.size), 0, base=unit.phy_offset,
                                    with_spans=False, check_crc=True)
                assert isinstance(rec, MessageRecord)
                assert (rec.topic, rec.queue_id, rec.total_size, rec.queue_offset) == \
                    (cq.topic, cq.queue_id, unit.size, index)
                assert unit.tags_code == rec.tags_code
        assert cl.max_offset >= max((a[1] for a in acked + kept), default=0)
    finally:
        store.shutdown()
    return acked + kept


def _size(i: int) -> int:
    return len(encode_message(kill_test_message(i)))


@pytest.mark.parametrize("mode, writers, kind", [("SYNC_FLUSH", 4, "threads"), ("SYNC_FLUSH", 8, "tasks"),
                                                 ("ASYNC_FLUSH", 1, "threads"), ("ASYNC_FLUSH+POOL", 2, "threads")])
def test_kill9_keeps_acknowledged_messages(tmp_path, mode, writers, kind):
    rng = random.Random(20240917 + writers)
    root = str(tmp_path / "store")
    flush = FlushDiskType[mode.partition("+")[0]]
    all_acked: list[tuple] = []
    lost = 0
    budget = time.monotonic() + 25
    trial = 0
    while trial < 20 and time.monotonic() < budget:
        acked = _run_and_kill(root, mode, 1_000_000 * (trial + 1), writers, kind, rng.randint(1, 400), rng)
        kept = _check_store(root, flush, all_acked, acked, may_lose_tail=mode.endswith("+POOL"))
        lost += len(all_acked) + len(acked) - len(kept)
        all_acked = kept
        trial += 1
    print(f"{mode}: {trial} trials, {len(all_acked)} acknowledged messages kept, {lost} lost")
    assert trial >= 3 and len(all_acked) > 50
    if not mode.endswith("+POOL"):
        assert lost == 0
