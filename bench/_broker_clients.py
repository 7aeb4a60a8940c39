"""Child processes of ``bench/bench_broker.py`` (not a benchmark itself).

    python _broker_clients.py cpp-send NAMESRV TOPIC SECONDS BODY_BYTES
        the C++ client (PyPI rocketmq==0.4.4) sync-sends for SECONDS; prints "RATE <msg/s> SENT <n>"
    python _broker_clients.py raw-rr HOST:PORT SECONDS BODY_BYTES
        the baseline: a blocking socket sends a RocketMQ-sized frame and waits for the answer, in a
        loop (what a sync send is, minus the broker); prints "RATE <req/s>"
"""

from __future__ import annotations

import os
import socket
import sys
import time


def cpp_send(namesrv: str, topic: str, seconds: float, size: int) -> None:
    from rocketmq.client import Message, Producer, SendStatus
    p = Producer("PG_CPP_BENCH", timeout=10_000)
    p.set_namesrv_addr(namesrv)
    p.start()
    body = b"x" * size

    def msg():
        m = Message(topic)
        m.set_body(body)
        return m
    p.send_sync(msg())  # route, connection
    n, failed, start = 0, 0, time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        if p.send_sync(msg()).status == SendStatus.OK:
            n += 1
        else:
            failed += 1
    took = time.perf_counter() - start
    print(f"RATE {n / took:.1f} SENT {n} FAILED {failed}", flush=True)
    p.shutdown()


def raw_rr(address: str, seconds: float, size: int) -> None:
    host, port = address.rsplit(":", 1)
    s = socket.create_connection((host, int(port)))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    frame = (size + 200).to_bytes(4, "big") + b"\x00" * (size + 200)
    n, start = 0, time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        s.sendall(frame)
        head = s.recv(4, socket.MSG_WAITALL)
        s.recv(int.from_bytes(head, "big"), socket.MSG_WAITALL)
        n += 1
    print(f"RATE {n / (time.perf_counter() - start):.1f}", flush=True)


if __name__ == "__main__":
    what, *args = sys.argv[1:]
    if what == "cpp-send":
        cpp_send(args[0], args[1], float(args[2]), int(args[3]))
    else:
        raw_rr(args[0], float(args[1]), int(args[2]))
    sys.stdout.flush()
    os._exit(0)  # the C++ client's threads may linger
