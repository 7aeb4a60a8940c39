"""Build the golden corpus: small store directories covering the store's edge cases, each with the
JSON a conforming reader must produce for it (``corpus/README.md`` documents every case).

Usage: ``python corpus/generate.py [OUT_DIR]`` (default: this script's folder; ``make corpus``).

Everything comes from ``pymq_ref`` with a :class:`~pymq_ref.store.clock.ManualClock`, fixed hosts
and no randomness, so two runs write byte-identical files (``tests/test_corpus.py`` checks that
the committed corpus is exactly what this script writes). Two cases whose records the 4.9.4 put
path does not produce by itself (v2 magic, a parked delayed message) are written as raw CommitLog
bytes with :func:`pymq_ref.formats.message.encode_message`, then the store is opened so that it
dispatches the records and builds the ConsumeQueues and IndexFiles — derived files are functions
of the log: after a "crash" (``abort`` present, abnormal recovery) for v2 magic, after a clean stop
(normal recovery, then the reput) for the delayed message, whose unit abnormal recovery would give
the TAGS hash instead of the delivery time, as 4.9.4's does.

Per case, ``OUT_DIR/<case>/`` holds ``store/`` (the store directory) and ``expected.json``:

* ``files``: for every store file, the document ``pymq inspect --format json FILE`` prints
  (without its ``file`` path): decoded records, blanks, ConsumeQueue units, index header, slots
  and entries, checkpoint, findings, end of data;
* ``recovery``: what recovery keeps (``MessageStore(read_only=True)``: end of valid CommitLog
  data, max offset of every queue);
* ``doctor``: exit status and findings (severity, code, file, offset) of ``pymq doctor``;
* ``facts``: the case's point, stated independently of the decoders (checked while generating).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.hashing import index_key_hash, java_string_hash
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MESSAGE_MAGIC_CODE_V2, MessageRecord, encode_message
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig
from pymq_ref.tools.doctor import DoctorOptions, run_doctor
from pymq_ref.tools.inspect import InspectOptions, inspect_path

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
BORN = Host("127.0.0.1", 50000)
STORE = Host("127.0.0.1", 10911)
CLUSTER = "DefaultCluster"
GEOMETRY = dict(mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=100, max_hash_slot_num=8,
                max_index_num=16)
CASES: dict[str, tuple[str, object]] = {}


def case(name: str, description: str):
    def register(fn):
        CASES[name] = (description, fn)
        return fn
    return register


def config(root: Path, **overrides) -> MessageStoreConfig:
    # strict_load: recovered as RocketMQ 4.9.4 recovers (the corpus is compared with it)
    return MessageStoreConfig(store_path_root_dir=str(root), strict_load=True, **{**GEOMETRY, **overrides})


def message(i: int, topic: str = "TopicTest", *, queue_id: int = 0, body: bytes | None = None,
            keys: str | None = None, tags: str | None = "TagA", born: Host = BORN, store: Host = STORE,
            extra: dict | None = None) -> MessageRecord:
    props = {}
    if keys is None:
        keys = f"key-{i}"
    if keys:
        props["KEYS"] = keys
    props["UNIQ_KEY"] = f"7F00000112340000ABCD{i:012X}"
    props.update(extra or {})
    props["CLUSTER"] = CLUSTER
    if tags:
        props["TAGS"] = tags
    return MessageRecord(topic=topic, body=body if body is not None else f"body {i}".encode(), queue_id=queue_id,
                         properties=props, born_timestamp=T0 - 1000 + i, born_host=born, store_host=store)


def put_all(root: Path, messages, clock=None, **overrides) -> list:
    results = []
    with MessageStore.open(config(root, **overrides), clock or ManualClock(T0, step_ms=1)) as store:
        for m in messages:
            r = store.put_message(m)
            assert r.ok, r
            results.append(r.append_result)
    return results


def write_raw_log(root: Path, records: list[MessageRecord], file_size: int = 1024, crash: bool = True) -> list[int]:
    """Lay ``records`` end to end in CommitLog segment 0 (phy offsets patched in) and, with
    ``crash``, mark a crash (the ``abort`` file)."""
    buf = bytearray(file_size)
    pos, offsets = 0, []
    for rec in records:
        data = encode_message(rec.replace(phy_offset=pos))
        assert pos + len(data) + 8 <= file_size
        buf[pos:pos + len(data)] = data
        offsets.append(pos)
        pos += len(data)
    (root / "commitlog").mkdir(parents=True)
    (root / "commitlog" / f"{0:020d}").write_bytes(bytes(buf))
    if crash:
        (root / "abort").write_bytes(b"")
    return offsets


def recover_and_shutdown(root: Path, clock_at: int) -> None:
    """Open after the 'crash': abnormal recovery dispatches every record (CQ + index), then a clean shutdown."""
    with MessageStore.open(config(root), ManualClock(clock_at, step_ms=1)) as store:
        assert not store.last_exit_ok


def reput_and_shutdown(root: Path, clock_at: int) -> None:
    """Open after a clean stop: normal recovery, then the reput dispatches every record, then a clean shutdown."""
    with MessageStore.open(config(root), ManualClock(clock_at, step_ms=1)) as store:
        assert store.last_exit_ok and store.dispatch_behind_bytes() == 0


# --------------------------------------------------------------------------------------- cases

@case("roll_blank", "Twelve messages on two queues with 1 KiB CommitLog segments: every segment but the last ends "
                    "with an END_OF_FILE blank (its size = the bytes left), ConsumeQueues of 5 units roll to a second "
                    "file, the 16-entry IndexFile rolls too.")
def build_roll_blank(root: Path) -> dict:
    results = put_all(root, [message(i, queue_id=i % 2, body=bytes([65 + i]) * 120) for i in range(12)])
    starts = [r.wrote_offset for r in results]
    rolled = [s for s in starts if s % 1024 == 0 and s]
    assert rolled, "expected at least one record at the start of a later segment"
    return {"record_offsets": starts, "records_starting_a_segment": rolled}


@case("batch", "A SEND_BATCH_MESSAGE of three entries between two single messages: the batch becomes three "
               "ordinary records with consecutive queue offsets, each carrying its entry's properties followed by "
               "the batch-level CLUSTER, all with the batch's born/store data and the same store timestamp.")
def build_batch(root: Path) -> dict:
    entries = [BatchEntry(body=f"batch member {k}".encode(),
                          properties={"KEYS": f"batch-key-{k}", "UNIQ_KEY": f"7F00000112340000ABCD0000000B{k:04X}",
                                      **({"TAGS": "TagBatch"} if k < 2 else {})}) for k in range(3)]
    batch = MessageRecord(topic="TopicTest", body=encode_batch(entries), queue_id=1, properties={"CLUSTER": CLUSTER},
                          born_timestamp=T0 - 500, born_host=BORN, store_host=STORE)
    with MessageStore.open(config(root), ManualClock(T0, step_ms=1)) as store:
        first = store.put_message(message(0, queue_id=1))
        r = store.put_messages(batch)
        last = store.put_message(message(9, queue_id=1))
        assert first.ok and r.ok and last.ok
    ar = r.append_result
    assert ar.msg_num == 3 and ar.logics_offset == 1
    return {"batch_offsets": list(ar.record_offsets), "batch_queue_offsets": [1, 2, 3],
            "batch_store_timestamp": ar.store_timestamp}


@case("ipv6", "IPv6 hosts: born host only (sysFlag 0x10, 20-byte BORNHOST, STORETIMESTAMP at 68), store host only "
              "(0x20, 56-hex-digit offset msgId) and both (0x30).")
def build_ipv6(root: Path) -> dict:
    v6a, v6b = Host("::1", 50000), Host("fe80::1", 10911)
    msgs = [message(0, born=v6a), message(1, store=v6b), message(2, born=v6a, store=v6b), message(3)]
    results = put_all(root, msgs)
    return {"sys_flags": [0x10, 0x20, 0x30, 0x0], "msg_ids": [r.msg_id for r in results]}


@case("v2_magic", "5.x message version 2 records (magic 0xDAA320AB, 2-byte topic length): one with a 150-character "
                  "topic (what autoMessageVersionOnTopicLen produces), one with a short topic, next to a v1 record. "
                  "Written as raw CommitLog bytes; recovery dispatched them into ConsumeQueues and the index.")
def build_v2(root: Path) -> dict:
    long_topic = "LongTopic_" + "x" * 140
    recs = [message(0).replace(magic_code=MESSAGE_MAGIC_CODE_V2, topic=long_topic, store_timestamp=T0 + 1),
            message(1).replace(magic_code=MESSAGE_MAGIC_CODE_V2, store_timestamp=T0 + 2),
            message(2).replace(queue_offset=1, store_timestamp=T0 + 3)]
    offsets = write_raw_log(root, recs)
    recover_and_shutdown(root, T0 + 1000)
    sizes = [len(encode_message(r)) for r in recs]
    assert sizes[1] == sizes[2] + 1  # the 2-byte topic length
    return {"record_offsets": offsets, "total_sizes": sizes, "long_topic_length": len(long_topic)}


VECTOR6_PROPERTIES = ("REAL_TOPIC\x01TopicTest\x02KEYS\x01KEY1\x02UNIQ_KEY\x017F00000112340000ABCD000000640001\x02"
                      "CLUSTER\x01DefaultCluster\x02DELAY\x013\x02WAIT\x01true\x02TAGS\x01TagA\x02REAL_QID\x010")


@case("delayed", "A delayed message (DELAY=3) parked in SCHEDULE_TOPIC_XXXX queue 2 with REAL_TOPIC/REAL_QID, "
                 "byte for byte vector 6 of the spec, followed by an ordinary message. Its ConsumeQueue unit's "
                 "tagsCode is the delivery time (store timestamp + 10 s), not a tag hash.")
def build_delayed(root: Path) -> dict:
    from pymq_ref.formats.properties import decode_properties

    parked = MessageRecord(topic="SCHEDULE_TOPIC_XXXX", body=b"Hello RocketMQ", queue_id=2,
                           properties=decode_properties(VECTOR6_PROPERTIES), properties_string=VECTOR6_PROPERTIES,
                           born_timestamp=1700000000000, born_host=Host("127.0.0.1", 50000), store_host=STORE,
                           store_timestamp=1700000000123)
    plain = message(1, store=STORE).replace(store_timestamp=1700000000124)
    offsets = write_raw_log(root, [parked, plain], crash=False)
    assert len(encode_message(parked)) == 258  # vector 6: TOTALSIZE 258
    # not abnormal recovery: it runs before the delay levels are loaded and would store the TAGS hash
    reput_and_shutdown(root, 1700000001000)
    return {"record_offsets": offsets, "schedule_unit_tags_code": 1700000000123 + 10_000,
            "plain_unit_tags_code": java_string_hash("TagA")}


@case("unicode", "Non-ASCII everywhere a string may be: a Chinese tag (its tagsCode is the Java hash of UTF-16 code "
                 "units), keys with Cyrillic/German letters, a user property whose name and value are Chinese and "
                 "emoji (a surrogate pair in Java), a UTF-8 body; lengths are UTF-8 byte counts.")
def build_unicode(root: Path) -> dict:
    msgs = [message(0, tags="订单", keys="你好", body="你好，世界 ✓ 🚀 héllo".encode()),
            message(1, tags="TagA", keys="ключ schlüssel", extra={"备注": "值 ✓ émoji 🚀"},
                    body="Grüße aus Köln".encode())]
    put_all(root, msgs)
    return {"tags_codes": {"订单": java_string_hash("订单"), "TagA": java_string_hash("TagA")},
            "index_keys": ["TopicTest#你好", "TopicTest#ключ", "TopicTest#schlüssel"]}


def _key_with_index_hash_zero(prefix: str) -> str:
    """A key whose ``prefix + key`` has Java hashCode Integer.MIN_VALUE (index hash 0, the
    "polygenelubricants" case): a counter stem plus a 4-character tail solved in base 31."""
    target = 0x80000000
    weights = [31 ** 3, 31 ** 2, 31, 1]
    lo, hi = 33, 126  # printable, no space (KEYS are space separated)
    for n in range(1_000_000):
        stem = f"min{n}-"
        h = java_string_hash(prefix + stem) & 0xFFFFFFFF
        r = (target - h * 31 ** 4) & 0xFFFFFFFF
        tail = []
        for i, w in enumerate(weights):
            rest = sum(weights[i + 1:])
            for c in range(lo, hi + 1):
                left = r - c * w
                if lo * rest <= left <= hi * rest:
                    tail.append(chr(c))
                    r = left
                    break
            else:
                break
        if len(tail) == 4 and r == 0:
            key = stem + "".join(tail)
            assert java_string_hash(prefix + key) == -(2 ** 31) and index_key_hash(prefix + key) == 0
            return key
    raise AssertionError("no key found")


@case("index_collision", "IndexFile collisions that only the CommitLog re-check resolves: keys 'orderAa'/'orderBB' "
                         "(identical Java hashCode, so identical key hash), two keys with different hashes in the same "
                         "slot (8 slots), and a key whose topic#key hashCode is Integer.MIN_VALUE (index hash 0, "
                         "slot 0). A query for one key walks a chain holding the others.")
def build_index_collision(root: Path) -> dict:
    slots = GEOMETRY["max_hash_slot_num"]
    h_a = index_key_hash("TopicTest#orderAa")
    assert h_a == index_key_hash("TopicTest#orderBB")
    base = "slot-0"
    other = next(f"slot-{n}" for n in range(1, 1000)
                 if index_key_hash(f"TopicTest#slot-{n}") % slots == index_key_hash(f"TopicTest#{base}") % slots
                 and index_key_hash(f"TopicTest#slot-{n}") != index_key_hash(f"TopicTest#{base}"))
    zero = _key_with_index_hash_zero("TopicTest#")
    msgs = [message(0, keys="orderAa"), message(1, keys="orderBB"), message(2, keys=base), message(3, keys=other),
            message(4, keys=zero)]
    put_all(root, msgs, max_index_num=32)  # one index file for all ten keys
    return {"same_hash": {"keys": ["orderAa", "orderBB"], "key_hash": h_a, "slot": h_a % slots},
            "same_slot": {"keys": [base, other], "key_hashes": [index_key_hash(f"TopicTest#{k}") for k in (base, other)],
                          "slot": index_key_hash(f"TopicTest#{base}") % slots},
            "hash_zero": {"key": zero, "java_hash_code": java_string_hash(f"TopicTest#{zero}"), "key_hash": 0,
                          "slot": 0}}


@case("dirty_tail", "A crash during a write: four good records, then the first 60 bytes of a fifth (size and magic "
                    "valid, the rest never written), and the abort file. Recovery keeps the four records and cuts the "
                    "CommitLog where the torn record starts.")
def build_dirty_tail(root: Path) -> dict:
    results = put_all(root, [message(i, queue_id=i % 2) for i in range(4)])
    end = results[-1].wrote_offset + results[-1].wrote_bytes
    torn = encode_message(message(4).replace(phy_offset=end, queue_offset=2, store_timestamp=T0 + 100))
    assert end + len(torn) + 8 <= GEOMETRY["mapped_file_size_commit_log"]  # it would have fit in this segment
    seg = root / "commitlog" / f"{0:020d}"
    data = bytearray(seg.read_bytes())
    data[end:end + 60] = torn[:60]
    seg.write_bytes(bytes(data))
    (root / "abort").write_bytes(b"")
    return {"good_end_offset": end, "torn_record_offset": end, "torn_bytes": 60, "torn_total_size": len(torn)}


# --------------------------------------------------------------------------------------- expected JSON

def inspect_doc(path: Path, geometry: dict) -> dict:
    """``pymq inspect --format json`` of one store file, without its path; index files are read
    with the case's geometry (an IndexFile does not record it, and small files are ambiguous)."""
    out = io.StringIO()
    status = inspect_path(path, InspectOptions(format="json", hash_slots=geometry["max_hash_slot_num"],
                                               index_num=geometry["max_index_num"]), out=out)
    doc = json.loads(out.getvalue())
    doc.pop("file", None)
    doc["exit_status"] = status
    return doc


