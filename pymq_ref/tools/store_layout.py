"""Discover the files of a store directory and check its layout, without opening any data file.

The book's reference appendix, §Store layout: a store root holds ``commitlog/`` (segments named by 20-digit offsets),
``consumequeue/{topic}/{queueId}/`` (same naming), ``consumequeue_ext/{topic}/{queueId}/`` (ConsumeQueueExt
files, same naming, with ``enableConsumeQueueExt``), ``index/`` (files named ``yyyyMMddHHmmssSSS``),
``checkpoint``, ``abort``, ``lock`` and ``config/*.json``. :func:`discover` lists them, infers
the segment sizes the broker was configured with (the size most files share, unless given),
and reports layout problems as :class:`Problem` items: unknown files, names that are not
offsets, files of the wrong size, segments that are not adjacent.

Only ``os.listdir``/``os.stat``: this module never opens, locks or writes a file. The doctor
(:mod:`pymq_ref.tools.doctor`) and the store summary of ``pymq inspect STORE``
(:mod:`pymq_ref.tools.store_summary`) build on it: one walk of the layout.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PymqError
from .segments import INDEX_NAME, SEGMENT_NAME

#: Entries a 4.9.4 (or 5.x) store root may hold; anything else is reported as unknown.
KNOWN_ROOT_ENTRIES = {"commitlog", "consumequeue", "consumequeue_ext", "index", "checkpoint", "abort", "lock",
                      "config", "timerwheel", "timerlog"}
#: A directory holding at least one of these is taken for a store root.
STORE_MARKERS = ("commitlog", "consumequeue", "checkpoint")
_CONFIG_NAME = re.compile(r"^[A-Za-z0-9_.-]+\.json(\.bak|\.tmp)?$|^timercheck$|^timermetrics$")


class StoreUnreadable(PymqError):
    """The path is not a store directory that can be read (missing, not a directory, no permission)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: a stable ``code``, the file (relative to the store root), a byte ``offset`` inside
    that file (None when about the whole file), and a sentence saying what was expected and found.

    ``severity`` is ``error`` (data is wrong or would be lost), ``warning`` (suspicious, RocketMQ
    copes) or ``note`` (worth knowing, not a defect: does not change the exit status).
    ``phy_offset`` is the absolute CommitLog offset when the finding is about a CommitLog position.
    """

    code: str
    file: str
    offset: int | None
    reason: str
    severity: str = "error"
    phy_offset: int | None = None
    #: a shell command that repairs what the finding is about, when one is safe (never run by the tools)
    fix: str | None = None

    def to_json(self) -> dict:
        doc = {"severity": self.severity, "code": self.code, "file": self.file, "offset": self.offset,
               "reason": self.reason}
        if self.phy_offset is not None:
            doc["phy_offset"] = self.phy_offset
        if self.fix is not None:
            doc["fix"] = self.fix
        return doc

    def text(self) -> str:
        where = self.file if self.offset is None else f"{self.file} @ {self.offset}"
        fix = f" [fix: {self.fix}]" if self.fix else ""
        return f"{self.severity.upper()} {self.code}: {where}: {self.reason}{fix}"


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment file of a chain: its path, the offset its name encodes and its length."""

    path: Path
    rel: str
    base: int
    size: int


@dataclass
class QueueDir:
    topic: str
    queue_id: int
    rel: str
    segments: list[Segment] = field(default_factory=list)


@dataclass
class StoreLayout:
    """What :func:`discover` found. Sizes are the inferred (or given) configured segment sizes.

    ``topics`` are the topic directories under ``consumequeue/`` in name order, also those
    without queue directories (left behind when a topic's queues were destroyed); ``queues``
    are in (topic, directory name) order.
    """

    root: Path
    commitlog: list[Segment] = field(default_factory=list)
    commitlog_file_size: int = 0
    topics: list[str] = field(default_factory=list)
    queues: list[QueueDir] = field(default_factory=list)
    cq_file_size: int = 0
    #: ``consumequeue_ext/{topic}/{queueId}/`` chains (ConsumeQueueExt) and their inferred file size
    ext_queues: list[QueueDir] = field(default_factory=list)
    cq_ext_file_size: int = 0
    index_files: list[Segment] = field(default_factory=list)
    checkpoint: Path | None = None
    config_files: list[Path] = field(default_factory=list)
    abort: bool = False
    problems: list[Problem] = field(default_factory=list)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _size_of_most(sizes: list[int]) -> int:
    """The size most files have (ties: the first file's)."""
    if not sizes:
        return 0
    counts = Counter(sizes)
    best = max(counts.values())
    return next(s for s in sizes if counts[s] == best)


