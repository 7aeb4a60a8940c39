"""Damaged copies of one store, for comparing our recovery with RocketMQ 4.9.4's.

:func:`build_base` writes a store with pymq_ref (deterministic: manual clock, fixed hosts); each
scenario of :data:`SCENARIOS` damages a copy the way a crash, a disk or an operator would.
:func:`readback` opens a copy with our store (recovery, then dispatch) and reports what it
holds in the form RocketMQ's harness printed for the same copy
(tests/data/rocketmq-4.9.4-recovery/<scenario>.jsonl).
"""

from __future__ import annotations

import functools
import json
import os
import random
import shutil
import struct
from pathlib import Path

from pymq_ref.formats.checkpoint import decode_checkpoint
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig

GEOMETRY = dict(mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=100, max_hash_slot_num=8,
                max_index_num=16)
T0 = 1_700_000_000_000


def config(root: Path) -> MessageStoreConfig:
    """The scenarios' store, loading exactly as RocketMQ 4.9.4 does (``strict_load``): these are
    comparisons with its store classes (pymq-ref's default rebuilds more index entries after a crash)."""
    return MessageStoreConfig(store_path_root_dir=str(root), strict_load=True, **GEOMETRY)


def message(i: int) -> MessageRecord:
    props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"7F00000112340000ABCD{i:012X}", "CLUSTER": "DefaultCluster"}
    if i % 3:
        props["TAGS"] = "TagA" if i % 3 == 1 else "TagB"
    return MessageRecord(topic="TopicR", body=bytes([65 + i % 26]) * (120 + 7 * i % 60), queue_id=i % 2,
                         properties=props, born_timestamp=T0 - 1000 + i, born_host=Host("127.0.0.1", 50000),
                         store_host=Host("127.0.0.1", 10911))


def build_base(root: Path) -> None:
    """24 messages, one store timestamp a second apart (so checkpoint times pick files), clean shutdown."""
    with MessageStore.open(config(root), ManualClock(T0, step_ms=1000)) as store:
        for i in range(24):
            assert store.put_message(message(i)).ok
    (root / "lock").unlink()


def build_delayed_base(root: Path) -> None:
    """Two delayed messages (DELAY=3, parked in SCHEDULE_TOPIC_XXXX queue 2) between two plain ones."""
    with MessageStore.open(config(root), ManualClock(T0, step_ms=1000)) as store:
        for i in range(4):
            m = message(i)
            if i in (1, 2):
                m = m.replace(properties={**m.properties, "DELAY": "3"})
            assert store.put_message(m).ok
    (root / "lock").unlink()


BASES = {"base": build_base, "delayed": build_delayed_base}


def _segments(root: Path) -> list[Path]:
    return sorted((root / "commitlog").iterdir())


def _records(path: Path) -> list[tuple[int, int]]:
    """(file position, TOTALSIZE) of every message in a segment."""
    data, pos, out = path.read_bytes(), 0, []
    while pos + 8 <= len(data):
        size, magic = struct.unpack_from(">ii", data, pos)
        if size <= 0 or magic == -875286124:  # zeros or the END_OF_FILE blank
            break
        out.append((pos, size))
        pos += size
    return out


