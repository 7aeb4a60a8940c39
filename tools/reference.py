#!/usr/bin/env python3
"""Generate ``book/reference.md``, the book's reference appendix, from the package's own tables.

Every byte layout is read from the declarative schemas the codecs are tested against
(:mod:`pymq_ref.formats.schemas`), the frame layout from the remoting codec's own field spans,
the code tables from :mod:`pymq_ref.remoting.codes` and :mod:`pymq_ref.remoting.protocol`, the
header tables from the header classes, the properties keys from
:data:`pymq_ref.formats.properties.PROPERTY_DOCS`, the delay and retry tables from the functions
that compute them. So the appendix cannot drift from the code: ``make book`` regenerates it and
``tools/reference.py --check`` (run by the tests) fails when the committed file is stale.

Usage::

    python tools/reference.py            # write book/reference.md
    python tools/reference.py --check    # exit 1 if book/reference.md is not what would be written
    python tools/reference.py --stdout   # print it

Pure function of the package (no clock, no randomness): two runs write the same bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import construct as cs  # noqa: E402

from pymq_ref.formats import (beans, checkpoint, consume_queue, consume_queue_ext, index_file, message,  # noqa: E402
                              properties, schemas, sysflag, timer)
from pymq_ref.formats.fastjson import camel  # noqa: E402
from pymq_ref.remoting import codec, codes, explain, protocol  # noqa: E402
from pymq_ref.remoting.command import RemotingCommand  # noqa: E402
from pymq_ref.remoting.header import CommandHeader  # noqa: E402
from pymq_ref.remoting.headers import ALL_HEADERS  # noqa: E402
from pymq_ref.store import config_files, delay  # noqa: E402
from pymq_ref.broker.retry import retry_schedule  # noqa: E402

OUT = ROOT / "book" / "reference.md"

_FMT_TYPES = {"b": "int8", "B": "uint8", "h": "int16", "H": "uint16", "i": "int32", "l": "int32", "I": "uint32",
              "L": "uint32", "q": "int64", "Q": "uint64"}


# -- small Markdown helpers ---------------------------------------------------------------------

def cell(text: object) -> str:
    """A table cell: pipes escaped, newlines folded."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(heads: list[str], rows: list[list[object]]) -> str:
    """A Markdown table in a ``pymq-ref-table`` container (the book's CSS sets it compact)."""
    out = ["```{container} pymq-ref-table", "| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    out += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n```\n"


def code(text: object) -> str:
    return f"`{text}`"


def src(path: str) -> str:
    """A path in the RocketMQ 4.9.4 source tree, shown as code."""
    return f"`{path}`"


def label(name: str) -> str:
    return f"({name})=\n"


def header_label(cls: type[CommandHeader]) -> str:
    return "ref-header-" + cls.JAVA.lower()


# -- layouts from the construct schemas ---------------------------------------------------------

def _unwrap(sc):
    while isinstance(sc, cs.Renamed):
        sc = sc.subcon
    return sc


def _fixed_size(sc) -> int | None:
    try:
        return sc.sizeof()
    except (cs.SizeofError, KeyError, AttributeError, TypeError):
        return None


def _type_of(sc) -> str:
    inner = _unwrap(sc)
    if isinstance(inner, cs.FormatField):
        return _FMT_TYPES.get(inner.fmtstr[-1], inner.fmtstr)
    if isinstance(inner, cs.IfThenElse):
        a, b = _type_of(inner.thensubcon), _type_of(inner.elsesubcon)
        return a if a == b else f"{b} or {a}"
    if isinstance(inner, (cs.Bytes, cs.GreedyBytes)):
        return "bytes"
    return type(inner).__name__


def _size_of(sc, previous: str | None) -> tuple[str, int | None]:
    """(size as shown, size in bytes when it is fixed in the common layout)."""
    inner = _unwrap(sc)
    size = _fixed_size(inner)
    if size is not None:
        return str(size), size
    if isinstance(inner, cs.IfThenElse):
        a, b = _fixed_size(inner.thensubcon), _fixed_size(inner.elsesubcon)
        if a is not None and b is not None:
            return f"{b} or {a}", b  # the else branch is the common one (IPv4 host, v1 magic)
    return code(previous or "n"), None


def layout_rows(name: str) -> list[list[object]]:
    """Offset / size / type / field / meaning rows of a registered schema.

    Offsets are numbers up to the first field whose size depends on the data; after it they are
    written relative to that field's length field (``84 + body_length``)."""
    rows, offset, symbols, previous = [], 0, [], None
    for sc in schemas.schema(name).subcons:
        if not sc.name:
            continue
        shown, size = _size_of(sc, previous)
        where = str(offset) if not symbols else f"{offset} + " + " + ".join(symbols)
        doc = " ".join((sc.docs or "").split())
        rows.append([where, shown, _type_of(sc), code(sc.name), doc])
        if size is not None:
            offset += size
        else:
            symbols.append(previous or sc.name)
        previous = sc.name
    return rows


#: Names of the schemas :func:`render` drew (a test checks that none registered is missing).
RENDERED: set[str] = set()


def layout(name: str) -> str:
    RENDERED.add(name)
    return table(["offset", "size", "type", "field", "meaning"], layout_rows(name))


# -- sections ---------------------------------------------------------------------------------

def intro() -> str:
    return f"""{label("ref-appendix")}
# Reference: every byte and every code

This appendix draws, offset by offset, every structure `pymq_ref` reads or writes, and lists the
remoting request and response codes, every request and response header and the message property
keys. It is **generated** by `tools/reference.py` from the same schemas and tables the codecs use
(`pymq_ref/formats/schemas.py`, `pymq_ref/remoting/`), and `make book` regenerates it before
building, so it cannot drift from the code; do not edit it by hand.

Conventions, as in RocketMQ 4.9.4: integers are **big-endian** two's complement Java types
(`int32` is a Java `int`, `int64` a `long`); strings are UTF-8; offsets are in bytes from the start
of the structure. When a field's size depends on the data, the offsets after it are written
relative to the field that gives that size. The `field` column is the name `pymq inspect --format
json` and `pymq_ref.oracle` use. Links to the RocketMQ sources point into the tree of tag
`rocketmq-all-4.9.4` (5.1.4 for the timer files).
"""


def store_layout() -> str:
    from pymq_ref.store.store_config import MessageStoreConfig
    cfg = MessageStoreConfig()
    cq_size = cfg.mapped_file_size_consume_queue
    rows = [
        ["`commitlog/{offset}`", f"{cfg.mapped_file_size_commit_log:,} bytes (`mappedFileSizeCommitLog`)",
         "CommitLog segments, named by the global offset of their first byte (20 digits)",
         "[CommitLog record](ref-commitlog-record), [END_OF_FILE blank](ref-commitlog-blank)"],
        ["`consumequeue/{topic}/{queueId}/{offset}`",
         f"{cq_size:,} bytes ({cq_size // consume_queue.CQ_STORE_UNIT_SIZE:,} units, `mappedFileSizeConsumeQueue`)",
         "one ConsumeQueue per topic and queue, named by the byte offset of their first unit",
         "[ConsumeQueue unit](ref-consumequeue-unit)"],
        ["`consumequeue_ext/{topic}/{queueId}/{offset}`", f"{cfg.mapped_file_size_consume_queue_ext:,} bytes",
         "with `enableConsumeQueueExt`: the extended units", "[ConsumeQueueExt unit](ref-consumequeue-ext-unit)"],
        ["`index/{yyyyMMddHHmmssSSS}`", f"{index_file.index_file_size(cfg.max_hash_slot_num, cfg.max_index_num):,} bytes",
         "IndexFiles, named by their creation time", "[IndexFile](ref-indexfile)"],
        ["`checkpoint`", f"{checkpoint.CHECKPOINT_FILE_SIZE:,} bytes", "flush timestamps", "[Checkpoint](ref-checkpoint)"],
        ["`config/*.json` (+ `.bak`)", "text", "topics, offsets, subscription groups, delay progress",
         "[Config files](ref-config-files)"],
        ["`abort`", "0 bytes", "present while the store runs; found at start-up it means a crash", ""],
        ["`lock`", "0 bytes", "held with a file lock by the running store", ""],
        ["`timerlog/{offset}`, `timerwheel`, `config/timercheck`", "5.x", "the 5.x timer wheel",
         "[Timer files](ref-timer-files)"],
    ]
    return f"""{label("ref-store-layout")}
## Store layout

A store root (`storePathRootDir`, by default `~/store`) holds these files
({src("store/src/main/java/org/apache/rocketmq/store/config/StorePathConfigHelper.java")}). Files
of a queue of segments are all the same size; a reader finds the segment of an offset by name.

{table(["path", "size (default)", "what", "layout"], rows)}"""


def commitlog() -> str:
    v4 = message.message_length(0, 0, 0, 0)
    return f"""{label("ref-commitlog-record")}
## CommitLog record

One message as the broker stores it ({src("store/src/main/java/org/apache/rocketmq/store/CommitLog.java")},
`DefaultAppendMessageCallback.doAppend`; decoded by
{src("common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java")}). Offsets are
those of IPv4 hosts and the 4.x magic code: an IPv6 host (SYSFLAG bit `0x10` for the born host,
`0x20` for the store host) takes 20 bytes instead of 8 and moves every later offset by 12; the 5.x
magic code `0x{message.MESSAGE_MAGIC_CODE_V2 & 0xFFFFFFFF:08X}` makes `topic_length` 2 bytes. A record with empty
body, topic and properties is {v4} bytes long.

{layout("message")}
{label("ref-commitlog-blank")}
### END_OF_FILE blank

When a record does not fit in the rest of a segment (it needs its size plus
{message.END_FILE_MIN_BLANK_LENGTH} bytes), the broker writes this blank at the write position and
continues at offset 0 of the next segment; the bytes after the blank are not read.

{table(["offset", "size", "type", "field", "meaning"], [
        [0, 4, "int32", code("total_size"), "the bytes left in the segment from here (the blank claims them all)"],
        [4, 4, "int32", code("magic_code"),
         f"`0x{message.BLANK_MAGIC_CODE & 0xFFFFFFFF:08X}` ({message.BLANK_MAGIC_CODE}), BLANK_MAGIC_CODE"]])}
{label("ref-sysflag")}
### SYSFLAG

{src("common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java")}. Bits 2–3 are
one two-bit field, the transaction type.

{table(["bit(s)", "name", "meaning"], sysflag_rows())}"""


_SYSFLAG_MEANINGS = {
    "COMPRESSED": "the body is compressed (zlib unless the compression-type bits say otherwise)",
    "MULTI_TAGS": "the TAGS property holds several tags (unused by 4.9.4 brokers)",
    "BORNHOST_V6": "the born host is IPv6 (16 address bytes)",
    "STOREHOST_V6": "the store host is IPv6 (16 address bytes)",
    "NEED_UNWRAP": "5.x: an inner batch to unwrap",
    "INNER_BATCH": "5.x: an inner batch (several messages in one record)",
}


def sysflag_rows() -> list[list[object]]:
    rows = [[f"`0x{bit:X}`", code(name), _SYSFLAG_MEANINGS.get(name, "")] for bit, name in sysflag._NAMES]
    rows.insert(2, ["`0xC` (mask)", code("TRANSACTION_TYPE"), ", ".join(
        f"`0x{v:X}` {n}" for v, n in sorted(sysflag.TRANSACTION_TYPE_NAMES.items()))])
    rows.append([f"`0x{sysflag.COMPRESSION_TYPE_MASK:X}` (mask)", code("COMPRESSION_TYPE"),
                 "5.x: (sysFlag & mask) >> 8: 0 or 3 zlib, 1 lz4, 2 zstd"])
    return rows


def properties_section() -> str:
    rows = [[code(k), v] for k, v in sorted(properties.PROPERTY_DOCS.items(), key=lambda kv: kv[0].lower())]
    return f"""{label("ref-properties")}
## Message properties

The `properties` field of a record is a text of `name` `0x01` `value` pairs separated by `0x02`
(no separator after the last pair; at most {properties.MAX_PROPERTIES_LENGTH} UTF-8 bytes, see
`MessageDecoder.messageProperties2String`). The pairs come in the iteration order of the Java `HashMap` that held them (a hash
of the key, then insertion order within a bucket), which `pymq_ref.formats.properties.JavaHashMap`
replays. The keys RocketMQ itself sets
({src("common/src/main/java/org/apache/rocketmq/common/message/MessageConst.java")}):

{table(["key", "meaning"], rows)}"""


def ids_section() -> str:
    return f"""{label("ref-msgid")}
## Message ids

Two ids name a message ({src("common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java")}
`createMessageId`, {src("common/src/main/java/org/apache/rocketmq/common/message/MessageClientIDSetter.java")}),
both written as upper-case hex:

{table(["id", "bytes", "layout"], [
        ["offset message id (broker-made)", "16 (IPv4) or 28 (IPv6)",
         "store host address (4 or 16) + port (int32) + CommitLog offset of the record (int64)"],
        ["`UNIQ_KEY` (client-made, the Java client's `msgId`)", "16 (IPv4) or 28 (IPv6)",
         "client address (4 or 16) + pid (int16) + class-loader hash (int32) + milliseconds since the "
         "start of the month (int32) + counter (int16)"]])}"""


def batch_section() -> str:
    return f"""{label("ref-batch-body")}
## Batch body

The body of a `SEND_BATCH_MESSAGE` request: entries back to back
({src("common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java")} `encodeMessages`).
The broker stores each entry as one ordinary [CommitLog record](ref-commitlog-record).

{layout("batch_entry")}"""


def consume_queue_section() -> str:
    return f"""{label("ref-consumequeue-unit")}
## ConsumeQueue unit

A ConsumeQueue file is an array of {consume_queue.CQ_STORE_UNIT_SIZE}-byte units, unit *n* of the
queue at byte {consume_queue.CQ_STORE_UNIT_SIZE}·*n* of the queue's byte space
({src("store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java")}). A unit with size
`0x{consume_queue.BLANK_UNIT_SIZE_FIELD:X}` is a blank filler; a file's unwritten tail is zeros. With
`enableConsumeQueueExt`, a `tags_code` at or below {consume_queue.EXT_MAX_ADDR} is not a tag hash but
the address of a [ConsumeQueueExt unit](ref-consumequeue-ext-unit).

{layout("consume_queue_unit")}
{label("ref-consumequeue-ext-unit")}
## ConsumeQueueExt unit

({src("store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java")}). Units are appended
back to back; an address is the unit's offset in the ext byte space plus `Long.MIN_VALUE`. A size
field of `{consume_queue_ext.FILLER_SIZE_FIELD}` (`FF FF`) fills the end of a file; zeros end the data.

{layout("consume_queue_ext_unit")}"""


def index_section() -> str:
    slots, entries = index_file.DEFAULT_MAX_HASH_SLOT_NUM, index_file.DEFAULT_MAX_INDEX_NUM
    return f"""{label("ref-indexfile")}
## IndexFile

A hash table on disk from `topic#key` to CommitLog offsets
({src("store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java")},
{src("store/src/main/java/org/apache/rocketmq/store/index/IndexHeader.java")}): a
{index_file.INDEX_HEADER_SIZE}-byte header, `maxHashSlotNum` slots of {index_file.HASH_SLOT_SIZE} bytes,
then `maxIndexNum` entries of {index_file.INDEX_ENTRY_SIZE} bytes; with the defaults ({slots:,} slots,
{entries:,} entries) a file is {index_file.index_file_size():,} bytes. A key's slot is
`abs(hashCode(topic#key)) % maxHashSlotNum`. Entries are numbered from 1 so that 0 can mean
"none": entry *n* is at byte {index_file.INDEX_HEADER_SIZE} + {index_file.HASH_SLOT_SIZE}·maxHashSlotNum +
{index_file.INDEX_ENTRY_SIZE}·*n*, and the {index_file.INDEX_ENTRY_SIZE} bytes right after the slots are
never written. A new key appends an entry that links to the slot's previous newest entry, then
points the slot at it.

{label("ref-indexfile-header")}
### IndexFile header

{layout("index_header")}
{label("ref-indexfile-slot")}
### IndexFile slot

{table(["offset", "size", "type", "field", "meaning"], [
        [f"{index_file.INDEX_HEADER_SIZE} + 4·slot", index_file.HASH_SLOT_SIZE, "int32", code("slot[i]"),
         "number of the newest entry whose key hashes to this slot; 0 = empty"]])}
{label("ref-indexfile-entry")}
### IndexFile entry

{layout("index_entry")}"""


def checkpoint_section() -> str:
    return f"""{label("ref-checkpoint")}
## Checkpoint

The file `checkpoint` ({src("store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java")}),
mapped as one {checkpoint.CHECKPOINT_FILE_SIZE}-byte page; only the first
{checkpoint.CHECKPOINT.size} bytes are used. Abnormal recovery starts from the first CommitLog
segment whose first record is older than `getMinTimestamp`: the older of the first two times
minus {checkpoint.MIN_TIMESTAMP_MARGIN_MS} ms (with `messageIndexSafe`, also at most the index time).

{layout("checkpoint")}"""


def timer_section() -> str:
    ref = "store/src/main/java/org/apache/rocketmq/store/timer/"
    return f"""{label("ref-timer-files")}
## Timer files

The RocketMQ 5.x timer wheel ({src(ref + "TimerLog.java")}, {src(ref + "TimerWheel.java")},
{src(ref + "Slot.java")}, {src(ref + "TimerCheckpoint.java")} at tag `rocketmq-all-5.1.4`): the
`timerlog/` segments hold {timer.TIMER_LOG_UNIT_SIZE}-byte units chained per slot, the `timerwheel`
file holds 2 × {timer.DEFAULT_SLOTS_TOTAL:,} slots of {timer.SLOT_SIZE} bytes
({timer.wheel_length():,} bytes: two turns of a {timer.TIMER_WHEEL_TTL_DAY}-day wheel at the default
precision of one second), and `config/timercheck` the progress.

{label("ref-timer-log-unit")}
### TimerLog unit

{layout("timer_log_unit")}
{label("ref-timer-log-blank")}
### TimerLog blank

{layout("timer_log_blank")}
{label("ref-timer-wheel-slot")}
### Timer wheel slot

The slot of time *t* (ms) is at byte {timer.SLOT_SIZE} · (*t* / precision mod 2·slotsTotal) of `timerwheel`
(`TimerWheel.getSlotIndex`).

{layout("timer_wheel_slot")}
{label("ref-timer-checkpoint")}
### Timer checkpoint

{layout("timer_checkpoint")}"""


_JAVA_TYPES = {"str": "String", "int": "int / long", "bool": "boolean"}


def _bean_rows(cls) -> list[list[object]]:
    import dataclasses
    rows = []
    for f in dataclasses.fields(cls):
        default = "" if f.default is dataclasses.MISSING else repr(f.default).replace("'", '"')
        rows.append([code(camel(f.name)), _JAVA_TYPES.get(f.type, f.type), default])
    return rows


def config_section() -> str:
    files = [
        [code(config_files.TOPICS_JSON), "`{\"dataVersion\": …, \"topicConfigTable\": {topic: TopicConfig}}`",
         src("broker/src/main/java/org/apache/rocketmq/broker/topic/TopicConfigManager.java")],
        [code(config_files.CONSUMER_OFFSET_JSON), "`{\"offsetTable\": {\"topic@group\": {queueId: offset}}}`",
         src("broker/src/main/java/org/apache/rocketmq/broker/offset/ConsumerOffsetManager.java")],
        [code(config_files.DELAY_OFFSET_JSON), "`{\"offsetTable\": {level: offset}}`",
         src("store/src/main/java/org/apache/rocketmq/store/schedule/ScheduleMessageService.java")],
        [code(config_files.SUBSCRIPTION_GROUP_JSON),
         "`{\"dataVersion\": …, \"subscriptionGroupTable\": {group: SubscriptionGroupConfig}}`",
         src("broker/src/main/java/org/apache/rocketmq/broker/subscription/SubscriptionGroupManager.java")],
    ]
    return f"""{label("ref-config-files")}
## Config files

JSON files under `{{storePathRootDir}}/config/`, written by fastjson's pretty printer (tabs, no
space after `:`) as `ConfigManager.persist` does: the old file is first copied to `*.bak`, and a
reader falls back to the `.bak` when the file is missing or unreadable. Maps with integer keys are
written with **bare** keys (`{{0:5}}`), which strict JSON refuses;
`pymq_ref.oracle.loads_config_json` reads them.

{table(["file", "shape", "written by"], files)}
`TopicConfig` ({src("common/src/main/java/org/apache/rocketmq/common/TopicConfig.java")}); `perm` is
a bit set: {beans.PERM_READ} read, {beans.PERM_WRITE} write, {beans.PERM_INHERIT} inherit, {beans.PERM_PRIORITY} priority:

{table(["member", "type", "default"], _bean_rows(beans.TopicConfig))}
`SubscriptionGroupConfig` ({src("common/src/main/java/org/apache/rocketmq/common/subscription/SubscriptionGroupConfig.java")}):

{table(["member", "type", "default"], _bean_rows(beans.SubscriptionGroupConfig))}
`DataVersion` ({src("common/src/main/java/org/apache/rocketmq/common/DataVersion.java")}):

{table(["member", "type", "default"], _bean_rows(beans.DataVersion))}"""


def _span_type(length: int) -> str:
    return {1: "int8", 2: "int16", 3: "uint24", 4: "int32", 8: "int64"}.get(length, "bytes")


def frame_section() -> str:
    sample = RemotingCommand.request(codes.RequestCode.GET_ROUTEINFO_BY_TOPIC, None, None).with_(
        serialize_type=codes.SerializeType.ROCKETMQ, remark=None)
    spans = codec.decode(codec.encode(sample), with_spans=True).spans
    fixed = [s for s in spans if s.path not in ("remark", "ext_length") and not s.path.startswith("extFields")]
    rows = [[s.offset, s.length, _span_type(s.length), code(s.path), explain.FRAME_FIELDS.get(s.path, "")]
            for s in fixed]
    prefix = [r for r in rows if r[3] in ("`total_length`", "`serialize_type`", "`header_length`")]
    prefix[1][2] = "uint8"
    body = [["8 + header_length", "total_length − 4 − header_length", "bytes", code("body"),
             explain.FRAME_FIELDS["body"]]]
    binary = [r for r in rows if r not in prefix]
    at = max(s.offset + s.length for s in fixed)  # the remark follows the fixed part
    binary += [
        [at, "4 + n", "int32 + bytes", code("remark"), explain.FRAME_FIELDS["remark"] + " (length, then UTF-8; 0 = none)"],
        [f"{at + 4} + n", 4, "int32", code("ext_length"), explain.FRAME_FIELDS["ext_length"]],
        [f"{at + 8} + n", "ext_length", "entries", code("extFields.<key>"),
         "per entry: key length (int16), key (UTF-8), value length (int32), value (UTF-8)"],
    ]
    full = sample.with_(serialize_type=codes.SerializeType.JSON, remark="r", ext_fields={"k": "v"})
    json_members = [s.path for s in codec.decode(codec.encode(full), with_spans=True).spans
                    if s.offset >= 8 and "." not in s.path]
    return f"""{label("ref-remoting-frame")}
## Remoting frame

Every request and response on a RocketMQ 4.x connection is one frame
({src("remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java")},
`NettyEncoder`, `NettyDecoder`); a frame is at most {codec.MAX_FRAME_LENGTH:,} bytes
(`com.rocketmq.remoting.frameMaxLength`).

{table(["offset", "size", "type", "field", "meaning"], prefix + body)}
The header is either **JSON** (serialize type 0): the fastjson text of the command, members in
this order, nulls left out — {", ".join(code(m) for m in json_members)} — or **ROCKETMQ** (serialize
type 1, {src("remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RocketMQSerializable.java")}),
laid out from byte 8 of the frame:

{table(["offset", "size", "type", "field", "meaning"], binary)}
`flag` bits: `0x{codes.FLAG_RESPONSE:X}` response, `0x{codes.FLAG_ONEWAY:X}` oneway. Language codes:
{", ".join(f"{int(c)} {c.name}" for c in codes.LanguageCode)}.
"""


def _link(cls) -> str:
    if cls is None:
        return ""
    if isinstance(cls, type) and issubclass(cls, CommandHeader):
        return f"[{cls.JAVA}]({header_label(cls)})"
    if isinstance(cls, type):
        return f"[{cls.__name__}]({body_label(cls.__name__)})"
    return cls.__name__ if isinstance(cls, type) else str(cls)


def request_codes_section() -> str:
    def side(header, body) -> str:
        parts = [_link(header)] if header is not None else []
        if body is not None:
            parts.append("body: " + _link(body))
        return "; ".join(parts)

    rows = []
    for c in codes.RequestCode:
        api = protocol.api_of(int(c))
        rows.append([int(c), code(c.name), api.served_by if api else "",
                     side(api.request_header, api.request_body) if api else "",
                     side(api.response_header, api.response_body) if api else ""])
    rows5 = [[int(c), code(c.name)] for c in codes.RequestCode5]
    return f"""{label("ref-request-codes")}
## Request codes

`RequestCode` of 4.9.4 ({src("common/src/main/java/org/apache/rocketmq/common/protocol/RequestCode.java")}),
with who serves each one and the classes of its headers and bodies, as
`pymq_ref.remoting.protocol` declares them (a body named in lower case is not JSON: `message`
is the message body, `batch` a [batch body](ref-batch-body), `records` stored
[CommitLog records](ref-commitlog-record) back to back).

{table(["code", "name", "served by", "request: header; body", "response: header; body"], rows)}
Codes of RocketMQ 5.x that a 4.9.4 peer answers with `REQUEST_CODE_NOT_SUPPORTED` (they do not fit
the int16 `code` of a ROCKETMQ header):

{table(["code", "name"], rows5)}"""


def response_codes_section() -> str:
    rows = [[int(c), code(c.name), "RemotingSysResponseCode" if int(c) < 10 else "ResponseCode"]
            for c in codes.ResponseCode]
    return f"""{label("ref-response-codes")}
## Response codes

{src("remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSysResponseCode.java")} (0–4)
and {src("common/src/main/java/org/apache/rocketmq/common/protocol/ResponseCode.java")}. A failed
response says why in its `remark`.

{table(["code", "name", "class"], rows)}"""


def body_label(name: str) -> str:
    return "ref-body-" + name.lower()


def _java_simple(type_name: str) -> str:
    """``java.util.List<org.x.QueueData>`` -> ``List<QueueData>``."""
    return re.sub(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_])", "", type_name)


