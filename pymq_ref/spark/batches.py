"""Arrow record batches of store files: the columns the pymq Spark data sources produce.

One decoder, many views: CommitLog rows come from :func:`pymq_ref.spark.ranges.walk_range`,
which calls :func:`pymq_ref.formats.message.decode_record` — the parser behind the store, the
doctor and ``pymq inspect``. Column names are those of ``pymq inspect --format jsonl``, plus
what analytics need pulled out of the properties (``tags``, ``keys``, ``uniq_key``) and where
the record lies (``file``, ``position``). ConsumeQueue units and IndexFile entries are fixed
20-byte structs, decoded here with numpy in one pass over the mapped bytes (the layouts of
:mod:`pymq_ref.formats.consume_queue` and :mod:`pymq_ref.formats.index_file`).

Each ``*_batches`` function maps one file read-only (:func:`pymq_ref.tools.segments.open_readonly`),
decodes one byte range and yields ``pyarrow.RecordBatch`` objects of at most ``batch_rows``
rows. No Spark import: the single-process benchmark baseline runs these same functions.
"""

from __future__ import annotations

import os
from itertools import accumulate
from operator import itemgetter
from typing import Iterator
from zlib import crc32

import numpy as np
import pyarrow as pa

from ..formats.consume_queue import BLANK_UNIT_SIZE_FIELD, CQ_STORE_UNIT_SIZE
from ..formats.index_file import INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, decode_index_header, entry_position
from ..formats.message import BlankRecord, MessageRecord
from ..formats.msgid import offset_msg_id
from ..store.fileio import data_ranges
from ..tools.segments import open_readonly
from .ranges import Gap, segment_file_base, walk_range

#: Rows per CommitLog batch (large: per-batch costs on both sides of the JVM boundary stay small) ...
BATCH_ROWS = 1 << 16
#: ... and per batch that carries message bodies (~1 KiB and more each).
BODY_BATCH_ROWS = 8192
_str_map = pa.map_(pa.string(), pa.string())

COMMITLOG_SCHEMA = pa.schema([
    ("type", pa.string()),  # message | blank | gap (blank and gap rows only with records=all)
    ("file", pa.string()), ("position", pa.int64()),
    ("phy_offset", pa.int64()), ("total_size", pa.int32()), ("magic_code", pa.int32()),
    ("body_crc", pa.int32()), ("crc_ok", pa.bool_()), ("queue_id", pa.int32()), ("flag", pa.int32()),
    ("queue_offset", pa.int64()), ("sys_flag", pa.int32()), ("born_timestamp", pa.int64()),
    ("born_host", pa.string()), ("store_timestamp", pa.int64()), ("store_host", pa.string()),
    ("reconsume_times", pa.int32()), ("prepared_transaction_offset", pa.int64()), ("topic", pa.string()),
    ("properties", _str_map), ("tags", pa.string()), ("keys", pa.list_(pa.string())), ("uniq_key", pa.string()),
    ("body", pa.binary()), ("msg_id", pa.string()), ("reason", pa.string()),
])

CONSUMEQUEUE_SCHEMA = pa.schema([
    ("topic", pa.string()), ("queue_id", pa.int32()), ("queue_offset", pa.int64()),
    ("phy_offset", pa.int64()), ("size", pa.int32()), ("tags_code", pa.int64()), ("is_blank", pa.bool_()),
    ("file", pa.string()), ("position", pa.int64()),
])

INDEX_SCHEMA = pa.schema([
    ("file", pa.string()), ("entry_number", pa.int32()), ("key_hash", pa.int32()), ("phy_offset", pa.int64()),
    ("time_diff", pa.int32()), ("prev_index", pa.int32()), ("begin_timestamp", pa.int64()),
    ("end_timestamp", pa.int64()), ("index_count", pa.int32()), ("hash_slot_num", pa.int32()),
])


def spark_ddl(schema: pa.Schema) -> str:
    """The Spark DDL string of one of the schemas above."""
    names = {pa.string(): "string", pa.int64(): "bigint", pa.int32(): "int", pa.bool_(): "boolean",
             pa.binary(): "binary", _str_map: "map<string,string>", pa.list_(pa.string()): "array<string>"}
    return ", ".join(f"`{f.name}` {names[f.type]}" for f in schema)


# --------------------------------------------------------------------------- CommitLog

_HOST_TEXT: dict = {}
_MSGID_PREFIX: dict = {}
_MASK64 = (1 << 64) - 1


