"""The doctor's IndexFile checks: chains, headers, and entries against the CommitLog.

``storage.md`` §9. Three passes, each linear:

1. :meth:`IndexCheck.check_structure` — per file: the size matches a geometry, every non-empty
   hash slot points at an entry, every chain links strictly backwards through entries of that
   slot, every written entry is reachable from its slot, the header agrees with the entries.
2. :meth:`IndexCheck.match_record` — called by the CommitLog scan for each record, in log
   order, with the key hashes the dispatcher would index (UNIQ_KEY, then each KEYS token, as
   ``topic#key``). Entries are appended in log order, so a cursor over all entries of all files
   merges with the scan: each expected key finds its entry (marked) or is reported missing.
3. :meth:`IndexCheck.check_unmatched` — every entry the merge did not mark is decoded against
   the record it points at: a duplicate of a real key is fine (re-dispatch after a crash), any
   other entry points at a record without that key (or at no record).

Read-only: buffers come from :class:`~pymq_ref.tools.readonly_maps.ReadOnlyMaps`.
"""

from __future__ import annotations

import re
from typing import Callable

from ..formats.hashing import index_key_hash
from ..formats.index_file import ENTRY, INDEX_HEADER_SIZE, SLOT, decode_index_header, entry_position
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


def _problems(buf, slots: int, entries: int) -> int:
    """How many structural problems the file shows under this geometry."""
    found = []
    view = IndexView(Segment(None, "", 0, len(buf)), buf, slots, entries)
    IndexCheck(found.append)._check_chains(view)
    return len(found)


def _ratio_geometry(size: int) -> tuple[int, int] | None:
    """RocketMQ's defaults keep maxIndexNum = 4 x maxHashSlotNum: the geometry of that ratio, if the size allows."""
    slots, rest = divmod(size - INDEX_HEADER_SIZE, 84)
    return (slots, 4 * slots) if slots > 0 and not rest else None


class IndexView:
    """One index file: geometry, header and a mark per entry."""

    def __init__(self, seg: Segment, buf, slots: int, entries: int):
        self.seg, self.buf, self.slots, self.entries = seg, buf, slots, entries
        self.header = decode_index_header(buf, with_spans=False)
        self.count = min(self.header.effective_index_count, entries)  # next entry number
        self.first_entry_at = entry_position(0, slots)
        self.marked = bytearray(max(self.count, 1))

    def entry(self, n: int) -> tuple[int, int, int, int]:
        """``(key_hash, phy_offset, time_diff, prev_index)`` of entry ``n``."""
        return _entry_unpack(self.buf, self.first_entry_at + 20 * n)

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
        self._cursor = (0, 1)
        self._validated: set[tuple[int, int, int]] = set()
        self.first_phy: int | None = None
        self.last_phy: int | None = None

    # -- pass 1 ---------------------------------------------------------------------------------
    def add_files(self, files: list[tuple[Segment, object]]) -> None:
        """Check every index file. All files of a store share one geometry: it is inferred from
        the first file (of each size) that allows it, so one damaged file does not hide it."""
        geometry: dict[int, tuple[int, int]] = {}
        errors: dict[int, str] = {}
        for _seg, buf in files:
            size = len(buf)
            if size in geometry:
                continue
            ratio = _ratio_geometry(size) if not (self.hash_slots or self.index_num) else None
            if ratio is not None and _problems(buf, *ratio) == 0:
                guess = ratio
                self._validated.add((id(buf), *guess))
            else:
                try:  # the same inference as `pymq inspect`; a damaged file falls back to the 1:4 ratio
                    guess = index_geometry(buf, self.hash_slots, self.index_num)
                except ValueError as exc:
                    errors.setdefault(size, str(exc))
                    guess = ratio
            if guess is not None:
                geometry[size] = guess
        for seg, buf in files:
            if len(buf) in geometry:
                self.add_file(seg, buf, *geometry[len(buf)])
            else:
                self.report(Problem("wrong_file_size", seg.rel, None, errors[len(buf)]))

    def add_file(self, seg: Segment, buf, slots: int, entries: int) -> None:
        view = IndexView(seg, buf, slots, entries)
        validated = (id(buf), slots, entries) in self._validated
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
            if h.begin_phy_offset != first_phy or h.end_phy_offset != last_phy:
                self.report(Problem("index_header_mismatch", seg.rel, 16,
                                    f"header phy offsets [{h.begin_phy_offset}, {h.end_phy_offset}]: expected those of "
                                    f"entries 1 and {view.count - 1}, [{first_phy}, {last_phy}]", "warning"))

    def _check_chains(self, view: IndexView, report: Callable[[Problem], None] | None = None) -> None:
        """Slots, chains, reachability and the header's slot count of one file."""
        report = report or self.report
        buf, slots, count, rel = view.buf, view.slots, view.count, view.seg.rel
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
                kh, _phy, diff, prev = view.entry(cur)
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
                kh = view.entry(n)[0]
                report(Problem("index_unreachable_entry", rel, view.entry_offset(n),
                                    f"entry {n} (key hash {kh}) is not on the chain of its slot {kh % slots}: "
                                    f"queries never find it"))
        if used_slots != view.header.hash_slot_count:
            report(Problem("index_header_mismatch", rel, 32,
                                f"hash_slot_count {view.header.hash_slot_count}: expected {used_slots} "
                                f"(the non-empty slots)", "warning"))

    # -- pass 2 ---------------------------------------------------------------------------------
    def match_record(self, phy: int, topic: str, keys: list[str]) -> None:
        """Merge one record (in log order) with the entries; report its missing keys."""
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
        hashes = [index_key_hash(f"{topic}#{key}") for key in keys]
        # fast path (a healthy store): this record's entries are the next ones, in key order
        if fi < len(views):
            view = views[fi]
            k = len(hashes)
            if n + k <= view.count:
                entry = view.entry
                for j in range(k):
                    kh, e_phy, _d, _p = entry(n + j)
                    if e_phy != phy or kh != hashes[j]:
                        break
                else:
                    view.marked[n:n + k] = b"\x01" * k
                    self.matched += k
                    self._cursor = (fi, n + k)
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
            kh, e_phy, _d, _p = view.entry(n)
            if e_phy == phy and not view.marked[n]:
                for i, (h, _key) in enumerate(needed):
                    if h == kh:
                        view.marked[n] = 1
                        self.matched += 1
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
            for n in range(1, view.count):
                if marked[n]:
                    continue
                kh, phy, _diff, _prev = view.entry(n)
                if phy < min_phy:
                    continue  # the CommitLog file was deleted by retention
                rec = read_record(phy)
                if isinstance(rec, str):
                    self.wrong += 1
                    self.report(Problem("index_entry_wrong_record", view.seg.rel, view.entry_offset(n),
                                        f"entry {n} (key hash {kh}) points at CommitLog offset {phy}: {rec}",
                                        phy_offset=phy))
                    continue
                hashes = {index_key_hash(f"{rec.topic}#{k}") for k in record_index_keys(rec)}
                if kh in hashes:
                    self.duplicates += 1
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
                "wrong_entries": self.wrong}
