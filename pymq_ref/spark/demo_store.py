"""A small, deterministic store with every kind of traffic the Spark analytics look at (chapter 14, tests).

Everything goes through :class:`~pymq_ref.store.message_store.MessageStore` with a
:class:`~pymq_ref.store.clock.ManualClock`; the broker-side records are written the way the
4.9.4 broker writes them (``TransactionalMessageServiceImpl``, ``ScheduleMessageService``,
``SendMessageProcessor.asyncConsumerSendMsgBack``):

* plain traffic on ``Orders`` (4 queues, growing each hour) and ``Payments`` (2 queues);
* delayed sends (``DELAY`` 2, 3 and 5): the store parks them in ``SCHEDULE_TOPIC_XXXX``; the
  due ones are put back with :func:`pymq_ref.broker.schedule.timeup.message_timeup` and
  ``delayOffset.json`` records how far each level got;
* transactions: half records (``RMQ_SYS_TRANS_HALF_TOPIC``), COMMIT records, op messages (tag
  ``d``, body = half queue offset), put-back copies with ``TRANSACTION_CHECK_TIMES``, and one
  discarded after the maximum checks (``TRANS_CHECK_MAX_TIME_TOPIC``);
* retries of group ``billing``: sent back messages parked at level 3 + reconsume count, the
  due ones delivered to ``%RETRY%billing``, and one that reached ``%DLQ%billing``;
* ``consumerOffset.json`` for groups ``billing`` and ``audit``.

:func:`build_demo_store` returns the facts it wrote (counts and statuses decided here, not read
back), which tests compare with the Spark answers. It writes only below ``root``.
"""

from __future__ import annotations

import os
import shutil

from ..broker.schedule.timeup import message_timeup
from ..formats.hosts import Host
from ..formats.message import MessageRecord
from ..store.clock import ManualClock
from ..store.config_files import OffsetTableFile
from ..store.message_store import MessageStore
from ..store.store_config import MessageStoreConfig

START_MS = 1_700_000_000_000
HOUR = 3_600_000
BORN = Host("10.0.0.7", 50000)
STORE = Host("127.0.0.1", 10911)


def _msg(topic: str, queue_id: int, body: bytes, clock: ManualClock, **props) -> MessageRecord:
    return MessageRecord(topic=topic, queue_id=queue_id, body=body, properties=props, born_timestamp=clock.now_ms(),
                         born_host=BORN, store_host=STORE)


