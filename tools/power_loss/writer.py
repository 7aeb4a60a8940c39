"""The writer process of the LazyFS power-loss runs (see README.md): puts messages until killed.

Usage: writer.py STORE_ROOT MODE START_ID WRITERS
(MODE: SYNC_FLUSH, ASYNC_FLUSH or ASYNC_FLUSH+POOL; the store of ``tests/power_loss_checks.py``).

Opens the store as a broker does (flush, reput, ConsumeQueue flush threads), prints ``READY``, then
one line per event, flushed at once:

* ``ACK <id> <phy> <size> <queue> <queue offset> <store timestamp>`` — a put answered PUT_OK;
* ``FLUSHED <offset>`` — the CommitLog is synced below this offset (every 5 ms when it moved);
* ``PERSISTED <counter>`` — ``consumerOffset.json`` was persisted with this counter.
"""

from __future__ import annotations

import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests"))

from power_loss_checks import run_writers, workload_config  # noqa: E402
from pymq_ref.store.clock import SystemClock  # noqa: E402
from pymq_ref.store.message_store import MessageStore  # noqa: E402


def main() -> None:
    root, mode, start, writers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    store = MessageStore.open(workload_config(root, mode), SystemClock(), threads=True, inline_dispatch=False)
    out_lock = threading.Lock()

    def say(line: str) -> None:
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    say("READY")
    run_writers(store, writers, range(start, 10**12), on_ack=lambda a: say(a.line()),
                on_persist=lambda c: say(f"PERSISTED {c}"))
    queue = store.commit_log.queue
    last = -1
    while True:  # until killed
        flushed = queue.flushed_where
        if flushed != last:
            say(f"FLUSHED {flushed}")
            last = flushed
        time.sleep(0.005)


if __name__ == "__main__":
    main()