def _host_text(host) -> str:
    text = _HOST_TEXT.get(host)
    if text is None:
        text = _HOST_TEXT[host] = str(host)
    return text


def _msg_id(host, phy: int) -> str:
    """``offset_msg_id`` with the host part memoised (hex of host bytes, then the 8-byte offset)."""
    prefix = _MSGID_PREFIX.get(host)
    if prefix is None:
        prefix = _MSGID_PREFIX[host] = offset_msg_id(host, 0)[:-16]
    return f"{prefix}{phy & _MASK64:016X}"


#: Raw MessageRecord fields each column is built from (what a scan keeps per record until its batch is built).
_NEEDS = {
    "type": (), "file": (), "position": ("phy_offset",), "crc_ok": ("body", "body_crc"),
    "properties": ("properties",), "tags": ("properties",), "keys": ("properties",), "uniq_key": ("properties",),
    "msg_id": ("store_host", "phy_offset"), "reason": (),
}
_FIELD_INDEX = {name: i for i, name in enumerate(MessageRecord._fields)}


def _raw_fields(schema: pa.Schema) -> tuple[str, ...]:
    """The MessageRecord fields the columns of ``schema`` are built from, in record order."""
    wanted = {raw for f in schema for raw in _NEEDS.get(f.name, (f.name,))}
    return tuple(sorted(wanted, key=_FIELD_INDEX.__getitem__))


class _Kept:
    """What a scan keeps of its records until a batch is built: one list per needed raw field (ints and
    strings the garbage collector need not track; the record itself is freed as soon as it is decoded),
    or the records themselves when most fields are needed. Call order: ``add(record)`` per record,
    ``rows()`` to see how many, ``take()`` to get them and start over (then fetch ``add``/``rows`` again)."""

    def __init__(self, fields: tuple[str, ...]):
        self.fields, self.whole = fields, len(fields) > 8
        self._lists: list[list] | None = None
        self.take()

    def take(self) -> dict:
        """The kept values as ``{field: sequence, "#": row count}``; starts a new batch."""
        old = self._lists
        self._lists = [[] for _ in self.fields] if self.fields and not self.whole else [[]]
        appends = [lst.append for lst in self._lists]
        if self.whole:
            self.add = appends[0]
        elif not self.fields:
            self.add = lambda record, _append=appends[0]: _append(None)
        elif len(self.fields) == 1:
            i, a0 = _FIELD_INDEX[self.fields[0]], appends[0]
            self.add = lambda record: a0(record[i])
        elif len(self.fields) == 2:
            (i, j), (a0, a1) = [_FIELD_INDEX[f] for f in self.fields], appends

            def add(record):
                a0(record[i])
                a1(record[j])
            self.add = add
        else:
            pairs = [(a, _FIELD_INDEX[f]) for a, f in zip(appends, self.fields)]

            def add(record):
                for append, k in pairs:
                    append(record[k])
            self.add = add
        self.rows = self._lists[0].__len__
        if old is None:
            return {}
        if self.whole:
            return {"#": len(old[0]), **{f: list(map(itemgetter(_FIELD_INDEX[f]), old[0])) for f in self.fields}}
        return {"#": len(old[0]), **dict(zip(self.fields, old))}


def _message_batch(c: dict, name: str, base: int, body: bool, schema: pa.Schema = COMMITLOG_SCHEMA) -> pa.RecordBatch:
    """One batch from the per-field sequences ``c`` of :meth:`_Kept.take`: one ``pa.array`` per column
    of ``schema`` (a projection of COMMITLOG_SCHEMA)."""
    n = c["#"]
    host_text = _HOST_TEXT.get

    def properties():
        props = c["properties"]
        return pa.MapArray.from_arrays(pa.array([0, *accumulate(map(len, props))], pa.int32()),
                                       pa.array([k for p in props for k in p], pa.string()),
                                       pa.array([v for p in props for v in p.values()], pa.string()))

    def keys():
        lists = [[k for k in p["KEYS"].split(" ") if k] if "KEYS" in p else () for p in c["properties"]]
        return pa.ListArray.from_arrays(pa.array([0, *accumulate(map(len, lists))], pa.int32()),
                                        pa.array([k for ks in lists for k in ks], pa.string()))

    def plain(field: str, type_: pa.DataType):
        return lambda: pa.array(c[field], type_)

    build = {
        "type": lambda: pa.array(["message"] * n, pa.string()),
        "file": lambda: pa.array([name] * n, pa.string()),
        "position": lambda: pa.array([phy - base for phy in c["phy_offset"]], pa.int64()),
        "crc_ok": lambda: pa.array([crc == (crc32(b) & 0x7FFFFFFF) if b else True
                                    for b, crc in zip(c["body"], c["body_crc"])], pa.bool_()),
        "born_host": lambda: pa.array([host_text(h) or _host_text(h) for h in c["born_host"]], pa.string()),
        "store_host": lambda: pa.array([host_text(h) or _host_text(h) for h in c["store_host"]], pa.string()),
        "properties": properties,
        "tags": lambda: pa.array([p.get("TAGS") for p in c["properties"]], pa.string()),
        "keys": keys,
        "uniq_key": lambda: pa.array([p.get("UNIQ_KEY") for p in c["properties"]], pa.string()),
        "body": lambda: pa.array(c["body"] if body else [None] * n, pa.binary()),
        "msg_id": lambda: pa.array([_msg_id(h, phy) for h, phy in zip(c["store_host"], c["phy_offset"])],
                                   pa.string()),
        "reason": lambda: pa.nulls(n, pa.string()),
    }
    return pa.RecordBatch.from_arrays([(build.get(f.name) or plain(f.name, f.type))() for f in schema],
                                      schema=schema)


