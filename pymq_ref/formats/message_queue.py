"""``MessageQueue``: the (topic, brokerName, queueId) triple that names one queue in a cluster.

RocketMQ's clients, name-server route data and admin bodies all speak of queues this way
(``common/src/main/java/org/apache/rocketmq/common/message/MessageQueue.java``):

* identity is the three fields together (``equals``/``hashCode``);
* order (``compareTo``) is topic, then broker name — both by Java ``String.compareTo``, which
  compares UTF-16 code units — then queue id ascending; rebalancing sorts by it;
* ``toString()`` is ``MessageQueue [topic=T, brokerName=B, queueId=Q]``, the key the
  consistent-hash allocation hashes;
* its JSON form (fastjson, members alphabetical) is
  ``{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}``.

Pure value type; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass


def java_string_key(s: str) -> bytes:
    """A sort key that orders strings as Java's ``String.compareTo`` does (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


@dataclass(frozen=True, slots=True)
class MessageQueue:
    topic: str
    broker_name: str
    queue_id: int

    def sort_key(self) -> tuple[bytes, bytes, int]:
        return java_string_key(self.topic), java_string_key(self.broker_name), self.queue_id

    def __lt__(self, other: "MessageQueue") -> bool:
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"

    def to_json(self) -> dict:
        """The fastjson member order: brokerName, queueId, topic."""
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_json(cls, obj: dict) -> "MessageQueue":
        """From a decoded JSON object; missing members take Java's defaults (null, 0)."""
        return cls(obj.get("topic"), obj.get("brokerName"), int(obj.get("queueId") or 0))
