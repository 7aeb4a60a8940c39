"""The power-loss workload and what must hold after the power comes back (not a test module).

Shared by the CI test over the Python fault layer (``tests/test_store_power_loss.py``, with
``tests/power_loss_fs.py``) and the live LazyFS driver (``tools/power_loss/driver.py``):

* :func:`workload_config` / :func:`workload_message` — a store with small files (the CommitLog,
  ConsumeQueues and index files roll often) in one of the flush modes ``SYNC_FLUSH``,
  ``ASYNC_FLUSH`` and ``ASYNC_FLUSH+POOL`` (the transient store pool), and message ``i``;
* :func:`run_writers` — concurrent writer threads putting messages and reporting each
  acknowledgement, and a persister writing ``consumerOffset.json`` with a rising counter;
* :func:`check_recovered` — open the store *unattended* (no file touched by hand), then:
  every acknowledged message that must survive is there byte for byte, with its ConsumeQueue
  unit and its index entry; any other acknowledged message is lost only as a tail (nothing
  after it survives, nothing else is at its place); every ConsumeQueue unit points at the record
  it should; ``consumerOffset.json`` holds at least the last acknowledged persist; and, after a
  clean shutdown, ``pymq doctor`` finds nothing.
"""

from __future__ import annotations

import functools
import random
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterable

from pymq_ref.formats.hosts import Host
from pymq_ref.formats.message import MessageRecord, decode_record, encode_message
from pymq_ref.store.clock import SystemClock
from pymq_ref.store.config_files import OffsetTableFile
from pymq_ref.store.message_store import MessageStore
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig
from pymq_ref.tools.doctor import run_doctor

MODES = ("SYNC_FLUSH", "ASYNC_FLUSH", "ASYNC_FLUSH+POOL")
OFFSET_KEY = "PowerLossGroup@P0"


class PowerLossCheckFailed(AssertionError):
    """What should have survived the power loss did not (the message says what and where)."""


@dataclass(frozen=True, slots=True)
class Ack:
    """A put answered PUT_OK: message ``id`` at CommitLog offset ``phy`` (``size`` bytes), queue offset."""

    id: int
    phy: int
    size: int
    queue_id: int
    queue_offset: int
    store_timestamp: int

    @property
    def end(self) -> int:
        return self.phy + self.size

    def line(self) -> str:
        return f"ACK {self.id} {self.phy} {self.size} {self.queue_id} {self.queue_offset} {self.store_timestamp}"

    @classmethod
    def parse(cls, line: str) -> "Ack":
        _, *fields = line.split()
        return cls(*map(int, fields))


def workload_config(root: str, mode: str) -> MessageStoreConfig:
    flush, _, pool = mode.partition("+")
    return MessageStoreConfig(
        store_path_root_dir=str(root), mapped_file_size_commit_log=16 * 1024,
        mapped_file_size_consume_queue=20 * 32, max_hash_slot_num=32, max_index_num=64,
        flush_disk_type=FlushDiskType[flush], transient_store_pool_enable=pool == "POOL",
        transient_store_pool_size=3, flush_interval_commit_log=10, flush_commit_log_thorough_interval=50,
        commit_interval_commit_log=10, commit_commit_log_thorough_interval=30,
        flush_interval_consume_queue=20, flush_consume_queue_thorough_interval=100)


def workload_message(i: int) -> MessageRecord:
    props = {"UNIQ_KEY": f"AC100001000000000000{i:012X}", "KEYS": f"pk-{i}", "TAGS": f"Tag{i % 3}",
             "CLUSTER": "DefaultCluster"}
    return MessageRecord(topic=f"P{i % 2}", body=bytes([i % 251]) * (40 + i * 37 % 150), queue_id=i % 3,
                         properties=props, born_timestamp=1_700_000_000_000 + i, born_host=Host("10.0.0.7", 40000),
                         store_host=Host("127.0.0.1", 10911))


@functools.lru_cache(maxsize=65536)
def expected_bytes(ack: Ack) -> bytes:
    m = workload_message(ack.id)
    return encode_message(m.replace(queue_offset=ack.queue_offset, phy_offset=ack.phy,
                                    store_timestamp=ack.store_timestamp))


@dataclass
class Writers:
    """Handle of :func:`run_writers`: ``stop()`` ends the threads and waits for them."""

    threads: list = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)

    def stop(self) -> None:
        self.stopped.set()
        for t in self.threads:
            t.join(timeout=30)


