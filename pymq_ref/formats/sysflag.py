"""SYSFLAG bits of a CommitLog record
(``common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java``). Constants and pure helpers."""

from __future__ import annotations

COMPRESSED_FLAG = 0x1
MULTI_TAGS_FLAG = 0x2
TRANSACTION_NOT_TYPE = 0x0
TRANSACTION_PREPARED_TYPE = 0x4
TRANSACTION_COMMIT_TYPE = 0x8
TRANSACTION_ROLLBACK_TYPE = 0xC  # also the mask of the two transaction bits
BORNHOST_V6_FLAG = 0x10
STOREHOSTADDRESS_V6_FLAG = 0x20
NEED_UNWRAP_FLAG = 0x40
INNER_BATCH_FLAG = 0x80
COMPRESSION_TYPE_MASK = 0x700  # (sys_flag & mask) >> 8: 0 or 3 = zlib, 1 = lz4, 2 = zstd

TRANSACTION_TYPE_NAMES = {
    TRANSACTION_NOT_TYPE: "NOT",
    TRANSACTION_PREPARED_TYPE: "PREPARED",
    TRANSACTION_COMMIT_TYPE: "COMMIT",
    TRANSACTION_ROLLBACK_TYPE: "ROLLBACK",
}

_NAMES = (
    (COMPRESSED_FLAG, "COMPRESSED"),
    (MULTI_TAGS_FLAG, "MULTI_TAGS"),
    (BORNHOST_V6_FLAG, "BORNHOST_V6"),
    (STOREHOSTADDRESS_V6_FLAG, "STOREHOST_V6"),
    (NEED_UNWRAP_FLAG, "NEED_UNWRAP"),
    (INNER_BATCH_FLAG, "INNER_BATCH"),
)


def transaction_type(sys_flag: int) -> int:
    """The transaction field: one of the ``TRANSACTION_*_TYPE`` values."""
    return sys_flag & TRANSACTION_ROLLBACK_TYPE


def reset_transaction_value(sys_flag: int, tran_type: int) -> int:
    """``MessageSysFlag.resetTransactionValue``: replace the transaction bits."""
    return (sys_flag & ~TRANSACTION_ROLLBACK_TYPE) | tran_type


def host_flags(born_v6: bool, store_v6: bool) -> int:
    """The IPv6 bits for a record whose born/store hosts are IPv6."""
    return (BORNHOST_V6_FLAG if born_v6 else 0) | (STOREHOSTADDRESS_V6_FLAG if store_v6 else 0)


def describe_sys_flag(sys_flag: int) -> str:
    """Human-readable flags, e.g. ``"TRANSACTION_COMMIT|BORNHOST_V6"`` (``"0"`` when none)."""
    names = [name for bit, name in _NAMES if sys_flag & bit]
    tran = transaction_type(sys_flag)
    if tran:
        names.insert(1 if sys_flag & COMPRESSED_FLAG else 0, "TRANSACTION_" + TRANSACTION_TYPE_NAMES[tran])
    compression = (sys_flag & COMPRESSION_TYPE_MASK) >> 8
    if compression:
        names.append({1: "LZ4", 2: "ZSTD", 3: "ZLIB"}.get(compression, f"COMPRESSION_{compression}"))
    unknown = sys_flag & ~(0xFF | COMPRESSION_TYPE_MASK)
    if unknown:
        names.append(hex(unknown))
    return "|".join(names) or "0"