def case_geometry(name: str) -> dict:
    return {**GEOMETRY, **({"max_index_num": 32} if name == "index_collision" else {})}


def doctor_doc(root: Path, geometry: dict | None) -> dict:
    """``pymq doctor --json`` reduced to what must not change: exit status and where the findings are."""
    options = DoctorOptions()
    if geometry:
        options.hash_slots, options.index_num = geometry["max_hash_slot_num"], geometry["max_index_num"]
    report = run_doctor(root, options)
    return {"exit_status": report.exit_status,
            "findings": [{k: v for k, v in p.to_json().items() if k != "reason"} for p in report.findings],
            "notes": [{k: v for k, v in p.to_json().items() if k != "reason"} for p in report.notes]}


def recovery_doc(root: Path, geometry: dict) -> dict:
    """What recovery keeps, from a read-only open (nothing is cut on disk)."""
    store = MessageStore.open(config(root, **geometry), ManualClock(T0), read_only=True)
    try:
        return {"last_exit_ok": store.last_exit_ok, "recovered_offset": store.recovered_offset,
                "min_offset": store.get_min_phy_offset(), "max_offset": store.get_max_phy_offset(),
                "queues": {f"{cq.topic}/{cq.queue_id}": [cq.min_offset_in_queue, cq.max_offset_in_queue]
                           for cq in sorted(store._all_cqs(), key=lambda q: (q.topic, q.queue_id))}}
    finally:
        store.shutdown()


def expected_for(root: Path, geometry: dict) -> dict:
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in ("lock", "abort"):
            files[rel] = {"size": path.stat().st_size}
            continue
        files[rel] = inspect_doc(path, geometry)
    return {"files": files, "recovery": recovery_doc(root, geometry), "doctor": doctor_doc(root, geometry)}


def generate(out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    for name, (description, build) in CASES.items():
        case_dir = out / name
        if case_dir.exists():
            shutil.rmtree(case_dir)
        root = case_dir / "store"
        root.mkdir(parents=True)
        facts = build(root)
        geometry = case_geometry(name)
        doc = {"case": name, "description": description, "geometry": geometry, "facts": facts}
        doc.update(expected_for(root, geometry))
        (case_dir / "expected.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n",
                                                encoding="utf-8")
    return list(CASES)


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    names = generate(out)
    print(f"corpus: {len(names)} cases written to {out}: {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
