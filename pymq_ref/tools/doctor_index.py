"""The doctor's IndexFile checks: chains, headers, and entries against the CommitLog.

The book's reference appendix, §IndexFile. Three passes, each linear, and a look at each file's header times:

1. :meth:`IndexCheck.add_files` — per file: the size matches a geometry, every non-empty
   hash slot points at an entry, every chain links strictly backwards through entries of that
   slot, every written entry is reachable from its slot, the header agrees with the entries.
   Then :meth:`IndexCheck.check_header_times` reads the records of each file's first and last
   entries: the header's begin/end timestamps must be their store timestamps (see below).
2. :meth:`IndexCheck.match_record` — called by the CommitLog scan for each record, in log
   order, with the key hashes the dispatcher would index (UNIQ_KEY, then each KEYS token, as
   ``topic#key``). Entries are appended in log order, so a cursor over all entries of all files
   merges with the scan: each expected key finds its entry (marked) or is reported missing, and
   each found entry's timeDiff is compared with what ``putKey`` writes for this record.
3. :meth:`IndexCheck.check_unmatched` — every entry the merge did not mark is decoded against
   the record it points at: a duplicate of a real key is fine (re-dispatch after a crash; its
   timeDiff is checked too), any other entry points at a record without that key (or at no record).

Times, as ``IndexFile.putKey`` (4.9.4) maintains them: an entry's timeDiff is
``(storeTimestamp - beginTimestamp) / 1000`` with Java's truncating division, 0 while the
header's begin is <= 0, negative results clamped to 0, large ones to ``Integer.MAX_VALUE``
(:func:`~pymq_ref.formats.index_file.time_diff_seconds`). The begin it is computed against is
the header's begin *before* the put: for entry 1 that is what the file was created with — the
previous file's endTimestamp (``IndexService.getAndCreateLastIndexFile``), or 0 for a store's
first file — and entry 1's put then sets begin to its record's store timestamp, the reference
of every later entry. Every put sets endTimestamp to its record's store timestamp. So begin
and end are the store timestamps of the records of the first and last entries (not a min and
max: store timestamps may step back), and a file without entries keeps begin = end = what it
was created with. When the CommitLog has lost its head to retention, the first file's
predecessor may have been deleted too, and its entry 1 is not checked. (A quirk this keeps:
queries read every entry as begin + timeDiff s, so entry 1 of a rolled file, measured from the
previous file's end but read from its own begin, comes back up to that gap later than stored.)

Read-only: buffers come from :class:`~pymq_ref.tools.readonly_maps.ReadOnlyMaps`. A view holds no
buffer: it asks for one when it reads and keeps it only while it does, so that a store with
thousands of index files never has more of them mapped than the cache allows.
"""

from __future__ import annotations

import re
from typing import Callable

from ..formats.hashing import index_key_hash
from ..store.index import fast_index_key_hash
from ..formats.index_file import (ENTRY, INDEX_HEADER_SIZE, INT_MAX, SLOT, decode_index_header, entry_position,
                                  time_diff_seconds)
from .doctor_bulk import chains_sound
from .store_files import index_geometry
from .store_layout import Problem, Segment

_NONZERO = re.compile(rb"[^\x00]")
_entry_unpack = ENTRY.unpack_from
_slot_unpack = SLOT.unpack_from


def record_index_keys(record) -> list[str]:
    """The keys ``IndexService.buildIndex`` puts for a record (rollbacks get none)."""
    if record.sys_flag & 0xC == 0xC:
        return []
    props = record.properties
    keys = []
    uniq = props.get("UNIQ_KEY")
    if uniq is not None:
        keys.append(uniq)
    for key in props.get("KEYS", "").split(" "):
        if key:
            keys.append(key)
    return keys


def _key_hashes(record) -> set[int]:
    """The key hashes of the index entries ``buildIndex`` writes for ``record``."""
    return {index_key_hash(f"{record.topic}#{key}") for key in record_index_keys(record)}


def _problems(buf, slots: int, entries: int) -> int:
    """How many structural problems the file shows under this geometry."""
    found = []
    view = IndexView(Segment(None, "", 0, len(buf)), lambda: buf, slots, entries)
    IndexCheck(found.append)._check_chains(view)
    return len(found)


