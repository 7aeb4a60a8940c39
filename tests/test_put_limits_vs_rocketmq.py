"""Put limits against RocketMQ 4.9.4's ``DefaultMessageStore.putMessage`` (tests/data/rocketmq-4.9.4-put-limits).

RocketMQ's answers to the same puts, in order, on a store with 64 KiB CommitLog files and
``maxMessageSize`` 100000. Every status is the same but two, where pymq_ref refuses a message
4.9.4 accepts and then mishandles (both measured with the real classes, README.md there):

* a topic of at most 127 characters but more than 127 UTF-8 bytes: 4.9.4 answers PUT_OK and
  writes TOPICLENGTH as ``(byte) 128``; its own recovery then stops at that record, so after a
  restart it and every later message — acknowledged ones too — are gone;
* a record longer than a CommitLog file: 4.9.4 fills the rest of the current file and the whole
  next one with END_OF_FILE blanks and answers PUT_OK, but stores nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import MessageStoreConfig

DATA = Path(__file__).parent / "data" / "rocketmq-4.9.4-put-limits"
#: (case, topic, the value of the only property X, body length)
CASES = [
    ("topic_127", "T" * 127, "v", 10),
    ("topic_128", "T" * 128, "v", 10),
    ("topic_64_two_byte_chars", "é" * 64, "v", 10),
    ("props_32767_chars", "T", "a" * 32765, 10),  # "X\x01" + value: 32767 characters
    ("props_32768_chars", "T", "a" * 32766, 10),
    ("props_over_32767_bytes", "T", "é" * 20000, 10),
    ("body_max", "T", "v", 100000),
    ("body_over_max", "T", "v", 100001),
    ("after", "T", "v", 10),
]
DEVIATIONS = {"topic_64_two_byte_chars", "body_max"}


def put_all(root: Path, cases) -> list[tuple[str, str, int | None]]:
    config = MessageStoreConfig(store_path_root_dir=str(root), mapped_file_size_commit_log=65536,
                                max_message_size=100000)
    out = []
    with MessageStore.open(config, ManualClock(1_795_000_000_000)) as store:
        for name, topic, value, body in cases:
            r = store.put_message(MessageRecord(
                topic=topic, body=bytes(body), queue_id=0, properties={"X": value}, born_timestamp=1_700_000_000_000,
                born_host=Host("127.0.0.1", 54321), store_host=Host("127.0.0.1", 10911)))
            out.append((name, r.status.name, r.append_result.wrote_bytes if r.append_result else None, r.error))
    return out


def rocketmq(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def test_the_cases_are_the_ones_rocketmq_answered():
    tsv = "".join("\t".join(map(str, case)) + "\n" for case in CASES).encode()
    assert hashlib.sha256(tsv).hexdigest() == (DATA / "cases.sha256").read_text().strip()


def test_statuses_match_rocketmq_but_for_the_two_refusals(tmp_path):
    ours = {name: (status, size, error) for name, status, size, error in put_all(tmp_path / "s", CASES)}
    theirs = {j["case"]: j for j in rocketmq("rocketmq.jsonl")}
    for name, _topic, _value, _body in CASES:
        status, size, error = ours[name]
        if name in DEVIATIONS:
            assert (status, theirs[name]["status"]) == ("MESSAGE_ILLEGAL", "PUT_OK")
            continue
        assert status == theirs[name]["status"], name
        if status == "PUT_OK":
            assert size == theirs[name]["wroteBytes"], name
    assert "topic length (UTF-8 bytes) is 128" in ours["topic_64_two_byte_chars"][2]
    assert "larger than a CommitLog file" in ours["body_max"][2]


def test_what_the_two_refusals_spare():
    """What 4.9.4 did after accepting them, as recorded: the multi-byte topic cost the next
    (acknowledged) message at the restart; the oversized record was answered PUT_OK and lost."""
    acks = rocketmq("multibyte_topic_rocketmq.jsonl")
    assert [a["status"] for a in acks] == ["PUT_OK"] * 3 and acks[-1]["wroteOffset"] == 337
    reopened = rocketmq("multibyte_topic_reopened.jsonl")[0]
    assert reopened["maxPhyOffset"] == 105 and reopened["queues"] == {"T/0": [0, 1]}  # only the first message
    acks = rocketmq("oversized_rocketmq.jsonl")
    assert acks[1]["status"] == "PUT_OK" and acks[1]["appendStatus"] == "END_OF_FILE"
    assert rocketmq("oversized_reopened.jsonl")[0]["queues"] == {"T/0": [0, 2]}  # 3 acknowledged, 2 stored
