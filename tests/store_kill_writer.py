"""Writer process for the kill -9 test: puts messages forever and prints one ACK line per stored message.

Usage: python tests/store_kill_writer.py ROOT SYNC_FLUSH|ASYNC_FLUSH|ASYNC_FLUSH+POOL START_ID WRITERS [threads|tasks]
(``+POOL``: with the transient store pool.)
``threads`` (default): WRITERS threads calling ``put_message``; ``tasks``: WRITERS asyncio tasks
awaiting ``async_put_message`` on one loop. An ACK is printed only once the put returned PUT_OK.
ACK line: ``ACK <id> <phy_offset> <queue_id> <queue_offset> <store_timestamp>``.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import FlushDiskType  # noqa: E402
from store_helpers import kill_test_config, kill_test_message  # noqa: E402


def main() -> None:
    root, mode, start, writers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    kind = sys.argv[5] if len(sys.argv) > 5 else "threads"
    flush, _, pool = mode.partition("+")
    config = kill_test_config(root, FlushDiskType[flush], transient_pool=pool == "POOL")
    store = MessageStore.open(config, threads=True, inline_dispatch=False)
    out = sys.stdout
    lock = threading.Lock()
    counter = iter(range(start, 10**9))
    print("READY", flush=True)

    def ack(i, m, r) -> None:
        if not r.ok:
            out.write(f"FAIL {i} {r.status.name}\n")
        else:
            a = r.append_result
            out.write(f"ACK {i} {a.wrote_offset} {m.queue_id} {a.logics_offset} {a.store_timestamp}\n")
        out.flush()

    def run():
        while True:
            with lock:
                i = next(counter)
            m = kill_test_message(i)
            r = store.put_message(m)
            with lock:
                ack(i, m, r)

    async def task():
        while True:
            i = next(counter)
            m = kill_test_message(i)
            ack(i, m, await store.async_put_message(m))

    async def tasks():
        await asyncio.gather(*(task() for _ in range(writers)))

    if kind == "tasks":
        asyncio.run(tasks())
        return
    workers = [threading.Thread(target=run, daemon=True) for _ in range(writers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
