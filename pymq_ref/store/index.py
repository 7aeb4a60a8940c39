"""IndexFile and IndexService: the hash index from ``topic#key`` to CommitLog offsets.

The book's reference appendix, §IndexFile; ``store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java``,
``index/IndexService.java``. Layout and pure
helpers are in :mod:`pymq_ref.formats.index_file`; this module adds the mapped files.

* :class:`IndexFile` — one file: ``put_key`` appends an entry and links it into its hash
  slot's chain; ``select_phy_offset`` walks a chain. Like RocketMQ it returns *candidates*:
  two keys with the same hash are not told apart here (the facade re-checks them).
* :class:`IndexService` — the list of index files in ``{root}/index``: builds keys for a
  dispatched message, rolls to a new file (named ``yyyyMMddHHmmssSSS`` from the injected clock,
  in a configurable time zone, UTC by default), answers queries newest file first.
"""

from __future__ import annotations

import os
import struct
import threading
from datetime import timezone, tzinfo

from operator import mul as _mul

from pymq_ref.formats.hashing import index_key_hash, java_string_hash
from pymq_ref.formats.index_file import (ENTRY, HASH_SLOT_SIZE, HEADER, INDEX_ENTRY_SIZE,
                                         INDEX_HEADER_SIZE, INT_MAX, SLOT, IndexHeader,
                                         decode_index_header, index_file_name, index_file_size)
from pymq_ref.store import fileio
from pymq_ref.store.clock import Clock
from pymq_ref.store.mapped_file import MappedFile

_slot_unpack = SLOT.unpack_from
_slot_pack = SLOT.pack_into
_entry_pack = ENTRY.pack_into
_entry2_pack = struct.Struct(">" + ENTRY.format.lstrip(">") * 2).pack_into  # two consecutive entries
_entry_unpack = ENTRY.unpack_from
_header_pack = HEADER.pack_into
_TRAN_ROLLBACK = 0xC


_MASK32 = 0xFFFFFFFF
_POW31 = [1] * 64
for _k in range(1, 64):
    _POW31[_k] = (_POW31[_k - 1] * 31) & _MASK32
_POW31_DESC = _POW31[::-1]
_MEMO_MAX = 100_000
#: hashCode (mod 2**32) of ``key[:-4]`` and of ``key[:-12]`` of recent keys
_HEAD_HASHES: dict[str, int] = {}
_BASE_HASHES: dict[str, int] = {}
_POW31_4, _POW31_8 = _POW31[4], _POW31[8]
_POW31_8_DESC = _POW31_DESC[-8:]


def fast_index_key_hash(key: str) -> int:
    """:func:`pymq_ref.formats.hashing.index_key_hash`, faster for the put path.

    Java's hash is a polynomial, so ``h(p + s) = h(p) * 31**len(s) + h(s)`` (mod 2**32). Index
    keys are ``topic#key``; consecutive keys share long prefixes (a producer's UNIQ_KEYs differ
    in their last 12 hex digits — time and counter — and, within one millisecond, in the last
    4 only; business keys are often numbered). So the hash of ``key[:-4]`` is memoised (built,
    on a miss, from a memoised hash of ``key[:-12]`` and 8 more characters), and a put only
    hashes the last 4 characters. ASCII tails only (one UTF-16 unit per character); keys of 16
    characters or fewer and other tails go to the reference implementation (tests check that
    both agree).
    """
    if len(key) > 16:
        tail = key[-4:]
        if tail.isascii():
            head = key[:-4]
            hh = _HEAD_HASHES.get(head)
            if hh is None:
                hh = _head_hash(head)
            b = tail.encode()
            h = (hh * _POW31_4 + b[0] * 29791 + b[1] * 961 + b[2] * 31 + b[3]) & _MASK32
            if h & 0x80000000:
                return 0 if h == 0x80000000 else 0x100000000 - h
            return h
    return index_key_hash(key)


def _head_hash(head: str) -> int:
    """hashCode mod 2**32 of ``head`` (more than 12 characters), memoised."""
    middle = head[-8:]
    if middle.isascii():
        base = head[:-8]
        hb = _BASE_HASHES.get(base)
        if hb is None:
            hb = java_string_hash(base) & _MASK32
            if len(_BASE_HASHES) >= _MEMO_MAX:
                _BASE_HASHES.clear()
            _BASE_HASHES[base] = hb
        hh = (hb * _POW31_8 + sum(map(_mul, middle.encode(), _POW31_8_DESC))) & _MASK32
    else:
        hh = java_string_hash(head) & _MASK32
    if len(_HEAD_HASHES) >= _MEMO_MAX:
        _HEAD_HASHES.clear()
    _HEAD_HASHES[head] = hh
    return hh


