"""StoreCheckpoint: the mapped ``checkpoint`` file (layout in :mod:`pymq_ref.formats.checkpoint`).

The three timestamps live in memory and are written to the 4096-byte mapping and ``msync``'ed by
:meth:`StoreCheckpoint.flush` (at the ConsumeQueue thorough flush, at index roll, at shutdown).
Read-only mode only reads the file (and tolerates its absence).
"""

from __future__ import annotations

import os

from pymq_ref.formats.checkpoint import CHECKPOINT, CHECKPOINT_FILE_SIZE, Checkpoint, decode_checkpoint
from pymq_ref.store.mapped_file import MappedFile


class StoreCheckpoint:
    """Call order: construct (loads the file if it exists) → update attributes → ``flush`` → ``close``."""

    def __init__(self, path: str, *, read_only: bool = False):
        self.path = path
        self.read_only = read_only
        self.physic_msg_timestamp = 0
        self.logics_msg_timestamp = 0
        self.index_msg_timestamp = 0
        self.mapped: MappedFile | None = None
        exists = os.path.exists(path)
        if read_only:
            if exists:
                with open(path, "rb") as f:
                    data = f.read(CHECKPOINT.size)
                if len(data) == CHECKPOINT.size:
                    self._set(decode_checkpoint(data, with_spans=False))
            return
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