def discover(root: str | os.PathLike, *, commitlog_file_size: int | None = None,
             cq_file_size: int | None = None, cq_ext_file_size: int | None = None) -> StoreLayout:
    """List a store's files and check names, sizes and adjacency. Raises :class:`StoreUnreadable`."""
    root = Path(root)
    if not root.exists():
        raise StoreUnreadable(f"{root}: no such directory")
    if not root.is_dir():
        raise StoreUnreadable(f"{root}: not a directory; expected a store root (with commitlog/, consumequeue/ ...)")
    try:
        entries = sorted(os.listdir(root))
    except OSError as exc:
        raise StoreUnreadable(f"{root}: cannot list: {exc.strerror}") from None
    if not any(name in entries for name in STORE_MARKERS):
        raise StoreUnreadable(f"{root}: not a store directory (no commitlog/, consumequeue/ or checkpoint)")
    layout = StoreLayout(root)
    add = layout.problems.append
    for name in entries:
        if name not in KNOWN_ROOT_ENTRIES:
            add(Problem("unknown_file", name, None, "not part of a RocketMQ store layout", "warning"))
    layout.abort = (root / "abort").exists()
    if (root / "checkpoint").is_file():
        layout.checkpoint = root / "checkpoint"

    from . import doctor_power_loss as power_loss  # (it builds on this module's types)

    def chain(segments: list[Segment], file_size: int, what: str) -> list[Segment]:
        """The segments without the tail a power loss left (reported as such), the rest checked."""
        tail = power_loss.power_loss_tail(segments, file_size)
        for p in power_loss.leftover_problems(root, tail, file_size, what):
            add(p)
        kept = segments[:len(segments) - len(tail)]
        _check_chain(kept, file_size, what, add)
        return kept

    # CommitLog
    cl_dir = root / "commitlog"
    if cl_dir.is_dir():
        layout.commitlog = _segments(root, cl_dir, add)
        layout.commitlog_file_size = commitlog_file_size or _size_of_most([s.size for s in layout.commitlog if s.size])
        layout.commitlog = chain(layout.commitlog, layout.commitlog_file_size, "CommitLog")
    elif cl_dir.exists():
        add(Problem("unknown_file", "commitlog", None, "expected a directory of CommitLog segments"))

    # ConsumeQueues
    cq_root = root / "consumequeue"
    if cq_root.is_dir():
        for topic in sorted(os.listdir(cq_root)):
            tdir = cq_root / topic
            if not tdir.is_dir():
                add(Problem("unknown_file", _rel(root, tdir), None, "expected a topic directory under consumequeue/",
                            "warning"))
                continue
            layout.topics.append(topic)
            for qname in sorted(os.listdir(tdir)):
                qdir = tdir / qname
                if not (qdir.is_dir() and qname.isdigit()):
                    add(Problem("unknown_file", _rel(root, qdir), None,
                                "expected a numeric queue-id directory under consumequeue/<topic>/", "warning"))
                    continue
                layout.queues.append(QueueDir(topic, int(qname), _rel(root, qdir), _segments(root, qdir, add)))
        sizes = [s.size for q in layout.queues for s in q.segments if s.size]
        layout.cq_file_size = cq_file_size or _size_of_most(sizes)
        if layout.cq_file_size % 20:
            add(Problem("wrong_file_size", "consumequeue", None,
                        f"ConsumeQueue files are {layout.cq_file_size} bytes: expected a multiple of 20"))
        for q in layout.queues:
            q.segments = chain(q.segments, layout.cq_file_size, "ConsumeQueue")

    # ConsumeQueueExt files (enableConsumeQueueExt)
    ext_root = root / "consumequeue_ext"
    if ext_root.is_dir():
        layout.ext_queues = _queue_dirs(root, ext_root, "consumequeue_ext", add)
        layout.cq_ext_file_size = cq_ext_file_size or _size_of_most(
            [s.size for q in layout.ext_queues for s in q.segments if s.size])
        for q in layout.ext_queues:
            q.segments = chain(q.segments, layout.cq_ext_file_size, "ConsumeQueueExt")
    elif ext_root.exists():
        add(Problem("unknown_file", "consumequeue_ext", None, "expected a directory of ConsumeQueueExt queues"))

    # IndexFiles
    index_dir = root / "index"
    if index_dir.is_dir():
        for name in sorted(os.listdir(index_dir)):
            path = index_dir / name
            if not path.is_file():
                add(Problem("unknown_file", _rel(root, path), None, "expected only index files in index/", "warning"))
                continue
            if name.endswith(power_loss.CREATING_SUFFIX):
                for p in power_loss.creating_problems(root, [path]):
                    add(p)
                continue
            if not INDEX_NAME.match(name):
                add(Problem("bad_segment_name", _rel(root, path), None,
                            "index file names are the creation time as 17 digits (yyyyMMddHHmmssSSS)", "warning"))
            layout.index_files.append(Segment(path, _rel(root, path), 0, path.stat().st_size))
        tail = power_loss.index_tail(layout.index_files)
        for p in power_loss.index_problems(root, tail):
            add(p)
        layout.index_files = layout.index_files[:len(layout.index_files) - len(tail)]

    # config
    config_dir = root / "config"
    if config_dir.is_dir():
        for name in sorted(os.listdir(config_dir)):
            path = config_dir / name
            if path.is_file() and _CONFIG_NAME.match(name):
                if name.endswith(".json"):
                    layout.config_files.append(path)
            else:
                add(Problem("unknown_file", _rel(root, path), None,
                            "expected config/*.json (and their .bak/.tmp copies)", "warning"))
    return layout


