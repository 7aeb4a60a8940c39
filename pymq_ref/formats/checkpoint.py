"""The ``checkpoint`` file (``StoreCheckpoint``): three timestamps that bound recovery.

The book's reference appendix, §Checkpoint; ``store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java``.
The file is mapped with length ``OS_PAGE_SIZE`` = 4096 bytes; only the
first 24 bytes carry data in 4.x (5.x adds two more longs at 24 and 32, which we decode when
present but never write):

======  ====  =====================  =====================================================
offset  size  field                  updated when
======  ====  =====================  =====================================================
0       8     physic_msg_timestamp   after a full CommitLog flush
8       8     logics_msg_timestamp   after each ConsumeQueue unit write (persisted later)
16      8     index_msg_timestamp    when an index file becomes full
======  ====  =====================  =====================================================

Pure: bytes in, values out.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from pymq_ref.errors import TruncatedError
from pymq_ref.formats.spans import Span

CHECKPOINT_FILE_SIZE = 4096
CHECKPOINT = struct.Struct(">qqq")
#: ``getMinTimestamp`` goes back 3 s before the older of the two timestamps.
MIN_TIMESTAMP_MARGIN_MS = 3000


@dataclass(frozen=True, slots=True)
class Checkpoint:
    physic_msg_timestamp: int = 0
    logics_msg_timestamp: int = 0
    index_msg_timestamp: int = 0
    spans: tuple[Span, ...] = ()

    @property
    def min_timestamp(self) -> int:
        """``StoreCheckpoint.getMinTimestamp``: ``max(0, min(physic, logics) - 3000)``."""
        return max(0, min(self.physic_msg_timestamp, self.logics_msg_timestamp) - MIN_TIMESTAMP_MARGIN_MS)

    @property
    def min_timestamp_index(self) -> int:
        """``StoreCheckpoint.getMinTimestampIndex``: ``min(min_timestamp, index)``."""
        return min(self.min_timestamp, self.index_msg_timestamp)


def encode_checkpoint(cp: Checkpoint, *, full_page: bool = True) -> bytes:
    """The 24 data bytes, zero-padded to the 4096-byte file when ``full_page``."""
    data = CHECKPOINT.pack(cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp)
    return data + bytes(CHECKPOINT_FILE_SIZE - len(data)) if full_page else data


def decode_checkpoint(buf, pos: int = 0, *, base: int = 0, with_spans: bool = True) -> Checkpoint:
    """The three timestamps at ``buf[pos]`` (``StoreCheckpoint``'s constructor); TruncatedError when short."""
    if pos < 0 or len(buf) - pos < CHECKPOINT.size:
        raise TruncatedError("checkpoint", "physic_msg_timestamp", base + pos,
                             f"{CHECKPOINT.size} bytes", f"{max(0, len(buf) - pos)} bytes")
    values = CHECKPOINT.unpack_from(buf, pos)
    if not with_spans:
        return Checkpoint(*values)
    at = base + pos
    spans = (
        Span(at, 8, "physic_msg_timestamp", "timestamp", values[0]),
        Span(at + 8, 8, "logics_msg_timestamp", "timestamp", values[1]),
        Span(at + 16, 8, "index_msg_timestamp", "timestamp", values[2]),
    )
    return Checkpoint(*values, spans=spans)


def _schema():
    import construct as c

    return c.Struct(
        "physic_msg_timestamp" / c.Int64sb * "store timestamp of the last CommitLog message covered by a full flush",
        "logics_msg_timestamp" / c.Int64sb * "store timestamp of the last message written to a ConsumeQueue",
        "index_msg_timestamp" / c.Int64sb * "end timestamp of the last index file that became full",
    )


CHECKPOINT_SCHEMA = _schema()

try:  # the schema registry is owned by formats/schemas.py
    from pymq_ref.formats.schemas import register as _register
except ImportError:  # pragma: no cover - registry not present yet
    _register = None
if _register is not None:
    _register("checkpoint", CHECKPOINT_SCHEMA)