def run_writers(store: MessageStore, writers: int, ids: Iterable[int], on_ack: Callable[[Ack], None],
                on_persist: Callable[[int], None] | None = None, persist_every_s: float = 0.02) -> Writers:
    """Start ``writers`` threads putting messages ``ids`` (shared) and calling ``on_ack`` after each
    PUT_OK, plus (``on_persist``) a thread persisting ``consumerOffset.json`` with a rising counter
    and calling ``on_persist(counter)`` once each persist returned. Non-OK answers end a writer."""
    handle = Writers()
    lock = threading.Lock()
    it = iter(ids)

    def put_loop():
        while not handle.stopped.is_set():
            with lock:
                i = next(it, None)
            if i is None:
                return
            r = store.put_message(workload_message(i))
            if not r.ok:
                return
            a = r.append_result
            on_ack(Ack(i, a.wrote_offset, a.wrote_bytes, i % 3, a.logics_offset, a.store_timestamp))

    def persist_loop():
        offsets = OffsetTableFile(store.root)
        counter = 0
        while not handle.stopped.wait(persist_every_s):
            counter += 1
            offsets.offset_table = {OFFSET_KEY: {0: counter}}
            try:
                offsets.persist()
            except OSError:
                return
            on_persist(counter)

    handle.threads = [threading.Thread(target=put_loop, daemon=True) for _ in range(writers)]
    if on_persist is not None:
        handle.threads.append(threading.Thread(target=persist_loop, daemon=True))
    for t in handle.threads:
        t.start()
    return handle


@dataclass
class CheckResult:
    kept: list[Ack]
    lost: list[Ack]
    repairs: list[str]
    offsets_counter: int | None


def check_recovered(root: str, mode: str, acked: list[Ack], must_survive: Callable[[Ack], bool],
                    min_offsets_counter: int = 0, *, doctor: bool = True, queries: int | None = None) -> CheckResult:
    """Open the store unattended and check it (see the module docstring); raises
    :class:`PowerLossCheckFailed`. ``must_survive(ack)`` says which acknowledged messages were
    durable (all of them under SYNC_FLUSH). ``queries``: look up by key only that many kept
    messages (the newest half, the rest at random; the doctor still checks every record's index
    entries); None: all of them."""
    def fail(why: str):
        raise PowerLossCheckFailed(f"{root} ({mode}): {why}")

    try:
        store = MessageStore.open(workload_config(root, mode), SystemClock())
    except Exception as exc:  # the point of the exercise: it must open by itself
        raise PowerLossCheckFailed(f"{root} ({mode}): the store did not open unattended: "
                                   f"{type(exc).__name__}: {exc}") from exc
    kept, lost = [], []
    try:
        cl = store.commit_log
        end = cl.max_offset
        for ack in sorted(acked, key=lambda a: a.phy):
            want = expected_bytes(ack)
            if cl.get_data(ack.phy, len(want)) == want:
                if lost:
                    fail(f"acknowledged message {ack.id} at {ack.phy} survived after lost message {lost[0].id} "
                         f"at {lost[0].phy}: a loss that is not a tail")
                kept.append(ack)
                continue
            if must_survive(ack):
                fail(f"acknowledged message {ack.id} at CommitLog offset {ack.phy} was durable but is "
                     f"{'beyond the recovered end ' + str(end) if ack.phy >= end else 'changed'}")
            if ack.end <= end:
                fail(f"lost message {ack.id} at {ack.phy} lies below the recovered end {end}: something else is there")
            lost.append(ack)
        if queries is None or len(kept) <= queries:
            looked_up = set(kept)
        else:
            newest = kept[-(queries // 2):] if queries // 2 else []
            looked_up = set(newest) | set(random.Random(len(kept)).sample(kept[:len(kept) - len(newest)],
                                                                          queries - len(newest)))
        for ack in kept:
            m = workload_message(ack.id)
            unit = store.find_consume_queue(m.topic, ack.queue_id, create=False)
            unit = unit.get_unit(ack.queue_offset) if unit is not None else None
            if unit is None or (unit.phy_offset, unit.size) != (ack.phy, ack.size):
                fail(f"message {ack.id} at {ack.phy}: ConsumeQueue {m.topic}/{ack.queue_id} unit {ack.queue_offset} "
                     f"is {unit}")
            if ack not in looked_up:
                continue
            found = store.query_message(m.topic, f"pk-{ack.id}", max_num=4)
            if ack.phy not in [r.phy_offset for r in found.messages]:
                fail(f"message {ack.id} at {ack.phy}: no index entry finds it by key pk-{ack.id}")
        for cq in store._all_cqs():
            for index in range(cq.min_offset_in_queue, cq.max_offset_in_queue):
                unit = cq.get_unit(index)
                data = cl.get_data(unit.phy_offset, unit.size) if unit is not None else None
                rec = decode_record(data, 0, base=unit.phy_offset, with_spans=False) if data else None
                if not isinstance(rec, MessageRecord) or (rec.topic, rec.queue_id, rec.queue_offset) != \
                        (cq.topic, cq.queue_id, index):
                    fail(f"ConsumeQueue {cq.topic}/{cq.queue_id} unit {index} ({unit}) does not point at its record")
        repairs = list(store.power_loss_repairs)
    finally:
        store.shutdown()
    offsets = OffsetTableFile(str(root))
    counter = None
    if offsets.load():
        counter = offsets.offset_table.get(OFFSET_KEY, {}).get(0)
    if min_offsets_counter and (counter is None or counter < min_offsets_counter):
        fail(f"consumerOffset.json holds counter {counter}, but persist {min_offsets_counter} had returned")
    if doctor:
        report = run_doctor(root)
        if not report.clean:
            fail("pymq doctor after the restart: " + "; ".join(p.text() for p in report.findings[:5]))
    return CheckResult(kept, lost, repairs, counter)