def _queue_dirs(root: Path, top: Path, name: str, add) -> list[QueueDir]:
    """``{top}/{topic}/{queueId}/`` chains in (topic, queue directory name) order."""
    out = []
    for topic in sorted(os.listdir(top)):
        tdir = top / topic
        if not tdir.is_dir():
            add(Problem("unknown_file", _rel(root, tdir), None, f"expected a topic directory under {name}/", "warning"))
            continue
        for qname in sorted(os.listdir(tdir)):
            qdir = tdir / qname
            if not (qdir.is_dir() and qname.isdigit()):
                add(Problem("unknown_file", _rel(root, qdir), None,
                            f"expected a numeric queue-id directory under {name}/<topic>/", "warning"))
                continue
            out.append(QueueDir(topic, int(qname), _rel(root, qdir), _segments(root, qdir, add)))
    return out


def _segments(root: Path, directory: Path, add) -> list[Segment]:
    from .doctor_power_loss import CREATING_SUFFIX, creating_problems

    out = []
    for name in sorted(os.listdir(directory)):
        path = directory / name
        rel = _rel(root, path)
        if name.endswith(CREATING_SUFFIX) and path.is_file():
            for p in creating_problems(root, [path]):
                add(p)
        elif not path.is_file():
            add(Problem("unknown_file", rel, None, "expected only segment files here", "warning"))
        elif not SEGMENT_NAME.match(name):
            add(Problem("bad_segment_name", rel, None,
                        "segment names are their start offset as 20 digits (UtilAll.offset2FileName); "
                        "RocketMQ would not load this file"))
        else:
            out.append(Segment(path, rel, int(name), path.stat().st_size))
    return out


def _check_chain(segments: list[Segment], file_size: int, what: str, add) -> None:
    """Sizes, alignment and adjacency of a segment chain (``MappedFileQueue.checkSelf``)."""
    for seg in segments:
        if seg.size != file_size:
            add(Problem("wrong_file_size", seg.rel, None,
                        f"{what} segment of {seg.size} bytes: expected {file_size} like the other segments "
                        f"(RocketMQ refuses to load it)"))
        if file_size and seg.base % file_size:
            add(Problem("segment_misaligned", seg.rel, None,
                        f"start offset {seg.base} is not a multiple of the segment size {file_size}"))
    for prev, seg in zip(segments, segments[1:]):
        if file_size and seg.base != prev.base + file_size:
            add(Problem("segment_gap", seg.rel, None,
                        f"expected the segment after {prev.rel.rsplit('/', 1)[-1]} to start at {prev.base + file_size}, "
                        f"found {seg.base} ({seg.base - prev.base - file_size:+d} bytes)"))