def build_demo_store(root: str | os.PathLike, *, hours: int = 6, commit_log_file_size: int = 32 * 1024) -> dict:
    """Write the demo store into ``root`` (replacing it) and return the facts it contains."""
    root = str(root)
    shutil.rmtree(root, ignore_errors=True)
    clock = ManualClock(START_MS, step_ms=1)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=commit_log_file_size,
                                mapped_file_size_consume_queue=200 * 20, max_hash_slot_num=512, max_index_num=2048)
    store = MessageStore.open(config, clock)
    facts: dict = {"plain": {}, "delayed": {}, "transactions": {}, "retry": {}, "offsets": {}}
    put = store.put_message

    def send(record: MessageRecord):
        result = put(record)
        if not result.ok:
            raise RuntimeError(f"demo store: put failed: {result}")
        return result

    seq = 0
    # --- plain traffic, one block per hour -------------------------------------------------------
    for hour in range(hours):
        clock.set(START_MS + hour * HOUR)
        for i in range(10 + 8 * hour):  # Orders grows
            q = seq % 4
            send(_msg("Orders", q, b"order-%d|" % seq * (3 + seq % 5), clock, TAGS=("new", "paid")[seq % 2],
                      KEYS=f"order-{seq}", UNIQ_KEY=f"AC10000700004E20{seq:016X}"))
            facts["plain"].setdefault(("Orders", q), 0)
            facts["plain"][("Orders", q)] += 1
            seq += 1
        for i in range(12):  # Payments steady
            q = seq % 2
            send(_msg("Payments", q, b"pay-%d" % seq, clock, TAGS="card", KEYS=f"pay-{seq}",
                      UNIQ_KEY=f"AC10000700004E20{seq:016X}"))
            facts["plain"].setdefault(("Payments", q), 0)
            facts["plain"][("Payments", q)] += 1
            seq += 1

    # --- delayed sends: parked by the store; the due ones delivered back --------------------------
    clock.set(START_MS + hours * HOUR)
    parked = []
    for i, level in enumerate((2, 2, 3, 3, 3, 5, 5, 5, 5)):
        uniq = f"AC10000700004E21{i:016X}"
        result = send(_msg("Orders", i % 4, b"later-%d" % i, clock, DELAY=str(level), KEYS=f"later-{i}",
                           UNIQ_KEY=uniq, TAGS="later"))
        parked.append((level, uniq, result.append_result.wrote_offset))
    clock.advance(12_000)  # 12 s later: levels 2 (5 s) and 3 (10 s) are due, level 5 (1 min) is not
    delivered_per_level: dict[int, int] = {}
    for level, uniq, offset in parked:
        if level in (2, 3):
            stored = store.look_message_by_offset(offset)
            send(message_timeup(stored))
            delivered_per_level[level] = delivered_per_level.get(level, 0) + 1
        facts["delayed"][uniq] = {"level": level, "status": "delivered" if level in (2, 3) else "waiting"}
    delay_offsets = OffsetTableFile(root, "delayOffset.json")
    delay_offsets.offset_table = {level: delivered_per_level.get(level, 0) for level in (2, 3, 5)}
    delay_offsets.persist()

    # --- transactions ------------------------------------------------------------------------
    clock.set(START_MS + hours * HOUR + 60_000)
    half_offsets: dict[str, tuple[int, int]] = {}

    def half(tx: int, check_times: int | None = None):
        props = {"REAL_TOPIC": "Payments", "REAL_QID": str(tx % 2), "TRAN_MSG": "true", "PGROUP": "pay-producer",
                 "UNIQ_KEY": f"AC10000700004E22{tx:016X}", "KEYS": f"tx-{tx}"}
        if check_times is not None:
            props["TRANSACTION_CHECK_TIMES"] = str(check_times)
        r = send(_msg("RMQ_SYS_TRANS_HALF_TOPIC", 0, b"tx-%d" % tx, clock, **props))
        half_offsets[props["UNIQ_KEY"]] = (r.append_result.wrote_offset, r.append_result.logics_offset)
        return props["UNIQ_KEY"]

    def op(uniq: str):
        qoff = half_offsets[uniq][1]
        send(MessageRecord(topic="RMQ_SYS_TRANS_OP_HALF_TOPIC", queue_id=0, body=str(qoff).encode(),
                           properties={"WAIT": "false", "TAGS": "d"}, properties_string="WAIT\x01true\x02TAGS\x01d",
                           born_timestamp=clock.now_ms(), born_host=STORE, store_host=STORE))

    def commit(uniq: str, tx: int):
        phy = half_offsets[uniq][0]
        stored = store.look_message_by_offset(phy)
        props = dict(stored.properties)
        send(stored.replace(topic="Payments", queue_id=tx % 2, sys_flag=0x8, prepared_transaction_offset=phy,
                            properties=props, body_crc=None, total_size=None, queue_offset=0, phy_offset=0))

    for tx in range(10):
        uniq = half(tx)
        if tx < 4:  # committed at once
            commit(uniq, tx)
            op(uniq)
            facts["transactions"][uniq] = "committed"
        elif tx < 6:  # rolled back
            op(uniq)
            facts["transactions"][uniq] = "rolled_back"
        elif tx < 8:  # checked twice (put-back copies), still unknown
            clock.advance(60_000)
            half(tx, 1)
            clock.advance(60_000)
            half(tx, 2)
            facts["transactions"][uniq] = "pending"
        elif tx == 8:  # checked once, then committed through the copy
            clock.advance(60_000)
            copy = half(tx, 1)
            commit(copy, tx)
            op(copy)
            facts["transactions"][uniq] = "committed"
        else:  # 15 checks: discarded
            for n in range(1, 16):
                half(tx, n)
            stored = store.look_message_by_offset(half_offsets[uniq][0])
            send(stored.replace(topic="TRANS_CHECK_MAX_TIME_TOPIC", queue_id=0, body_crc=None, total_size=None,
                                queue_offset=0, phy_offset=0))
            facts["transactions"][uniq] = "discarded"

    # --- retries of group "billing" ------------------------------------------------------------
    clock.set(START_MS + hours * HOUR + 30 * 60_000)
    originals = []
    for i in range(6):
        r = send(_msg("Orders", i % 4, b"bill-%d" % i, clock, TAGS="bill", UNIQ_KEY=f"AC10000700004E23{i:016X}"))
        originals.append(store.look_message_by_offset(r.append_result.wrote_offset))
    attempts = {0: 1, 1: 1, 2: 2, 3: 2, 4: 3, 5: 17}  # message -> times it was sent back
    retry_counts: dict[int, int] = {}
    for i, times in attempts.items():
        msg = originals[i]
        for r in range(times):
            props = dict(msg.properties)
            props.setdefault("RETRY_TOPIC", "Orders")
            props.setdefault("ORIGIN_MESSAGE_ID", originals[i].msg_id)
            if r == 16:  # 16 retries used up: dead letter
                props["DELAY"] = "0"
                send(msg.replace(topic="%DLQ%billing", queue_id=0, reconsume_times=r + 1, properties=props,
                                 body_crc=None, total_size=None, queue_offset=0, phy_offset=0))
                break
            props["DELAY"] = str(3 + r)
            res = send(msg.replace(topic="%RETRY%billing", queue_id=0, reconsume_times=r + 1, properties=props,
                                   body_crc=None, total_size=None, queue_offset=0, phy_offset=0))
            retry_counts[r + 1] = retry_counts.get(r + 1, 0) + 1
            parked_retry = store.look_message_by_offset(res.append_result.wrote_offset)
            clock.advance(2 * HOUR)
            back = send(message_timeup(parked_retry))  # due: back in %RETRY%billing
            msg = store.look_message_by_offset(back.append_result.wrote_offset)
    facts["retry"] = {"billing": {"attempts": retry_counts, "dlq": 1}}

    # --- consumer offsets ---------------------------------------------------------------------
    offsets = OffsetTableFile(root, "consumerOffset.json")
    table = {}
    for q in range(4):
        table.setdefault("Orders@billing", {})[q] = store.get_max_offset_in_queue("Orders", q) - (q * 3)
        table.setdefault("Orders@audit", {})[q] = max(0, store.get_max_offset_in_queue("Orders", q) // 2)
    for q in range(2):
        table.setdefault("Payments@billing", {})[q] = store.get_max_offset_in_queue("Payments", q)
    offsets.offset_table = table
    offsets.persist()
    facts["offsets"] = table
    store.shutdown()
    return facts
