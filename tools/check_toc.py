"""Check that _toc.yml and the files on disk agree.

Fails (exit 1) when a file listed in _toc.yml does not exist, or when a notebook in
notebooks/ is not listed (with only_build_toc_files it would silently not be built).
Run by `make book` before the build. Standard library only (PyYAML is not needed:
we only read the `file:`/`root:` lines).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".md", ".ipynb")


def toc_entries(toc: Path) -> list[str]:
    entries = []
    for line in toc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\s*(?:-\s*)?(?:file|root):\s*(\S+)\s*$", line)
        if m:
            entries.append(m.group(1))
    return entries


def main() -> int:
    problems = []
    listed = set()
    for entry in toc_entries(ROOT / "_toc.yml"):
        matches = [ROOT / (entry + s) for s in SUFFIXES if (ROOT / (entry + s)).is_file()]
        if not matches:
            problems.append(f"_toc.yml lists {entry!r} but no {entry}.md / {entry}.ipynb exists")
        listed.update(p.resolve() for p in matches)
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        if nb.resolve() not in listed:
            problems.append(f"{nb.relative_to(ROOT)} is not listed in _toc.yml (it would not be built)")
    for p in problems:
        print(f"check_toc: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