def _java_members() -> dict[str, dict[str, str]]:
    """Java member types of each body class, by reflection on the 4.9.4 classes (recorded in
    ``corpus/frames/schemas.json`` by ``tools/rocketmq_wire/``)."""
    import json
    classes = json.loads((ROOT / "corpus" / "frames" / "schemas.json").read_text(encoding="utf-8"))["classes"]
    return {c["simpleName"]: {f["name"]: _java_simple(f["type"]) for f in c["fields"] if not f.get("static")}
            for c in classes.values() if c["kind"] == "body"}


def bodies_section() -> str:
    from pymq_ref.remoting.bodies import ALL_BODIES
    from pymq_ref.remoting.bodies.bean import members
    java = _java_members()
    out = [f"""{label("ref-bodies")}
## JSON bodies

The JSON bodies of requests and responses (subclasses of
{src("remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSerializable.java")}),
as fastjson 1.2.69 writes them: members in alphabetical order of their JSON names, nulls left out,
maps with non-string keys written with bare keys (`{{0:5}}`) or bean keys (`{{{{"topic":…}}:7}}`),
which `pymq_ref.oracle.parse_fastjson` reads. The Java types come from the 4.9.4 classes.
"""]
    for name in sorted(ALL_BODIES, key=str.lower):
        cls = ALL_BODIES[name]
        doc = " ".join((cls.__doc__ or "").split())
        if doc.startswith(name + "("):  # a generated dataclass signature says nothing more
            doc = ""
        types = java.get(name, {})
        rows = [[code(m.json_name), code(types[m.json_name]) if m.json_name in types else "", code(m.attr)]
                for m in members(cls)]
        body = table(["JSON member", "Java type", "pymq_ref attribute"], rows) if rows else "No members.\n"
        out.append(f"{label(body_label(name))}\n### {name}\n\n{doc}\n\n{body}")
    return "\n".join(out)


