"""What a broker's store holds after the differential scenario, decoded with pymq_ref's decoders into
plain JSON data that can be compared between the real 4.9.4 broker's store and ours (no tests here).

:func:`store_document` reads (never writes) a stopped broker's store: every CommitLog record
(decoded), every ConsumeQueue unit, every IndexFile entry, and the config files. :func:`masked`
removes what depends on the moment and the machine: store/born times and hosts, the data
versions' timestamps, the delivery times of delay-level units, index time differences, and the
store host inside message ids carried in properties.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from pymq_ref.formats.consume_queue import CQ_STORE_UNIT_SIZE, CQ_UNIT
from pymq_ref.formats.index_file import ENTRY, HASH_SLOT_SIZE, INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, decode_index_header
from pymq_ref.formats.message import iter_records

#: properties whose value holds an offset msg id (store host + offset): the host part is masked
MSG_ID_PROPERTIES = {"ORIGIN_MESSAGE_ID"}
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
#: the scenario's born timestamps are 1_700_000_000_000 + a step number; later ones are clock readings
BORN_LIMIT = 1_700_000_100_000


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def commit_log(root: Path) -> list[dict]:
    out = []
    for path in _files(root / "commitlog"):
        data = path.read_bytes()
        for rec in iter_records(data, with_spans=False, base=int(path.name)):
            if not hasattr(rec, "topic"):
                break  # the end-of-file blank
            out.append({"phy_offset": rec.phy_offset, "total_size": rec.total_size, "topic": rec.topic,
                        "queue_id": rec.queue_id, "queue_offset": rec.queue_offset, "sys_flag": rec.sys_flag,
                        "flag": rec.flag, "born_timestamp": rec.born_timestamp, "store_timestamp": rec.store_timestamp,
                        "born_host": str(rec.born_host), "store_host": str(rec.store_host),
                        "reconsume_times": rec.reconsume_times,
                        "prepared_transaction_offset": rec.prepared_transaction_offset,
                        "body": rec.body.hex(), "properties": dict(rec.properties)})
    return out


def consume_queues(root: Path) -> dict[str, dict[str, list]]:
    out: dict[str, dict[str, list]] = {}
    base = root / "consumequeue"
    for topic in sorted(os.listdir(base)) if base.is_dir() else []:
        for qid in sorted(os.listdir(base / topic), key=lambda q: int(q) if q.isdigit() else -1):
            units = []
            for path in _files(base / topic / qid):
                data = path.read_bytes()
                for pos in range(0, len(data) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
                    phy, size, tags = CQ_UNIT.unpack_from(data, pos)
                    if phy == 0 and size == 0 and tags == 0:
                        break
                    units.append([phy, size, tags])
            out.setdefault(topic, {})[qid] = units
    return out


def index_entries(root: Path, hash_slots: int) -> list[dict]:
    out = []
    for path in _files(root / "index"):
        data = path.read_bytes()
        header = decode_index_header(data, with_spans=False)
        first = INDEX_HEADER_SIZE + hash_slots * HASH_SLOT_SIZE
        entries = []
        for n in range(1, header.index_count):
            key_hash, phy, time_diff, prev = ENTRY.unpack_from(data, first + n * INDEX_ENTRY_SIZE)
            entries.append([key_hash, phy, time_diff, prev])
        out.append({"index_count": header.index_count, "hash_slot_count": header.hash_slot_count,
                    "begin_phy_offset": header.begin_phy_offset, "end_phy_offset": header.end_phy_offset,
                    "entries": entries})
    return out


def configs(root: Path) -> dict[str, object]:
    out = {}
    for name in ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json"):
        path = root / "config" / name
        if path.exists():
            from pymq_ref.remoting.bodies import parse_json
            out[name] = _plain(parse_json(path.read_text(encoding="utf-8")))
    return out


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "as_integer_ratio") and not isinstance(value, (int, float)):
        return float(value)
    return value


def store_document(root: str, hash_slots: int) -> dict:
    r = Path(root)
    return {"commitlog": commit_log(r), "consumequeue": consume_queues(r), "index": index_entries(r, hash_slots),
            "config": configs(r)}


def masked(doc: dict) -> dict:
    """What must be equal between the two stores."""
    doc = json.loads(json.dumps(doc))
    for rec in doc["commitlog"]:
        rec["store_timestamp"] = "<time>"
        if rec["born_timestamp"] > BORN_LIMIT:  # written by the broker itself (op, retry, DLQ messages)
            rec["born_timestamp"] = "<time>"
        rec["born_host"] = re.sub(r":\d+$", ":<port>", rec["born_host"])
        rec["store_host"] = "<host>"
        for key in MSG_ID_PROPERTIES & set(rec["properties"]):
            rec["properties"][key] = "<host>" + rec["properties"][key][-16:]
    for qid, units in doc["consumequeue"].get(SCHEDULE_TOPIC, {}).items():
        for unit in units:
            unit[2] = "<deliver time>"
    for f in doc["index"]:
        for e in f["entries"]:
            e[2] = "<time diff>"
    for name, content in doc["config"].items():
        if isinstance(content, dict) and isinstance(content.get("dataVersion"), dict):
            content["dataVersion"]["timestamp"] = "<time>"
    return doc
