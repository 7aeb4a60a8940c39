"""Recognise the files of a RocketMQ store and walk each kind read-only, as items with spans.

A *walker* turns one file's bytes into a sequence of items (each with ``to_json()``, and
``spans``/``title`` for the byte views), ending where the written data ends. All decoding is
done by :mod:`pymq_ref.formats`; this module only knows the store's directory layout
(the book's reference appendix, §Store layout) and where each walk starts and stops. Nothing here writes.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import FormatError
from ..formats import fastjson
from ..formats.checkpoint import decode_checkpoint
from ..formats.consume_queue import CQ_STORE_UNIT_SIZE, decode_cq_unit
from ..formats.consume_queue_ext import LONG_MIN, ExtEnd, iter_ext_units, undecorate
from ..formats.index_file import (DEFAULT_MAX_HASH_SLOT_NUM, DEFAULT_MAX_INDEX_NUM, INDEX_HEADER_SIZE,
                                  decode_index_entry, decode_index_header, entry_position, index_file_size)
from .segments import INDEX_NAME, EndOfData, Finding, segment_base, walk_segment

KINDS = ("commitlog", "consumequeue", "consumequeue_ext", "index", "checkpoint", "config")


class UnknownFileKind(ValueError):
    """The file is not recognisably part of a RocketMQ store."""


def detect_kind(path: Path) -> str:
    """The kind of a store file, from where it lives and how it is named (see the book's reference appendix, §Store
    layout)."""
    name, parent = path.name, path.parent
    if name == "checkpoint":
        return "checkpoint"
    if name.endswith((".json", ".json.bak")):
        return "config"
    if parent.name == "index" or INDEX_NAME.match(name):
        return "index"
    if parent.parent.parent.name == "consumequeue":
        return "consumequeue"
    if parent.parent.parent.name == "consumequeue_ext":
        return "consumequeue_ext"
    if parent.name == "commitlog" or segment_base(path) or name == "0" * 20:
        return "commitlog"
    raise UnknownFileKind(
        f"{path}: cannot tell which store file this is; expected commitlog/<20 digits>, "
        f"consumequeue[_ext]/<topic>/<queue>/<20 digits>, index/<17 digits>, checkpoint or config/*.json "
        f"(or pass --kind {'|'.join(KINDS)})")


@dataclass(frozen=True, slots=True)
class Item:
    """One decoded thing of a file: its JSON object, and its spans for the byte views."""

    json: dict
    title: str
    spans: tuple = ()

    def to_json(self) -> dict:
        return self.json


# --------------------------------------------------------------------------- walkers

def walk_commitlog(buf, path: Path, start: int = 0, **_) -> Iterator:
    """Records of a CommitLog segment (see :func:`walk_segment`)."""
    return walk_segment(buf, base=segment_base(path), start=start, with_spans=True)


def walk_consumequeue(buf, path: Path, start: int = 0, **_) -> Iterator:
    """Units of a ConsumeQueue file: ``queue_offset`` = byte offset / 20; ends at the first all-zero unit."""
    base = segment_base(path)
    topic, queue_id = path.parent.parent.name, path.parent.name
    if start % CQ_STORE_UNIT_SIZE:
        yield Finding(base + start, "phy_offset", f"consume_queue_unit at offset {base + start}: "
                      f"expected a multiple of {CQ_STORE_UNIT_SIZE}")
        return
    if len(buf) % CQ_STORE_UNIT_SIZE:
        yield Finding(base + len(buf), "size", f"consume queue file size {len(buf)}: expected a multiple of "
                      f"{CQ_STORE_UNIT_SIZE}; the trailing {len(buf) % CQ_STORE_UNIT_SIZE} bytes are ignored", fatal=False)
    for pos in range(start, len(buf) - CQ_STORE_UNIT_SIZE + 1, CQ_STORE_UNIT_SIZE):
        unit = decode_cq_unit(buf, pos, base=base)
        if unit.is_empty:
            yield EndOfData(base + pos)
            return
        queue_offset = (base + pos) // CQ_STORE_UNIT_SIZE
        doc = {"type": "cq_unit", "topic": topic, "queue_id": _int_or_name(queue_id), "queue_offset": queue_offset,
               "phy_offset": unit.phy_offset, "size": unit.size, "tags_code": unit.tags_code,
               "blank": unit.is_blank}
        if unit.is_ext_address:  # enableConsumeQueueExt: the field holds a ConsumeQueueExt address
            doc["ext_offset"] = undecorate(unit.tags_code)
            tags = (f"tagsCode field = ext address {unit.tags_code} "
                    f"(consumequeue_ext/{topic}/{queue_id} offset {doc['ext_offset']})")
        else:
            tags = f"tagsCode {unit.tags_code}"
        title = (f"unit {queue_offset}: blank filler" if unit.is_blank else
                 f"unit {queue_offset}: CommitLog offset {unit.phy_offset}, {unit.size} bytes, {tags}")
        yield Item(doc, title, unit.spans)
        if not unit.is_valid:
            yield Finding(base + pos, "size", f"consume_queue_unit at offset {base + pos}: expected phy_offset >= 0 "
                          f"and size > 0, found ({unit.phy_offset}, {unit.size})")
            return
    yield EndOfData(base + len(buf) - len(buf) % CQ_STORE_UNIT_SIZE)


def walk_consumequeue_ext(buf, path: Path, start: int = 0, **_) -> Iterator:
    """Units of a ConsumeQueueExt file (the book's reference appendix, §ConsumeQueueExt unit), then the filler or
    the end of data.

    Each unit's ``address`` is what a ConsumeQueue unit stores to point at it."""
    base = segment_base(path)
    topic, queue_id = path.parent.parent.name, path.parent.name
    for item in iter_ext_units(buf, start, base=base, with_spans=True):
        if isinstance(item, ExtEnd):
            if item.kind == "filler":
                yield Item({"type": "cq_ext_filler", "offset": item.offset}, f"end-of-file filler (ff ff) @ "
                           f"{item.offset}: the next unit did not fit, it is in the next file", item.spans)
            yield EndOfData(item.offset)
            return
        offset, unit = item
        address = offset + LONG_MIN
        doc = {"type": "cq_ext_unit", "topic": topic, "queue_id": _int_or_name(queue_id), "offset": offset,
               "address": address, "size": unit.size, "tags_code": unit.tags_code,
               "msg_store_time": unit.msg_store_time, "bit_map_size": unit.bit_map_size,
               "filter_bit_map": unit.filter_bit_map.hex() if unit.filter_bit_map is not None else None}
        title = (f"ext unit @ {offset} (address {address}): tagsCode {unit.tags_code}, store time "
                 f"{unit.msg_store_time}, {unit.bit_map_size}-byte bitmap")
        yield Item(doc, title, unit.spans)


def index_geometry(buf, hash_slots: int | None = None, index_num: int | None = None) -> tuple[int, int]:
    """``(maxHashSlotNum, maxIndexNum)`` of an index file held in ``buf``.

    The file does not store them; its size is ``40 + 4*slots + 20*entries``. Given values win;
    otherwise RocketMQ's defaults when the size matches, else the geometry under which the first
    entries look as RocketMQ writes them: CommitLog offsets non-decreasing, each chaining back
    to an earlier entry and hashing into a slot whose head is at or after it.
    """
    size = len(buf)
    if hash_slots or index_num:
        hash_slots = hash_slots or (size - INDEX_HEADER_SIZE - 20 * index_num) // 4
        index_num = index_num or (size - INDEX_HEADER_SIZE - 4 * hash_slots) // 20
    elif size == index_file_size(DEFAULT_MAX_HASH_SLOT_NUM, DEFAULT_MAX_INDEX_NUM):
        hash_slots, index_num = DEFAULT_MAX_HASH_SLOT_NUM, DEFAULT_MAX_INDEX_NUM
    else:
        hash_slots, index_num = _infer_geometry(buf)
    if hash_slots <= 0 or index_num <= 0 or index_file_size(hash_slots, index_num) != size:
        raise ValueError(f"index file of {size} bytes does not match maxHashSlotNum={hash_slots}, "
                         f"maxIndexNum={index_num} (expected 40 + 4*slots + 20*entries bytes)")
    return hash_slots, index_num


def _infer_geometry(buf, max_candidates: int = 200_000, max_probe: int = 4096) -> tuple[int, int]:
    size = len(buf)
    if size < INDEX_HEADER_SIZE + 24:
        raise ValueError(f"index file of {size} bytes is too small")
    header = decode_index_header(buf, with_spans=False)
    count = header.effective_index_count
    body = size - INDEX_HEADER_SIZE
    candidates = [s for s in range(1, min(body // 4, max_candidates)) if (body - 4 * s) % 20 == 0 and body - 4 * s >= 20]
    ratio = [s for s in candidates if (body - 4 * s) // 20 == 4 * s]  # RocketMQ's defaults keep 1:4
    if count <= 1:  # an empty file: every geometry shows the same nothing; prefer the 1:4 ratio
        if ratio or candidates:
            slots = (ratio or candidates)[-1]
            return slots, (body - 4 * slots) // 20
    for slots in ratio + [s for s in candidates if s not in ratio]:
        if _consistent(buf, slots, count, header.hash_slot_count, max_probe):
            return slots, (body - 4 * slots) // 20
    raise ValueError(f"index file of {size} bytes: cannot infer maxHashSlotNum/maxIndexNum; "
                     f"pass --hash-slots and --index-num")


def _consistent(buf, slots: int, count: int, hash_slot_count: int, max_probe: int) -> bool:
    """Does the file look as RocketMQ writes it under ``slots``? Non-empty slots number the
    header's hashSlotCount and point at entries; entries (up to ``max_probe``) have CommitLog
    offsets in order, chain back to earlier entries and hash into a slot whose head is at or after them."""
    entries = (len(buf) - INDEX_HEADER_SIZE - 4 * slots) // 20
    if count > entries:
        return False
    heads = array("i", bytes(buf[INDEX_HEADER_SIZE:INDEX_HEADER_SIZE + 4 * slots]))
    if array("i", [1]).tobytes()[0] == 1:
        heads.byteswap()
    used = [h for h in heads if h]
    if len(used) != hash_slot_count or any(not 0 < h < count for h in used):
        return False
    last_phy = -1
    for number in range(1, min(count, max_probe)):
        entry = decode_index_entry(buf, entry_position(number, slots), with_spans=False)
        if (entry.key_hash < 0 or not number <= heads[entry.key_hash % slots] < count
                or not 0 <= entry.prev_index < number or entry.phy_offset < last_phy or entry.time_diff < 0):
            return False
        last_phy = entry.phy_offset
    return True


def walk_index(buf, path: Path, hash_slots: int | None = None, index_num: int | None = None, **_) -> Iterator:
    """The header, the non-empty hash slots, then entries 1 .. indexCount-1 of an IndexFile."""
    try:
        slots, entries = index_geometry(buf, hash_slots, index_num)
    except ValueError as exc:
        yield Finding(0, "size", str(exc))
        return
    header = decode_index_header(buf)
    yield Item({"type": "index_header", "file": path.name, "begin_timestamp": header.begin_timestamp,
                "end_timestamp": header.end_timestamp, "begin_phy_offset": header.begin_phy_offset,
                "end_phy_offset": header.end_phy_offset, "hash_slot_count": header.hash_slot_count,
                "index_count": header.index_count, "max_hash_slot_num": slots, "max_index_num": entries},
               f"index header: {max(0, header.index_count - 1)} entries in {header.hash_slot_count} slots", header.spans)
    values = array("i", bytes(buf[INDEX_HEADER_SIZE:INDEX_HEADER_SIZE + 4 * slots]))
    if values.itemsize == 4 and array("i", [1]).tobytes()[0] == 1:
        values.byteswap()  # big-endian on disk
    count = header.effective_index_count
    for slot, head in enumerate(values):
        if head:
            doc = {"type": "index_slot", "slot": slot, "head": head}
            if not 0 < head < count:
                yield Finding(INDEX_HEADER_SIZE + 4 * slot, f"slot[{slot}]",
                              f"index_slot[{slot}] at offset {INDEX_HEADER_SIZE + 4 * slot}: expected an entry number "
                              f"in [1, {count - 1}], found {head}", fatal=False)
            yield Item(doc, f"slot {slot} -> entry {head}")
    for number in range(1, min(count, entries)):
        entry = decode_index_entry(buf, entry_position(number, slots), number=number)
        doc = {"type": "index_entry", "number": number, "key_hash": entry.key_hash, "phy_offset": entry.phy_offset,
               "time_diff": entry.time_diff, "prev_index": entry.prev_index,
               "store_timestamp": header.begin_timestamp + 1000 * entry.time_diff}
        yield Item(doc, f"entry {number}: key hash {entry.key_hash}, CommitLog offset {entry.phy_offset}, "
                        f"+{entry.time_diff} s, previous {entry.prev_index}", entry.spans)
    yield EndOfData(entry_position(min(count, entries), slots))


def walk_checkpoint(buf, path: Path, **_) -> Iterator:
    cp = decode_checkpoint(buf)
    yield Item({"type": "checkpoint", "physic_msg_timestamp": cp.physic_msg_timestamp,
                "logics_msg_timestamp": cp.logics_msg_timestamp, "index_msg_timestamp": cp.index_msg_timestamp,
                "min_timestamp": cp.min_timestamp, "min_timestamp_index": cp.min_timestamp_index},
               "checkpoint", cp.spans)
    if len(buf) != 4096:
        yield Finding(len(buf), "size", f"checkpoint file size {len(buf)}: expected 4096", fatal=False)


def walk_config(buf, path: Path, **_) -> Iterator:
    text = bytes(buf).decode("utf-8", "replace")
    try:
        content = fastjson.loads(text) if text.strip() else None
    except ValueError as exc:
        yield Finding(0, "json", f"{path.name}: expected fastjson/JSON text: {exc}")
        return
    yield Item({"type": "config", "file": path.name, "content": _jsonable(content)}, path.name)


WALKERS = {"commitlog": walk_commitlog, "consumequeue": walk_consumequeue, "consumequeue_ext": walk_consumequeue_ext,
           "index": walk_index,
           "checkpoint": walk_checkpoint, "config": walk_config}


def _int_or_name(text: str):
    return int(text) if text.isdigit() else text


def _jsonable(value):
    """fastjson's int map keys as strings, so the standard json module can print them."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def safe_walk(walker, buf, path: Path, **options) -> Iterator:
    """Run a walker, turning a FormatError it raises into a fatal Finding."""
    try:
        yield from walker(buf, path, **options)
    except FormatError as exc:
        yield Finding(exc.offset, exc.field, str(exc))
