"""The messages POP writes into the revive topic: a CK (tag ``ck``) per POP, an ACK (tag ``ack``)
per acknowledgement (``PopMessageProcessor.buildCkMsg``, ``AckMessageProcessor.appendAck``).

Each carries ``TIMER_DELIVER_MS`` (5.x ``setDeliverTimeMs``): a CK is due ``ackTimeInterval``
before its revive time, an ACK at the revive time of its CK. On a broker with the 5.x timer
wheel the put hook parks them until then; without it they are stored at once. Both are
``UNIQ_KEY``-d with ``genCkUniqueId`` / ``genAckUniqueId``. Pure record builders.
"""

from __future__ import annotations

from pymq_ref.formats import pop
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import TAGS, UNIQ_KEY, java_hashmap_order

TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
#: the iteration order of a fresh HashMap holding these three keys (the same for every record)
_ORDER = tuple(java_hashmap_order([TAGS, TIMER_DELIVER_MS, UNIQ_KEY]))


def _record(topic: str, queue_id: int, tag: str, body: bytes, deliver_ms: int, uniq: str, now: int,
            store_host: Host) -> MessageRecord:
    values = {TAGS: tag, TIMER_DELIVER_MS: str(deliver_ms), UNIQ_KEY: uniq}
    return MessageRecord(topic=topic, body=body, properties={k: values[k] for k in _ORDER}, queue_id=queue_id,
                         born_timestamp=now, born_host=store_host, store_host=store_host)


def ck_message(ck: pop.PopCheckPoint, revive_topic: str, revive_qid: int, now: int, store_host: Host) -> MessageRecord:
    return _record(revive_topic, revive_qid, pop.CK_TAG, pop.encode_body(ck),
                   ck.revive_time - pop.ACK_TIME_INTERVAL, ck.unique_id(), now, store_host)


def ack_message(ack: pop.AckMsg, invisible_time: int, revive_topic: str, revive_qid: int, now: int,
                store_host: Host) -> MessageRecord:
    return _record(revive_topic, revive_qid, pop.ACK_TAG, pop.encode_body(ack), ack.pop_time + invisible_time,
                   ack.unique_id(), now, store_host)


def batch_ack_message(ack: pop.BatchAckMsg, invisible_time: int, revive_topic: str, revive_qid: int, now: int,
                      store_host: Host) -> MessageRecord:
    """``BATCH_ACK_MESSAGE``'s record: tag ``bAck``, the acked offsets in ``aol``."""
    return _record(revive_topic, revive_qid, pop.BATCH_ACK_TAG, pop.encode_body(ack), ack.pop_time + invisible_time,
                   ack.unique_id(), now, store_host)
