"""The stable entry point for testing your own RocketMQ-compatible code against pymq-ref.

Everything here is byte-exact with Apache RocketMQ 4.9.4 (5.1.4 for the timer files) and keeps
its name and signature across pymq-ref releases; other modules of the package may move. Each
layout is drawn, offset by offset, in the book's reference appendix (``book/reference.md``), whose
section is named next to each group below. Typical uses::

    from pymq_ref import oracle

    record = oracle.decode_message(bytes_your_broker_wrote)     # raises oracle.FormatError if bad
    assert oracle.encode_message(record) == bytes_your_broker_wrote
    assert record.body_crc == oracle.body_crc(record.body)
    assert cq_unit_tags_code == oracle.tags_code(record.tags)
    host, offset = oracle.parse_offset_msg_id(send_result_msg_id)

    frame = oracle.decode_frame(bytes_your_client_sent)          # raises oracle.FrameError if bad
    header = frame.command.header(oracle.HEADER_CLASSES["SendMessageRequestHeaderV2"])
    assert oracle.encode_frame(frame.command) == bytes_your_client_sent

    mine = oracle.strategy_for_name("AVG").allocate(group, my_cid, queues, cids)
    assert oracle.compile_sql92("a > 5 AND b IS NULL").matches({"a": "7"})

Records are :class:`MessageRecord` values whose field names are those of ``pymq inspect
--format json``: ``total_size, magic_code, body_crc, queue_id, flag, queue_offset, phy_offset,
sys_flag, born_timestamp, born_host, store_timestamp, store_host, reconsume_times,
prepared_transaction_offset, body, topic, properties`` (+ ``crc_ok``, ``msg_id``, ``to_json()``).
``encode_message(decode_message(b)) == b`` for every valid record ``b``, property order included;
the same round trip holds for every fixed-size unit below. Decoders raise a :class:`FormatError`
subclass naming the structure, the field and the absolute offset; encoders raise
:class:`EncodeError` for a value the Java type cannot hold.

The names, grouped (a test checks this list against ``__all__``):

* hashes and checksums: ``java_string_hash``, ``tags_code``, ``index_key_hash``, ``body_crc``
* the CommitLog record (§CommitLog record, §END_OF_FILE blank, §SYSFLAG): ``MessageRecord``,
  ``BlankRecord``, ``Host``, ``encode_message``, ``decode_message``, ``decode_record``,
  ``iter_records``, ``encode_blank``, ``message_length``, ``MESSAGE_MAGIC_CODE``,
  ``MESSAGE_MAGIC_CODE_V2``, ``BLANK_MAGIC_CODE``, ``describe_sys_flag``, ``transaction_type``,
  ``FieldDifference``, ``diff_message``
* properties (§Message properties): ``encode_properties``, ``decode_properties``,
  ``hashmap_order``, ``JavaHashMap``, ``PROPERTY_DOCS``
* message ids (§Message ids): ``offset_msg_id``, ``parse_offset_msg_id``, ``UniqKey``,
  ``encode_uniq_key``, ``parse_uniq_key``, ``nearly_time_from_uniq_key``
* batch bodies (§Batch body): ``BatchEntry``, ``encode_batch``, ``decode_batch``
* the ConsumeQueue unit (§ConsumeQueue unit): ``CQ_STORE_UNIT_SIZE``, ``CqUnit``,
  ``encode_cq_unit``, ``decode_cq_unit``, ``iter_cq_units``, ``is_ext_address``
* the ConsumeQueueExt unit (§ConsumeQueueExt unit): ``CqExtUnit``, ``encode_cq_ext_unit``,
  ``decode_cq_ext_unit``, ``iter_cq_ext_units``, ``cq_ext_address``, ``cq_ext_offset``
* the IndexFile (§IndexFile): ``INDEX_HEADER_SIZE``, ``HASH_SLOT_SIZE``, ``INDEX_ENTRY_SIZE``,
  ``IndexHeader``, ``IndexEntry``, ``encode_index_header``, ``decode_index_header``,
  ``encode_index_slot``, ``decode_index_slot``, ``encode_index_entry``, ``decode_index_entry``,
  ``index_slot_position``, ``index_entry_position``, ``index_file_size``, ``index_file_name``,
  ``index_time_diff``
* the checkpoint (§Checkpoint): ``Checkpoint``, ``encode_checkpoint``, ``decode_checkpoint``
* the 5.x timer files (§Timer files): ``TimerLogUnit``, ``TimerLogBlank``,
  ``encode_timer_log_unit``, ``encode_timer_log_blank``, ``decode_timer_log_unit``, ``TimerSlot``,
  ``encode_timer_slot``, ``decode_timer_slot``, ``timer_slot_index``, ``TimerCheckpoint``,
  ``encode_timer_checkpoint``, ``decode_timer_checkpoint``
* config JSON, fastjson-tolerant (§Config files): ``loads_config_json``, ``dumps_config_json``,
  ``read_config_file``, ``parse_fastjson``, ``JsonSyntaxError``, ``TopicConfig``,
  ``SubscriptionGroupConfig``, ``DataVersion``
* remoting frames, headers and bodies (§Remoting frame, §Request codes, §Response codes,
  §Request and response headers, §JSON bodies, §Compressed registration body): ``RemotingCommand``, ``DecodedFrame``, ``encode_frame``,
  ``decode_frame``, ``frame_length``, ``RequestCode``, ``ResponseCode``, ``LanguageCode``,
  ``SerializeType``, ``request_code_name``, ``response_code_name``, ``HEADER_CLASSES``,
  ``BODY_CLASSES``, ``header_of``, ``body_of``, ``encode_body``, ``decode_body``,
  ``encode_register_body``, ``decode_register_body``, ``FrameError``, ``HeaderFieldError``,
  ``BodyError``
* queue allocation: ``MessageQueue``, ``AllocateError``, ``AllocateMessageQueueAveragely``,
  ``AllocateMessageQueueAveragelyByCircle``, ``AllocateMessageQueueConsistentHash``,
  ``AllocateMessageQueueByConfig``, ``AllocateMessageQueueByMachineRoom``,
  ``AllocateMachineRoomNearby``, ``PrefixMachineRoomResolver``, ``STRATEGY_NAMES``,
  ``strategy_for_name``
* tag and SQL92 filters: ``parse_tag_expression``, ``TagSubscription``, ``compile_sql92``,
  ``Sql92Expression``, ``build_filter``, ``FilterError``, ``FilterSyntaxError``,
  ``FilterTypeError``, ``TagExpressionError``
* delay levels (§Delay levels): ``SCHEDULE_TOPIC``, ``DEFAULT_MESSAGE_DELAY_LEVEL``,
  ``parse_delay_level``, ``delay_level_to_queue_id``, ``queue_id_to_delay_level``,
  ``compute_deliver_timestamp``, ``transform_delay_level``
* the retry ladder (§Retry ladder): ``retry_delay_level``, ``retry_schedule``
* errors: ``PymqError``, ``FormatError``, ``TruncatedError``, ``BadMagicError``,
  ``SizeMismatchError``, ``CrcMismatchError``, ``EncodeError``

Everything is re-exported from the module that implements it (there is one implementation of
each format); the aliases (``cq_ext_address`` for ``consume_queue_ext.decorate``,
``encode_frame`` for ``remoting.codec.encode``, …) only give a stable, unambiguous name.
"""