def register_body_section() -> str:
    from pymq_ref.remoting.bodies import encode_body
    from pymq_ref.remoting.bodies.route import topic_config_text
    example = topic_config_text(beans.TopicConfig("TopicTest", 4, 4, beans.PERM_READ | beans.PERM_WRITE))
    version = encode_body(beans.DataVersion(7, 1700000000000)).decode()
    rows = [
        [0, 4, "int32", code("data_version_length"), "length *v* of the DataVersion JSON that follows"],
        [4, code("v"), "bytes", code("data_version"), f"the topic table's DataVersion as JSON, e.g. `{version}`"],
        ["4 + v", 4, "int32", code("topic_count"), "number of topic entries that follow"],
        ["8 + v", "4 + t", "int32 + bytes", code("topic[i]"),
         f"per topic: length, then `TopicConfig.encode` text: name, read and write queue counts, perm, "
         f"filter type, separated by spaces (e.g. `{example}`); topicSysFlag and order are not carried"],
        ["…", "4 + f", "int32 + bytes", code("filter_servers"), "length, then the filter server list as JSON"],
    ]
    return f"""{label("ref-register-body")}
## Compressed registration body

A broker configured with `compressedRegister=true` sets `compressed` in its
[RegisterBrokerRequestHeader](ref-header-registerbrokerrequestheader) and sends its [RegisterBrokerBody](ref-body-registerbrokerbody) not as JSON but as a zlib stream of this
length-prefixed form (`RegisterBrokerBody.encode(true)`,
{src("common/src/main/java/org/apache/rocketmq/common/protocol/body/RegisterBrokerBody.java")});
topics come in the iteration order of the Java `ConcurrentHashMap` they are copied into.

{table(["offset", "size", "type", "field", "meaning"], rows)}"""