def build_key(topic: str, key: str) -> str:
    """``IndexService.buildKey``: ``topic#key``."""
    return f"{topic}#{key}"


class IndexFile:
    """One mapped index file. Call order: construct (new or existing) → ``load()`` if existing →
    ``put_key`` / ``select_phy_offset`` … → ``flush`` → ``close``."""

    def __init__(self, path: str, hash_slot_num: int, index_num: int, end_phy_offset: int = 0,
                 end_timestamp: int = 0, *, read_only: bool = False):
        self.path = path
        self.file_name = os.path.basename(path)
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.file_size = index_file_size(hash_slot_num, index_num)
        self.mapped = MappedFile(path, self.file_size, read_only=read_only)
        self.mm = self.mapped.mm
        self._entries_at = INDEX_HEADER_SIZE + hash_slot_num * HASH_SLOT_SIZE
        # the header, in memory; an unloaded new file counts from 1
        self.begin_timestamp = self.end_timestamp = 0
        self.begin_phy_offset = self.end_phy_offset = 0
        self.hash_slot_count = 0
        self.index_count = 1
        if end_phy_offset > 0:
            self.begin_phy_offset = self.end_phy_offset = end_phy_offset
        if end_timestamp > 0:
            self.begin_timestamp = self.end_timestamp = end_timestamp
        if (end_phy_offset > 0 or end_timestamp > 0) and not read_only:
            # the constructor's setters write straight into the mapped header
            self.mm[0:32] = HEADER.pack(self.begin_timestamp, self.end_timestamp, self.begin_phy_offset,
                                        self.end_phy_offset, 0, 0)[:32]

    def load(self) -> None:
        """``IndexHeader.load``: read the header; an index count <= 0 reads as 1."""
        h = decode_index_header(self.mm, with_spans=False)
        self.begin_timestamp, self.end_timestamp = h.begin_timestamp, h.end_timestamp
        self.begin_phy_offset, self.end_phy_offset = h.begin_phy_offset, h.end_phy_offset
        self.hash_slot_count = h.hash_slot_count
        self.index_count = h.effective_index_count

    @property
    def header(self) -> IndexHeader:
        return IndexHeader(self.begin_timestamp, self.end_timestamp, self.begin_phy_offset,
                           self.end_phy_offset, self.hash_slot_count, self.index_count)

    @property
    def is_write_full(self) -> bool:
        return self.index_count >= self.index_num

    def put_key(self, key: str, phy_offset: int, store_timestamp: int, key_hash: int | None = None) -> bool:
        """``IndexFile.putKey``. False when the file is full (the caller rolls and retries)."""
        h = index_key_hash(key) if key_hash is None else key_hash
        return self.put_keys((h,), phy_offset, store_timestamp) == 1

    def put_keys(self, key_hashes, phy_offset: int, store_timestamp: int) -> int:
        """:meth:`put_key` for the key hashes of one record, in order; returns how many fit.

        Same bytes as one ``put_key`` per key (each entry and slot as it goes, the begin
        fields after the first entry of a file); the header, which only the last write
        determines, is written once at the end.
        """
        count = self.index_count
        index_num = self.index_num
        slot_num = self.hash_slot_num
        entries_at = self._entries_at
        mm = self.mm
        begin = self.begin_timestamp
        slot_count = self.hash_slot_count
        if begin > 0 and count > 1 and count + len(key_hashes) <= index_num:
            # The common case, same bytes: every key fits, the begin fields are set (so the
            # time diff is the same for every entry of the record).
            delta = store_timestamp - begin
            diff = delta // 1000 if delta >= 0 else 0
            if diff > INT_MAX:
                diff = INT_MAX
            entry_at = entries_at + count * INDEX_ENTRY_SIZE
            written = len(key_hashes)
            if written == 2:  # UNIQ_KEY + one key, the usual record: both entries in one pack
                h1, h2 = key_hashes
                slot1 = INDEX_HEADER_SIZE + (h1 % slot_num) * HASH_SLOT_SIZE
                slot2 = INDEX_HEADER_SIZE + (h2 % slot_num) * HASH_SLOT_SIZE
                (prev1,) = _slot_unpack(mm, slot1)
                if prev1 <= 0 or prev1 > count:
                    prev1 = 0
                    slot_count += 1
                if slot2 == slot1:
                    prev2 = count  # the slot the first entry just took
                else:
                    (prev2,) = _slot_unpack(mm, slot2)
                    if prev2 <= 0 or prev2 > count + 1:
                        prev2 = 0
                        slot_count += 1
                _entry2_pack(mm, entry_at, h1, phy_offset, diff, prev1, h2, phy_offset, diff, prev2)
                _slot_pack(mm, slot1, count)
                _slot_pack(mm, slot2, count + 1)
                count += 2
            else:
                for h in key_hashes:
                    slot_at = INDEX_HEADER_SIZE + (h % slot_num) * HASH_SLOT_SIZE
                    (prev,) = _slot_unpack(mm, slot_at)
                    if prev <= 0 or prev > count:
                        prev = 0
                        slot_count += 1
                    _entry_pack(mm, entry_at, h, phy_offset, diff, prev)
                    _slot_pack(mm, slot_at, count)
                    count += 1
                    entry_at += INDEX_ENTRY_SIZE
            if written:
                self.hash_slot_count = slot_count
                self.index_count = count
                self.end_phy_offset = phy_offset
                self.end_timestamp = store_timestamp
                _header_pack(mm, 0, begin, store_timestamp, self.begin_phy_offset, phy_offset, slot_count, count)
            return written
        written = 0
        for h in key_hashes:
            if count >= index_num:
                break
            slot_at = INDEX_HEADER_SIZE + (h % slot_num) * HASH_SLOT_SIZE
            (prev,) = _slot_unpack(mm, slot_at)
            if prev <= 0 or prev > count:
                prev = 0
            if begin <= 0:
                diff = 0
            else:
                delta = store_timestamp - begin
                diff = delta // 1000 if delta >= 0 else 0  # negative -> 0 (Java truncation then clamp)
                if diff > INT_MAX:
                    diff = INT_MAX
            _entry_pack(mm, entries_at + count * INDEX_ENTRY_SIZE, h, phy_offset, diff, prev)
            _slot_pack(mm, slot_at, count)
            if count <= 1:
                self.begin_phy_offset = phy_offset
                self.begin_timestamp = begin = store_timestamp
            if prev == 0:
                slot_count += 1
            count += 1
            written += 1
        if written:
            self.hash_slot_count = slot_count
            self.index_count = count
            self.end_phy_offset = phy_offset
            self.end_timestamp = store_timestamp
            _header_pack(mm, 0, begin, store_timestamp, self.begin_phy_offset, phy_offset, slot_count, count)
        return written

    def time_matched(self, begin: int, end: int) -> bool:
        return self.header.time_matched(begin, end)

    def select_phy_offset(self, key: str, max_num: int, begin: int, end: int,
                          out: list[int] | None = None) -> list[int]:
        """``IndexFile.selectPhyOffset``: walk the key's slot chain; append matching offsets (hash + time only) to
        ``out``."""
        out = [] if out is None else out
        h = index_key_hash(key)
        count = self.index_count
        mm = self.mm
        (cur,) = _slot_unpack(mm, INDEX_HEADER_SIZE + (h % self.hash_slot_num) * HASH_SLOT_SIZE)
        if cur <= 0 or cur > count or count <= 1:
            return out
        while len(out) < max_num:
            kh, phy, diff, prev = _entry_unpack(mm, self._entries_at + cur * INDEX_ENTRY_SIZE)
            if diff < 0:
                break
            t = self.begin_timestamp + diff * 1000
            if kh == h and begin <= t <= end:
                out.append(phy)
            if prev <= 0 or prev > count or prev == cur or t < begin:
                break
            cur = prev
        return out

    def flush(self) -> None:
        self.mapped.wrote_position = self.file_size
        self.mapped.flush(0)

    def close(self) -> None:
        self.mapped.close()

    def destroy(self) -> None:
        self.mapped.destroy()

    def __repr__(self) -> str:
        return f"IndexFile({self.file_name}, entries={self.index_count - 1}, {self.header})"


