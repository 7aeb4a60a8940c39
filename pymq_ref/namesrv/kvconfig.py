"""``KVConfigManager``: the name server's only persistent state — namespace -> key -> value,
kept in ``kvConfig.json`` (``namesrv/src/main/java/org/apache/rocketmq/namesrv/kvconfig/``).

The file is ``{"configTable":{"<namespace>":{"<key>":"<value>"}}}`` as fastjson writes it
(compact). It is rewritten after every put or delete, through the config-file routine of the store
(temporary file, previous content kept as ``.bak``), and loaded at start-up; a missing file is an
empty table, an unreadable one falls back to its ``.bak``. The namespace ``ORDER_TOPIC_CONFIG``
holds order-topic configurations (``topic -> "broker:queues;…"``), which the name server sends to
brokers and clients. Must not touch the route tables.
"""

from __future__ import annotations

import os

from pymq_ref.remoting.bodies import KVTable, encode_body
from pymq_ref.remoting.bodies.bean import encode_json, java_map_order
from pymq_ref.store.config_files import read_config_file, write_config_file

NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


def default_kv_config_path() -> str:
    """``NamesrvConfig.kvConfigPath``: ``~/namesrv/kvConfig.json``."""
    return os.path.join(os.path.expanduser("~"), "namesrv", "kvConfig.json")


class KVConfigManager:
    """Call order: construct -> ``load()`` -> puts / gets / deletes (each put/delete persists)."""

    def __init__(self, path: str | None):
        self.path = path
        self.config_table: dict[str, dict[str, str | None]] = {}

    def load(self) -> None:
        if not self.path:
            return
        data = read_config_file(self.path)
        table = data.get("configTable") if isinstance(data, dict) else None
        if isinstance(table, dict):
            for namespace, entries in table.items():
                if isinstance(entries, dict):
                    self.config_table[str(namespace)] = {str(k): (None if v is None else str(v))
                                                         for k, v in entries.items()}

    def persist(self) -> None:
        if not self.path:
            return
        table = {ns: {k: v for k, v in entries.items() if v is not None}
                 for ns, entries in self.config_table.items()}
        write_config_file(self.path, encode_json({"configTable": table}))

    def put(self, namespace: str, key: str, value: str | None) -> None:
        self.config_table.setdefault(namespace, {})[key] = value
        self.persist()

    def delete(self, namespace: str | None, key: str | None) -> None:
        entries = self.config_table.get(namespace)
        if entries is not None:
            entries.pop(key, None)
        self.persist()

    def get(self, namespace: str | None, key: str | None) -> str | None:
        return self.config_table.get(namespace, {}).get(key)

    def kv_list_body(self, namespace: str | None) -> bytes | None:
        """``getKVListByNamespace``: the namespace as a KVTable body, None if it does not exist."""
        entries = self.config_table.get(namespace)
        if entries is None:
            return None
        return encode_body(KVTable({k: v for k, v in entries.items()}))

    def namespaces(self) -> list[str]:
        return java_map_order(list(self.config_table))
