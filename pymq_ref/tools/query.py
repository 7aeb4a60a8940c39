"""``pymq query``: find messages by key through the IndexFiles, read-only, with no false positives.

``store/src/main/java/org/apache/rocketmq/store/index/IndexService.java`` (``queryOffset``). Each index file
(newest first) whose time range meets ``[begin, end]`` is
walked with the store's own chain walk (:meth:`pymq_ref.store.index.IndexFile.select_phy_offset`,
on a file opened read-only); every candidate offset is then decoded from the CommitLog and kept
only if its topic is the one asked, the key is its ``UNIQ_KEY`` or one of its ``KEYS``, and its
store timestamp lies in ``[begin, end]``. Two keys with the same hash (or the same slot) share a
chain: the re-check is what tells them apart.

Why not ``MessageStore(read_only=True).query_message``? Opening the store runs recovery, which
scans (and CRC-checks) up to the three newest CommitLog files — seconds to minutes on a real
broker's 1 GiB segments — and needs the broker's configuration. Walking the index files directly
needs neither; ``tests/test_tools_query.py`` checks both give the same answer.

Nothing is written and no lock is taken.
"""

from __future__ import annotations

import base64
import json
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO

from ..formats.message import MessageRecord
from ..store.index import IndexFile, build_key
from .readonly_maps import CommitLogReader, ReadOnlyMaps
from .segments import open_readonly
from .store_files import index_geometry
from .store_layout import StoreUnreadable, discover

LONG_MAX = 2**63 - 1


@dataclass
class QueryResult:
    messages: list[MessageRecord] = field(default_factory=list)
    candidates: int = 0  # distinct CommitLog offsets the index chains gave
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (offset, why) of candidates that are not matches
    unexamined: int = 0  # candidates left unread once max_num matches were found
    index_files: int = 0


def query_store(root, topic: str, key: str, *, begin: int = 0, end: int = LONG_MAX, max_num: int = 32,
                hash_slots: int | None = None, index_num: int | None = None) -> QueryResult:
    """Messages of ``topic`` with ``key`` (UNIQ_KEY or a KEYS token) stored in ``[begin, end]`` ms.

    At most ``max_num`` messages, the newest ones, returned in CommitLog order: the chains are
    walked newest first, so the walk stops reading candidates once ``max_num`` have matched.
    Raises :class:`StoreUnreadable` when ``root`` is not a readable store.
    """
    layout = discover(root)
    result = QueryResult(index_files=len(layout.index_files))
    full_key = build_key(topic, key)
    # index times are whole seconds after the file's begin timestamp (rounded down): widen by 999 ms
    index_begin = max(0, begin - 999)
    offsets: list[int] = []
    for seg in reversed(layout.index_files):
        with open_readonly(seg.path) as buf:
            try:
                slots, entries = index_geometry(buf, hash_slots, index_num)
            except ValueError as exc:
                raise StoreUnreadable(f"{seg.rel}: {exc}") from None
        index = IndexFile(str(seg.path), slots, entries, read_only=True)
        try:
            index.load()
            if index.time_matched(index_begin, end):
                index.select_phy_offset(full_key, 2**31 - 1, index_begin, end, offsets)
        finally:
            index.close()
    seen = set()
    matches = []
    with ReadOnlyMaps() as maps:
        reader = CommitLogReader(layout.commitlog, layout.commitlog_file_size, maps)
        for n, phy in enumerate(offsets):
            if phy in seen:
                continue
            if len(matches) >= max_num:
                result.unexamined = len(set(offsets[n:]) - seen)
                break
            seen.add(phy)
            rec = reader.read(phy)
            if isinstance(rec, str):
                result.rejected.append((phy, rec))
            elif rec.topic != topic:
                result.rejected.append((phy, f"topic is {rec.topic!r} (hash collision)"))
            elif rec.uniq_key != key and key not in rec.keys:
                result.rejected.append((phy, f"keys are {rec.keys} and UNIQ_KEY {rec.uniq_key} (hash collision)"))
            elif not begin <= rec.store_timestamp <= end:
                result.rejected.append((phy, f"store timestamp {rec.store_timestamp} is outside [{begin}, {end}]"))
            else:
                matches.append(rec)
    result.candidates = len(seen)
    matches.sort(key=lambda r: r.phy_offset)
    result.messages = matches
    return result


def format_text(rec: MessageRecord) -> str:
    when = datetime.fromtimestamp(rec.store_timestamp / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    body = rec.body[:48]
    try:
        shown = repr(body.decode("utf-8"))
    except UnicodeDecodeError:
        shown = "base64:" + base64.b64encode(body).decode("ascii")
    more = f" (+{len(rec.body) - 48} bytes)" if len(rec.body) > 48 else ""
    return (f"{rec.phy_offset}  {when}  {rec.topic}/{rec.queue_id}@{rec.queue_offset}  msgId {rec.msg_id}  "
            f"UNIQ_KEY {rec.uniq_key}  KEYS {' '.join(rec.keys)!r}  TAGS {rec.tags!r}  body {shown}{more}")


def query_main(root: str, topic: str, key: str, *, begin: int = 0, end: int = LONG_MAX, max_num: int = 32,
               fmt: str = "text", hash_slots: int | None = None, index_num: int | None = None,
               out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The ``pymq query`` command. Exit 0 when something matched, 1 when nothing did, 2 on error."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        result = query_store(root, topic, key, begin=begin, end=end, max_num=max_num, hash_slots=hash_slots,
                             index_num=index_num)
    except StoreUnreadable as exc:
        print(f"pymq query: error: {exc}", file=err)
        return 2
    if not result.index_files:
        print("pymq query: the store has no index files (messageIndexEnable=false?): nothing can be found by key",
              file=err)
    for rec in result.messages:
        out.write((json.dumps(rec.to_json(), ensure_ascii=False) if fmt == "jsonl" else format_text(rec)) + "\n")
    collisions = sum(1 for _, why in result.rejected if "collision" in why)
    print(f"pymq query: {len(result.messages)} message(s) for {topic}#{key}; {result.candidates} index candidate(s), "
          f"{collisions} hash collision(s) rejected"
          + (f"; --max {max_num} reached, {result.unexamined} older candidate(s) not examined"
             if result.unexamined else ""),
          file=err)
    return 0 if result.messages else 1
