"""Run by ``tests/test_broker_wire_reliability.py`` in a child process: the official C++ client
(PyPI ``rocketmq==0.4.4``) sync-sends to TOPIC through NAMESRV until it is stopped, printing one
line per acknowledged message: ``key`` (the message's key and body) and the queue offset the
broker answered. ``python cpp_kill_producer.py NAMESRV TOPIC``."""

from __future__ import annotations

import sys

from rocketmq.client import Message, Producer, SendStatus


def main(namesrv: str, topic: str) -> None:
    producer = Producer("CppKillProducer", timeout=3000)
    producer.set_namesrv_addr(namesrv)
    producer.start()
    print("started", flush=True)
    i = 0
    while True:
        key = f"cpp-{i}"
        m = Message(topic)
        m.set_keys(key)
        m.set_body((key + " ") * 20)
        try:
            r = producer.send_sync(m)
        except Exception as e:  # the broker is gone
            print(f"error {type(e).__name__}", flush=True)
            break
        if r.status == SendStatus.OK:
            print(f"acked {key} {r.offset}", flush=True)
        i += 1
    producer.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
