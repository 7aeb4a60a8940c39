"""The doctor's walk of the CommitLog: each segment's records as compact tuples, in one process or several.

The per-record work that needs nothing but the segment itself — decoding and checking the record
(the check recovery uses, body CRC included), the dispatch fields, the index keys and their hashes
— is done by :func:`segment_items`; the doctor then checks each :class:`Rec` against the
ConsumeQueue and index files. With ``jobs > 1`` (``pymq doctor --jobs N``) that per-record work
runs in ``jobs - 1`` worker processes, segment by segment (worker ``k`` takes segments ``k``,
``k + jobs - 1``, ...), each streaming its items in chunks through a pipe, while the doctor
consumes them in log order: the pipe's back-pressure keeps memory bounded whatever the segment
size, and on two cores the two halves of the work overlap.

Read-only: workers map each segment with ``ACCESS_READ``. Pure per segment: the same items in
any process.
"""

from __future__ import annotations

import json
import mmap
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

import numpy as np

from ..formats.hashing import index_key_hash
from ..formats.message import BlankRecord, MessageRecord
from ..store.dispatch import _TAGS_CODES  # the memo of TAGS hashes (dispatch_tags_code fills it)
from ..store.dispatch import (SCHEDULE_TOPIC, check_message_and_return_size, dispatch_request_from_record,
                              dispatch_tags_code)
from .segments import open_readonly, walk_segment

_BLANK_SIZE = struct.Struct(">i")
_WANTED_FIRST = frozenset("TUKD")  # first letters of TAGS, UNIQ_KEY, KEYS, DELAY
CHUNK = 1024  # messages per chunk: the unit of the bulk checks and of the messages between processes
RELEASE_EVERY = 64 << 20


class Rec(NamedTuple):
    """One message record as the doctor checks it (``phy`` is its stored PHYSICALOFFSET)."""

    phy: int
    size: int
    topic: str
    queue_id: int
    queue_offset: int
    tags_code: int
    store_timestamp: int
    sys_flag: int
    keys: tuple  # the keys buildIndex puts (UNIQ_KEY, then each KEYS token; none for a rollback)
    hashes: tuple  # their index hashes (of "topic#key")
    tags_hash_code: int | None  # SCHEDULE_TOPIC_XXXX only: the tagsCode without delay levels (4.9.4's abnormal recovery)


