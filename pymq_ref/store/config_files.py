"""Config JSON files under ``{root}/config/`` (see the book's reference appendix, §Config files), written the way
RocketMQ does.

* :func:`write_config_file` — ``MixAll.string2File``: content → ``<file>.tmp``; previous content →
  ``<file>.bak``; rename tmp → file; each step synced (4.9.4 syncs nothing).
* :func:`read_config_file` — ``ConfigManager.load``: ``<file>``, falling back to ``<file>.bak``
  when the file is missing, empty or unparsable.
* :class:`ConfigFile` — a minimal manager base: ``encode()`` / ``decode(obj)`` / ``persist()`` /
  ``load()``; the broker services build topic, offset, subscription managers on top of it.
* :class:`TopicConfig`, :class:`DataVersion`, :class:`SubscriptionGroupConfig` — the beans, defined in
  :mod:`pymq_ref.formats.beans` (the wire uses them too) and re-exported here.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pymq_ref.formats import fastjson
from pymq_ref.formats.beans import (PERM_INHERIT, PERM_PRIORITY, PERM_READ, PERM_WRITE, DataVersion,  # noqa: F401
                                    SubscriptionGroupConfig, TopicConfig)
from pymq_ref.store import fileio

_log = logging.getLogger(__name__)

TOPICS_JSON = "topics.json"
CONSUMER_OFFSET_JSON = "consumerOffset.json"
DELAY_OFFSET_JSON = "delayOffset.json"
SUBSCRIPTION_GROUP_JSON = "subscriptionGroup.json"

def config_path(root: str, name: str) -> str:
    return os.path.join(root, "config", name)


def write_config_file(path: str, text: str) -> None:
    """``MixAll.string2File``, made durable: content → ``<file>.tmp`` (synced); the previous
    content → ``<file>.bak`` (synced); the tmp file renamed over the file; the directory synced.
    The same files as 4.9.4 leaves (file and ``.bak``), but a power loss at any moment leaves
    the old or the new content in the file and a complete ``.bak`` whenever the file is not the
    new one — 4.9.4 syncs nothing here and can leave both empty."""
    directory = os.path.dirname(path) or "."
    fileio.makedirs(directory)
    fs = fileio.current
    tmp, bak = path + ".tmp", path + ".bak"
    _write_synced(fs, tmp, text.encode("utf-8"))
    try:
        with open(path, "rb") as f:
            previous = f.read()
    except FileNotFoundError:
        previous = None
    if previous is not None:
        _write_synced(fs, bak, previous)
    fs.rename(tmp, path)
    fs.sync_dir(directory)


def _write_synced(fs, path: str, data: bytes) -> None:
    fd = fs.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view, offset = memoryview(data), 0
        while offset < len(view):
            offset += fs.pwrite(fd, view[offset:], offset, path)
        fs.sync(fd, path)
    finally:
        os.close(fd)


def read_config_file(path: str) -> Any | None:
    """Parse ``path`` (fastjson-tolerant); on a missing/empty/unparsable file try ``path.bak``.

    Returns None when neither yields data.
    """
    return read_config_file_from(path)[0]


def read_config_file_from(path: str) -> tuple[Any | None, str | None]:
    """:func:`read_config_file` and the file it read (``path``, ``path + ".bak"`` or None)."""
    for candidate in (path, path + ".bak"):
        try:
            with open(candidate, encoding="utf-8") as f:
                text = f.read()
        except (FileNotFoundError, UnicodeDecodeError):
            continue
        if not text:
            continue
        try:
            return fastjson.loads(text), candidate
        except ValueError:
            continue
    return None, None


class ConfigFile:
    """Base of the JSON config managers (``ConfigManager``).

    Subclasses implement :meth:`encode` (a fastjson-serialisable object) and :meth:`decode`.
    Call order: construct → ``load()`` → mutate … → ``persist()``.
    """

    file_name = ""

    def __init__(self, root: str):
        self.root = root

    @property
    def path(self) -> str:
        return config_path(self.root, self.file_name)

    def encode(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, obj: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def to_json_string(self) -> str:
        return fastjson.dumps(self.encode(), pretty=True)

    def persist(self) -> None:
        write_config_file(self.path, self.to_json_string())

    def load(self) -> bool:
        """True if a file (or its .bak) was read; False if neither exists (defaults kept).

        When the file is missing, empty or unparsable and its ``.bak`` is good — what a power
        loss can leave — the file is rebuilt from the ``.bak`` (one log line; 4.9.4 reads the
        ``.bak`` and leaves the file as it is until the next persist)."""
        obj, source = read_config_file_from(self.path)
        if obj is None:
            return False
        self.decode(obj)
        if source != self.path:
            with open(source, "rb") as f:
                fileio.write_atomically(self.path, f.read())
            _log.warning("power-loss repair: %s: missing, empty or unparsable: rebuilt from %s", self.path,
                         os.path.basename(source))
        return True


class TopicsFile(ConfigFile):
    """``topics.json``: ``{"dataVersion": …, "topicConfigTable": {name: TopicConfig}}``."""

    file_name = TOPICS_JSON

    def __init__(self, root: str):
        super().__init__(root)
        self.data_version = DataVersion()
        self.topic_config_table: dict[str, TopicConfig] = {}

    def encode(self):
        return {"dataVersion": self.data_version, "topicConfigTable": self.topic_config_table}

    def decode(self, obj) -> None:
        dv = obj.get("dataVersion") or {}
        self.data_version = DataVersion(int(dv.get("counter", 0)), int(dv.get("timestamp", 0)))
        self.topic_config_table = {k: TopicConfig.from_json(v) for k, v in (obj.get("topicConfigTable") or {}).items()}


class OffsetTableFile(ConfigFile):
    """``consumerOffset.json`` / ``delayOffset.json``: ``{"offsetTable": {...}}`` with int keys inside."""

    def __init__(self, root: str, file_name: str = CONSUMER_OFFSET_JSON):
        super().__init__(root)
        self.file_name = file_name
        self.offset_table: dict = {}

    def encode(self):
        return {"offsetTable": self.offset_table}

    def decode(self, obj) -> None:
        self.offset_table = dict(obj.get("offsetTable") or {})


class SubscriptionGroupFile(ConfigFile):
    file_name = SUBSCRIPTION_GROUP_JSON

    def __init__(self, root: str):
        super().__init__(root)
        self.data_version = DataVersion()
        self.subscription_group_table: dict[str, SubscriptionGroupConfig] = {}

    def encode(self):
        return {"dataVersion": self.data_version, "subscriptionGroupTable": self.subscription_group_table}

    def decode(self, obj) -> None:
        dv = obj.get("dataVersion") or {}
        self.data_version = DataVersion(int(dv.get("counter", 0)), int(dv.get("timestamp", 0)))
        self.subscription_group_table = {k: SubscriptionGroupConfig.from_json(v)
                                         for k, v in (obj.get("subscriptionGroupTable") or {}).items()}


__all__ = ["write_config_file", "read_config_file", "read_config_file_from", "ConfigFile", "TopicsFile", "OffsetTableFile",
           "SubscriptionGroupFile", "TopicConfig", "DataVersion", "SubscriptionGroupConfig", "config_path"]
