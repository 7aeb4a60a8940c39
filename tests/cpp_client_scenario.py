"""Run by tests in a child process (the C++ client has its own threads and logs): the official
RocketMQ C++ client behind PyPI ``rocketmq==0.4.4`` against a name server.

    python cpp_client_scenario.py NAMESRV TOPIC N
      sync-sends N messages (keys k0..), one oneway, a batch of 3 (stored as one message: see below);
      a push consumer receives them;
      a pull consumer reads every queue from offset 0. Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from rocketmq.client import Message, Producer, PullConsumer, PushConsumer, SendStatus


def message(topic: str, key: str, body: bytes, tag: str = "TagA") -> Message:
    m = Message(topic)
    m.set_keys(key)
    m.set_tags(tag)
    m.set_body(body)
    return m


def main(namesrv: str, topic: str, n: int) -> dict:
    out: dict = {"sent": [], "sent_status": []}
    producer = Producer(f"PG_{topic}", timeout=10_000)
    producer.set_namesrv_addr(namesrv)
    producer.start()
    try:
        for i in range(n):
            r = producer.send_sync(message(topic, f"k{i}", f"cpp {i}".encode()))
            out["sent_status"].append(int(r.status))
            out["sent"].append(f"k{i}")
        producer.send_oneway(message(topic, "oneway", b"cpp oneway"))
        out["sent"].append("oneway")
        batch = [message(topic, f"b{i}", f"cpp batch {i}".encode()) for i in range(3)]
        r = producer.send_batch(batch)
        out["batch_status"] = int(r.status)
        # rocketmq-client-cpp 2.0 sends a batch as SEND_MESSAGE with batch=1, which 4.9.4 reads as false
        # (Boolean.parseBoolean): the batch body is stored as one message without keys
        out["sent"].append("")
    finally:
        producer.shutdown()

    got, lock, done = {}, threading.Lock(), threading.Event()

    def on_message(msg):
        with lock:
            got[msg.keys.decode() if isinstance(msg.keys, bytes) else msg.keys] = msg.body
            if set(out["sent"]) <= set(got):
                done.set()

    push = PushConsumer(f"CG_{topic}")
    push.set_namesrv_addr(namesrv)
    push.subscribe(topic, on_message)
    push.start()
    try:
        out["push_done"] = done.wait(60)
    finally:
        push.shutdown()
    out["pushed"] = sorted(got)

    pull = PullConsumer(f"CGPULL_{topic}")
    pull.set_namesrv_addr(namesrv)
    pull.start()
    pulled = []
    try:
        deadline = time.time() + 30
        while time.time() < deadline and len(pulled) < len(out["sent"]):
            for msg in pull.pull(topic):
                pulled.append(msg.keys.decode() if isinstance(msg.keys, bytes) else msg.keys)
    finally:
        pull.shutdown()
    out["pulled"] = sorted(pulled)
    out["ok_status"] = int(SendStatus.OK)
    return out


if __name__ == "__main__":
    result = main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
    print(json.dumps(result), flush=True)
    os._exit(0)  # the C++ client's threads may linger after shutdown