class Chunk:
    """Up to :data:`CHUNK` consecutive messages of a segment as columns (numpy arrays of ``int64``
    and lists), cheap to send between processes and to check at once; :meth:`rec` gives one as a
    :class:`Rec` for the per-record checks."""

    __slots__ = ("phy", "size", "queue_id", "queue_offset", "tags_code", "store_timestamp", "sys_flag", "topics",
                 "keys", "hashes", "key_counts", "tags_hash_codes")

    def __init__(self, rows: list, delay_table):
        """``rows``: ``(topic, queue_id, phy, size, store_timestamp, queue_offset, sys_flag,
        properties_text)`` as the fast check gives them, or a ``DispatchRequest`` (the slow path)."""
        n = len(rows)
        topics, ids, props = [], [], []
        keys_of = []
        names = []
        for row in rows:
            if type(row) is tuple:
                topic, queue_id, phy, size, ts, queue_offset, sys_flag, text = row
                # the four properties the checks read, as the request's map has them (the last
                # non-empty value of a name wins)
                tags = delay = uniq = keys_text = None
                for entry in text.split("\x02"):
                    if entry[:1] in _WANTED_FIRST:
                        name, _, value = entry.partition("\x01")
                        if value:
                            if name == "TAGS":
                                tags = value
                            elif name == "UNIQ_KEY":
                                uniq = value
                            elif name == "KEYS":
                                keys_text = value
                            elif name == "DELAY":
                                delay = value
                p = {"TAGS": tags} if delay is None else {"TAGS": tags, "DELAY": delay}
                tags_code = (_TAGS_CODES.get(tags) if tags else 0) if topic != SCHEDULE_TOPIC else None
                if tags_code is None:
                    tags_code = dispatch_tags_code(topic, p, ts, delay_table)
            else:
                topic, queue_id, phy, size, ts = row.topic, row.queue_id, row.commit_log_offset, row.msg_size, \
                    row.store_timestamp
                queue_offset, sys_flag, tags_code, p = row.consume_queue_offset, row.sys_flag, row.tags_code, \
                    row.properties
                uniq, keys_text = row.uniq_key, row.keys
            topics.append(topic)
            props.append(p)
            ids.append((phy, size, queue_id, queue_offset, tags_code, ts, sys_flag))
            if sys_flag & 0xC == 0xC:
                keys: tuple = ()
            else:
                keys = () if uniq is None else (uniq,)
                if keys_text:
                    keys += tuple(t for t in keys_text.split(" ") if t) if " " in keys_text else (keys_text,)
            keys_of.append(keys)
            if keys:
                names += [f"{topic}#{k}" for k in keys]
        table = np.array(ids, dtype=np.int64).reshape(n, 7).T.copy()
        (self.phy, self.size, self.queue_id, self.queue_offset, self.tags_code, self.store_timestamp,
         self.sys_flag) = table
        self.topics = topics
        self.keys = keys_of
        self.key_counts = np.fromiter(map(len, keys_of), np.int64, n)
        self.hashes = index_key_hashes(names)
        #: SCHEDULE_TOPIC_XXXX messages: record number -> the tagsCode without delay levels
        self.tags_hash_codes = {i: dispatch_tags_code(topics[i], props[i], ids[i][5], {})
                                for i in range(n) if topics[i] == SCHEDULE_TOPIC}

    def __len__(self) -> int:
        return len(self.topics)

    def rec(self, i: int, key_start: int) -> Rec:
        n = len(self.keys[i])
        return Rec(int(self.phy[i]), int(self.size[i]), self.topics[i], int(self.queue_id[i]),
                   int(self.queue_offset[i]), int(self.tags_code[i]), int(self.store_timestamp[i]),
                   int(self.sys_flag[i]), self.keys[i], tuple(self.hashes[key_start:key_start + n].tolist()),
                   self.tags_hash_codes.get(i))

    def recs(self) -> Iterator[Rec]:
        at = 0
        for i in range(len(self.topics)):
            yield self.rec(i, at)
            at += len(self.keys[i])


_POWERS = np.array([pow(31, k, 1 << 32) for k in range(255, -1, -1)], dtype=np.uint32)


def index_key_hashes(names: list[str]) -> np.ndarray:
    """:func:`pymq_ref.formats.hashing.index_key_hash` of each name (``int64``). When every name is
    ASCII and at most 256 characters long, all at once with numpy: ``hashCode`` is a polynomial in
    31 modulo 2**32, so each character is multiplied by 31 to the power of its distance from its
    name's end and the products are summed per name; else name by name."""
    if not names:
        return np.zeros(0, np.int64)
    lengths = np.fromiter(map(len, names), np.int64, len(names))
    joined = "".join(names)
    if not joined.isascii() or int(lengths.max()) > 256 or int(lengths.min()) == 0:
        return np.fromiter((index_key_hash(n) for n in names), np.int64, len(names))
    chars = np.frombuffer(joined.encode("ascii"), np.uint8).astype(np.uint32)
    ends = np.cumsum(lengths)
    distance = np.repeat(ends, lengths) - 1 - np.arange(len(chars))  # from the end of its name
    codes = np.add.reduceat(chars * _POWERS[255 - distance], ends - lengths, dtype=np.uint32).astype(np.int64)
    codes = np.where(codes >= 1 << 31, codes - (1 << 32), codes)  # the signed int of Java
    return np.where(codes == -(1 << 31), 0, np.abs(codes))