def project(columns: str | None) -> pa.Schema:
    """The CommitLog schema restricted to ``columns`` (comma-separated names, in schema order); all if None."""
    if not columns:
        return COMMITLOG_SCHEMA
    wanted = {c.strip() for c in columns.split(",") if c.strip()}
    unknown = wanted - set(COMMITLOG_SCHEMA.names)
    if unknown:
        raise ValueError(f"unknown column(s) {sorted(unknown)}: expected names of {COMMITLOG_SCHEMA.names}")
    return pa.schema([f for f in COMMITLOG_SCHEMA if f.name in wanted])


def _other_batch(items: list, name: str, base: int, schema: pa.Schema = COMMITLOG_SCHEMA) -> pa.RecordBatch:
    """Blank and gap rows (``records=all``): position, size, magic code or reason; the rest null."""
    rows = []
    for item in items:
        if isinstance(item, BlankRecord):
            rows.append({"type": "blank", "file": name, "position": item.phy_offset - base,
                         "phy_offset": item.phy_offset, "total_size": item.total_size, "magic_code": item.magic_code})
        else:
            rows.append({"type": "gap", "file": name, "position": item.position, "phy_offset": base + item.position,
                         "total_size": item.length, "reason": item.reason})
    names = set(schema.names)
    return pa.RecordBatch.from_pylist([{k: v for k, v in row.items() if k in names} for row in rows], schema=schema)