def _patch(path: Path, pos: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[pos:pos + len(data)] = data
    path.write_bytes(bytes(raw))


def _flip_body_byte(path: Path, record: int) -> None:
    pos, _ = _records(path)[record]
    raw = path.read_bytes()
    _patch(path, pos + 100, bytes([raw[pos + 100] ^ 0xFF]))  # inside the body (it starts at 88)


def _abort(root: Path) -> None:
    (root / "abort").write_bytes(b"")


def torn_tail(root: Path) -> None:
    last = _segments(root)[-1]
    pos, size = _records(last)[-1]
    _patch(last, pos + 40, bytes(size - 40))
    _abort(root)


def crc_last_file(root: Path) -> None:
    _flip_body_byte(_segments(root)[-1], 1)
    _abort(root)


def crc_earlier_file(root: Path) -> None:
    _flip_body_byte(_segments(root)[-3], 1)
    _abort(root)


def crc_clean_shutdown(root: Path) -> None:
    _flip_body_byte(_segments(root)[-1], 1)


def garbage_tail(root: Path) -> None:
    last = _segments(root)[-1]
    pos, size = _records(last)[-1]
    _patch(last, pos + size, b"\x13\x37" * 20)
    _abort(root)


def consume_queues_lost(root: Path) -> None:
    shutil.rmtree(root / "consumequeue")
    _abort(root)


def index_lost(root: Path) -> None:
    shutil.rmtree(root / "index")
    _abort(root)


def last_segment_lost(root: Path) -> None:
    """The ConsumeQueues and index point past the end of the CommitLog (clean shutdown)."""
    _segments(root)[-1].unlink()


def last_segment_lost_after_crash(root: Path) -> None:
    _segments(root)[-1].unlink()
    _abort(root)


def old_checkpoint(root: Path) -> None:
    """The checkpoint says nothing was flushed after the first message: abnormal recovery
    starts from the first segment."""
    raw = bytearray((root / "checkpoint").read_bytes())
    struct.pack_into(">qqq", raw, 0, T0, T0, T0)
    (root / "checkpoint").write_bytes(bytes(raw))
    _abort(root)


def checkpoint_lost(root: Path) -> None:
    (root / "checkpoint").unlink()
    _abort(root)


def dirty_consume_queue_tail(root: Path) -> None:
    """A unit past the CommitLog's end (a ConsumeQueue flushed before the CommitLog was)."""
    q = root / "consumequeue" / "TopicR" / "0"
    last = sorted(q.iterdir())[-1]
    data = last.read_bytes()
    end = next(p for p in range(0, len(data), 20) if data[p:p + 20] == bytes(20))
    _patch(last, end, struct.pack(">qiq", 10 * 1024 * 1024, 200, 0))
    _abort(root)


def delayed_units_lost(root: Path) -> None:
    """The SCHEDULE_TOPIC_XXXX ConsumeQueue is gone after a crash: abnormal recovery rebuilds it
    before 4.9.4's schedule service has loaded its delay levels, so its units get the TAGS hash."""
    shutil.rmtree(root / "consumequeue" / "SCHEDULE_TOPIC_XXXX")
    _abort(root)


def delayed_units_lost_clean(root: Path) -> None:
    """The same after a clean shutdown: the reput rebuilds it, with the delivery times."""
    shutil.rmtree(root / "consumequeue" / "SCHEDULE_TOPIC_XXXX")


def latin1_key(root: Path) -> None:
    """A client that wrote a KEYS value in Latin-1: the last record's ``key-23`` becomes
    ``key-2`` + byte E9 (not UTF-8; the body CRC does not cover properties). The index is lost in
    a crash, so recovery re-hashes the key — as Java decodes it, with U+FFFD for the byte."""
    last = _segments(root)[-1]
    pos, size = _records(last)[-1]
    record = last.read_bytes()[pos:pos + size]
    at = record.index(b"key-23")
    _patch(last, pos + at + 5, b"\xe9")
    shutil.rmtree(root / "index")
    _abort(root)


def head_segments_deleted(root: Path) -> None:
    """Retention deleted the first two segments, and nothing else yet (clean shutdown)."""
    for seg in _segments(root)[:2]:
        seg.unlink()


def random_damage(root: Path, seed: int) -> None:
    """One or two seeded random damages — a bit flipped in one of the last four CommitLog segments,
    a segment zeroed from a random point, a bit flipped or a unit zeroed in a ConsumeQueue file, a
    bit flipped in an index file or in the checkpoint's timestamps — and, 6 times in 10, a crash."""
    rnd = random.Random(seed)
    for _ in range(rnd.choice((1, 1, 2))):
        kind = rnd.choice(["flip_cl", "flip_cl", "zero_cl_tail", "flip_cq", "zero_cq_unit", "flip_index",
                           "flip_checkpoint"])
        if kind in ("flip_cl", "zero_cl_tail"):
            path = rnd.choice(_segments(root)[-4:])
        elif kind in ("flip_cq", "zero_cq_unit"):
            path = rnd.choice(sorted(p for p in (root / "consumequeue").rglob("0*") if p.is_file()))
        elif kind == "flip_index":
            path = rnd.choice(sorted((root / "index").iterdir()))
        else:
            path = root / "checkpoint"
        data = bytearray(path.read_bytes())
        if kind == "zero_cl_tail":
            pos = rnd.randrange(len(data))
            data[pos:] = bytes(len(data) - pos)
        elif kind == "zero_cq_unit":
            pos = rnd.randrange(len(data) // 20) * 20
            data[pos:pos + 20] = bytes(20)
        else:
            pos = rnd.randrange(24 if kind == "flip_checkpoint" else len(data))
            data[pos] ^= 1 << rnd.randrange(8)
        path.write_bytes(bytes(data))
    if rnd.random() < 0.6:
        _abort(root)


SCENARIOS = {f.__name__: ("base", f) for f in (
    _abort, torn_tail, crc_last_file, crc_earlier_file, crc_clean_shutdown, garbage_tail, consume_queues_lost,
    index_lost, last_segment_lost, last_segment_lost_after_crash, old_checkpoint, checkpoint_lost,
    dirty_consume_queue_tail, head_segments_deleted, latin1_key)}
SCENARIOS["clean"] = ("base", lambda root: None)
SCENARIOS["crash"] = SCENARIOS.pop("_abort")
SCENARIOS["delayed_crash"] = ("delayed", _abort)
SCENARIOS["delayed_units_lost"] = ("delayed", delayed_units_lost)
SCENARIOS["delayed_units_lost_clean"] = ("delayed", delayed_units_lost_clean)
for _seed in range(30):
    SCENARIOS[f"random_{_seed}"] = ("base" if _seed % 3 else "delayed", functools.partial(random_damage, seed=_seed))


def make(bases: Path, name: str, root: Path) -> None:
    """Scenario ``name`` in ``root``, from its base store in ``bases/<base name>``."""
    base, damage = SCENARIOS[name]
    shutil.copytree(bases / base, root)
    damage(root)


def _files(root: Path) -> dict[str, list[str]]:
    """File names left in commitlog/, index/ and every consumequeue/{topic}/{queueId}/."""
    out = {d: sorted(os.listdir(root / d)) for d in ("commitlog", "index")}
    for topic in sorted(os.listdir(root / "consumequeue")):
        for qid in sorted(os.listdir(root / "consumequeue" / topic)):
            out[f"consumequeue/{topic}/{qid}"] = sorted(os.listdir(root / "consumequeue" / topic / qid))
    return out


def java_string(text: str) -> str:
    """A property as RocketMQ's Java code holds it: pymq_ref keeps a byte that is not UTF-8 as a
    lone surrogate (``surrogateescape``, so records re-encode byte for byte); Java decodes it to
    U+FFFD. (Hashes already agree: ``java_string_hash`` treats such surrogates as U+FFFD.)"""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _rocketmq_query(store: MessageStore, topic: str, key: str) -> list[int]:
    """What 4.9.4's ``DefaultMessageStore.queryMessage(topic, key, 64, 0, MAX)`` returns, which
    re-checks no key: the index's offsets, ascending, that ``CommitLog.getData`` can serve (in
    [min, max) of the log) — except the first, which must also decode as a message (4.9.4 reads
    its store time; an unreadable first offset throws and is skipped)."""
    offsets, _, _ = store.index_service.query_offset(topic, key, 64, 0, 2**63 - 1)
    lo, hi = store.get_min_phy_offset(), store.get_max_phy_offset()
    kept = []
    for m, offset in enumerate(sorted(offsets)):
        if not lo <= offset < hi or (m == 0 and store.look_message_by_offset(offset) is None):
            continue
        kept.append(offset)
    return kept


def readback(root: Path, clock: ManualClock | None = None, before=None, **open_kwargs) -> list[dict]:
    """Open ``root`` with our store (recovery + dispatch) and report it as RocketMQ's harness does;
    ``before(store)`` runs first (a retention round) and the report then lists the files left."""
    abort_before = (root / "abort").exists()
    with MessageStore.open(config(root), clock or ManualClock(T0 + 10**6), **open_kwargs) as store:
        if before is not None:
            before(store)
        queues, units, queries, asked = {}, [], [], set()
        for topic in sorted(os.listdir(root / "consumequeue")) if (root / "consumequeue").is_dir() else []:
            for qid in sorted(os.listdir(root / "consumequeue" / topic)):
                q = int(qid)
                cq = store.find_consume_queue(topic, q)
                lo, hi = cq.min_offset_in_queue, cq.max_offset_in_queue
                queues[f"{topic}/{q}"] = [lo, hi]
                for off in range(lo, hi):
                    u = cq.get_unit(off)
                    m = store.look_message_by_offset(u.phy_offset)
                    props = {} if m is None else {java_string(k): java_string(v) for k, v in m.properties.items()}
                    units.append({"kind": "unit", "topic": topic, "queueId": q, "queueOffset": off,
                                  "phyOffset": u.phy_offset, "size": u.size, "tagsCode": u.tags_code,
                                  "message": None if m is None else {
                                      "queueOffset": m.queue_offset, "storeTimestamp": m.store_timestamp,
                                      "properties": dict(sorted(props.items()))}})
                    if m is None:
                        continue
                    keys = [props["UNIQ_KEY"]] if "UNIQ_KEY" in props else []
                    keys += [k for k in props.get("KEYS", "").split(" ") if k]
                    for k in keys:
                        if (topic, k) in asked:
                            continue
                        asked.add((topic, k))
                        queries.append({"kind": "query", "topic": topic, "key": k,
                                        "phyOffsets": _rocketmq_query(store, topic, k)})
        head = {"kind": "load", "abortBefore": abort_before, "loaded": True,
                "minPhyOffset": store.get_min_phy_offset(), "maxPhyOffset": store.get_max_phy_offset(),
                "queues": queues}
        if before is not None:
            head["files"] = _files(root)
    cp = decode_checkpoint((root / "checkpoint").read_bytes())  # what the shutdown left
    checkpoint = {"kind": "checkpoint", "physicMsgTimestamp": cp.physic_msg_timestamp,
                  "logicsMsgTimestamp": cp.logics_msg_timestamp, "indexMsgTimestamp": cp.index_msg_timestamp}
    return [head, *units, *queries, checkpoint]


def comparable(lines: list[dict], head_keys=("abortBefore", "loaded", "minPhyOffset", "maxPhyOffset", "queues")) -> tuple:
    """A harness report (RocketMQ's, or ours from :func:`readback`) as ``(head, units, queries,
    checkpoints)``, order-independent where the order carries no meaning."""
    head = {k: lines[0][k] for k in head_keys}
    units = sorted((u["topic"], u["queueId"], u["queueOffset"], u["phyOffset"], u["size"], u["tagsCode"],
                    None if u["message"] is None else (u["message"]["queueOffset"], u["message"]["storeTimestamp"],
                                                       json.dumps(u["message"]["properties"], sort_keys=True)))
                   for u in lines if u["kind"] == "unit")
    queries = sorted((q["topic"], q["key"], tuple(q["phyOffsets"])) for q in lines if q["kind"] == "query")
    return head, units, queries, [c for c in lines if c["kind"] == "checkpoint"]
