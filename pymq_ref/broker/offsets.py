"""``ConsumerOffsetManager``: committed consume offsets, ``topic@group`` -> {queueId: offset},
persisted in ``config/consumerOffset.json`` (see the book's reference appendix, §Config files).

Offsets live in memory and reach the file only through :meth:`persist`, which the broker runs
every ``flushConsumerOffsetInterval`` (5 s, first after 10 s) on its scheduler and once at
shutdown — so after a crash consumers may re-read up to 5 s of messages (at-least-once), exactly
as with RocketMQ. The offset stored is the *next* offset to consume. Must not read the store.

Call order: construct → ``load()`` → ``commit_offset`` / ``query_offset`` … → ``persist()``.
"""

from __future__ import annotations

import threading

from pymq_ref.store.config_files import CONSUMER_OFFSET_JSON, OffsetTableFile

from .java_maps import chm_order

TOPIC_GROUP_SEPARATOR = "@"


class ConsumerOffsetManager:
    def __init__(self, root: str):
        self.file = OffsetTableFile(root, CONSUMER_OFFSET_JSON)
        self.offset_table: dict[str, dict[int, int]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(group: str, topic: str) -> str:
        return f"{topic}{TOPIC_GROUP_SEPARATOR}{group}"

    def load(self) -> bool:
        if not self.file.load():
            return False
        table = {}
        for key, queues in self.file.offset_table.items():
            table[str(key)] = {int(q): int(o) for q, o in (queues or {}).items()}
        with self._lock:
            self.offset_table = table
        return True

    def commit_offset(self, group: str, topic: str, queue_id: int, offset: int, client_host: str = "") -> None:
        """Store ``offset`` (RocketMQ accepts a smaller offset than the stored one; it only logs it)."""
        with self._lock:
            self.offset_table.setdefault(self.key(group, topic), {})[int(queue_id)] = int(offset)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or -1 when there is none."""
        with self._lock:
            return self.offset_table.get(self.key(group, topic), {}).get(int(queue_id), -1)

    def which_topic_by_consumer(self, group: str) -> set[str]:
        with self._lock:
            return {k.split(TOPIC_GROUP_SEPARATOR)[0] for k in self.offset_table
                    if k.count(TOPIC_GROUP_SEPARATOR) == 1 and k.split(TOPIC_GROUP_SEPARATOR)[1] == group}

    def which_group_by_topic(self, topic: str) -> set[str]:
        """The groups with a committed offset on ``topic`` (``whichGroupByTopic``)."""
        with self._lock:
            return {k.split(TOPIC_GROUP_SEPARATOR)[1] for k in self.offset_table
                    if k.count(TOPIC_GROUP_SEPARATOR) == 1 and k.split(TOPIC_GROUP_SEPARATOR)[0] == topic}

    def remove_offset(self, group: str) -> None:
        """Forget every offset of ``group`` (``removeOffset``, DELETE_SUBSCRIPTIONGROUP with removeOffset)."""
        with self._lock:
            for key in [k for k in self.offset_table
                        if k.count(TOPIC_GROUP_SEPARATOR) == 1 and k.split(TOPIC_GROUP_SEPARATOR)[1] == group]:
                del self.offset_table[key]

    def encode_table(self) -> dict[str, dict[int, int]]:
        """The table in ``ConcurrentHashMap`` order (512 outer, 32 per queue map), as fastjson writes it."""
        with self._lock:
            return {k: {q: self.offset_table[k][q] for q in chm_order(self.offset_table[k], 32)}
                    for k in chm_order(self.offset_table, 512)}

    def persist(self) -> None:
        self.file.offset_table = self.encode_table()
        self.file.persist()