def segment_items(buf, base: int, delay_table, chunk: int = CHUNK) -> Iterator:
    """The items of one segment: :class:`Chunk` objects (up to ``chunk`` messages each), then what
    ended the walk as :func:`~pymq_ref.tools.segments.walk_segment` reports it (a blank, the end
    of data, a finding). At the first record the fast check does not pass, the rest is left to
    ``walk_segment`` (same checks, detailed findings). Walked pages are dropped from the resident
    set every 64 MiB."""
    pos, size = 0, len(buf)
    check = check_message_and_return_size
    released = 0
    reqs: list = []
    if size:
        with memoryview(buf) as view:
            while pos < size:
                n, req, ok = check(view, pos, True, delay_table, True, False, True)
                if not ok:
                    break
                if n == 0:  # a blank: it must fill the segment
                    if _BLANK_SIZE.unpack_from(view, pos)[0] != size - pos:
                        break
                    if reqs:
                        yield Chunk(reqs, delay_table)
                    yield BlankRecord(total_size=size - pos, phy_offset=base + pos)
                    return
                reqs.append(req)
                pos += n
                if len(reqs) >= chunk:
                    yield Chunk(reqs, delay_table)
                    reqs = []
                    if pos - released >= RELEASE_EVERY:
                        release(buf, released, pos)
                        released = pos - pos % mmap.PAGESIZE
    if reqs:
        yield Chunk(reqs, delay_table)
    for item in walk_segment(buf, base=base, start=pos, check_crc=True):
        yield Chunk([dispatch_request_from_record(item, delay_table)], delay_table) if type(item) is MessageRecord \
            else item


def release(buf, start: int, end: int) -> None:
    """Drop the pages of ``buf[start:end]`` from this process's resident set (they stay in the
    page cache): a walk of a 1 GiB segment must not keep it all resident."""
    start -= start % mmap.PAGESIZE
    end -= end % mmap.PAGESIZE
    if end > start and hasattr(buf, "madvise"):
        buf.madvise(mmap.MADV_DONTNEED, start, end - start)


#: the worker's command (not ``-m``: its classes must be this module's, not ``__main__``'s, to unpickle)
_WORKER = "from pymq_ref.tools.doctor_walk import _worker_main; _worker_main()"


def _worker_main() -> None:
    """The worker process: read a job (JSON on stdin: ``segments`` as
    ``[path, base]`` pairs and the ``delay_table``), write each segment's items to stdout as a
    stream of pickles, ``None`` after each segment. The pipe's back-pressure bounds memory."""
    job = json.load(sys.stdin)
    delay_table = {int(k): v for k, v in job["delay_table"].items()}
    out = pickle.Pickler(sys.stdout.buffer, protocol=pickle.HIGHEST_PROTOCOL)
    for path, base in job["segments"]:
        with open_readonly(path) as buf:
            for item in segment_items(buf, base, delay_table):
                out.dump(item)
                out.clear_memo()
        out.dump(None)
        sys.stdout.buffer.flush()


class WalkerError(RuntimeError):
    """A worker process failed (its error output)."""


def parallel_items(segments: list, delay_table: dict, jobs: int) -> Iterator[tuple[int, Iterator]]:
    """``(segment index, items)`` in log order, the items computed by ``jobs - 1`` worker processes
    (plain subprocesses running :func:`_worker_main`, so that no ``__main__`` is imported again and
    nothing is forked from a process that may hold threads)."""
    workers = max(1, jobs - 1)
    package_parent = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": package_parent + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = []
    try:
        for k in range(workers):
            job = {"segments": [(str(s.path), s.base) for s in segments[k::workers]],
                   "delay_table": {str(k2): v for k2, v in delay_table.items()}}
            proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            proc.stdin.write(json.dumps(job).encode())
            proc.stdin.close()
            procs.append((proc, pickle.Unpickler(proc.stdout)))
        for i in range(len(segments)):
            yield i, _drain(*procs[i % workers])
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()


def _drain(proc, unpickler) -> Iterator:
    while True:
        try:
            item = unpickler.load()
        except EOFError:
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            raise WalkerError(f"the CommitLog walker process ended early: {err[-1] if err else proc.wait()}") from None
        if item is None:
            return
        yield item

