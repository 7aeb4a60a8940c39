"""Notebook maintenance for pymq-ref: re-execute chapters in place, strip volatile metadata.

    python tools/nbtool.py execute [NOTEBOOK ...]   # default: notebooks/*.ipynb
    python tools/nbtool.py clean   [NOTEBOOK ...]   # only strip, no execution
    python tools/nbtool.py check   [NOTEBOOK ...]   # exit 1 if `clean` would change a file

`execute` runs each notebook top to bottom in its own folder (like JupyterLab, nbval and
the book build), so the committed outputs are the ones the current code produces, then
cleans it. `make notebooks` calls it.

Cleaning keeps every output but removes what churns on every run without telling a reader
anything:
  * notebook metadata `widgets` (the saved ipywidgets state; the book build re-creates it);
  * `application/vnd.jupyter.widget-view+json` outputs, whose model ids are random per
    run — the `text/plain` repr next to them stays;
  * per-cell execution timing metadata (`execution`, `ExecuteTime`) and `collapsed`/`scrolled`
    view state;
  * the kernel's patch version in `language_info.version`;
  * a default `text/plain` repr with a memory address (`<graphviz.graphs.Digraph at 0x7f…>`)
    when a richer representation (SVG, HTML, PNG) of the same output is present — readers
    never see it, and the address changes on every run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import re

import nbformat

ROOT = Path(__file__).resolve().parent.parent
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
VOLATILE_CELL_METADATA = ("execution", "ExecuteTime", "collapsed", "scrolled")
DEFAULT_REPR = re.compile(r"^<[\w.]+( object)? at 0x[0-9a-fA-F]+>$")


def clean(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.metadata.pop("widgets", None)
    lang = nb.metadata.get("language_info")
    if lang and "version" in lang:
        lang.pop("version")
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            continue
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data is not None and WIDGET_VIEW in data:
                data.pop(WIDGET_VIEW)
                if not data:
                    continue
            if data is not None and len(data) > 1 and "text/plain" in data:
                text = data["text/plain"]
                text = "".join(text) if isinstance(text, list) else text
                if DEFAULT_REPR.match(text.strip()):
                    data.pop("text/plain")
            kept.append(out)
        cell.outputs = kept
    return nb


def dumps(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def execute(path: Path, timeout: int) -> nbformat.NotebookNode:
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
        allow_errors=False,
    )
    client.execute()
    return nb


def targets(args: list[str]) -> list[Path]:
    if args:
        return [Path(a).resolve() for a in args]
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["execute", "clean", "check"])
    p.add_argument("notebooks", nargs="*")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    a = p.parse_args(argv)

    paths = targets(a.notebooks)
    if not paths:
        print("nbtool: no notebooks found", file=sys.stderr)
        return 0
    dirty = []
    for path in paths:
        before = path.read_text(encoding="utf-8")
        if a.command == "execute":
            t0 = time.monotonic()
            print(f"nbtool: executing {path.relative_to(ROOT)} ...", flush=True)
            nb = execute(path, a.timeout)
            print(f"nbtool:   done in {time.monotonic() - t0:.1f} s", flush=True)
        else:
            nb = nbformat.reads(before, as_version=4)
        after = dumps(clean(nb))
        if after == before:
            continue
        if a.command == "check":
            dirty.append(path)
        else:
            path.write_text(after, encoding="utf-8")
            print(f"nbtool: wrote {path.relative_to(ROOT)}")
    for path in dirty:
        print(f"nbtool: {path.relative_to(ROOT)} has volatile metadata; run `make notebooks` "
              "or `python tools/nbtool.py clean`", file=sys.stderr)
    return 1 if dirty else 0


if __name__ == "__main__":
    sys.exit(main())