def _resolve_tz(name: str) -> tzinfo | None:
    if name.upper() == "UTC":
        return timezone.utc
    if name == "local":
        return None
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


class IndexService:
    """All index files of a store.

    Call order: construct → ``load(last_exit_ok, index_msg_timestamp)`` → ``build_index`` /
    ``query_offset`` … → ``shutdown()``. ``on_file_full(end_timestamp)`` is called when a full
    file is flushed at roll time (the store updates the checkpoint's ``indexMsgTimestamp``).
    """

    def __init__(self, directory: str, hash_slot_num: int, index_num: int, clock: Clock, *,
                 time_zone: str = "UTC", read_only: bool = False, max_msgs_num_batch: int = 64,
                 on_file_full=None):
        self.directory = directory
        self.hash_slot_num = hash_slot_num
        self.index_num = index_num
        self.clock = clock
        self.tz = _resolve_tz(time_zone)
        self.read_only = read_only
        self.max_msgs_num_batch = max_msgs_num_batch
        self.on_file_full = on_file_full
        self.files: list[IndexFile] = []
        self._ignored: set[str] = set()  # read-only: short files a power loss left (see repair_power_loss)
        self.lock = threading.RLock()

    def repair_power_loss(self) -> list[str]:
        """Delete (read-only: leave out of :meth:`load`) the last index files that are shorter than an
        index file and hold only zeros: created but never synced before a power loss, they hold no
        durable entry. One sentence per file; call before :meth:`load`."""
        names = self._file_names()
        size = index_file_size(self.hash_slot_num, self.index_num)
        repairs = []
        while names:
            path = os.path.join(self.directory, names[-1])
            actual = os.path.getsize(path)
            if actual >= size or not fileio.is_all_zero(path):
                break
            names.pop()
            what = f"{path}: {actual} bytes instead of {size} (an index file not synced before a power loss)"
            if self.read_only:
                self._ignored.add(path)
                repairs.append(f"{what}: ignored")
            else:
                fileio.remove(path, durable=True)
                repairs.append(f"{what}: deleted, its entries are rebuilt by recovery")
        return repairs

    def _file_names(self) -> list[str]:
        if not os.path.isdir(self.directory):
            return []
        return [n for n in sorted(os.listdir(self.directory))
                if n.isdigit() and os.path.isfile(os.path.join(self.directory, n))]

    def load(self, last_exit_ok: bool, index_msg_timestamp: int = 0, *, drop_empty: bool = False) -> None:
        """Map every file of ``index/`` in name order; after an unclean exit drop the files that
        end after the checkpoint's ``indexMsgTimestamp`` (dispatch rebuilds them) and, with
        ``drop_empty`` (pymq-ref's default store), the files without entries: a file that filled
        but was never synced comes back from a power loss as zeros, and 4.9.4 keeps it."""
        if not os.path.isdir(self.directory):
            return
        dropping = False
        for name in sorted(os.listdir(self.directory)):
            path = os.path.join(self.directory, name)
            if not os.path.isfile(path) or path in self._ignored:
                continue
            if name.endswith(fileio.CREATING_SUFFIX):  # a creation interrupted by a crash
                if not self.read_only:
                    fileio.remove(path, durable=True)
                continue
            if not name.isdigit():
                continue
            f = IndexFile(path, self.hash_slot_num, self.index_num, read_only=self.read_only)
            f.load()
            if not last_exit_ok and not self.read_only and (dropping or
                    f.end_timestamp > index_msg_timestamp or (drop_empty and f.index_count <= 1)):
                # pymq-ref: every later file goes too: recovery rebuilds entries from the end of the
                # last file kept, so a dropped file in the middle would leave its entries missing
                # (a clock set back can make a later file end earlier than a dropped one)
                dropping = drop_empty
                f.destroy()
                continue
            self.files.append(f)

    def _new_file_name(self) -> str:
        now = self.clock.now_ms()
        last = self.files[-1].file_name if self.files else None
        if last is not None and last.isdigit() and len(last) == 17:
            # pymq-ref: a clock behind the newest file (set back, or another machine's) must not
            # name a file that sorts before it: files are loaded, and queried, in name order
            now = max(now, _name_ms(last, self.tz) + 1)
        while True:
            name = index_file_name(now, self.tz) if self.tz is not None else _local_name(now)
            if not os.path.exists(os.path.join(self.directory, name)):
                return name
            now += 1  # pymq-ref: never reuse a name when two files roll in the same millisecond

    def get_and_create_last_index_file(self) -> IndexFile:
        with self.lock:
            last = self.files[-1] if self.files else None
            if last is not None and not last.is_write_full:
                return last
            end_phy = last.end_phy_offset if last is not None else 0
            end_ts = last.end_timestamp if last is not None else 0
            f = IndexFile(os.path.join(self.directory, self._new_file_name()), self.hash_slot_num,
                          self.index_num, end_phy, end_ts)
            self.files.append(f)
        if last is not None:
            # RocketMQ flushes the previous file on a helper thread; we do it inline
            last.flush()
            if last.is_write_full and self.on_file_full is not None:
                self.on_file_full(last.end_timestamp)
        return f

    def build_index(self, req) -> None:
        """``IndexService.buildIndex`` for one dispatch request: UNIQ_KEY, then each KEYS token."""
        files = self.files
        f = files[-1] if files else None
        if f is None or f.index_count >= f.index_num:
            f = self.get_and_create_last_index_file()
        phy = req.commit_log_offset
        if phy < f.end_phy_offset:
            return
        if (req.sys_flag & 0xC) == _TRAN_ROLLBACK:
            return
        topic = req.topic
        uniq_key = req.uniq_key
        hashes = [] if uniq_key is None else [fast_index_key_hash(f"{topic}#{uniq_key}")]  # build_key
        keys = req.keys
        if keys:
            if " " not in keys:  # one key (the usual case)
                hashes.append(fast_index_key_hash(f"{topic}#{keys}"))
            else:
                for key in keys.split(" "):
                    if key:
                        hashes.append(fast_index_key_hash(f"{topic}#{key}"))
        if hashes:
            ts = req.store_timestamp
            done = f.put_keys(hashes, phy, ts)
            while done < len(hashes):  # the file filled up: roll and go on
                f = self.get_and_create_last_index_file()
                done += f.put_keys(hashes[done:], phy, ts)

    def query_offset(self, topic: str, key: str, max_num: int, begin: int, end: int):
        """``queryOffset``: ``(phy_offsets, last_update_timestamp, last_update_phy_offset)``."""
        offsets: list[int] = []
        last_ts = last_phy = 0
        max_num = min(max_num, self.max_msgs_num_batch)
        full_key = build_key(topic, key)
        with self.lock:
            files = list(self.files)
        for i in range(len(files), 0, -1):
            f = files[i - 1]
            if i == len(files):
                last_ts, last_phy = f.end_timestamp, f.end_phy_offset
            if f.time_matched(begin, end):
                f.select_phy_offset(full_key, max_num, begin, end, offsets)
            if f.begin_timestamp < begin:
                break
            if len(offsets) >= max_num:
                break
        return offsets, last_ts, last_phy

    def delete_expired_file(self, offset: int) -> int:
        """Delete files (never the last) whose ``endPhyOffset < offset``."""
        with self.lock:
            if not self.files or self.files[0].end_phy_offset >= offset:
                return 0
            doomed = [f for f in self.files[:-1] if f.end_phy_offset < offset]
            for f in doomed:
                f.destroy()
                self.files.remove(f)
            return len(doomed)

    def destroy(self) -> None:
        with self.lock:
            for f in self.files:
                f.destroy()
            self.files = []

    def flush(self) -> None:
        with self.lock:
            for f in self.files:
                if not f.mapped.read_only:
                    f.flush()

    def shutdown(self) -> None:
        with self.lock:
            for f in self.files:
                f.close()
            self.files = []


def _name_ms(name: str, tz: tzinfo | None) -> int:
    """The epoch milliseconds an index file name (``yyyyMMddHHmmssSSS``) stands for."""
    from datetime import datetime

    t = datetime.strptime(name[:14], "%Y%m%d%H%M%S")
    seconds = t.replace(tzinfo=tz).timestamp() if tz is not None else t.timestamp()
    return int(seconds) * 1000 + int(name[14:])


def _local_name(now_ms: int) -> str:
    import time as _time

    t = _time.localtime(now_ms // 1000)
    return _time.strftime("%Y%m%d%H%M%S", t) + f"{now_ms % 1000:03d}"
