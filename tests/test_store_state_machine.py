"""Hypothesis state machine: an in-memory model against the real store (tiny files, deterministic mode)
over random puts (blocking or awaited), pulls, key queries, flushes and clean / unclean restarts."""

from __future__ import annotations

import asyncio
import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.message_store import GetMessageStatus, MessageStore
from store_helpers import small_config

TOPICS = ("A", "B")
QUEUES = (0, 1)
KEYS = ("k0", "k1", "k2", "Aa", "BB")  # "Aa" and "BB" collide in Java's String.hashCode


class StoreMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.root = tempfile.mkdtemp(prefix="pymq-sm-")
        self.clock = ManualClock(1_700_000_000_000, step_ms=7)
        self.config = small_config(self.root, mapped_file_size_commit_log=1024, mapped_file_size_consume_queue=100,
                                   max_hash_slot_num=8, max_index_num=6)
        self.store = MessageStore.open(self.config, self.clock)
        self.model: dict[tuple[str, int], list[MessageRecord]] = {}
        self.counter = 0

    def teardown(self):
        self.store.shutdown()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(topic=st.sampled_from(TOPICS), queue_id=st.sampled_from(QUEUES), size=st.integers(0, 300),
          key=st.sampled_from(KEYS), tag=st.sampled_from(("", "TagA", "TagB")), awaited=st.booleans())
    def put(self, topic, queue_id, size, key, tag, awaited):
        self.counter += 1
        props = {"UNIQ_KEY": f"U{self.counter:06d}", "KEYS": key}
        if tag:
            props["TAGS"] = tag
        m = MessageRecord(topic=topic, body=bytes([self.counter % 256]) * size, queue_id=queue_id, properties=props,
                          born_timestamp=self.counter, born_host=Host("10.0.0.2", 1234))
        r = asyncio.run(self.store.async_put_message(m)) if awaited else self.store.put_message(m)
        assert r.ok, r
        q = self.model.setdefault((topic, queue_id), [])
        assert r.append_result.logics_offset == len(q)
        q.append(m)

    def _pull_all(self, topic, queue_id, start, tag_filter=None):
        got, offset = [], start
        for _ in range(1000):
            r = self.store.get_message("g", topic, queue_id, offset, 7, tag_filter)
            if r.status in (GetMessageStatus.FOUND, GetMessageStatus.NO_MATCHED_MESSAGE):
                got += r.records()
                assert r.next_begin_offset > offset
                offset = r.next_begin_offset
            else:
                return got, r.status
        raise AssertionError("pull loop did not end")

    @rule(topic=st.sampled_from(TOPICS), queue_id=st.sampled_from(QUEUES), start=st.integers(0, 40),
          tag=st.sampled_from((None, "TagA", "TagA || TagB")))
    def pull(self, topic, queue_id, start, tag):
        q = self.model.get((topic, queue_id), [])
        got, status = self._pull_all(topic, queue_id, start, tag)
        wanted = [m for m in q[start:] if tag is None or m.properties.get("TAGS") in tag.split(" || ")]
        assert [(g.body, g.properties) for g in got] == [(m.body, m.properties) for m in wanted]
        if not q:
            assert status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
        elif start > len(q):
            assert status is GetMessageStatus.OFFSET_OVERFLOW_BADLY
        else:
            assert status is GetMessageStatus.OFFSET_OVERFLOW_ONE

    @rule(topic=st.sampled_from(TOPICS), key=st.sampled_from(KEYS))
    def query(self, topic, key):
        wanted = sorted((m.properties["UNIQ_KEY"] for qs in ((t, q) for t, q in self.model if t == topic)
                         for m in self.model[qs] if m.properties["KEYS"] == key))
        got = sorted(m.properties["UNIQ_KEY"] for m in self.store.query_message(topic, key, max_num=64).messages)
        assert got == wanted[:64]

    @precondition(lambda self: self.counter > 0)
    @rule(data=st.data())
    def query_uniq(self, data):
        (topic, queue_id), q = data.draw(st.sampled_from(sorted((k, v) for k, v in self.model.items() if v)))
        m = data.draw(st.sampled_from(q))
        got = self.store.query_message(topic, m.properties["UNIQ_KEY"]).messages
        assert [g.body for g in got] == [m.body]
        assert self.store.view_message(got[0].msg_id).body == m.body

    @rule()
    def flush(self):
        self.store.flush()

    @rule()
    def restart_clean(self):
        self.store.shutdown()
        self.store = MessageStore.open(self.config, self.clock)
        assert self.store.last_exit_ok

    @rule()
    def restart_unclean(self):
        s = self.store
        s._close_files()  # what a killed process leaves: page cache intact, abort file present
        s._release_lock()
        s._state = "shutdown"
        self.store = MessageStore.open(self.config, self.clock)
        assert not self.store.last_exit_ok

    @invariant()
    def offsets_agree(self):
        for (topic, queue_id), q in self.model.items():
            assert self.store.get_max_offset_in_queue(topic, queue_id) == len(q)
            assert self.store.commit_log.topic_queue_table.get(f"{topic}-{queue_id}", 0) == len(q)


StoreMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_store_state_machine = StoreMachine.TestCase
