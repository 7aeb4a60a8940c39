"""What a power loss leaves in a store, and what RocketMQ 4.9.4 and pymq-ref do with it at their next start.

A file system keeps a file's *name* across a power loss, but its size and bytes only as far as
they were synced. RocketMQ 4.9.4 pre-allocates the next CommitLog segment and creates
ConsumeQueue and index files without syncing them; its config files are written without a sync
too (``MixAll.string2File``). After a power loss such files come back with 0 bytes (see
``tests/data/rocketmq-4.9.4-power-loss/``, recorded from the real 4.9.4 broker under LazyFS).

* :func:`leftover_problems` — the last files of a chain (CommitLog, a ConsumeQueue, a
  ConsumeQueueExt) shorter than a segment and holding only zeros: nothing in them was durable.
  4.9.4 refuses to start on the first it loads (``MappedFileQueue.doLoad`` logs
  :func:`rocketmq_refusal_line` and the broker exits with status 253); deleting them is the
  minimal safe fix; pymq-ref's store deletes them itself. Also: files left under a temporary
  ``.creating`` name (pymq-ref creates segments so), and the last index files with 0 bytes (4.9.4
  starts with those: it extends them with zeros and appends to an empty file).
* :func:`config_problems` — empty config files: 4.9.4 reads the ``.bak`` copy if it holds
  something, else starts without what the file held (topics, consumer offsets ...).

Only ``os.stat`` and reads: nothing here writes, and nothing is repaired — a finding says what
to do. Findings are :class:`~pymq_ref.tools.store_layout.Problem` items with a ``fix``.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ..store.fileio import CREATING_SUFFIX, is_all_zero
from .store_layout import Problem, Segment

#: ``MappedFileQueue.doLoad`` (4.9.4) logs this (at WARN, in store.log) and returns false
REFUSAL = "length not matched message store config value, please check it manually"
#: ``BrokerStartup``: ``System.exit(-3)`` when the controller does not initialise
REFUSAL_EXIT_STATUS = 253

#: what 4.9.4 loses when a config file and its .bak are both empty (``ConfigManager.loadBak``)
CONFIG_LOSS = {
    "topics.json": "it starts without the topics created on this broker (producers and consumers get \"topic not "
                   "exist\" until each is created again, e.g. mqadmin updateTopic with the same queue counts; the "
                   "messages are still in the CommitLog and ConsumeQueues and are served again then)",
    "consumerOffset.json": "it starts without the consumer groups' offsets (each group starts again where its "
                           "consumeFromWhere says: messages are consumed again or skipped)",
    "delayOffset.json": "it starts without the delay-level progress (delayed messages still in "
                        "SCHEDULE_TOPIC_XXXX are delivered again from the start of each level)",
    "subscriptionGroup.json": "it starts without the subscription groups created on this broker (their retry "
                              "settings are back to the defaults until they are created again)",
    "consumerFilter.json": "it starts without the SQL92/class filters registered by consumers (they register "
                           "them again when they reconnect)",
}


def rocketmq_refusal_line(path: str | os.PathLike, size: int) -> str:
    """The line 4.9.4 logs for a file of the wrong size (``file + "\\t" + length + " " + REFUSAL``)."""
    return f"{path}\t{size} {REFUSAL}"


def power_loss_tail(segments: list[Segment], file_size: int) -> list[Segment]:
    """The last segments of a chain shorter than ``file_size`` that hold only zeros, with no
    full-sized segment after them (the rule the store's loader applies). With ``file_size`` 0
    (unknown: no file of the kind has any byte), the empty last files."""
    tail: list[Segment] = []
    for seg in reversed(segments):
        if (seg.size >= file_size if file_size else seg.size > 0) or not is_all_zero(seg.path):
            break
        tail.append(seg)
    return tail[::-1]


def _rm(paths: list[Path]) -> str:
    return "rm -- " + " ".join(shlex.quote(str(p)) for p in paths)


def leftover_problems(root: Path, segments: list[Segment], file_size: int, what: str) -> list[Problem]:
    """Findings for the power-loss tail of one chain (see the module docstring)."""
    out = []
    for seg in power_loss_tail(segments, file_size):
        line = rocketmq_refusal_line(root / seg.rel, seg.size)
        out.append(Problem(
            "power_loss_leftover", seg.rel, None,
            f"{what} segment of {seg.size} bytes instead of {file_size or 'a full segment'}, holding nothing: "
            f"created but never synced "
            f"before a power loss (no durable byte is lost with it). RocketMQ 4.9.4 refuses to start on it (exit "
            f"status {REFUSAL_EXIT_STATUS}), logging in store.log: {line!r}; minimal safe fix: delete it. "
            f"pymq-ref's store deletes it by itself at its next start",
            "warning", fix=_rm([root / seg.rel])))
    return out


def creating_problems(root: Path, paths: list[Path]) -> list[Problem]:
    """Findings for files left under pymq-ref's temporary ``.creating`` name."""
    out = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        out.append(Problem(
            "power_loss_leftover", rel, None,
            f"a file whose creation a crash cut short ({path.stat().st_size} bytes, under its temporary name): pymq-ref "
            f"deletes it at its next start; RocketMQ 4.9.4 would refuse to start on it (a name that is not an "
            f"offset); minimal safe fix: delete it", "warning", fix=_rm([path])))
    return out


def index_tail(index_files: list[Segment]) -> list[Segment]:
    """The last index files shorter than an index header that hold only zeros (0 bytes after a power loss)."""
    tail: list[Segment] = []
    sizes = [s.size for s in index_files if s.size > 0]
    full = max(sizes, default=0)
    for seg in reversed(index_files):
        if (full and seg.size >= full) or not is_all_zero(seg.path):
            break
        tail.append(seg)
    return tail[::-1]


def index_problems(root: Path, tail: list[Segment]) -> list[Problem]:
    out = []
    for seg in tail:
        out.append(Problem(
            "power_loss_index_file", seg.rel, None,
            f"index file of {seg.size} bytes, holding nothing: created but never synced before a power loss. RocketMQ "
            f"4.9.4 starts with it (mapping it extends it with zeros) and goes on writing entries into it; pymq-ref "
            f"deletes it at its next start and rebuilds the entries from the CommitLog; it can be deleted safely",
            "warning", fix=_rm([root / seg.rel])))
    return out


def config_problems(root: Path, path: Path, text: str) -> list[Problem]:
    """Findings for an empty config file (``text`` is its content)."""
    if text.strip():
        return []
    rel = path.relative_to(root).as_posix()
    bak = path.with_name(path.name + ".bak")
    bak_text = bak.read_text(encoding="utf-8", errors="replace") if bak.is_file() else ""
    if bak_text.strip():
        return [Problem("power_loss_config", rel, None,
                        f"empty config file (written but never synced before a power loss?): RocketMQ 4.9.4 reads "
                        f"{bak.name} instead; pymq-ref rebuilds the file from it at its next start", "warning")]
    loss = CONFIG_LOSS.get(path.name, "it starts without what the file held")
    where = f"and {bak.name} is empty too" if bak.is_file() else f"and there is no {bak.name}"
    return [Problem("power_loss_config", rel, None,
                    f"empty config file {where} (4.9.4 writes config files without syncing them, so a power loss "
                    f"leaves them empty): RocketMQ 4.9.4 starts, but {loss}", "warning")]


def creating_files(directory: Path) -> list[Path]:
    """Files named ``*.creating`` directly in ``directory``."""
    if not directory.is_dir():
        return []
    return [directory / n for n in sorted(os.listdir(directory)) if n.endswith(CREATING_SUFFIX)]
