"""``TransactionalMessageBridge`` (4.9.4): how half, op, re-put and discarded records are built.

Each builder returns the :class:`MessageRecord` RocketMQ would hand to the store, with the
property map (``record.properties``) and stored text (``record.properties_string``) following
the Java code line by line — which map is serialised when, and which ``put`` happens after the
string was built
(``broker/src/main/java/org/apache/rocketmq/broker/transaction/queue/TransactionalMessageBridge.java``). Pure
functions of their inputs; the service does
the puts. Must not decide *whether* to write anything.
"""

from __future__ import annotations

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import (REAL_QID, REAL_TOPIC, TAGS, TRAN_MSG, WAIT, JavaHashMap,
                                         encode_properties)
from pymq_ref.formats.sysflag import reset_transaction_value

from ..constants import RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC
from ..messages import ext_properties

REMOVE_TAG = "d"
TRANSACTION_NOT_TYPE = 0x0
TRANSACTION_PREPARED_TYPE = 0x4
TRANSACTION_COMMIT_TYPE = 0x8
TRANSACTION_ROLLBACK_TYPE = 0xC
TRANSACTION_CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
CHECK_IMMUNITY_TIME_IN_SECONDS = "CHECK_IMMUNITY_TIME_IN_SECONDS"
TRAN_PREPARED_QUEUE_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"


def _record(props: JavaHashMap, stored: str | None = None, **fields) -> MessageRecord:
    return MessageRecord(properties=dict(props.items()), properties_string=stored, **fields)


def parse_half_message_inner(msg: MessageRecord) -> MessageRecord:
    """``parseHalfMessageInner``: ``REAL_TOPIC``/``REAL_QID`` put into the map, tran type NOT,
    topic ``RMQ_SYS_TRANS_HALF_TOPIC`` queue 0, string re-serialised from the map (``WAIT`` back in)."""
    props = JavaHashMap(msg.properties.items())
    props[REAL_TOPIC] = msg.topic
    props[REAL_QID] = str(msg.queue_id)
    return msg.replace(topic=RMQ_SYS_TRANS_HALF_TOPIC, queue_id=0, properties=dict(props.items()),
                       properties_string=None, sys_flag=reset_transaction_value(msg.sys_flag, TRANSACTION_NOT_TYPE))


def op_message_inner(half_queue_id: int, half_queue_offset: int, now_ms: int, broker_host: Host) -> MessageRecord:
    """``addRemoveTagInTransactionOp`` + ``makeOpMessageInner``: body = the half queue offset in
    decimal; the string is built from ``new Message(topic, "d", body)``'s map (TAGS, WAIT=true);
    ``WAIT=false`` and a ``UNIQ_KEY`` are put into the map only afterwards, so neither is stored."""
    props = JavaHashMap()
    props[TAGS] = REMOVE_TAG
    props[WAIT] = "true"
    stored = encode_properties(props)
    props[WAIT] = "false"
    return _record(props, stored, topic=RMQ_SYS_TRANS_OP_HALF_TOPIC, queue_id=half_queue_id,
                   body=str(half_queue_offset).encode("utf-8"), sys_flag=0, born_timestamp=now_ms,
                   born_host=broker_host, store_host=broker_host)


def renew_half_message_inner(ext: MessageRecord, props: JavaHashMap) -> MessageRecord:
    """``renewHalfMessageInner``: a copy for the half queue. ``props`` is the half record's map as
    the check loop holds it (with ``TRANSACTION_CHECK_TIMES``); it is serialised, *then*
    ``WAIT=false`` is put into the same map (the caller's ``props`` changes too, as in Java).
    Flag, reconsume times and prepared offset are not copied."""
    stored = encode_properties(props)
    props[WAIT] = "false"
    return _record(props, stored, topic=ext.topic, body=ext.body, queue_id=ext.queue_id, sys_flag=ext.sys_flag,
                   born_timestamp=ext.born_timestamp, born_host=ext.born_host, store_host=ext.store_host)


def renew_immunity_half_message_inner(ext: MessageRecord, props: JavaHashMap) -> MessageRecord:
    """``renewImmunityHalfMessageInner``: as :func:`renew_half_message_inner` plus
    ``TRAN_PREPARED_QUEUE_OFFSET`` (kept, or the original's queue offset), re-serialised — so this
    copy's stored string does carry ``WAIT=false``."""
    rec = renew_half_message_inner(ext, props)
    props[TRAN_PREPARED_QUEUE_OFFSET] = props.get(TRAN_PREPARED_QUEUE_OFFSET) or str(ext.queue_offset)
    return rec.replace(properties=dict(props.items()), properties_string=None)


def check_max_time_message_inner(ext: MessageRecord, props: JavaHashMap, queue_id: int = 0) -> MessageRecord:
    """``DefaultTransactionalMessageCheckListener.toMessageExtBrokerInner``: the discarded half
    message copied to ``TRANS_CHECK_MAX_TIME_TOPIC`` (string from the map, then ``WAIT=false``)."""
    stored = encode_properties(props)
    props[WAIT] = "false"
    return _record(props, stored, topic=RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC, body=ext.body, flag=ext.flag,
                   queue_id=queue_id, sys_flag=ext.sys_flag, born_timestamp=ext.born_timestamp,
                   born_host=ext.born_host, store_host=ext.store_host, reconsume_times=ext.reconsume_times)


def end_message_transaction(half: MessageRecord, commit_log_offset: int) -> MessageRecord:
    """``EndTransactionProcessor.endMessageTransaction`` + the commit settings: the real message.

    The stored string is the half record's map serialised *before* ``REAL_TOPIC``, ``REAL_QID``
    and ``TRAN_MSG`` are cleared, so the committed record still carries them; the map (which
    decides ``WAIT``) loses them. Tran type COMMIT, PREPAREDTRANSACTIONOFFSET = the half record's
    CommitLog offset.
    """
    props = ext_properties(half)
    stored = encode_properties(props)
    for key in (REAL_TOPIC, REAL_QID, TRAN_MSG):
        props.pop(key, None)
    return _record(props, stored, topic=half.properties[REAL_TOPIC], queue_id=int(half.properties[REAL_QID]),
                   body=half.body, flag=half.flag, born_timestamp=half.born_timestamp, born_host=half.born_host,
                   store_host=half.store_host, reconsume_times=half.reconsume_times,
                   sys_flag=reset_transaction_value(half.sys_flag, TRANSACTION_COMMIT_TYPE),
                   prepared_transaction_offset=commit_log_offset)
