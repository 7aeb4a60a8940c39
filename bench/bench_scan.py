"""Full CommitLog scan: our decode (the recovery and doctor paths) vs a raw ``struct`` walk.

A store is filled through ``MessageStore`` (1 KiB bodies, KEYS + UNIQ_KEY + CLUSTER + TAGS), then
the same segment is walked by:

* baseline: a bare loop of ``struct.unpack_from`` that unpacks every field of every record (head,
  both hosts, store time, middle, and the body / topic / properties slices) — no validation, no
  objects, no CRC;
* decode: :func:`pymq_ref.formats.message.iter_records` (the one decoder: validation, typed
  errors, an immutable ``MessageRecord`` with decoded properties);
* recovery: the loop of :func:`pymq_ref.store.recovery.recover_normally` (``check_record`` with
  CRC as ``checkCRCOnRecover=true``, and the dispatch request of each record);
* doctor: the whole ``pymq doctor`` run (every record with CRC, its ConsumeQueue unit and index
  entries, all checks), in one process and with ``--jobs 2``;
* baseline + CRC: the raw walk plus ``zlib.crc32`` of each body, for the CRC-checking rows.

Targets: decode and recovery >= 0.5x the raw walk; the doctor (one process) >= 0.25x the raw
walk + CRC, measured alternately with it (records per second; the same files, several segments).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

from pymq_ref.formats.message import iter_records  # noqa: E402
from pymq_ref.store import recovery  # noqa: E402
from pymq_ref.store.clock import ManualClock  # noqa: E402
from pymq_ref.store.commit_log import CommitLog  # noqa: E402
from pymq_ref.store.delay import DEFAULT_MESSAGE_DELAY_LEVEL, parse_delay_level  # noqa: E402
from pymq_ref.tools.doctor import DoctorOptions, run_doctor  # noqa: E402
from pymq_ref.tools.fill import FillOptions, fill_store  # noqa: E402
from pymq_ref.tools.segments import open_readonly  # noqa: E402

HEAD = struct.Struct(">iiiiiqqiq")
MID = struct.Struct(">iqi")
LONG = struct.Struct(">q")
SHORT = struct.Struct(">h")


def raw_walk(buf, crc: bool = False) -> int:
    """Unpack every field of every record; returns the record count."""
    unpack_head, unpack_mid, unpack_long, unpack_short = HEAD.unpack_from, MID.unpack_from, LONG.unpack_from, SHORT.unpack_from
    crc32 = zlib.crc32
    pos, n, size = 0, 0, len(buf)
    while pos + 8 <= size:
        total, magic, body_crc, qid, flag, qoff, phy, sysflag, born_ts = unpack_head(buf, pos)
        if total <= 0 or magic != -626843481:
            break
        born_len = 20 if sysflag & 0x10 else 8
        store_len = 20 if sysflag & 0x20 else 8
        at = pos + 48
        born = buf[at:at + born_len]
        at += born_len
        store_ts = unpack_long(buf, at)[0]
        at += 8
        store = buf[at:at + store_len]
        at += store_len
        reconsume, prepared, body_len = unpack_mid(buf, at)
        at += 16
        body = buf[at:at + body_len]
        if crc:
            crc32(body)
        at += body_len
        topic_len = buf[at]
        topic = buf[at + 1:at + 1 + topic_len]
        at += 1 + topic_len
        props_len = unpack_short(buf, at)[0]
        props = buf[at + 2:at + 2 + props_len]
        pos += total
        n += 1
    return n


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 8_000 if args.quick else 50_000
    repeat = args.repeat or (2 if args.quick else 3)
    segment_size = (4 if args.quick else 16) << 20  # several segments: what --jobs splits
    workdir = tempfile.mkdtemp(prefix="pymq-bench-scan-")
    root = os.path.join(workdir, "store")
    try:
        fill_store(root, FillOptions(topic="ScanTopic", count=count, body_size=1024, tags="TagA,TagB",
                                     keys=("key-{i}",), queues=8, seed=1, start_time=1_700_000_000_000,
                                     commitlog_file_size=segment_size, hash_slots=100_000, index_num=400_000))
        segments = sorted(Path(root, "commitlog").iterdir())
        delay_table = parse_delay_level(DEFAULT_MESSAGE_DELAY_LEVEL)
        with contextlib.ExitStack() as stack:
            bufs = [stack.enter_context(open_readonly(p)) for p in segments]
            assert sum(raw_walk(b) for b in bufs) == count

            def best(fn):
                return min(timed(fn)[0] for _ in range(repeat))

            t_raw = best(lambda: sum(raw_walk(b) for b in bufs))
            t_raw_crc = best(lambda: sum(raw_walk(b, crc=True) for b in bufs))
            t_decode = best(lambda: sum(1 for b in bufs for _ in iter_records(b, with_spans=False)))

        def recover():
            log = CommitLog(os.path.join(root, "commitlog"), segment_size, ManualClock(), read_only=True)
            log.load()
            try:
                return recovery.recover_normally(log, [], check_crc=True, delay_table=delay_table)
            finally:
                log.shutdown()

        t_recover = min(timed(recover)[0] for _ in range(repeat))

        def raw_crc_rate():
            with contextlib.ExitStack() as stack:
                bufs = [stack.enter_context(open_readonly(p)) for p in segments]
                return count / timed(lambda: sum(raw_walk(b, crc=True) for b in bufs))[0]

        # the doctor and its baseline alternate, so that a busy spell of a shared machine hits both
        doctor1, base1 = interleaved_best(lambda: count / timed(lambda: run_doctor(root, DoctorOptions()))[0],
                                          raw_crc_rate, repeat)
        doctor2, base2 = interleaved_best(lambda: count / timed(lambda: run_doctor(root, DoctorOptions(jobs=2)))[0],
                                          raw_crc_rate, repeat)
        t_doctor, t_doctor2 = count / doctor1, count / doctor2
        report_doc = run_doctor(root, DoctorOptions())
        assert report_doc.clean and report_doc.counts["commitlog"]["messages"] == count
        data_mib = sum(p.stat().st_size for p in segments) / (1 << 20)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rate = lambda t: count / t  # noqa: E731
    rows = [
        Row("decode: iter_records (no CRC)", rate(t_decode), rate(t_raw), "rec/s", 0.5,
            "baseline: raw struct.unpack_from walk of every field"),
        Row("recovery: recover_normally (CRC + dispatch req)", rate(t_recover), rate(t_raw), "rec/s", 0.5,
            f"vs the raw walk + crc32 of each body: {rate(t_recover) / rate(t_raw_crc):.2f}x"),
        Row("doctor: whole store, 1 process", rate(t_doctor), base1, "rec/s", 0.25,
            f"baseline: the raw walk + crc32 of each body; {data_mib / t_doctor:.0f} MiB/s of CommitLog "
            f"(CRC, ConsumeQueue units, index keys and time diffs, every check)"),
        Row("doctor: whole store, --jobs 2", rate(t_doctor2), base2, "rec/s", None,
            f"baseline: the raw walk + crc32 (one process); {data_mib / t_doctor2:.0f} MiB/s of CommitLog; "
            f"{len(segments)} segments (a worker process starts and streams its records: it pays on big "
            f"stores and idle cores)"),
    ]
    return report("scan", f"CommitLog scan, {count} records of ~1.2 KiB in {len(segments)} segments "
                          f"(best of {repeat})", rows,
                  {"records": count, "repeat": repeat, "segments": len(segments),
                   "raw_with_crc_rec_per_s": rate(t_raw_crc)})


if __name__ == "__main__":
    sys.exit(main())
