"""A test-only fault layer under the store's file I/O: what a power loss at any moment leaves.

:class:`RecordingFileSystem` is a :class:`pymq_ref.store.fileio.FileSystem` backend (install it
with ``fileio.install``) that lets every call through to a real directory and records, in one
ordered journal, what each call would have made durable — the semantics of LazyFS (the FUSE file
system Jepsen uses, see tools/power_loss/):

* names survive: creating, renaming, deleting a file or a directory is durable at once;
* a file's bytes and its size survive only as they were at its last sync (``fsync``/
  ``fdatasync``): a file created with ``ftruncate`` and never synced comes back with 0 bytes,
  bytes written (through ``pwrite`` or a shared mapping) and not synced come back as they were;
* torn writes (:meth:`RecordingFileSystem.state_at` with ``tear``): the power goes out *during*
  a sync, so only some of the pages it was writing arrive, and one page only partly (whole
  512-byte sectors), and the new size may or may not.

A sync records the file's content as read just before the call (everything written before the
sync began, and perhaps more: a lower bound of what the OS makes durable) as the pages that
changed since the previous sync. The real sync is skipped: the journal, not the disk, is the
record (which keeps these tests fast). :meth:`RecordingFileSystem.mark` puts a caller's marker
into the journal (an acknowledgement) so that a cut can tell what was acknowledged before it.

:func:`materialize` writes a :class:`DurableState` out as a directory: the store as it would be
found after the power came back.
"""

from __future__ import annotations

import os
import random
import threading
from dataclasses import dataclass, field

from pymq_ref.store.fileio import FileSystem

PAGE = 4096
SECTOR = 512


@dataclass
class DurableState:
    """Directories and files (relative paths) with their durable size and non-zero pages."""

    dirs: set = field(default_factory=set)
    files: dict = field(default_factory=dict)  # rel -> [size, {page number: bytes}]

    def copy(self) -> "DurableState":
        return DurableState(set(self.dirs), {k: [v[0], dict(v[1])] for k, v in self.files.items()})

    def read(self, rel: str) -> bytes:
        size, pages = self.files[rel]
        out = bytearray(size)
        for n, data in pages.items():
            start = n * PAGE
            if start < size:
                out[start:start + len(data)] = data[:size - start]
        return bytes(out)


