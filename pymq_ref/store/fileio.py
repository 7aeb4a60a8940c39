"""The store's file-system calls that decide what survives a power loss, in one place.

After a power loss a file system keeps the *names* the store created, but a file's size and
bytes only as far as they were synced (``fsync``/``fdatasync``/``msync``): a segment created
with ``ftruncate`` and never synced comes back with 0 bytes. So whatever the store creates is
made durable before it is relied on:

* :func:`create_file` — a new segment (CommitLog, ConsumeQueue, index, checkpoint): created at
  its full size under a temporary name, synced (the size is now durable), renamed, and the
  directory synced (the name is now durable);
* :func:`write_atomically` — a small whole file (config JSON, the ``abort`` file): temporary
  file, write, sync, rename over the old one, sync the directory;
* :func:`makedirs` — missing directories, each parent synced after its entry was added;
* :func:`sync_data` — a file's written bytes (the flush of a mapped file).

The calls go through a :class:`FileSystem` backend, the OS by default. A test can
:func:`install` another backend (``tests/power_loss_fs.py`` records every call and replays
what a power loss at any moment would leave). Appends to mapped memory do not pass through
here: they become durable by :func:`sync_data` on the file, which is where a backend can see them.

This module must not know about store formats.
"""

from __future__ import annotations

import contextlib
import os
import sys

CREATING_SUFFIX = ".creating"
_USE_FDATASYNC = sys.platform.startswith("linux") and hasattr(os, "fdatasync")


class FileSystem:
    """The OS: each method is the system call it names. Subclasses may observe or alter them."""

    def open(self, path: str, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def ftruncate(self, fd: int, size: int, path: str) -> None:
        os.ftruncate(fd, size)

    def pwrite(self, fd: int, data, offset: int, path: str) -> int:
        return os.pwrite(fd, data, offset)

    def sync(self, fd: int, path: str) -> None:
        """Make the file's bytes and size durable (``fdatasync`` on Linux, else ``fsync``)."""
        if _USE_FDATASYNC:
            os.fdatasync(fd)
        else:  # pragma: no cover - non-Linux
            os.fsync(fd)

    def sync_dir(self, path: str) -> None:
        """Make the entries of directory ``path`` durable (a no-op where directories cannot be opened)."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:  # pragma: no cover - e.g. Windows
            return
        try:
            os.fsync(fd)
        except OSError:  # pragma: no cover - file systems that refuse fsync on directories
            pass
        finally:
            os.close(fd)

    def rename(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def remove(self, path: str) -> None:
        os.remove(path)

    def mkdir(self, path: str) -> None:
        os.mkdir(path)

    def rmdir(self, path: str) -> None:
        os.rmdir(path)


_OS = FileSystem()
#: the backend in use (module global: read by every call below)
current: FileSystem = _OS


@contextlib.contextmanager
def install(backend: FileSystem):
    """Use ``backend`` for every store file call inside the block (tests only: not thread-local)."""
    global current
    previous, current = current, backend
    try:
        yield backend
    finally:
        current = previous


def makedirs(path: str) -> None:
    """Create ``path`` and its missing parents; each new entry is made durable in its parent."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if parent and parent != path:
        makedirs(parent)
    try:
        current.mkdir(path)
    except FileExistsError:
        if not os.path.isdir(path):
            raise
        return
    current.sync_dir(parent)


def create_file(path: str, size: int) -> int:
    """Create ``path`` at ``size`` bytes (sparse zeros) so that a power loss leaves either no file
    or the whole empty file, never a short one; returns a read-write descriptor. A file left under
    the temporary name (``<path>.creating``) by a crash is the loader's to delete."""
    directory = os.path.dirname(path) or "."
    makedirs(directory)
    fs = current
    tmp = path + CREATING_SUFFIX
    fd = fs.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        fs.ftruncate(fd, size, tmp)
        fs.sync(fd, tmp)
        fs.rename(tmp, path)
    except BaseException:  # e.g. ENOSPC: leave nothing behind
        os.close(fd)
        with contextlib.suppress(OSError):
            fs.remove(tmp)
        raise
    fs.sync_dir(directory)
    return fd


def create_empty(path: str) -> None:
    """Create (or keep) the empty file ``path`` and make its name durable (the ``abort`` marker)."""
    fs = current
    fd = fs.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        fs.sync(fd, path)
    finally:
        os.close(fd)
    fs.sync_dir(os.path.dirname(path) or ".")


def write_atomically(path: str, data: bytes) -> None:
    """Replace ``path`` by ``data`` so that a power loss leaves the old or the new content."""
    directory = os.path.dirname(path) or "."
    makedirs(directory)
    fs = current
    tmp = path + ".tmp"
    fd = fs.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        offset = 0
        while offset < len(view):
            offset += fs.pwrite(fd, view[offset:], offset, tmp)
        fs.sync(fd, tmp)
    finally:
        os.close(fd)
    fs.rename(tmp, path)
    fs.sync_dir(directory)


def extend_file(path: str, size: int) -> None:
    """Grow ``path`` to ``size`` bytes (zeros after its content) and make the size durable."""
    fs = current
    fd = fs.open(path, os.O_RDWR)
    try:
        fs.ftruncate(fd, size, path)
        fs.sync(fd, path)
    finally:
        os.close(fd)


def remove(path: str, *, durable: bool = False) -> None:
    """Delete ``path``; with ``durable`` the deletion survives a power loss (the directory is synced)."""
    current.remove(path)
    if durable:
        current.sync_dir(os.path.dirname(path) or ".")


def sync_data(fd: int, path: str) -> None:
    current.sync(fd, path)


def sync_dir(path: str) -> None:
    current.sync_dir(path)


def is_all_zero(path: str, chunk: int = 1 << 20) -> bool:
    """Whether every byte of ``path`` is zero (holes of a sparse file are skipped, not read)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        zeros = bytes(chunk)
        for start, end in data_ranges(fd, 0, size):
            pos = start
            while pos < end:
                n = min(chunk, end - pos)
                if os.pread(fd, n, pos) != zeros[:n]:
                    return False
                pos += n
        return True
    finally:
        os.close(fd)


def data_ranges(fd: int, start: int, end: int) -> list[tuple[int, int]]:
    """The ranges of ``[start, end)`` that may hold non-zero bytes: everything but the holes of a
    sparse file (``SEEK_DATA``/``SEEK_HOLE``; the whole range where they are not supported)."""
    if start >= end:
        return []
    seek_data, seek_hole = getattr(os, "SEEK_DATA", None), getattr(os, "SEEK_HOLE", None)
    if seek_data is None or seek_hole is None:  # pragma: no cover - non-Linux
        return [(start, end)]
    out = []
    pos = start
    try:
        while pos < end:
            try:
                data = os.lseek(fd, pos, seek_data)
            except OSError as exc:  # ENXIO: no data after pos
                if exc.errno == 6:
                    break
                raise
            if data >= end:
                break
            hole = min(os.lseek(fd, data, seek_hole), end)
            out.append((data, hole))
            pos = hole
    except OSError:  # pragma: no cover - a file system without SEEK_DATA support
        return [(start, end)]
    return out