def _ratio_geometry(size: int) -> tuple[int, int] | None:
    """RocketMQ's defaults keep maxIndexNum = 4 x maxHashSlotNum: the geometry of that ratio, if the size allows."""
    slots, rest = divmod(size - INDEX_HEADER_SIZE, 84)
    return (slots, 4 * slots) if slots > 0 and not rest else None


class IndexView:
    """One index file: geometry, header, a mark per entry, and the begin timestamps ``putKey``
    computed the entries' timeDiffs against (set by :meth:`IndexCheck.check_header_times`).
    ``buffer()`` maps the file (through the doctor's cache) when the view reads it."""

    def __init__(self, seg: Segment, buffer: Callable[[], object], slots: int, entries: int):
        self.seg, self.buffer, self.slots, self.entries = seg, buffer, slots, entries
        self.header = decode_index_header(buffer(), with_spans=False)
        self.count = min(self.header.effective_index_count, entries)  # next entry number
        self.first_entry_at = entry_position(0, slots)
        self.marked = bytearray(max(self.count, 1))
        #: the file before this one in index/ (None: this is the first), and whether it was unreadable
        self.prev: IndexView | None = None
        self.prev_unreadable = False
        #: the begin timestamp of entry 1's put (None: unknown), and of every later entry's put
        self.first_begin: int | None = None
        self.first_begin_from = ""
        self.begin: int = self.header.begin_timestamp
        #: the end timestamp the next file was created with (the last entry's record's, or the header's)
        self.end: int = self.header.end_timestamp

    def entry(self, n: int) -> tuple[int, int, int, int]:
        """``(key_hash, phy_offset, time_diff, prev_index)`` of entry ``n``."""
        return _entry_unpack(self.buffer(), self.first_entry_at + 20 * n)

    def entry_offset(self, n: int) -> int:
        return self.first_entry_at + 20 * n