def headers_section() -> str:
    out = [f"""{label("ref-headers")}
## Request and response headers

Every `CommandCustomHeader` class of 4.9.4
({src("common/src/main/java/org/apache/rocketmq/common/protocol/header/")}), as the `extFields` of
a frame carry it: each field is sent as `String.valueOf(value)` under its Java name, null fields
left out; a field marked *required* is `@CFNotNull` (a missing one fails the request). Classes
marked *fast* implement `FastCodesHeader` (their ROCKETMQ encoding writes the fields directly).
"""]
    for name in sorted(ALL_HEADERS, key=str.lower):
        cls = ALL_HEADERS[name]
        rows = [[code(f.name), code(f.attr), f.jtype.name, "yes" if f.required else "no", f.doc] for f in cls.FIELDS]
        used = sorted(protocol.PROTOCOL[c].name for c in protocol.PROTOCOL
                      if cls in (protocol.PROTOCOL[c].request_header, protocol.PROTOCOL[c].response_header))
        uses = ("Used by " + ", ".join(code(u) for u in used) + ".") if used else ""
        fast = " *Fast.*" if cls.FAST else ""
        body = table(["ext key", "pymq_ref attribute", "Java type", "required", "meaning"], rows) if rows else "No fields.\n"
        intro_line = f"`{cls.JAVA_PACKAGE}.{cls.JAVA}`.{fast} {uses}".rstrip()
        out.append(f"{label(header_label(cls))}\n### {cls.JAVA}\n\n{intro_line}\n\n{body}")
    return "\n".join(out)


