"""Shared helpers of the "inspection tools never write" tests (not a test module): a tree made
read-only, a snapshot of every file's bytes and metadata, and a log of the file opens, maps and
locks a tool makes."""

from __future__ import annotations

import fcntl
import hashlib
import mmap
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def tree_snapshot(root: Path) -> dict:
    """Every path under ``root`` -> (sha256 of a file, size, mtime, ctime, mode)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.stat()
            digest = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None
            out[str(p.relative_to(root))] = (digest, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
    return out


@dataclass
class IoLog:
    opens: list = field(default_factory=list)  # (path, flags) of every os.open
    maps: list = field(default_factory=list)  # the access of every mmap.mmap
    locks: list = field(default_factory=list)  # every fcntl.lockf / fcntl.flock call
    before: dict = field(default_factory=dict)  # tree_snapshot once read-only, before the block

    def assert_read_only(self) -> None:
        assert self.opens and all(flags & WRITE_FLAGS == 0 for _, flags in self.opens), self.opens
        assert self.maps and set(self.maps) == {mmap.ACCESS_READ}, self.maps
        assert self.locks == []


@contextmanager
def read_only_tree(root: Path, monkeypatch):
    """Make ``root`` read-only (files 0444, directories 0555), snapshot it (``log.before``) and log
    the opens, maps and locks made inside the block; permissions are given back and the spies
    removed at the end."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            os.chmod(Path(dirpath) / name, 0o444)
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        os.chmod(dirpath, 0o555)
    log = IoLog(before=tree_snapshot(root))
    real_open, real_mmap = os.open, mmap.mmap

    def spy_open(path, flags, *a, **kw):
        log.opens.append((str(path), flags))
        return real_open(path, flags, *a, **kw)

    def spy_mmap(*a, **kw):
        log.maps.append(kw.get("access", a[3] if len(a) > 3 else None))
        return real_mmap(*a, **kw)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(mmap, "mmap", spy_mmap)
    monkeypatch.setattr(fcntl, "lockf", lambda *a: log.locks.append(a))
    monkeypatch.setattr(fcntl, "flock", lambda *a: log.locks.append(a))
    try:
        yield log
    finally:
        monkeypatch.undo()
        for dirpath, dirnames, filenames in os.walk(root):
            os.chmod(dirpath, 0o755)