from __future__ import annotations

# errors
from ..errors import (BadMagicError, CrcMismatchError, EncodeError, FormatError, PymqError, SizeMismatchError,
                      TruncatedError)
# hashes, the CommitLog record, properties, ids, batches
from ..formats.batch import BatchEntry, decode_batch, encode_batch
from ..formats.hashing import body_crc, index_key_hash, java_string_hash, tags_code
from ..formats.hosts import Host
from ..formats.message import (BLANK_MAGIC_CODE, MESSAGE_MAGIC_CODE, MESSAGE_MAGIC_CODE_V2, BlankRecord,
                               MessageRecord, decode_record, encode_blank, encode_message, iter_records,
                               message_length)
from ..formats.message import decode_message as _decode_message
from ..formats.msgid import (UniqKey, encode_uniq_key, nearly_time_from_uniq_key, offset_msg_id, parse_offset_msg_id,
                             parse_uniq_key)
from ..formats.properties import PROPERTY_DOCS, JavaHashMap, decode_properties, encode_properties, hashmap_order
from ..formats.sysflag import describe_sys_flag, transaction_type
# the ConsumeQueue, its ext file, the IndexFile, the checkpoint
from ..formats.consume_queue import (CQ_STORE_UNIT_SIZE, CqUnit, decode_cq_unit, encode_cq_unit, is_ext_address,
                                     iter_cq_units)
