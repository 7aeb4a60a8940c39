"""``pymq doctor``: a read-only consistency check of a whole store (cf. Kafka's DumpLogSegments).

What is checked (the book's reference appendix, §Store layout, and the structures after it), in this order:

1. **Layout** (:mod:`pymq_ref.tools.store_layout`): unknown files, segment names that are not
   20-digit offsets, segments of the wrong size, gaps between segments.
2. **ConsumeQueue files**: units are written contiguously from the start (blank fillers only
   first), nothing but zeros after the last unit.
3. **IndexFiles** (:mod:`pymq_ref.tools.doctor_index`): slots, chains, reachability, headers
   (phy offsets, and begin/end timestamps = the store timestamps of the first/last entries' records).
4. **The CommitLog**, every segment, record by record with the one decoder
   (:func:`~pymq_ref.tools.segments.walk_segment`): magic, sizes, body CRC, blank sizes,
   PHYSICALOFFSET = position, stray bytes after the end of written data, segments that end
   without a blank while later ones hold data. Each message is then turned into the dispatch
   request the store would build (:func:`pymq_ref.store.dispatch.dispatch_request_from_record`
   — "derived files are functions of the log") and its ConsumeQueue unit and index entries
   are looked up: missing or different units and missing index keys are reported, and each
   index entry's timeDiff is compared with what ``IndexFile.putKey`` writes for that record.
   A SCHEDULE_TOPIC_XXXX unit holding the TAGS hash instead of the delivery time is a warning,
   not a mismatch: 4.9.4's abnormal recovery writes it (it runs before the delay levels load).
5. **Back-references**: units and index entries that no record claimed are decoded against
   the record they point at (wrong topic/queue/size/tagsCode, not a record, no such key).
6. **Checkpoint** (not after the newest record) and **config JSON** (parses).

Findings are :class:`~pymq_ref.tools.store_layout.Problem` items (file, offset, reason).
Exit status of the command: 0 clean, 1 findings (errors or warnings; notes do not count),
2 the store cannot be read. Nothing is written, no lock is taken, files are opened
``O_RDONLY`` and mapped ``ACCESS_READ``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TextIO

import numpy as np

from ..formats import fastjson
from ..formats.checkpoint import decode_checkpoint
from ..formats.consume_queue import BLANK_UNIT_SIZE_FIELD, CQ_UNIT
from ..formats.consume_queue_ext import decode_ext_unit, is_ext_addr, undecorate
from ..errors import FormatError
from ..formats.message import BlankRecord
from ..store.dispatch import SCHEDULE_TOPIC, dispatch_request_from_record
from ..store.delay import DEFAULT_MESSAGE_DELAY_LEVEL, parse_delay_level
from .doctor_index import IndexCheck
from .doctor_bulk import entries_match, units_match
from .doctor_walk import Chunk, Rec, parallel_items, segment_items
from .doctor_power_loss import config_problems
from .readonly_maps import CommitLogReader, ReadOnlyMaps, first_nonzero, last_nonzero
from .segments import EndOfData, Finding, open_readonly
from .store_layout import Problem, QueueDir, StoreLayout, StoreUnreadable, discover

_cq_unpack = CQ_UNIT.unpack_from
_ELIGIBLE = (0x0, 0x8)  # NOT and COMMIT transaction types get a ConsumeQueue unit
#: ``--jobs`` hands segments to worker processes when they average at least this many bytes
PARALLEL_MIN_SEGMENT = 1 << 20


@dataclass
class DoctorOptions:
    commitlog_file_size: int | None = None
    cq_file_size: int | None = None
    hash_slots: int | None = None
    index_num: int | None = None
    message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL
    #: findings listed per code; the rest are only counted
    max_findings_per_code: int = 50
    #: called with (bytes scanned, total bytes) every ``progress_every`` bytes of CommitLog
    progress: Callable[[int, int], None] | None = None
    progress_every: int = 64 << 20
    #: processes: with N > 1, N - 1 workers decode and CRC-check the CommitLog segments while this
    #: one checks ConsumeQueue units and index entries (see :mod:`pymq_ref.tools.doctor_walk`);
    #: segments smaller than 1 MiB on average are walked here (per-segment messages would cost more)
    jobs: int = 1


@dataclass
class DoctorReport:
    store: str
    findings: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    by_code: Counter = field(default_factory=Counter)

    @property
    def clean(self) -> bool:
        return not self.by_code

    @property
    def exit_status(self) -> int:
        return 0 if self.clean else 1

    def to_json(self) -> dict:
        listed = Counter(p.code for p in self.findings)
        return {"store": self.store, "clean": self.clean, "exit_status": self.exit_status,
                "finding_counts": dict(sorted(self.by_code.items())),
                "findings_not_listed": {c: n - listed[c] for c, n in sorted(self.by_code.items()) if n > listed[c]},
                "findings": [p.to_json() for p in self.findings], "notes": [p.to_json() for p in self.notes],
                "counts": self.counts}

    def text(self) -> str:
        c = self.counts
        log = c.get("commitlog", {})
        lines = [f"pymq doctor {self.store}",
                 f"  commitlog: {log.get('files', 0)} file(s), {log.get('messages', 0)} message(s), "
                 f"{log.get('blanks', 0)} blank(s), offsets [{log.get('min_offset', 0)}, {log.get('end_offset', 0)})",
                 f"  consumequeue: {c.get('consumequeue', {}).get('queues', 0)} queue(s), "
                 f"{c.get('consumequeue', {}).get('units', 0)} unit(s), "
                 f"{c.get('consumequeue', {}).get('units_matched', 0)} matched",
                 f"  index: {c.get('index', {}).get('files', 0)} file(s), {c.get('index', {}).get('entries', 0)} "
                 f"entries, {c.get('index', {}).get('keys_matched', 0)} keys matched, "
                 f"{c.get('index', {}).get('time_diffs_checked', 0)} time diffs checked"]
        for note in self.notes:
            lines.append("  " + note.text())
        for p in self.findings:
            lines.append(p.text())
        listed = Counter(p.code for p in self.findings)
        for code, n in sorted(self.by_code.items()):
            if n > listed[code]:
                lines.append(f"... and {n - listed[code]} more {code} finding(s) not listed")
        total = sum(self.by_code.values())
        lines.append("clean: no findings" if self.clean else
                     f"{total} finding(s): " + ", ".join(f"{code} {n}" for code, n in sorted(self.by_code.items())))
        return "\n".join(lines) + "\n"


class _Queue:
    """One ConsumeQueue during the check: its segments, written extent and per-unit marks."""

    def __init__(self, qdir: QueueDir, file_size: int):
        self.dir = qdir
        self.file_size = file_size
        self.segments = qdir.segments
        self.start = self.segments[0].base if self.segments else 0  # byte offset of the first file
        self.end = self.start  # byte offset after the last written unit
        self.units = 0
        self.first_real = None  # byte offset of the first non-filler unit
        self.matched = bytearray()
        self.reported: set[int] = set()
        self.matched_count = 0

    def segment_for(self, byte_offset: int):
        segs = self.segments
        if not segs or not self.file_size:
            return None
        i = (byte_offset - self.start) // self.file_size
        if 0 <= i < len(segs) and segs[i].base <= byte_offset < segs[i].base + segs[i].size:
            return segs[i]
        for seg in segs:
            if seg.base <= byte_offset < seg.base + seg.size:
                return seg
        return None


class Doctor:
    """One run. Call order: construct → :meth:`run` (once) → read the report."""

    def __init__(self, root: str | os.PathLike, options: DoctorOptions | None = None):
        self.root = Path(root)
        self.options = options or DoctorOptions()
        self.report = DoctorReport(str(root))
        self.maps = ReadOnlyMaps()
        self.delay_table = parse_delay_level(self.options.message_delay_level)
        self.layout: StoreLayout | None = None
        self.queues: dict[tuple[str, int], _Queue] = {}
        self._ext_dirs: dict[tuple[str, int], QueueDir] | None = None  # consumequeue_ext chains by queue
        self.index = IndexCheck(self.add, hash_slots=self.options.hash_slots, index_num=self.options.index_num)
        self.max_store_timestamp = 0
        self.cl_min = 0
        self.cl_end = 0

    def add(self, problem: Problem) -> None:
        if problem.severity == "note":
            self.report.notes.append(problem)
            return
        self.report.by_code[problem.code] += 1
        if self.report.by_code[problem.code] <= self.options.max_findings_per_code:
            self.report.findings.append(problem)

    # ------------------------------------------------------------------------------------------
    def run(self) -> DoctorReport:
        o = self.options
        self.layout = layout = discover(self.root, commitlog_file_size=o.commitlog_file_size,
                                        cq_file_size=o.cq_file_size)
        try:
            for p in layout.problems:
                self.add(p)
            if layout.abort:
                self.add(Problem("abort_present", "abort", None,
                                 "the store is running or did not shut down cleanly: the next start recovers "
                                 "abnormally and re-dispatches from the checkpoint, so derived files may lag "
                                 "the CommitLog", "note"))
            self._scan_consume_queues()
            self.index.add_files(layout.index_files, self.maps.get)
            if self.index.views:
                reader = CommitLogReader(layout.commitlog, layout.commitlog_file_size, self.maps)  # (no end yet)
                self.index.check_header_times(reader.read, layout.commitlog[0].base if layout.commitlog else 0)
            self._scan_commit_log()
            self._check_unclaimed_units()
            self.index.check_unmatched(self._read_record, self.cl_min)
            self._index_lag_finding()
            self._check_checkpoint()
            self._check_config()
            self._counts()
        finally:
            self.maps.close()
        return self.report

    # -- ConsumeQueue files ----------------------------------------------------------------------
    def _scan_consume_queues(self) -> None:
        size = self.layout.cq_file_size
        for qdir in self.layout.queues:
            q = _Queue(qdir, size)
            self.queues[(qdir.topic, qdir.queue_id)] = q
            ended = False
            for seg in q.segments:
                buf = self.maps.get(seg.path)
                stray_from = 0
                if not ended:
                    n = len(buf) - len(buf) % 20
                    pos = n
                    for pos in range(0, n, 20):
                        phy, sz, tags = _cq_unpack(buf, pos)
                        if phy == 0 and sz == 0 and tags == 0:
                            ended = True
                            break
                        if sz == BLANK_UNIT_SIZE_FIELD and phy == 0 and tags == 0:
                            if q.first_real is not None:
                                self.add(Problem("cq_bad_unit", seg.rel, pos,
                                                 "a blank filler unit (0, 0x7FFFFFFF, 0) after real units: fillers "
                                                 "only precede the first unit of a queue"))
                        elif phy < 0 or sz <= 0:
                            self.add(Problem("cq_bad_unit", seg.rel, pos,
                                             f"unit ({phy}, {sz}, {tags}): expected phy_offset >= 0 and size > 0 "
                                             f"(recovery cuts the queue here)"))
                        elif q.first_real is None:
                            q.first_real = seg.base + pos
                        q.units += 1
                    else:
                        pos = n
                    q.end = seg.base + pos
                    if not ended:
                        continue
                    stray_from = pos
                stray = first_nonzero(buf, stray_from, len(buf), seg.path)
                if stray is not None:
                    self.add(Problem("cq_stray_bytes", seg.rel, stray,
                                     f"non-zero bytes after the last unit of the queue (units end at logical offset "
                                     f"{q.end // 20}): units after an all-zero unit are never read"))
            q.matched = bytearray(max(0, (q.end - q.start) // 20))

    # -- CommitLog --------------------------------------------------------------------------------
    def _scan_commit_log(self) -> None:
        segs = self.layout.commitlog
        self.cl_min = segs[0].base if segs else 0
        self.cl_end = self.cl_min
        counts = self.report.counts.setdefault("commitlog", {})
        jobs = max(1, self.options.jobs)
        # worker processes take whole segments: worth it for segments of a MiB and more
        parallel = jobs > 1 and len(segs) > 1 and sum(s.size for s in segs) >= len(segs) * PARALLEL_MIN_SEGMENT
        source = parallel_items(segs, self.delay_table, jobs) if parallel else None
        try:
            self._walk_segments(segs, source, counts)
        finally:
            if source is not None:
                source.close()  # (stops the worker processes if the walk ended early)

    def _walk_segments(self, segs, source, counts) -> None:
        total = sum(s.size for s in segs)
        progress, every = self.options.progress, self.options.progress_every
        done = 0
        next_report = every
        messages = blanks = bytes_ = crc_bad = 0
        open_end: tuple | None = None  # (segment, offset) of a non-full segment's end of data
        index = self.index
        queues = self.queues
        delay_table = self.delay_table
        for si, seg in enumerate(segs):
            with open_readonly(seg.path) as buf:
                base = seg.base
                last = si == len(segs) - 1
                end_pos = None
                seg_has_data = False
                expect = 0  # position of the next record in this segment
                items = next(source)[1] if source is not None else segment_items(buf, base, delay_table)
                try:
                    for item in items:
                        if type(item) is Chunk:
                            n = len(item)
                            sizes = item.size
                            at = expect + np.cumsum(sizes) - sizes  # each record's position in the segment
                            for i in np.nonzero(item.phy != base + at)[0].tolist():
                                pos = int(at[i])
                                self.add(Problem("phy_offset_mismatch", seg.rel, pos + 28,
                                                 f"the record at {pos} stores PHYSICALOFFSET {int(item.phy[i])}: expected "
                                                 f"{base + pos} (segment start + position); its ConsumeQueue unit and "
                                                 f"offset msgId use the stored value", phy_offset=base + pos))
                            chunk_bytes = int(sizes.sum())
                            expect += chunk_bytes
                            self.max_store_timestamp = max(self.max_store_timestamp, int(item.store_timestamp.max()))
                            if not seg_has_data:
                                seg_has_data = True
                                if open_end is not None:
                                    self._missing_blank(open_end)
                                    open_end = None
                            messages += n
                            bytes_ += chunk_bytes
                            recs = None
                            if not units_match(self, item):  # else every unit is checked one by one, and explained
                                recs = list(item.recs())
                                for rec in recs:
                                    if rec.sys_flag & 0xC in _ELIGIBLE:
                                        self._check_unit(queues.get((rec.topic, rec.queue_id)), rec, seg.rel)
                            if index.views and not entries_match(index, item):
                                for rec in recs or item.recs():
                                    if rec.keys:
                                        index.match_record(rec.phy, rec.topic, rec.keys, rec.store_timestamp, rec.hashes)
                            if progress is not None and done + expect >= next_report:
                                progress(done + expect, total)
                                next_report += every
                            continue
                        if isinstance(item, BlankRecord):
                            blanks += 1
                            seg_has_data = True
                            end_pos = seg.size
                            continue
                        if isinstance(item, EndOfData):
                            end_pos = item.phy_offset - base
                            if end_pos < len(buf):
                                stray = first_nonzero(buf, end_pos, len(buf), seg.path)
                                if stray is not None:
                                    tail = last_nonzero(buf, stray, len(buf), seg.path)
                                    self.add(Problem("stray_bytes", seg.rel, stray,
                                                     f"non-zero bytes at [{stray}, {tail + 1}) after the end of written "
                                                     f"data at {end_pos}: not a record (the walk stops at the zeros "
                                                     f"at {end_pos})", phy_offset=base + stray))
                            if not last and end_pos < seg.size:
                                open_end = (seg, end_pos)
                            continue
                        # a Finding from the walk
                        if not item.fatal:
                            crc_bad += 1
                            self.add(Problem("crc_mismatch", seg.rel, item.phy_offset - base,
                                             item.reason + "; recovery with checkCRCOnRecover (default true) cuts the log "
                                                           "at this record", phy_offset=item.phy_offset))
                            continue
                        at = item.phy_offset - base if item.phy_offset is not None else None
                        code = _finding_code(item)
                        cut = item.phy_offset if item.phy_offset is not None else base
                        rest = last_nonzero(buf, max(0, (at or 0)), len(buf), seg.path)
                        tail = (f"; recovery cuts the log here ({rest + 1 - (at or 0)} bytes up to the last non-zero "
                                f"byte of this file are dropped{', and every later segment' if not last else ''})"
                                if rest is not None else "")
                        self.add(Problem(code, seg.rel, at, item.reason + tail, phy_offset=cut))
                        end_pos = at
                finally:  # a walk still holding a view on buf must let go before buf is unmapped
                    items.close()
                if end_pos is not None:
                    self.cl_end = base + end_pos
            done += seg.size
        if progress is not None and total:
            progress(total, total)
        if open_end is not None:
            seg, at = open_end
            self.add(Problem("preallocated_segment", seg.rel, at,
                             "this segment is not full but the later segment(s) hold no data yet (a pre-allocated "
                             "next file, as AllocateMappedFileService creates)", "note"))
        counts.update({"files": len(segs), "file_size": self.layout.commitlog_file_size, "messages": messages,
                       "blanks": blanks, "message_bytes": bytes_, "crc_mismatches": crc_bad,
                       "min_offset": self.cl_min, "end_offset": self.cl_end,
                       "max_store_timestamp": self.max_store_timestamp})

    def _missing_blank(self, open_end) -> None:
        seg, at = open_end
        self.add(Problem("missing_blank", seg.rel, at,
                         f"written data ends at {at} without an END_OF_FILE blank, but later segments hold records: "
                         f"recovery stops here and deletes everything after offset {seg.base + at}",
                         phy_offset=seg.base + at))

    def _check_unit(self, q: _Queue | None, req: Rec, rel: str) -> None:
        phy = req.phy
        byte = req.queue_offset * 20
        if q is None:
            self.add(Problem("cq_missing_unit", f"consumequeue/{req.topic}/{req.queue_id}", byte,
                             f"the message at CommitLog offset {phy} (queue offset {req.queue_offset}) has no "
                             f"ConsumeQueue: the directory consumequeue/{req.topic}/{req.queue_id}/ does not exist",
                             phy_offset=phy))
            return
        seg = q.segment_for(byte) if byte < q.end and byte >= q.start else None
        if seg is None:
            self.add(Problem("cq_missing_unit", q.dir.rel, byte,
                             f"the message at CommitLog offset {phy} has queue offset {req.queue_offset}, "
                             f"but the queue's units cover [{q.start // 20}, {q.end // 20}): consumers never see it",
                             phy_offset=phy))
            return
        unit = _cq_unpack(self.maps.get(seg.path), byte - seg.base)
        expected = (phy, req.size, req.tags_code)
        i = (byte - q.start) // 20
        ext_why = ""
        if unit[:2] == expected[:2] and is_ext_addr(unit[2]):  # enableConsumeQueueExt: tagsCode is an ext address
            ext_why = self._check_ext_unit(req, unit[2])
            if not ext_why:
                unit = expected
        if (req.topic == SCHEDULE_TOPIC and unit[:2] == expected[:2] and unit[2] != expected[2]
                and unit[2] == req.tags_hash_code):
            # what 4.9.4's abnormal recovery writes: it dispatches before the delay levels are loaded
            self.add(Problem("cq_delay_unit_tags_hash", seg.rel, byte - seg.base,
                             f"unit {req.queue_offset} of {req.topic}/{req.queue_id} for the message at "
                             f"CommitLog offset {phy}: tagsCode {unit[2]} is the TAGS hash, not the delivery time "
                             f"{expected[2]}; RocketMQ 4.9.4 writes it when abnormal recovery rebuilds the unit "
                             f"(before its schedule service has loaded the delay levels), and then delivers the "
                             f"message at once", severity="warning", phy_offset=phy))
            unit = expected
        if unit == expected:
            if not q.matched[i]:
                q.matched[i] = 1
                q.matched_count += 1
            return
        q.reported.add(i)
        diffs = [ext_why] if ext_why else [f"{name} {got} (expected {want})" for name, got, want in
                                           zip(("phy_offset", "size", "tags_code"), unit, expected) if got != want]
        why = ("tagsCode of SCHEDULE_TOPIC_XXXX is the delivery time: store time + delay of level DELAY"
               if req.topic == SCHEDULE_TOPIC and unit[2] != expected[2] else "")
        self.add(Problem("cq_unit_mismatch", seg.rel, byte - seg.base,
                         f"unit {req.queue_offset} of {req.topic}/{req.queue_id} for the message at CommitLog "
                         f"offset {phy}: " + ", ".join(diffs) + (f" — {why}" if why else ""), phy_offset=phy))

    def _check_ext_unit(self, req, address: int) -> str:
        """Why the ext unit at ``address`` does not carry ``req``'s tagsCode and store time ("" if it does)."""
        real = undecorate(address)
        if self._ext_dirs is None:  # looked up per unit: index the chains once
            self._ext_dirs = {(q.topic, q.queue_id): q for q in self.layout.ext_queues}
        qdir = self._ext_dirs.get((req.topic, req.queue_id))
        seg = None if qdir is None else next((g for g in qdir.segments if g.base <= real < g.base + g.size), None)
        if seg is None:
            return (f"tagsCode is the ConsumeQueueExt address of offset {real}, but no "
                    f"consumequeue_ext/{req.topic}/{req.queue_id}/ file holds that offset")
        try:
            ext = decode_ext_unit(self.maps.get(seg.path), real - seg.base, base=seg.base, with_spans=False,
                                  strict=False)
        except FormatError as e:
            return f"tagsCode is the ConsumeQueueExt address of offset {real}, where there is no ext unit: {e}"
        diffs = [f"ext {name} {got} (expected {want})" for name, got, want in
                 (("tags_code", ext.tags_code, req.tags_code), ("msg_store_time", ext.msg_store_time,
                                                               req.store_timestamp)) if got != want]
        return ", ".join(diffs)

    # -- back-references ---------------------------------------------------------------------------
    def _read_record(self, phy: int):
        """The message record at ``phy``, or a string saying why there is none."""
        return CommitLogReader(self.layout.commitlog, self.layout.commitlog_file_size, self.maps,
                               self.cl_end).read(phy)

    def _check_unclaimed_units(self) -> None:
        cq = self.report.counts.setdefault("consumequeue", {})
        units = matched = fillers = expired = 0
        for q in self.queues.values():
            units += q.units
            matched += q.matched_count
            if q.matched_count + len(q.reported) >= q.units:
                continue
            for seg in q.segments:
                if seg.base >= q.end:
                    break
                buf = self.maps.get(seg.path)
                stop = min(len(buf) - len(buf) % 20, q.end - seg.base)
                for pos in range(0, stop, 20):
                    i = (seg.base + pos - q.start) // 20
                    if q.matched[i] or i in q.reported:
                        continue
                    phy, size, tags = _cq_unpack(buf, pos)
                    if size == BLANK_UNIT_SIZE_FIELD and phy == 0:
                        fillers += 1
                        continue
                    if phy < 0 or size <= 0:
                        continue  # already reported as cq_bad_unit
                    if phy < self.cl_min:
                        expired += 1
                        continue
                    self._explain_unit(q, seg, pos, (seg.base + pos) // 20, phy, size, tags)
        cq.update({"queues": len(self.queues), "file_size": self.layout.cq_file_size, "units": units,
                   "units_matched": matched, "filler_units": fillers, "expired_units": expired})

    def _explain_unit(self, q: _Queue, seg, pos: int, offset: int, phy: int, size: int, tags: int) -> None:
        rec = self._read_record(phy)
        if isinstance(rec, str):
            self.add(Problem("cq_unit_wrong_record", seg.rel, pos,
                             f"unit {offset} ({phy}, {size}, {tags}) of {q.dir.topic}/{q.dir.queue_id} points at "
                             f"CommitLog offset {phy}: {rec}", phy_offset=phy))
            return
        req = dispatch_request_from_record(rec, self.delay_table)
        want = (q.dir.topic, q.dir.queue_id, offset, size, tags)
        got = (rec.topic, rec.queue_id, rec.queue_offset, rec.total_size, req.tags_code)
        diffs = [f"{name}: unit says {w!r}, record has {g!r}" for name, w, g in
                 zip(("topic", "queue_id", "queue_offset", "size", "tags_code"), want, got) if w != g]
        if req.sys_flag & 0xC not in _ELIGIBLE:
            diffs.append(f"the record's transaction type {req.sys_flag & 0xC:#x} gets no unit")
        self.add(Problem("cq_unit_wrong_record", seg.rel, pos,
                         f"unit {offset} of {q.dir.topic}/{q.dir.queue_id} points at the record at CommitLog offset "
                         f"{phy}: " + ("; ".join(diffs) or "another unit already claims this record"), phy_offset=phy))

    def _index_lag_finding(self) -> None:
        idx = self.index
        if idx.lagging:
            self.add(Problem("index_lag", "index", None,
                             f"{idx.lagging} record(s) with keys from CommitLog offset {idx.lag_from} on have no index "
                             f"entries yet (the last entry points at {idx.last_phy})" +
                             (" — the abort file is present: the next start re-dispatches them" if self.layout.abort
                              else ""), "warning" if self.layout.abort else "error", phy_offset=idx.lag_from))

    # -- checkpoint and config ---------------------------------------------------------------------------
    def _check_checkpoint(self) -> None:
        path = self.layout.checkpoint
        if path is None:
            if self.report.counts.get("commitlog", {}).get("messages"):
                self.add(Problem("checkpoint_missing", "checkpoint", None,
                                 "the CommitLog holds messages but there is no checkpoint file (RocketMQ creates it "
                                 "at start and writes it at shutdown)", "warning"))
            return
        with open_readonly(path) as buf:
            if len(buf) < 4096 and not any(buf):
                self.add(Problem("power_loss_checkpoint", "checkpoint", None,
                                 f"checkpoint of {len(buf)} bytes holding nothing (created or written but never synced "
                                 f"before a power loss): RocketMQ 4.9.4 and pymq-ref both extend it at their next "
                                 f"start, read its timestamps as 0 and so recover from the first CommitLog file "
                                 f"(every message is dispatched again: slow on a big store, nothing is lost)",
                                 "warning"))
                return
            if len(buf) != 4096:
                self.add(Problem("wrong_file_size", "checkpoint", None,
                                 f"checkpoint of {len(buf)} bytes: expected 4096 (OS_PAGE_SIZE)", "warning"))
            if len(buf) < 24:
                self.add(Problem("checkpoint_unreadable", "checkpoint", 0, "expected at least 24 bytes"))
                return
            cp = decode_checkpoint(buf, with_spans=False)
        newest = self.max_store_timestamp
        self.report.counts["checkpoint"] = {"physic_msg_timestamp": cp.physic_msg_timestamp,
                                            "logics_msg_timestamp": cp.logics_msg_timestamp,
                                            "index_msg_timestamp": cp.index_msg_timestamp}
        for at, name, value in ((0, "physic_msg_timestamp", cp.physic_msg_timestamp),
                                (8, "logics_msg_timestamp", cp.logics_msg_timestamp),
                                (16, "index_msg_timestamp", cp.index_msg_timestamp)):
            if value < 0:
                self.add(Problem("checkpoint_insane", "checkpoint", at, f"{name} is negative ({value})"))
            elif value > newest and (newest or value):
                self.add(Problem("checkpoint_future", "checkpoint", at,
                                 f"{name} {value} is after the newest store timestamp in the CommitLog ({newest}): "
                                 f"an abnormal recovery would start too late and skip re-dispatching"))

    def _check_config(self) -> None:
        for path in self.layout.config_files:
            rel = path.relative_to(self.root).as_posix()
            with open_readonly(path) as buf:
                text = bytes(buf).decode("utf-8", "replace")
            if not text.strip():
                for p in config_problems(self.root, path, text):
                    self.add(p)
                continue
            try:
                fastjson.loads(text)
            except ValueError as exc:
                bak = path.with_name(path.name + ".bak").exists()
                self.add(Problem("config_unparsable", rel, None,
                                 f"expected fastjson/JSON text: {exc}" + ("; RocketMQ falls back to the .bak copy"
                                                                          if bak else ""), "warning" if bak else "error"))

    def _counts(self) -> None:
        self.report.counts["index"] = self.index.counts()


def _finding_code(item: Finding) -> str:
    reason = item.reason
    if "magic" in item.field:
        return "bad_magic"
    if item.field == "body_crc":
        return "crc_mismatch"
    if "blank" in reason.split(" ")[0]:
        return "bad_blank"
    return "bad_record"


def progress_line(done: int, total: int, elapsed: float) -> str:
    """``scanned 640 / 10240 MiB of CommitLog (6%, 85 MiB/s, 1 min 53 s left)``."""
    rate = done / elapsed if elapsed > 0 else 0.0
    left = ""
    if 0 < done < total and rate > 0:
        seconds = round((total - done) / rate)
        left = f", {seconds // 60} min {seconds % 60} s left" if seconds >= 60 else f", {seconds} s left"
    return (f"scanned {done >> 20} / {total >> 20} MiB of CommitLog ({100 * done // max(total, 1)}%, "
            f"{rate / (1 << 20):.0f} MiB/s{left})")


def run_doctor(root: str | os.PathLike, options: DoctorOptions | None = None) -> DoctorReport:
    """Check the store at ``root``; raises :class:`StoreUnreadable` when it cannot be read."""
    return Doctor(root, options).run()


def doctor_main(root: str, *, as_json: bool = False, quiet: bool = False, options: DoctorOptions | None = None,
                out: TextIO | None = None, err: TextIO | None = None) -> int:
    """The ``pymq doctor`` command: print the report, return the exit status (0, 1, or 2)."""
    out = out or sys.stdout
    err = err or sys.stderr
    options = options or DoctorOptions()
    started = time.perf_counter()
    if not quiet and options.progress is None:
        def progress(done: int, total: int) -> None:
            print(f"pymq doctor: {progress_line(done, total, time.perf_counter() - started)}", file=err, flush=True)
        options.progress = progress
    try:
        report = run_doctor(root, options)
    except StoreUnreadable as exc:
        print(f"pymq doctor: error: {exc}", file=err)
        return 2
    except PermissionError as exc:
        print(f"pymq doctor: error: {exc.filename}: cannot read: {exc.strerror}", file=err)
        return 2
    if as_json:
        out.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(report.text())
    if not quiet:
        print(f"pymq doctor: done in {time.perf_counter() - started:.2f} s", file=err)
    return report.exit_status
