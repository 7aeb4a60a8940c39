"""No citation of the design-time spec files, which are not in the repository.

A reader must be able to follow every reference: chapters and docstrings cite the book's
reference appendix (``book/reference.md``), a chapter, or a path in the RocketMQ source tree.
This test fails when a citation such as "the storage spec, section 9.2" written the old way
(file name + section sign + number) comes back anywhere a reader looks.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("pymq_ref", "notebooks", "book", "tools", "bench", "tests", "corpus")
TOP_FILES = ("README.md", "_config.yml", "_toc.yml", "Makefile")
SUFFIXES = {".py", ".md", ".ipynb", ".yml", ".yaml", ".txt", ".cfg", ".toml", ".sh", ".json", ".html", ".css"}
SKIP_DIRS = {"_vendor", "__pycache__", ".ipynb_checkpoints"}

_SPEC_FILES = "storage|remoting|vectors|delay|retry|transaction|client|namesrv|TOOLCHAIN|DESIGN"
PATTERNS = [
    re.compile(r"\b(?:" + _SPEC_FILES + r")\.md\b"),          # a spec file by name
    re.compile(r"\bshared/spec\b|\bspec/[a-z_]+\.md"),           # the spec directory
    re.compile("\u00a7" + r"\s*\d"),                               # a numbered section sign: "§9.2"
    re.compile(r"\bvectors?\s+" + "\u00a7"),                      # "vector §6"
]


def _files():
    for top in TOP_FILES:
        if (ROOT / top).is_file():
            yield ROOT / top
    for name in SCANNED:
        for path in sorted((ROOT / name).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if not path.is_file() or path.suffix not in SUFFIXES or SKIP_DIRS.intersection(parts):
                continue
            if "data" in parts and path.name != "README.md":  # recorded answers: only their READMEs are prose
                continue
            yield path


def spec_citations() -> list[str]:
    """``path:line: text`` for every line that cites a spec file."""
    found = []
    me = Path(__file__).resolve()
    for path in _files():
        if path.resolve() == me:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if any(p.search(line) for p in PATTERNS):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:160]}")
    return found


def test_patterns_catch_the_old_style():
    old = ["(storage.md \u00a79.2)", "see ``shared/spec/vectors.md``", "(\u00a711.3)", "vector \u00a76", "delay.md"]
    assert all(any(p.search(s) for p in PATTERNS) for s in old)
    new = ["see the book's reference appendix, \u00a7CommitLog record", "[IndexFile](ref-indexfile)",
           "store/src/main/java/org/apache/rocketmq/store/CommitLog.java", "README.md"]
    assert not any(p.search(s) for s in new for p in PATTERNS)


def test_no_spec_file_is_cited():
    found = spec_citations()
    assert not found, "cite the reference appendix or the RocketMQ source instead:\n" + "\n".join(found)