from ..formats.consume_queue_ext import CqExtUnit
from ..formats.consume_queue_ext import decode_ext_unit as decode_cq_ext_unit
from ..formats.consume_queue_ext import decorate as cq_ext_address
from ..formats.consume_queue_ext import encode_ext_unit as encode_cq_ext_unit
from ..formats.consume_queue_ext import iter_ext_units as iter_cq_ext_units
from ..formats.consume_queue_ext import undecorate as cq_ext_offset
from ..formats.index_file import (HASH_SLOT_SIZE, INDEX_ENTRY_SIZE, INDEX_HEADER_SIZE, IndexEntry, IndexHeader,
                                  decode_index_entry, decode_index_header, encode_index_entry, encode_index_header,
                                  index_file_name, index_file_size)
from ..formats.index_file import decode_slot as decode_index_slot
from ..formats.index_file import encode_slot as encode_index_slot
from ..formats.index_file import entry_position as index_entry_position
from ..formats.index_file import slot_position as index_slot_position
from ..formats.index_file import time_diff_seconds as index_time_diff
from ..formats.checkpoint import Checkpoint, decode_checkpoint, encode_checkpoint
# the 5.x timer files
from ..formats.timer import Slot as TimerSlot
from ..formats.timer import TimerCheckpointData as TimerCheckpoint
from ..formats.timer import (TimerLogBlank, TimerLogUnit, decode_timer_checkpoint, decode_timer_log_unit,
                             encode_timer_checkpoint, encode_timer_log_blank, encode_timer_log_unit)
from ..formats.timer import decode_raw_slot as decode_timer_slot
from ..formats.timer import encode_slot as encode_timer_slot
from ..formats.timer import slot_index as timer_slot_index
# config JSON
from ..formats.beans import DataVersion, SubscriptionGroupConfig, TopicConfig
from ..formats.fastjson import dumps as dumps_config_json
from ..formats.fastjson import loads as loads_config_json
from ..formats.json_reader import JsonSyntaxError
from ..formats.json_reader import parse as parse_fastjson
from ..store.config_files import read_config_file
# remoting
from ..remoting.bodies import ALL_BODIES as BODY_CLASSES
from ..remoting.bodies import BodyError, decode_register_body, encode_body, encode_register_body
from ..remoting.bodies import decode_json as decode_body
from ..remoting.codec import DecodedFrame, frame_length
from ..remoting.codec import decode as decode_frame
from ..remoting.codec import encode as encode_frame
from ..remoting.codes import (LanguageCode, RequestCode, ResponseCode, SerializeType, request_code_name,
                              response_code_name)
from ..remoting.command import RemotingCommand
from ..remoting.errors import FrameError, HeaderFieldError
from ..remoting.headers import ALL_HEADERS as HEADER_CLASSES
from ..remoting.protocol import body_of, header_of
# allocation
from ..client.allocate import (STRATEGY_NAMES, AllocateError, AllocateMachineRoomNearby,
                               AllocateMessageQueueAveragely, AllocateMessageQueueAveragelyByCircle,
                               AllocateMessageQueueByConfig, AllocateMessageQueueByMachineRoom,
                               AllocateMessageQueueConsistentHash, PrefixMachineRoomResolver, strategy_for_name)
from ..formats.message_queue import MessageQueue
# filters
from ..broker.filter import (FilterError, FilterSyntaxError, FilterTypeError, Sql92Expression, TagExpressionError,
                             TagSubscription, build_filter, compile_sql92, parse_tag_expression)