def delay_section() -> str:
    table_ms = delay.parse_delay_level(delay.DEFAULT_MESSAGE_DELAY_LEVEL)
    words = delay.DEFAULT_MESSAGE_DELAY_LEVEL.split()
    rows = [[level, delay.delay_level_to_queue_id(level), code(words[level - 1]), f"{ms:,}"]
            for level, ms in sorted(table_ms.items())]
    return f"""{label("ref-delay-levels")}
## Delay levels

`messageDelayLevel` (default `"{delay.DEFAULT_MESSAGE_DELAY_LEVEL}"`,
{src("store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java")}). A message
with property `DELAY` = *level* > 0 is stored in `{delay.SCHEDULE_TOPIC}`, queue *level* − 1, with
`REAL_TOPIC` and `REAL_QID` added, and its ConsumeQueue `tags_code` is the delivery time: store
time + the level's delay ({src("store/src/main/java/org/apache/rocketmq/store/schedule/ScheduleMessageService.java")});
a level above the highest is clamped to it.

{table(["level", "queue id", "delay", "milliseconds"], rows)}"""


def retry_section() -> str:
    table_ms = delay.parse_delay_level(delay.DEFAULT_MESSAGE_DELAY_LEVEL)
    words = delay.DEFAULT_MESSAGE_DELAY_LEVEL.split()
    rows = [[attempt, level, code(words[level - 1]), f"{ms:,}"] for attempt, level, ms in retry_schedule(table_ms)]
    return f"""{label("ref-retry-ladder")}
## Retry ladder

A message a consumer group fails to consume is sent back (`CONSUMER_SEND_MSG_BACK`,
{src("broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java")}) and
stored in `%RETRY%{{group}}` with delay level 3 + *reconsumeTimes* (unless the request names a
level); past `maxReconsumeTimes` (16 by default) it goes to `%DLQ%{{group}}` instead. With the
default delay levels:

{table(["attempt", "delay level", "delay", "milliseconds"], rows)}"""


SECTIONS = (intro, store_layout, commitlog, properties_section, ids_section, batch_section, consume_queue_section,
            index_section, checkpoint_section, timer_section, config_section, frame_section, request_codes_section,
            response_codes_section, headers_section, bodies_section, register_body_section, delay_section, retry_section)


def render() -> str:
    text = "\n".join(section().rstrip("\n") + "\n" for section in SECTIONS)
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"\)=\n\n#", ")=\n#", text)  # a target sits right on its heading
    head = "<!-- Generated by tools/reference.py from the package's schemas and tables: do not edit. -->\n"
    return head + text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when book/reference.md is stale")
    ap.add_argument("--stdout", action="store_true", help="print instead of writing")
    args = ap.parse_args(argv)
    text = render()
    if args.stdout:
        sys.stdout.write(text)
        return 0
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT.relative_to(ROOT)} is stale: run python tools/reference.py", file=sys.stderr)
            return 1
        return 0
    if OUT.exists() and OUT.read_text(encoding="utf-8") == text:
        print(f"{OUT.relative_to(ROOT)} is up to date")
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} ({len(text):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
