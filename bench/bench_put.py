"""Put + dispatch throughput: ``MessageStore.put_message`` (CommitLog append, ConsumeQueue unit, two
index keys, ASYNC_FLUSH) vs a raw loop that only packs the same records into an mmap.

Ours: one thread, 1 KiB bodies, properties KEYS (one key) + UNIQ_KEY + CLUSTER + TAGS, so each
put writes the record, one 20-byte unit and two index entries (UNIQ_KEY and the key). The store
runs in its deterministic mode (dispatch inline under the put lock, no flush thread; the async
flush happens at shutdown, outside the timing).

Baseline: for the same messages, build the properties string, ``struct.pack_into`` the fixed
fields, copy hosts/body/topic/properties and ``zlib.crc32`` the body into an mmap — the least
work that produces the same CommitLog bytes (no ConsumeQueue, no index, no checks).

Target: ours >= 0.3x the baseline (messages per second).
"""

from __future__ import annotations

import mmap
import os
import shutil
import struct
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

from pymq_ref.formats.hosts import Host  # noqa: E402
from pymq_ref.formats.message import MessageRecord  # noqa: E402
from pymq_ref.store.clock import SystemClock  # noqa: E402
from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig  # noqa: E402

BODY = bytes(range(256)) * 4  # 1 KiB
TOPIC = "BenchTopic"
BORN, STORE = Host("10.0.0.1", 40000), Host("127.0.0.1", 10911)


def messages(count: int) -> list[MessageRecord]:
    out = []
    for i in range(count):
        props = {"KEYS": f"key-{i}", "UNIQ_KEY": f"0A00000112340000ABCD{i:012X}", "CLUSTER": "DefaultCluster",
                 "TAGS": "TagA"}
        out.append(MessageRecord(topic=TOPIC, body=BODY, queue_id=i % 8, properties=props,
                                 born_timestamp=1_700_000_000_000 + i, born_host=BORN, store_host=STORE))
    return out


def run_ours(msgs: list[MessageRecord], workdir: str) -> None:
    root = tempfile.mkdtemp(dir=workdir)
    config = MessageStoreConfig(store_path_root_dir=root, mapped_file_size_commit_log=256 << 20,
                                flush_disk_type=FlushDiskType.ASYNC_FLUSH, max_hash_slot_num=500_000,
                                max_index_num=2_000_000)
    store = MessageStore.open(config, SystemClock())
    put = store.put_message
    timer = _Timer()
    with timer:
        for m in msgs:
            put(m)
    store.shutdown()
    shutil.rmtree(root)
    return timer.elapsed


HEAD = struct.Struct(">iiiiiqqiq")
MID = struct.Struct(">iqi")
LONG = struct.Struct(">q")
SHORT = struct.Struct(">h")


def run_baseline(msgs: list[MessageRecord], workdir: str) -> float:
    path = os.path.join(tempfile.mkdtemp(dir=workdir), "00000000000000000000")
    size = 256 << 20
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    os.ftruncate(fd, size)
    mm = mmap.mmap(fd, size)
    crc32 = zlib.crc32
    pack_head, pack_mid, pack_long, pack_short = HEAD.pack_into, MID.pack_into, LONG.pack_into, SHORT.pack_into
    hosts: dict = {}  # a raw writer encodes each address once
    timer = _Timer()
    with timer:
        pos = 0
        for qoff, m in enumerate(msgs):
            born = hosts.get(m.born_host) or hosts.setdefault(m.born_host, m.born_host.to_bytes())
            store = hosts.get(m.store_host) or hosts.setdefault(m.store_host, m.store_host.to_bytes())
            props = "\x02".join(f"{k}\x01{v}" for k, v in m.properties.items()).encode()
            topic = m.topic.encode()
            body = m.body
            total = 91 + len(body) + len(topic) + len(props)
            pack_head(mm, pos, total, -626843481, crc32(body) & 0x7FFFFFFF, m.queue_id, m.flag, qoff >> 3, pos,
                      m.sys_flag, m.born_timestamp)
            mm[pos + 48:pos + 56] = born
            pack_long(mm, pos + 56, m.born_timestamp + 1)
            mm[pos + 64:pos + 72] = store
            pack_mid(mm, pos + 72, 0, 0, len(body))
            at = pos + 88
            mm[at:at + len(body)] = body
            at += len(body)
            mm[at] = len(topic)
            mm[at + 1:at + 1 + len(topic)] = topic
            at += 1 + len(topic)
            pack_short(mm, at, len(props))
            mm[at + 2:at + 2 + len(props)] = props
            pos += total
    mm.close()
    os.close(fd)
    shutil.rmtree(os.path.dirname(path))
    return timer.elapsed


class _Timer:
    def __enter__(self):
        import time
        self._t = time.perf_counter()

    def __exit__(self, *exc):
        import time
        self.elapsed = time.perf_counter() - self._t


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    count = 20_000 if args.quick else 100_000
    repeat = args.repeat or (2 if args.quick else 5)
    msgs = messages(count)
    workdir = tempfile.mkdtemp(prefix="pymq-bench-put-")
    try:
        ours, base = interleaved_best(lambda: count / run_ours(msgs, workdir),
                                      lambda: count / run_baseline(msgs, workdir), repeat)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    rows = [Row("put + dispatch (CQ + 2 index keys), ASYNC, 1 KiB", ours, base, "msg/s", 0.3,
                "baseline: struct.pack_into + zlib.crc32 of the same records into an mmap")]
    return report("put", f"Put path, {count} messages of 1 KiB, one thread (best of {repeat})", rows,
                  {"messages": count, "body_bytes": len(BODY), "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
