"""The stable entry point for testing your own RocketMQ-compatible code against pymq-ref.

Everything here is byte-exact with Apache RocketMQ 4.9.4 (see the book's reference appendix and the
tests) and keeps its name and signature across pymq-ref releases; other modules of the package
may move. Typical uses::

    from pymq_ref import oracle

    record = oracle.decode_message(bytes_your_broker_wrote)     # raises oracle.FormatError if bad
    assert oracle.encode_message(record) == bytes_your_broker_wrote
    assert record.body_crc == oracle.body_crc(record.body)
    assert cq_unit_tags_code == oracle.tags_code(record.tags)
    host, offset = oracle.parse_offset_msg_id(send_result_msg_id)

Records are :class:`MessageRecord` values whose field names are those of ``pymq inspect
--format json``: ``total_size, magic_code, body_crc, queue_id, flag, queue_offset, phy_offset,
sys_flag, born_timestamp, born_host, store_timestamp, store_host, reconsume_times,
prepared_transaction_offset, body, topic, properties`` (+ ``crc_ok``, ``msg_id``, ``to_json()``).
``encode_message(decode_message(b)) == b`` for every valid record ``b``, property order included.
"""

from __future__ import annotations

from ..errors import (BadMagicError, CrcMismatchError, EncodeError, FormatError, PymqError, SizeMismatchError,
                      TruncatedError)
from ..formats.batch import BatchEntry, decode_batch, encode_batch
from ..formats.hashing import body_crc, index_key_hash, java_string_hash, tags_code
from ..formats.hosts import Host
from ..formats.message import (BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BlankRecord,
                               MessageRecord, decode_record, encode_blank, encode_message, iter_records,
                               message_length)
from ..formats.message import decode_message as _decode_message
from ..formats.msgid import (UniqKey, encode_uniq_key, nearly_time_from_uniq_key, offset_msg_id, parse_offset_msg_id,
                             parse_uniq_key)
from ..formats.properties import JavaHashMap, decode_properties, encode_properties, hashmap_order

__all__ = [
    # hashes and checksums
    "java_string_hash", "tags_code", "index_key_hash", "body_crc",
    # the CommitLog record
    "MessageRecord", "BlankRecord", "Host", "encode_message", "decode_message", "decode_record", "iter_records",
    "encode_blank", "message_length", "MESSAGE_MAGIC_CODE", "MESSAGE_MAGIC_CODE_V2", "BLANK_MAGIC_CODE",
    # properties
    "encode_properties", "decode_properties", "hashmap_order", "JavaHashMap",
    # ids
    "offset_msg_id", "parse_offset_msg_id", "UniqKey", "encode_uniq_key", "parse_uniq_key",
    "nearly_time_from_uniq_key",
    # batch bodies
    "BatchEntry", "encode_batch", "decode_batch",
    # errors
    "PymqError", "FormatError", "TruncatedError", "BadMagicError", "SizeMismatchError", "CrcMismatchError",
    "EncodeError",
]


def decode_message(data: bytes, pos: int = 0, *, base: int = 0, check_crc: bool = False,
                   with_spans: bool = True) -> MessageRecord:
    """Decode the message record at ``data[pos]`` (``base`` = absolute offset of ``data[0]``).

    Raises a :class:`FormatError` subclass naming the field, the absolute offset and what was
    expected; with ``check_crc`` a body CRC mismatch raises :class:`CrcMismatchError` (otherwise
    it shows as ``record.crc_ok == False``). ``record.spans`` tells where every field lies.
    """
    return _decode_message(data, pos, base=base, with_spans=with_spans, check_crc=check_crc)


from .diff import FieldDifference, diff_message  # noqa: E402  (kept last: it builds on the names above)

__all__ += ["FieldDifference", "diff_message"]
