"""Find the store files a Spark job reads: CommitLog segments, ConsumeQueue files, IndexFiles.

The book's reference appendix, §Store layout. A path given to ``spark.read.format(...).load(path)`` may be a store
root,
the kind's own directory (``commitlog/``, ``consumequeue/`` or ``consumequeue/T/Q``,
``index/``) or one file. Only ``os.listdir``/``os.stat``: this runs in Spark's planner, which
must never read data (the workers map their ranges themselves). Raises
:class:`SparkInputError` (a :class:`~pymq_ref.errors.PymqError`) for paths that are not
store files, naming what was expected.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import PymqError

SEGMENT_NAME = re.compile(r"^\d{20}$")
INDEX_NAME = re.compile(r"^\d{17}$")


class SparkInputError(PymqError):
    """A path handed to a pymq Spark data source is not what that source reads."""


@dataclass(frozen=True, slots=True)
class StoreFile:
    """One file: absolute ``path``, ``name`` relative to the store root (e.g. ``commitlog/000…``)
    and, for segments, the offset its 20-digit name encodes (None for other names)."""

    path: str
    name: str
    base: int | None
    topic: str | None = None
    queue_id: int | None = None


def _root_of(path: Path, kind_dir: str) -> Path | None:
    for parent in (path, *path.parents):
        if parent.name == kind_dir:
            return parent.parent
    return None


def _rel(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.relative_to(root).as_posix()
        except ValueError:
            pass
    return path.name


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise SparkInputError(f"{path}: no such file or directory (expected a RocketMQ store or one of its files)")


def commitlog_files(path: str | os.PathLike) -> list[StoreFile]:
    """CommitLog segments under ``path`` (a store root, ``commitlog/``, or one segment), by offset."""
    p = Path(path).absolute()
    _check_exists(p)
    if p.is_file():
        root = _root_of(p, "commitlog")
        return [StoreFile(str(p), _rel(p, root), int(p.name) if SEGMENT_NAME.match(p.name) else None)]
    directory = p / "commitlog" if (p / "commitlog").is_dir() else p
    names = sorted(n for n in os.listdir(directory) if SEGMENT_NAME.match(n))
    if not names:
        raise SparkInputError(f"{p}: no CommitLog segments (expected files named by a 20-digit offset in "
                              f"{'commitlog/' if directory != p else 'this directory'})")
    root = directory.parent
    return [StoreFile(str(directory / n), _rel(directory / n, root), int(n)) for n in names]


def consumequeue_files(path: str | os.PathLike) -> list[StoreFile]:
    """ConsumeQueue files under ``path`` (store root, ``consumequeue/``, ``consumequeue/T``, ``…/T/Q`` or one file)."""
    p = Path(path).absolute()
    _check_exists(p)
    if (p / "consumequeue").is_dir():
        p = p / "consumequeue"
    root = _root_of(p, "consumequeue")
    if root is None and (p / "commitlog").is_dir():
        return []  # a store whose ConsumeQueues are all gone (or never built)
    if root is None:
        raise SparkInputError(f"{p}: not inside a consumequeue/ directory (expected consumequeue/<topic>/<queueId>/<20 digits>)")
    cq_dir = root / "consumequeue"
    depth = len(p.relative_to(cq_dir).parts)
    out = []
    if p.is_file():
        candidates = [p]
    else:
        candidates = []
        for dirpath, _dirs, files in os.walk(p):
            candidates.extend(Path(dirpath) / f for f in files)
    for f in candidates:
        parts = f.relative_to(cq_dir).parts
        if len(parts) != 3 or not SEGMENT_NAME.match(parts[2]) or not parts[1].lstrip("-").isdigit():
            continue
        out.append(StoreFile(str(f), _rel(f, root), int(parts[2]), parts[0], int(parts[1])))
    if not out and depth < 3:
        raise SparkInputError(f"{p}: no ConsumeQueue files (expected consumequeue/<topic>/<queueId>/<20 digits>)")
    return sorted(out, key=lambda f: (f.topic, f.queue_id, f.base))


def index_files(path: str | os.PathLike) -> list[StoreFile]:
    """IndexFiles under ``path`` (store root, ``index/`` or one file), oldest first."""
    p = Path(path).absolute()
    _check_exists(p)
    if p.is_file():
        return [StoreFile(str(p), _rel(p, _root_of(p, "index")), None)]
    directory = p / "index" if (p / "index").is_dir() else p
    names = sorted(n for n in os.listdir(directory) if INDEX_NAME.match(n))
    return [StoreFile(str(directory / n), _rel(directory / n, directory.parent), None) for n in names]
