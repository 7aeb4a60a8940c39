"""Writer process for the kill -9 test: puts messages forever and prints one ACK line per stored message.

Usage: python tests/store_kill_writer.py ROOT SYNC_FLUSH|ASYNC_FLUSH START_ID THREADS
ACK line: ``ACK <id> <phy_offset> <queue_id> <queue_offset> <store_timestamp>``.
"""

from __future__ import annotations

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pymq_ref.store.message_store import MessageStore  # noqa: E402
from pymq_ref.store.store_config import FlushDiskType  # noqa: E402
from store_helpers import kill_test_config, kill_test_message  # noqa: E402


def main() -> None:
    root, mode, start, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    config = kill_test_config(root, FlushDiskType[mode])
    store = MessageStore.open(config, threads=True, inline_dispatch=False)
    out = sys.stdout
    lock = threading.Lock()
    counter = iter(range(start, 10**9))
    print("READY", flush=True)

    def run():
        while True:
            with lock:
                i = next(counter)
            m = kill_test_message(i)
            r = store.put_message(m)
            if not r.ok:
                with lock:
                    out.write(f"FAIL {i} {r.status.name}\n")
                    out.flush()
                continue
            a = r.append_result
            with lock:
                out.write(f"ACK {i} {a.wrote_offset} {m.queue_id} {a.logics_offset} {a.store_timestamp}\n")
                out.flush()

    workers = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
