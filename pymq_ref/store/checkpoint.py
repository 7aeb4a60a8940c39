"""StoreCheckpoint: the mapped ``checkpoint`` file (layout in :mod:`pymq_ref.formats.checkpoint`).

The three timestamps live in memory and are written to the 4096-byte mapping and ``msync``'ed by
:meth:`StoreCheckpoint.flush` (at the ConsumeQueue thorough flush, at index roll, at shutdown).
Read-only mode only reads the file (and tolerates its absence).

A checkpoint shorter than a page (a power loss before its size was synced leaves 0 bytes) is
extended to 4096 bytes, its bytes kept, as 4.9.4's ``StoreCheckpoint`` does when it maps the file;
timestamps it no longer holds read as 0, which makes an abnormal recovery start at the first
CommitLog file (everything is re-dispatched).
"""

from __future__ import annotations

import logging
import os

from pymq_ref.formats.checkpoint import CHECKPOINT, CHECKPOINT_FILE_SIZE, Checkpoint, decode_checkpoint
from pymq_ref.store import fileio
from pymq_ref.store.mapped_file import MappedFile

_log = logging.getLogger(__name__)


class StoreCheckpoint:
    """Call order: construct (loads the file if it exists) → update attributes → ``flush`` → ``close``."""

    def __init__(self, path: str, *, read_only: bool = False):
        self.path = path
        self.read_only = read_only
        self.physic_msg_timestamp = 0
        self.logics_msg_timestamp = 0
        self.index_msg_timestamp = 0
        self.mapped: MappedFile | None = None
        #: what loading had to rebuild (a short file left by a power loss), one sentence each
        self.repairs: list[str] = []
        exists = os.path.exists(path)
        if read_only:
            if exists:
                with open(path, "rb") as f:
                    data = f.read(CHECKPOINT.size)
                if len(data) == CHECKPOINT.size:
                    self._set(decode_checkpoint(data, with_spans=False))
            return
        if exists and os.path.getsize(path) < CHECKPOINT_FILE_SIZE:
            size = os.path.getsize(path)
            fileio.extend_file(path, CHECKPOINT_FILE_SIZE)
            self.repairs = [f"{path}: {size} bytes instead of {CHECKPOINT_FILE_SIZE} (left by a power loss): "
                            f"extended, {'no timestamp kept' if size < CHECKPOINT.size else 'its timestamps kept'}"]
            _log.warning("power-loss repair: %s", self.repairs[0])
        self.mapped = MappedFile(path, CHECKPOINT_FILE_SIZE)
        if exists:
            self._set(decode_checkpoint(self.mapped.mm, with_spans=False))

    def _set(self, cp: Checkpoint) -> None:
        self.physic_msg_timestamp = cp.physic_msg_timestamp
        self.logics_msg_timestamp = cp.logics_msg_timestamp
        self.index_msg_timestamp = cp.index_msg_timestamp

    @property
    def value(self) -> Checkpoint:
        return Checkpoint(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)

    @property
    def min_timestamp(self) -> int:
        return self.value.min_timestamp

    @property
    def min_timestamp_index(self) -> int:
        return self.value.min_timestamp_index

    def flush(self) -> None:
        if self.mapped is None or self.mapped.closed:
            return
        CHECKPOINT.pack_into(self.mapped.mm, 0, self.physic_msg_timestamp, self.logics_msg_timestamp,
                             self.index_msg_timestamp)
        self.mapped.wrote_position = CHECKPOINT.size
        self.mapped.flushed_position = 0
        self.mapped.flush(0)

    def close(self) -> None:
        if self.mapped is not None:
            self.mapped.close()
