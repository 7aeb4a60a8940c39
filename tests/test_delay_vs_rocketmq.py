"""Delay levels against RocketMQ 4.9.4's store and ``ScheduleMessageService``
(tests/data/rocketmq-4.9.4-delay, README.md there).

Each message of ``cases.tsv`` was put into the 4.9.4 store with a ``DELAY`` level and delivered
by its schedule service; ``rocketmq.jsonl`` holds, per message, the record the store parked in
SCHEDULE_TOPIC_XXXX and the record the service put back into the real topic. pymq_ref's store
and :class:`~pymq_ref.broker.schedule.service.ScheduleMessageService` must write the same
records: topic, queue, flags, born time, body, the properties text byte for byte (Java
``HashMap`` order, ``REAL_TOPIC``/``REAL_QID`` added, ``DELAY`` and ``WAIT`` kept in the
delivered text) and the delivered unit's tagsCode. Store times differ (RocketMQ's wall clock).
"""

from __future__ import annotations

import json
from pathlib import Path

from pymq_ref.broker.schedule.service import ScheduleMessageService
from pymq_ref.broker.scheduler import ManualScheduler
from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.formats.properties import decode_properties
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-delay"


def cases() -> list[list[str]]:
    """(name, topic, queue, DELAY, properties text with = for 0x01 and & for 0x02)."""
    return [line.split("\t") for line in (DATA / "cases.tsv").read_text(encoding="utf-8").splitlines()]


def record(store: MessageStore, phy: int) -> dict:
    m = store.look_message_by_offset(phy)
    return {"topic": m.topic, "queueId": m.queue_id, "sysFlag": m.sys_flag, "flag": m.flag,
            "reconsumeTimes": m.reconsume_times, "bornTimestamp": m.born_timestamp, "body": m.body.decode(),
            "propertiesString": m.properties_string}


def test_parked_and_delivered_records_are_rocketmq_s(tmp_path):
    clock = ManualClock(1_795_000_000_000)
    config = MessageStoreConfig(store_path_root_dir=str(tmp_path), mapped_file_size_commit_log=65536,
                                mapped_file_size_consume_queue=1000, max_hash_slot_num=100, max_index_num=400)
    store = MessageStore.open(config, clock)
    scheduler = ManualScheduler(clock)
    service = ScheduleMessageService(store, scheduler)
    service.load()
    service.start()
    ours = []
    for n, (name, topic, queue, _level, props) in enumerate(cases()):
        text = props.replace("=", "\x01").replace("&", "\x02")
        r = store.put_message(MessageRecord(
            topic=topic, body=f"body {name}".encode(), queue_id=int(queue), flag=n, properties=decode_properties(text),
            properties_string=text, born_timestamp=1_700_000_000_000 + n, born_host=Host("127.0.0.1", 54321),
            store_host=Host("127.0.0.1", 10911), reconsume_times=n % 3))
        assert r.ok, r
        ours.append({"case": name, "input": text, "parked": record(store, r.append_result.wrote_offset)})
    for _ in range(12):  # level 2 is 5 s
        scheduler.advance(1000)
    for doc, (name, topic, queue, _level, _props) in zip(ours, cases()):
        cq = store.find_consume_queue(topic, int(queue), create=False)
        for offset in range(cq.min_offset_in_queue, cq.max_offset_in_queue):
            unit = cq.get_unit(offset)
            delivered = record(store, unit.phy_offset)
            if delivered["body"] == f"body {name}":
                doc["delivered"] = {**delivered, "cqTagsCode": unit.tags_code}
    service.shutdown()
    store.shutdown()
    rocketmq = [json.loads(line) for line in (DATA / "rocketmq.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rocketmq) == len(ours) == 6
    for theirs, mine in zip(rocketmq, ours):
        assert mine == theirs, mine["case"]
    assert all("\x02DELAY\x01" in doc["delivered"]["propertiesString"] for doc in ours)  # kept, as 4.9.4 does