class RecordingFileSystem(FileSystem):
    """Records the durable effect of every store file call under ``root`` (see the module docstring).

    Journal entries: ``("mkdir", rel)``, ``("rmdir", rel)``, ``("create", rel)``, ``("remove", rel)``,
    ``("rename", src, dst)``, ``("sync", rel, size, {page: bytes})``, ``("mark", payload)``.
    """

    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.events: list[tuple] = []
        self.lock = threading.Lock()
        self._images: dict[str, bytes] = {}  # rel -> content at its last sync

    def _rel(self, path: str) -> str | None:
        path = os.path.abspath(path)
        if path == self.root or path.startswith(self.root + os.sep):
            return os.path.relpath(path, self.root)
        return None

    # -- the calls -----------------------------------------------------------------------------
    def open(self, path, flags, mode=0o644):
        rel = self._rel(path)
        with self.lock:
            existed = os.path.exists(path)
            fd = os.open(path, flags, mode)
            if rel is not None and not existed and flags & os.O_CREAT:
                self.events.append(("create", rel))
        return fd

    def sync(self, fd, path):
        rel = self._rel(path)
        if rel is None:
            return super().sync(fd, path)
        with self.lock:
            size = os.fstat(fd).st_size
            content = os.pread(fd, size, 0) if size else b""
            old = self._images.get(rel, b"")
            changed = {}
            for n in range((size + PAGE - 1) // PAGE):
                page = content[n * PAGE:(n + 1) * PAGE]
                if page != old[n * PAGE:(n + 1) * PAGE]:
                    changed[n] = page
            self._images[rel] = content
            self.events.append(("sync", rel, size, changed))

    def sync_dir(self, path):
        pass  # names are durable at once (LazyFS)

    def rename(self, src, dst):
        rs, rd = self._rel(src), self._rel(dst)
        with self.lock:
            os.replace(src, dst)
            if rs is not None and rd is not None:
                self.events.append(("rename", rs, rd))
                if rs in self._images:
                    self._images[rd] = self._images.pop(rs)
                else:
                    self._images.pop(rd, None)

    def remove(self, path):
        rel = self._rel(path)
        with self.lock:
            os.remove(path)
            if rel is not None:
                self.events.append(("remove", rel))
                self._images.pop(rel, None)

    def mkdir(self, path):
        rel = self._rel(path)
        with self.lock:
            os.mkdir(path)
            if rel is not None:
                self.events.append(("mkdir", rel))

    def rmdir(self, path):
        rel = self._rel(path)
        with self.lock:
            os.rmdir(path)
            if rel is not None:
                self.events.append(("rmdir", rel))

    def mark(self, payload) -> int:
        """Append a marker; returns its position in the journal."""
        with self.lock:
            self.events.append(("mark", payload))
            return len(self.events) - 1

    # -- replay ----------------------------------------------------------------------------------
    def states(self, cuts, *, tear_seed: int | None = None, initial: DurableState | None = None):
        """Yield ``(cut, state)`` for each journal position in ``cuts`` (ascending): the durable
        state of a power loss just before event ``cut``; with ``tear_seed``, an event ``cut``
        that is a sync is half-done (see :func:`tear`). ``initial``: what the directory held when
        the recording began (default: nothing). The state is shared between yields: copy it to
        keep it."""
        state = initial.copy() if initial is not None else DurableState()
        done = 0
        rng = random.Random(tear_seed)
        for cut in sorted(cuts):
            for event in self.events[done:cut]:
                apply(state, event)
            done = cut
            if tear_seed is not None and cut < len(self.events) and self.events[cut][0] == "sync":
                torn = state.copy()
                tear(torn, self.events[cut], rng)
                yield cut, torn
            else:
                yield cut, state


def apply(state: DurableState, event: tuple) -> None:
    kind = event[0]
    if kind == "mkdir":
        state.dirs.add(event[1])
    elif kind == "rmdir":
        state.dirs.discard(event[1])
    elif kind == "create":
        state.files.setdefault(event[1], [0, {}])
    elif kind == "remove":
        state.files.pop(event[1], None)
    elif kind == "rename":
        entry = state.files.pop(event[1], None)
        if entry is not None:
            state.files[event[2]] = entry
    elif kind == "sync":
        _, rel, size, changed = event
        entry = state.files.setdefault(rel, [0, {}])
        entry[0] = size
        pages = entry[1]
        pages.update(changed)
        for n in [n for n in pages if n * PAGE >= size]:
            del pages[n]


def tear(state: DurableState, event: tuple, rng: random.Random) -> None:
    """Apply a sync half-way: a random part of its pages (one of them only partly, in whole
    sectors), and its new size or not."""
    _, rel, size, changed = event
    entry = state.files.setdefault(rel, [0, {}])
    if rng.random() < 0.5:
        entry[0] = size
    pages = entry[1]
    chosen = [n for n in sorted(changed) if rng.random() < 0.5]
    if changed and chosen and rng.random() < 0.7:
        n = rng.choice(chosen)  # this one only partly: its first k sectors new, the rest old
        new = changed[n]
        old = pages.get(n, b"").ljust(len(new), b"\0")[:len(new)]
        cut = rng.randrange(1, max(2, len(new) // SECTOR)) * SECTOR
        pages[n] = new[:cut] + old[cut:]
        chosen.remove(n)
    for n in chosen:
        pages[n] = changed[n]
    for n in [n for n in pages if n * PAGE >= entry[0]]:
        del pages[n]


def materialize(state: DurableState, dest: str) -> None:
    """Write ``state`` under ``dest`` (which must not exist yet or be empty)."""
    os.makedirs(dest, exist_ok=True)
    for rel in sorted(state.dirs, key=lambda r: r.count(os.sep)):
        os.makedirs(os.path.join(dest, rel), exist_ok=True)
    for rel, (size, pages) in state.files.items():
        path = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.ftruncate(fd, size)
            for n, data in pages.items():
                if n * PAGE < size:
                    os.pwrite(fd, data[:size - n * PAGE], n * PAGE)
        finally:
            os.close(fd)