class IndexCheck:
    def __init__(self, report: Callable[[Problem], None], *, hash_slots: int | None = None,
                 index_num: int | None = None):
        self.report = report
        self.hash_slots, self.index_num = hash_slots, index_num
        self.views: list[IndexView] = []
        self.entries_total = 0
        self.matched = 0
        self.missing = 0
        self.lagging = 0
        self.lag_from: int | None = None
        self.before_index = 0
        self.duplicates = 0
        self.wrong = 0
        self.times_checked = 0
        self.times_wrong = 0
        self._cursor = (0, 1)
        self._validated: set[tuple[int, int, int]] = set()
        self.first_phy: int | None = None
        self.last_phy: int | None = None

    # -- pass 1 ---------------------------------------------------------------------------------
    def add_files(self, segments: list[Segment], get: Callable[[object], object]) -> None:
        """Check every index file (``get(path)`` maps one). All files of a store share one geometry:
        it is inferred from the first file (of each size) that allows it, files with entries first
        (an empty file fits many geometries), so one damaged or empty file does not hide it."""
        geometry: dict[int, tuple[int, int]] = {}
        errors: dict[int, str] = {}
        probe = sorted(segments, key=lambda seg: seg.size < INDEX_HEADER_SIZE
                       or decode_index_header(get(seg.path), with_spans=False).effective_index_count <= 1)
        for seg in probe:
            buf = get(seg.path)
            size = len(buf)
            if size in geometry:
                continue
            ratio = _ratio_geometry(size) if not (self.hash_slots or self.index_num) else None
            if ratio is not None and _problems(buf, *ratio) == 0:
                guess = ratio
                self._validated.add((seg.path, *guess))
            else:
                try:  # the same inference as `pymq inspect`; a damaged file falls back to the 1:4 ratio
                    guess = index_geometry(buf, self.hash_slots, self.index_num)
                except ValueError as exc:
                    errors.setdefault(size, str(exc))
                    guess = ratio
            if guess is not None:
                geometry[size] = guess
        prev: IndexView | None = None
        prev_unreadable = False
        for seg in segments:
            if seg.size in geometry:
                view = self.add_file(seg, lambda path=seg.path: get(path), *geometry[seg.size])
                view.prev, view.prev_unreadable = prev, prev_unreadable
                prev, prev_unreadable = view, False
            else:
                self.report(Problem("wrong_file_size", seg.rel, None, errors[seg.size]))
                prev, prev_unreadable = None, True

    def add_file(self, seg: Segment, buffer: Callable[[], object], slots: int, entries: int) -> IndexView:
        view = IndexView(seg, buffer, slots, entries)
        validated = (seg.path, slots, entries) in self._validated
        if view.header.index_count > entries:
            self.report(Problem("index_header_mismatch", seg.rel, 36,
                                f"index_count {view.header.index_count} exceeds maxIndexNum {entries}"))
        self.views.append(view)
        self.entries_total += max(0, view.count - 1)
        if not validated:  # (a clean structural check of this very file was done when choosing the geometry)
            self._check_chains(view)
        if view.count > 1:
            first_phy, last_phy = view.entry(1)[1], view.entry(view.count - 1)[1]
            self.first_phy = first_phy if self.first_phy is None else self.first_phy
            self.last_phy = last_phy
            h = view.header
            # endPhyOffset decides retention (IndexService.deleteExpiredFile) and the last offset
            # a query reports: an error; nothing in 4.9.4 reads beginPhyOffset back: a warning
            if h.end_phy_offset != last_phy:
                self.report(Problem("index_header_mismatch", seg.rel, 24,
                                    f"header endPhyOffset {h.end_phy_offset}: expected that of entry "
                                    f"{view.count - 1}, {last_phy} (retention deletes by it)"))
            if h.begin_phy_offset != first_phy:
                self.report(Problem("index_header_mismatch", seg.rel, 16,
                                    f"header beginPhyOffset {h.begin_phy_offset}: expected that of entry 1, "
                                    f"{first_phy}", "warning"))
        return view

    def _check_chains(self, view: IndexView, report: Callable[[Problem], None] | None = None) -> None:
        """Slots, chains, reachability and the header's slot count of one file."""
        report = report or self.report
        buf, slots, count, rel = view.buffer(), view.slots, view.count, view.seg.rel
        first_entry_at = view.first_entry_at
        if chains_sound(buf, slots, count, first_entry_at, view.header.hash_slot_count):
            return  # (else the walk below finds and explains every problem)
        visited = bytearray(count)
        used_slots = 0
        region_end = INDEX_HEADER_SIZE + 4 * slots
        search = _NONZERO.search
        pos = INDEX_HEADER_SIZE
        while True:
            hit = search(buf, pos, region_end)
            if hit is None:
                break
            slot = (hit.start() - INDEX_HEADER_SIZE) // 4
            at = INDEX_HEADER_SIZE + 4 * slot
            pos = at + 4
            (head,) = _slot_unpack(buf, at)
            used_slots += 1
            if not 0 < head < count:
                report(Problem("index_bad_slot", rel, at,
                                    f"hash slot {slot} holds {head}: expected an entry number in [1, {count - 1}]"))
                continue
            cur = head
            while True:
                kh, _phy, diff, prev = _entry_unpack(buf, first_entry_at + 20 * cur)
                if visited[cur]:
                    report(Problem("index_chain_broken", rel, view.entry_offset(cur),
                                        f"entry {cur} is reached twice (from slot {slot}): chains must not share entries"))
                    break
                visited[cur] = 1
                if kh % slots != slot:
                    report(Problem("index_chain_broken", rel, view.entry_offset(cur),
                                        f"entry {cur} (key hash {kh}) is on the chain of slot {slot}: expected slot "
                                        f"{kh % slots} (key hash mod {slots})"))
                if diff < 0:
                    report(Problem("index_chain_broken", rel, view.entry_offset(cur) + 12,
                                        f"entry {cur}: time_diff {diff} is negative (queries stop here)"))
                if prev == 0:
                    break
                if not 0 < prev < cur:
                    report(Problem("index_chain_broken", rel, view.entry_offset(cur) + 16,
                                        f"entry {cur}: prev_index {prev} must be in [0, {cur - 1}] (chains run to "
                                        f"older entries)"))
                    break
                cur = prev
        for n in range(1, count):
            if not visited[n]:
                kh = _entry_unpack(buf, first_entry_at + 20 * n)[0]
                report(Problem("index_unreachable_entry", rel, view.entry_offset(n),
                                    f"entry {n} (key hash {kh}) is not on the chain of its slot {kh % slots}: "
                                    f"queries never find it"))
        if used_slots != view.header.hash_slot_count:
            report(Problem("index_header_mismatch", rel, 32,
                                f"hash_slot_count {view.header.hash_slot_count}: expected {used_slots} "
                                f"(the non-empty slots)", "warning"))

    # -- header times -----------------------------------------------------------------------------
    def check_header_times(self, read_record: Callable[[int], object], min_phy: int) -> None:
        """Work out the begin timestamp each entry was put against, and check the headers' begin and
        end timestamps against the records of the first and last entries (see the module docstring).

        ``read_record(phy)`` returns the record at a CommitLog offset or a string saying why there is
        none; ``min_phy`` is the CommitLog's first offset (entries before it cannot be checked).
        """
        for view in self.views:
            h, rel = view.header, view.seg.rel
            prev = view.prev
            if prev is not None and prev.header.index_count >= prev.entries:
                view.first_begin = max(prev.end, 0)  # IndexFile(…, endTimestamp) sets it if > 0
                view.first_begin_from = f"the end timestamp of the full index file before it, {prev.seg.rel}"
            elif prev is None and not view.prev_unreadable and min_phy == 0:
                view.first_begin = 0
                view.first_begin_from = "none: a store's first index file starts with 0"
            else:
                view.first_begin = None  # the file it rolled from is gone (retention), unreadable or not full
            if view.count <= 1:
                self._check_empty_file_times(view)
                continue
            first = self._entry_record(view, 1, read_record, min_phy)
            if first is not None:
                ts1 = first.store_timestamp
                view.begin = ts1
                if h.begin_timestamp != ts1:
                    if self._entries_follow_header(view, ts1, read_record, min_phy):
                        view.begin = h.begin_timestamp
                        self.report(Problem(
                            "index_header_mismatch", rel, 0,
                            f"begin_timestamp {h.begin_timestamp}: expected {ts1}, the store timestamp of the record "
                            f"of entry 1 (CommitLog offset {first.phy_offset}); the entries' time diffs agree with the "
                            f"header, so the record's STORETIMESTAMP may be what changed", phy_offset=first.phy_offset))
                    else:
                        self.report(Problem(
                            "index_header_mismatch", rel, 0,
                            f"begin_timestamp {h.begin_timestamp}: expected {ts1}, the store timestamp of the record "
                            f"of entry 1 (CommitLog offset {first.phy_offset}), which putKey sets as the file's begin; "
                            f"queries by time read every entry's time as begin + time_diff s, "
                            f"{(h.begin_timestamp - ts1) / 1000:+.3f} s off", phy_offset=first.phy_offset))
            else:
                view.begin = h.begin_timestamp  # entry 1 cannot be resolved: the header is the only reference
            last_n = view.count - 1
            last = first if last_n == 1 else self._entry_record(view, last_n, read_record, min_phy)
            if last is not None:
                view.end = last.store_timestamp
            if last is not None and h.end_timestamp != last.store_timestamp:
                self.report(Problem(
                    "index_header_mismatch", rel, 8,
                    f"end_timestamp {h.end_timestamp}: expected {last.store_timestamp}, the store timestamp of the "
                    f"record of the last entry {last_n} (CommitLog offset {last.phy_offset}); every putKey sets it "
                    f"(queries choose files by [begin, end], and recovery after a crash deletes index files whose end "
                    f"is after the checkpoint)", phy_offset=last.phy_offset))

    def _check_empty_file_times(self, view: IndexView) -> None:
        """A file without entries keeps the begin = end it was created with."""
        h, created = view.header, view.first_begin
        if created is not None:
            for at, name, value in ((0, "begin_timestamp", h.begin_timestamp), (8, "end_timestamp", h.end_timestamp)):
                if value != created:
                    self.report(Problem("index_header_mismatch", view.seg.rel, at,
                                        f"{name} {value} of a file without entries: expected {created}, what it "
                                        f"was created with ({view.first_begin_from})"))
        elif h.begin_timestamp != h.end_timestamp:
            self.report(Problem("index_header_mismatch", view.seg.rel, 0,
                                f"begin_timestamp {h.begin_timestamp} and end_timestamp {h.end_timestamp} of a file "
                                f"without entries: expected them equal (both are what the file was created with)"))

    def _entry_record(self, view: IndexView, n: int, read_record, min_phy: int):
        """The record entry ``n`` points at when it holds the entry's key, else None."""
        kh, phy, _diff, _prev = view.entry(n)
        if phy < min_phy:
            return None
        rec = read_record(phy)
        if isinstance(rec, str) or kh not in _key_hashes(rec):
            return None
        return rec

    def _entries_follow_header(self, view: IndexView, ts1: int, read_record, min_phy: int, sample: int = 8) -> bool:
        """Do entries 2.. (a few) fit the header's begin better than the store timestamp of entry 1's record?"""
        header_votes = record_votes = 0
        for n in range(2, min(view.count, 2 + sample)):
            rec = self._entry_record(view, n, read_record, min_phy)
            if rec is None:
                continue
            diff = view.entry(n)[2]
            header_votes += diff == time_diff_seconds(rec.store_timestamp, view.header.begin_timestamp)
            record_votes += diff == time_diff_seconds(rec.store_timestamp, ts1)
        return header_votes > record_votes

    def _check_time(self, view: IndexView, n: int, diff: int, store_timestamp: int, phy: int) -> None:
        """Entry ``n``'s timeDiff against what putKey writes for a record stored at ``store_timestamp``."""
        begin = view.begin if n > 1 else view.first_begin
        if begin is None:
            return
        self.times_checked += 1
        want = time_diff_seconds(store_timestamp, begin)
        if diff == want:
            return
        self.times_wrong += 1
        if begin <= 0:
            how = f"0 (the header's begin timestamp was {begin} when it was put: putKey writes 0)"
        else:
            delta = store_timestamp - begin
            how = f"(store timestamp {store_timestamp} - begin {begin}) / 1000 = {want}"
            if delta <= -1000:
                how += " (a negative diff is written as 0)"
            elif want == INT_MAX and delta // 1000 > INT_MAX:
                how += " (clamped to Integer.MAX_VALUE)"
            how += (", begin being the store timestamp of entry 1's record" if n > 1 else
                    f", begin being {view.first_begin_from}")
        effect = (f"; a query by key and time places the message {diff - want:+d} s off" if n > 1 else "")
        self.report(Problem("index_time_diff_mismatch", view.seg.rel, view.entry_offset(n),
                            f"entry {n} for the record at CommitLog offset {phy}: time_diff {diff} at byte "
                            f"{view.entry_offset(n) + 12}: expected {how}{effect}", phy_offset=phy))

    # -- pass 2 ---------------------------------------------------------------------------------
    def match_record(self, phy: int, topic: str, keys, store_timestamp: int | None = None, hashes=None) -> None:
        """Merge one record (in log order) with the entries; report its missing keys and, given the
        record's ``store_timestamp``, the wrong timeDiffs of its entries. ``hashes``: the keys'
        index hashes when the caller has them."""
        if not keys or self.first_phy is None:
            return
        if phy < self.first_phy:
            self.before_index += 1
            return
        if phy > self.last_phy:
            self.lagging += 1
            if self.lag_from is None:
                self.lag_from = phy
            return
        views = self.views
        fi, n = self._cursor
        if hashes is None:
            hashes = [fast_index_key_hash(f"{topic}#{key}") for key in keys]
        # fast path (a healthy store): this record's entries are the next ones, in key order
        if fi < len(views):
            view = views[fi]
            k = len(hashes)
            if n + k <= view.count:
                buf, at = view.buffer(), view.first_entry_at + 20 * n
                diffs = []
                for j in range(k):
                    kh, e_phy, d, _p = _entry_unpack(buf, at + 20 * j)
                    if e_phy != phy or kh != hashes[j]:
                        break
                    diffs.append(d)
                else:
                    view.marked[n:n + k] = b"\x01" * k
                    self.matched += k
                    self._cursor = (fi, n + k)
                    if store_timestamp is not None:
                        if n > 1:  # one begin for all of them: one expected value
                            self.times_checked += k
                            want = time_diff_seconds(store_timestamp, view.begin)
                            if diffs.count(want) != k:
                                self.times_checked -= k
                                for j, d in enumerate(diffs):
                                    self._check_time(view, n + j, d, store_timestamp, phy)
                        else:
                            for j, d in enumerate(diffs):
                                self._check_time(view, n + j, d, store_timestamp, phy)
                    return
        fi, n = self._normalise(fi, n)
        # entries of earlier offsets are left unmarked (pass 3 looks at them)
        while fi < len(views) and views[fi].entry(n)[1] < phy:
            fi, n = self._normalise(fi, n + 1)
        self._cursor = (fi, n)
        needed = list(zip(hashes, keys))
        # look a few entries ahead: a damaged entry in between must not hide the ones after it
        window = len(keys) + 8
        while needed and window > 0 and fi < len(views):
            view = views[fi]
            kh, e_phy, d, _p = view.entry(n)
            if e_phy == phy and not view.marked[n]:
                for i, (h, _key) in enumerate(needed):
                    if h == kh:
                        view.marked[n] = 1
                        self.matched += 1
                        if store_timestamp is not None:
                            self._check_time(view, n, d, store_timestamp, phy)
                        del needed[i]
                        self._cursor = self._normalise(fi, n + 1)
                        break
            fi, n = self._normalise(fi, n + 1)
            window -= 1
        for h, key in needed:
            self.missing += 1
            self.report(Problem("index_missing_entry", "index", None,
                                f"the record at CommitLog offset {phy} has key {key!r} (topic {topic}, key hash {h}) "
                                f"but no index entry points at it: a query by this key misses it", phy_offset=phy))

    def _normalise(self, fi: int, n: int) -> tuple[int, int]:
        """Step over the end of a file to entry 1 of the next one."""
        views = self.views
        while fi < len(views) and n >= views[fi].count:
            fi, n = fi + 1, 1
        return fi, n

    # -- pass 3 ---------------------------------------------------------------------------------
    def check_unmatched(self, read_record: Callable[[int], object], min_phy: int) -> None:
        """Verify every entry the merge did not mark against the record it points at."""
        for view in self.views:
            marked = view.marked
            buf = view.buffer()  # held while this file is checked, whatever read_record maps meanwhile
            for n in range(1, view.count):
                if marked[n]:
                    continue
                kh, phy, diff, _prev = _entry_unpack(buf, view.first_entry_at + 20 * n)
                if phy < min_phy:
                    continue  # the CommitLog file was deleted by retention
                rec = read_record(phy)
                if isinstance(rec, str):
                    self.wrong += 1
                    self.report(Problem("index_entry_wrong_record", view.seg.rel, view.entry_offset(n),
                                        f"entry {n} (key hash {kh}) points at CommitLog offset {phy}: {rec}",
                                        phy_offset=phy))
                    continue
                if kh in _key_hashes(rec):
                    self.duplicates += 1
                    self._check_time(view, n, diff, rec.store_timestamp, phy)
                else:
                    self.wrong += 1
                    self.report(Problem("index_entry_wrong_record", view.seg.rel, view.entry_offset(n),
                                        f"entry {n} (key hash {kh}) points at the record at CommitLog offset {phy} "
                                        f"(topic {rec.topic}), which has no key with that hash "
                                        f"(its keys: {record_index_keys(rec)})", phy_offset=phy))

    def counts(self) -> dict:
        return {"files": len(self.views), "entries": self.entries_total, "keys_matched": self.matched,
                "keys_missing": self.missing, "records_not_yet_indexed": self.lagging,
                "records_before_first_entry": self.before_index, "duplicate_entries": self.duplicates,
                "wrong_entries": self.wrong, "time_diffs_checked": self.times_checked,
                "time_diffs_wrong": self.times_wrong}