# delay levels and the retry ladder
from ..store.delay import (DEFAULT_MESSAGE_DELAY_LEVEL, SCHEDULE_TOPIC, delay_level_to_queue_id, parse_delay_level,
                           queue_id_to_delay_level, transform_delay_level)
from ..store.dispatch import compute_deliver_timestamp
from ..broker.retry import retry_delay_level, retry_schedule

__all__ = [
    # hashes and checksums
    "java_string_hash", "tags_code", "index_key_hash", "body_crc",
    # the CommitLog record
    "MessageRecord", "BlankRecord", "Host", "encode_message", "decode_message", "decode_record", "iter_records",
    "encode_blank", "message_length", "MESSAGE_MAGIC_CODE", "MESSAGE_MAGIC_CODE_V2", "BLANK_MAGIC_CODE",
    "describe_sys_flag", "transaction_type", "FieldDifference", "diff_message",
    # properties
    "encode_properties", "decode_properties", "hashmap_order", "JavaHashMap", "PROPERTY_DOCS",
    # ids
    "offset_msg_id", "parse_offset_msg_id", "UniqKey", "encode_uniq_key", "parse_uniq_key",
    "nearly_time_from_uniq_key",
    # batch bodies
    "BatchEntry", "encode_batch", "decode_batch",
    # ConsumeQueue
    "CQ_STORE_UNIT_SIZE", "CqUnit", "encode_cq_unit", "decode_cq_unit", "iter_cq_units", "is_ext_address",
    # ConsumeQueueExt
    "CqExtUnit", "encode_cq_ext_unit", "decode_cq_ext_unit", "iter_cq_ext_units", "cq_ext_address", "cq_ext_offset",
    # IndexFile
    "INDEX_HEADER_SIZE", "HASH_SLOT_SIZE", "INDEX_ENTRY_SIZE", "IndexHeader", "IndexEntry", "encode_index_header",
    "decode_index_header", "encode_index_slot", "decode_index_slot", "encode_index_entry", "decode_index_entry",
    "index_slot_position", "index_entry_position", "index_file_size", "index_file_name", "index_time_diff",
    # checkpoint
    "Checkpoint", "encode_checkpoint", "decode_checkpoint",
    # timer files
    "TimerLogUnit", "TimerLogBlank", "encode_timer_log_unit", "encode_timer_log_blank", "decode_timer_log_unit",
    "TimerSlot", "encode_timer_slot", "decode_timer_slot", "timer_slot_index", "TimerCheckpoint",
    "encode_timer_checkpoint", "decode_timer_checkpoint",
    # config JSON
    "loads_config_json", "dumps_config_json", "read_config_file", "parse_fastjson", "JsonSyntaxError",
    "TopicConfig", "SubscriptionGroupConfig", "DataVersion",
    # remoting
    "RemotingCommand", "DecodedFrame", "encode_frame", "decode_frame", "frame_length", "RequestCode",
    "ResponseCode", "LanguageCode", "SerializeType", "request_code_name", "response_code_name", "HEADER_CLASSES",
    "BODY_CLASSES", "header_of", "body_of", "encode_body", "decode_body", "encode_register_body",
    "decode_register_body", "FrameError", "HeaderFieldError", "BodyError",
    # allocation
    "MessageQueue", "AllocateError", "AllocateMessageQueueAveragely", "AllocateMessageQueueAveragelyByCircle",
    "AllocateMessageQueueConsistentHash", "AllocateMessageQueueByConfig", "AllocateMessageQueueByMachineRoom",
    "AllocateMachineRoomNearby", "PrefixMachineRoomResolver", "STRATEGY_NAMES", "strategy_for_name",
    # filters
    "parse_tag_expression", "TagSubscription", "compile_sql92", "Sql92Expression", "build_filter", "FilterError",
    "FilterSyntaxError", "FilterTypeError", "TagExpressionError",
    # delay levels
    "SCHEDULE_TOPIC", "DEFAULT_MESSAGE_DELAY_LEVEL", "parse_delay_level", "delay_level_to_queue_id",
    "queue_id_to_delay_level", "compute_deliver_timestamp", "transform_delay_level",
    # retry ladder
    "retry_delay_level", "retry_schedule",
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
