"""Production-sized stores for the read-only tools' tests (not a test module).

* :func:`build_many_files_store` — more than 2,000 CommitLog segments and 300 index files (small
  files, as a real broker with 1 GiB segments has at a few hundred GiB): what made the doctor
  close a map under a view still reading it.
* :func:`build_default_sizes_store` — RocketMQ's default sizes (1 GiB CommitLog segments, 6 MB
  ConsumeQueue files, index files of 5,000,000 slots and 20,000,000 entries, ~420 MB): sparse
  files, real records at their start.

Both are written by the real ``MessageStore`` (``pymq fill``), reproducibly (fixed seed and
clock). Their durability is not what these tests are about, so they are built with the file
system's syncs skipped (:class:`NoSync`), which takes the build from ~15 s to ~3 s.
"""

from __future__ import annotations

from pathlib import Path

from pymq_ref.store import fileio
from pymq_ref.tools.fill import FillOptions, fill_store

MANY = dict(count=16_000, body_size=100, queues=4, commitlog_file_size=2048, cq_file_size=20 * 200, hash_slots=10,
            index_num=100)
DEFAULT_SIZES = dict(count=3_000, body_size=200, queues=4)


class NoSync(fileio.FileSystem):
    """The OS without ``fsync``/``fdatasync``: for scratch stores whose durability is not under test."""

    def sync(self, fd, path):
        pass

    def sync_dir(self, path):
        pass


def _fill(root: Path, **kw) -> dict:
    options = FillOptions(topic="BigTopic", keys=("k-{i}",), seed=7, start_time=1_700_000_000_000, tags="TagA,TagB",
                          **kw)
    with fileio.install(NoSync()):
        summary = fill_store(str(root), options)
    return {"messages": summary.messages, "end_offset": summary.end_offset, "topic": "BigTopic",
            "commitlog_files": len(list((root / "commitlog").iterdir())),
            "index_files": len(list((root / "index").iterdir())),
            "bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file()),
            "allocated": sum(p.stat().st_blocks * 512 for p in root.rglob("*") if p.is_file())}


def build_many_files_store(root: Path) -> dict:
    return _fill(root, **MANY)


def build_default_sizes_store(root: Path) -> dict:
    return _fill(root, **DEFAULT_SIZES)


# -- fixtures (``pytest_plugins = ["big_stores"]``) ----------------------------------------------
import pytest  # noqa: E402


@pytest.fixture(scope="session")
def many_files_store(tmp_path_factory):
    """``(root, facts)`` of :func:`build_many_files_store`, built once per test run."""
    root = tmp_path_factory.mktemp("big-many") / "store"
    return root, build_many_files_store(root)


@pytest.fixture(scope="session")
def default_sizes_store(tmp_path_factory):
    """``(root, facts)`` of :func:`build_default_sizes_store`, built once per test run."""
    root = tmp_path_factory.mktemp("big-default") / "store"
    return root, build_default_sizes_store(root)
