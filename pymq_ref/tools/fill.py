"""``pymq fill``: write real messages into a store through the real :class:`MessageStore`.

Every message goes through ``MessageStore.put_message`` (encode, put lock, CommitLog append,
dispatch to ConsumeQueue and IndexFile, flush), so the result is a store like a broker's — the
doctor, ``pymq inspect`` and the book's chapters can be pointed at it. Content is a function of
the options: with ``--seed`` and ``--start-time`` two runs write byte-identical stores.

Each message gets, as a 4.9.4 broker stores them: ``KEYS`` (the ``--keys`` templates, ``{i}``
replaced by the message number), ``UNIQ_KEY`` (the client's id format, from a generator whose
pid/class-loader fields come from the seed), ``CLUSTER`` and ``TAGS`` (rotating through a
comma-separated ``--tags`` list), in Java HashMap order. Queue = message number mod ``--queues``.

An existing store is appended to; its segment sizes are read from its files unless given.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Callable, TextIO

from ..errors import PymqError
from ..formats.hosts import Host
from ..formats.message import MessageRecord
from ..formats.msgid import UniqKeyGenerator
from ..formats.properties import hashmap_order
from ..store.clock import ManualClock, SystemClock
from ..store.message_store import MessageStore
from ..store.store_config import FlushDiskType, MessageStoreConfig
from .segments import open_readonly
from .store_files import index_geometry
from .store_layout import discover


class FillError(PymqError):
    """A put was refused (the status and the store's reason are in the message)."""


@dataclass
class FillOptions:
    topic: str
    count: int
    body_size: int = 1024
    tags: str | None = None
    keys: tuple[str, ...] = ("key-{i}",)
    queues: int = 4
    flush: str = "async"
    seed: int = 0
    start_time: int | None = None  # fixed clock (ms): reproducible stores
    commitlog_file_size: int | None = None
    cq_file_size: int | None = None
    hash_slots: int | None = None
    index_num: int | None = None
    born_host: str = "127.0.0.1:50000"
    store_host: str = "127.0.0.1:10911"
    cluster: str = "DefaultCluster"


@dataclass
class FillSummary:
    store: str
    topic: str
    messages: int
    bytes: int
    seconds: float
    msg_per_s: float
    mib_per_s: float
    first_offset: int
    end_offset: int
    queues: int
    flush: str

    def text(self) -> str:
        return (f"pymq fill: {self.messages} message(s), {self.bytes} bytes of records to topic {self.topic} "
                f"({self.queues} queue(s), {self.flush} flush) at CommitLog [{self.first_offset}, {self.end_offset}) "
                f"in {self.seconds:.2f} s: {self.msg_per_s:.0f} msg/s, {self.mib_per_s:.1f} MiB/s\n")


def _parse_host(text: str) -> Host:
    ip, _, port = text.rpartition(":")
    ip = ip.strip("[]")
    if not ip or not port.isdigit():
        raise ValueError(f"expected HOST:PORT (IPv6 as [::1]:PORT), got {text!r}")
    return Host(ip, int(port))


def store_config_for(root: str, options: FillOptions) -> MessageStoreConfig:
    """RocketMQ's defaults, or the sizes an existing store's files show, or the options' sizes."""
    kwargs: dict = {"store_path_root_dir": root,
                    "flush_disk_type": FlushDiskType.SYNC_FLUSH if options.flush == "sync" else FlushDiskType.ASYNC_FLUSH}
    cl_size, cq_size, slots, entries = (options.commitlog_file_size, options.cq_file_size, options.hash_slots,
                                        options.index_num)
    if os.path.isdir(root) and any(os.path.exists(os.path.join(root, n)) for n in ("commitlog", "consumequeue")):
        layout = discover(root)
        cl_size = cl_size or layout.commitlog_file_size or None
        cq_size = cq_size or layout.cq_file_size or None
        if layout.index_files and not (slots and entries):
            with open_readonly(layout.index_files[-1].path) as buf:
                slots, entries = index_geometry(buf, slots, entries)
    if cl_size:
        kwargs["mapped_file_size_commit_log"] = cl_size
    if cq_size:
        kwargs["mapped_file_size_consume_queue"] = cq_size
    if slots:
        kwargs["max_hash_slot_num"] = slots
    if entries:
        kwargs["max_index_num"] = entries
    return MessageStoreConfig(**kwargs)


def iter_messages(options: FillOptions, born_clock: Callable[[int], int]):
    """The messages ``fill`` writes, numbered from 0 (a generator: deterministic for a seed)."""
    rng = random.Random(options.seed)
    born_host, store_host = _parse_host(options.born_host), _parse_host(options.store_host)
    tags = [t for t in (options.tags or "").split(",") if t]
    state = {"born": 0}
    uniq = UniqKeyGenerator(store_host.ip if not store_host.is_v6 else "127.0.0.1", rng.randrange(1 << 16),
                            rng.randrange(1 << 31), lambda: state["born"])
    for i in range(options.count):
        born = born_clock(i)
        state["born"] = born
        props = {}
        if tags:
            props["TAGS"] = tags[i % len(tags)]
        keys = " ".join(k.replace("{i}", str(i)) for k in options.keys if k)
        if keys:
            props["KEYS"] = keys
        props["UNIQ_KEY"] = uniq()
        props["CLUSTER"] = options.cluster
        yield MessageRecord(topic=options.topic, body=rng.randbytes(options.body_size),
                            properties=hashmap_order(props), queue_id=i % max(1, options.queues),
                            born_timestamp=born, born_host=born_host, store_host=store_host)


def fill_store(root: str, options: FillOptions, progress: Callable[[int, int, float], None] | None = None
               ) -> FillSummary:
    """Write ``options.count`` messages; raises :class:`FillError` when a put is refused."""
    if options.start_time is not None:
        clock = ManualClock(options.start_time, step_ms=1)
        born_clock = lambda i: options.start_time + i  # noqa: E731
    else:
        clock = SystemClock()
        born_clock = lambda i: clock.now_ms()  # noqa: E731
    config = store_config_for(root, options)
    store = MessageStore.open(config, clock)
    written = 0
    first = end = None
    started = time.perf_counter()
    last_report = started
    try:
        for i, msg in enumerate(iter_messages(options, born_clock)):
            result = store.put_message(msg)
            if not result.ok:
                raise FillError(f"message {i}: put failed with {result.status.value}: {result.error or ''}".strip())
            ar = result.append_result
            first = ar.wrote_offset if first is None else first
            end = ar.wrote_offset + ar.wrote_bytes
            written += ar.wrote_bytes
            if progress is not None and (i & 255) == 0:
                now = time.perf_counter()
                if now - last_report >= 1.0:
                    last_report = now
                    progress(i + 1, options.count, now - started)
    finally:
        store.shutdown()
    seconds = max(time.perf_counter() - started, 1e-9)
    return FillSummary(root, options.topic, options.count, written, seconds, options.count / seconds,
                       written / seconds / (1 << 20), first or 0, end or 0, options.queues, options.flush)


def fill_main(root: str, options: FillOptions, *, as_json: bool = False, quiet: bool = False,
              out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    def progress(done: int, total: int, elapsed: float) -> None:
        print(f"pymq fill: {done} / {total} messages ({done / elapsed:.0f} msg/s)", file=err, flush=True)

    try:
        summary = fill_store(root, options, None if quiet else progress)
    except (PymqError, ValueError, OSError) as exc:
        print(f"pymq fill: error: {exc}", file=err)
        return 2
    out.write(json.dumps(asdict(summary)) + "\n" if as_json else summary.text())
    return 0