def commitlog_batches(path: str, name: str, name_base: int | None, start: int, end: int, *,
                      records: str = "messages", body: bool = True, schema: pa.Schema = COMMITLOG_SCHEMA,
                      batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """Rows of the records that start in ``[start, end)`` of one segment file (read-only mmap).

    ``records="all"`` adds a row per END_OF_FILE blank and per :class:`~pymq_ref.spark.ranges.Gap`
    (damaged bytes the walk skipped, with the decoder's ``reason``), after the messages.
    ``schema`` (see :func:`project`) limits the columns built.
    """
    kept = _Kept(_raw_fields(schema))
    if "body" in kept.fields:  # bodies (kept for the body or crc_ok column) make rows large: moderate batches
        batch_rows = min(batch_rows, BODY_BATCH_ROWS)
    with open_readonly(path) as buf:
        base = segment_file_base(buf, name_base)
        others = []
        add, rows = kept.add, kept.rows
        message = MessageRecord
        for item in walk_range(buf, start, end, base, file_data_ranges(path, len(buf))):
            if item.__class__ is message:
                add(item)
                if rows() >= batch_rows:
                    yield _message_batch(kept.take(), name, base, body, schema)
                    add, rows = kept.add, kept.rows
            else:
                others.append(item)
        if rows():
            yield _message_batch(kept.take(), name, base, body, schema)
        if others and records == "all":
            yield _other_batch(others, name, base, schema)


def file_data_ranges(path: str, size: int) -> list[tuple[int, int]]:
    """The ranges of the file that are not holes (all of it where the file system cannot tell)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return data_ranges(fd, 0, size)
    finally:
        os.close(fd)


def _overlaps(data: list[tuple[int, int]], lo: int, hi: int) -> bool:
    return any(a < hi and lo < b for a, b in data)


# --------------------------------------------------------------------------- ConsumeQueue

def _native_columns(buf, dtype: np.dtype, count: int, offset: int) -> list[np.ndarray]:
    """Native-endian copies of the big-endian struct fields (the view on the mmap dies here, so the
    file can be unmapped while the copies live on)."""
    view = np.frombuffer(buf, dtype, count, offset)
    return [view[k].astype(view[k].dtype.newbyteorder("=")) for k in dtype.names]


_CQ_DTYPE = np.dtype([("phy", ">i8"), ("size", ">i4"), ("tags", ">i8")])


def consumequeue_batches(path: str, name: str, base: int, topic: str, queue_id: int, start: int, end: int,
                         batch_rows: int = 1 << 16) -> Iterator[pa.RecordBatch]:
    """Units in ``[start, end)`` (multiples of 20) of one ConsumeQueue file; all-zero units are skipped."""
    with open_readonly(path) as buf:
        end = min(end, len(buf) - len(buf) % CQ_STORE_UNIT_SIZE)
        data = file_data_ranges(path, len(buf))
        for lo in range(start, end, batch_rows * CQ_STORE_UNIT_SIZE):
            hi = min(end, lo + batch_rows * CQ_STORE_UNIT_SIZE)
            if not _overlaps(data, lo, hi):
                continue  # a hole of a sparse file: zeros, not read
            phy, size, tags = _native_columns(buf, _CQ_DTYPE, (hi - lo) // CQ_STORE_UNIT_SIZE, lo)
            keep = (phy != 0) | (size != 0) | (tags != 0)
            idx = np.nonzero(keep)[0]
            if not len(idx):
                continue
            position = lo + idx.astype(np.int64) * CQ_STORE_UNIT_SIZE
            n = len(idx)
            yield pa.RecordBatch.from_arrays([
                pa.array([topic] * n, pa.string()), pa.array(np.full(n, queue_id, np.int32)),
                pa.array((base + position) // CQ_STORE_UNIT_SIZE), pa.array(phy[idx]), pa.array(size[idx]),
                pa.array(tags[idx]), pa.array(size[idx] == BLANK_UNIT_SIZE_FIELD),
                pa.array([name] * n, pa.string()), pa.array(position),
            ], schema=CONSUMEQUEUE_SCHEMA)


# --------------------------------------------------------------------------- IndexFile

_ENTRY_DTYPE = np.dtype([("hash", ">i4"), ("phy", ">i8"), ("diff", ">i4"), ("prev", ">i4")])


def index_batches(path: str, name: str, hash_slots: int, first: int, last: int,
                  batch_rows: int = 1 << 16) -> Iterator[pa.RecordBatch]:
    """Entries number ``first .. last-1`` of one IndexFile that are not all zero, with the file's header."""
    with open_readonly(path) as buf:
        if len(buf) < INDEX_HEADER_SIZE:
            return  # a file a power loss left empty: no entries
        header = decode_index_header(buf, 0, with_spans=False)
        data = file_data_ranges(path, len(buf))
        for lo in range(first, last, batch_rows):
            hi = min(last, lo + batch_rows)
            if not _overlaps(data, entry_position(lo, hash_slots), entry_position(hi, hash_slots)):
                continue  # a hole of a sparse file: zeros, not read
            cols = dict(zip(("hash", "phy", "diff", "prev"),
                            _native_columns(buf, _ENTRY_DTYPE, hi - lo, entry_position(lo, hash_slots))))
            keep = (cols["hash"] != 0) | (cols["phy"] != 0) | (cols["diff"] != 0) | (cols["prev"] != 0)
            idx = np.nonzero(keep)[0]
            if not len(idx):
                continue
            n = len(idx)
            yield pa.RecordBatch.from_arrays([
                pa.array([name] * n, pa.string()), pa.array((lo + idx).astype(np.int32)),
                pa.array(cols["hash"][idx]), pa.array(cols["phy"][idx]), pa.array(cols["diff"][idx]),
                pa.array(cols["prev"][idx]), pa.array(np.full(n, header.begin_timestamp, np.int64)),
                pa.array(np.full(n, header.end_timestamp, np.int64)),
                pa.array(np.full(n, header.index_count, np.int32)), pa.array(np.full(n, hash_slots, np.int32)),
            ], schema=INDEX_SCHEMA)


def index_entry_capacity(file_size: int, hash_slots: int) -> int:
    """Entry numbers run 1 .. maxIndexNum-1 (entry 0 is never written)."""
    return (file_size - INDEX_HEADER_SIZE - 4 * hash_slots) // INDEX_ENTRY_SIZE
