"""The book's reference appendix (``book/reference.md``): generated from the package's tables,
committed up to date, complete, and the target of every citation in chapters and docstrings."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import nbformat

from pymq_ref.formats import schemas
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.headers import ALL_HEADERS

ROOT = Path(__file__).resolve().parent.parent
APPENDIX = ROOT / "book" / "reference.md"


@cache
def tool():
    spec = importlib.util.spec_from_file_location("pymq_reference_tool", ROOT / "tools" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def text() -> str:
    return APPENDIX.read_text(encoding="utf-8")


def labels() -> set[str]:
    return set(re.findall(r"^\(([\w-]+)\)=$", text(), re.M))


def headings() -> set[str]:
    return {h.strip() for h in re.findall(r"^#{1,4} (.+)$", text(), re.M)}


def test_the_committed_appendix_is_what_the_tool_writes():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "reference.py"), "--check"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr + "\nrun: python tools/reference.py"


def test_the_tool_is_deterministic():
    assert tool().render() == tool().render() == text()


def test_every_registered_layout_is_drawn():
    tool().RENDERED.clear()
    tool().render()
    schemas._load_all()
    assert set(schemas.SCHEMAS) <= tool().RENDERED


def test_every_code_and_header_class_is_listed():
    for c in RequestCode:
        assert f"| {int(c)} | `{c.name}` |" in text(), c.name
    for c in ResponseCode:
        assert f"| {int(c)} | `{c.name}` |" in text(), c.name
    for cls in ALL_HEADERS.values():
        assert f"ref-header-{cls.JAVA.lower()}" in labels(), cls.JAVA
        for f in cls.FIELDS:
            assert f"| `{f.name}` | `{f.attr}` | {f.jtype.name} |" in text(), (cls.JAVA, f.name)
    from pymq_ref.remoting.bodies import ALL_BODIES
    for name in ALL_BODIES:
        assert f"ref-body-{name.lower()}" in labels(), name


def test_labels_are_unique_and_every_link_into_the_appendix_resolves():
    found = re.findall(r"^\(([\w-]+)\)=$", text(), re.M)
    assert len(found) == len(set(found))
    targets = set()
    for md in sorted((ROOT / "book").glob("*.md")):
        targets.update(re.findall(r"\]\((ref-[\w-]+)\)", md.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                targets.update(re.findall(r"\]\((ref-[\w-]+)\)", cell.source))
    assert {"ref-commitlog-record", "ref-checkpoint", "ref-indexfile"} <= targets  # the chapters link here
    assert targets <= labels(), sorted(targets - labels())


def test_every_section_a_docstring_cites_exists():
    cited = set()
    pattern = re.compile(r"reference appendix,? \u00a7([A-Za-z_][\w ]*?\w)(?=\s*[).;,:]|$)")
    for path in sorted(list((ROOT / "pymq_ref").rglob("*.py")) + list((ROOT / "tools").rglob("*.py"))):
        flat = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", path.read_text(encoding="utf-8"))  # docstrings wrap lines
        cited.update(pattern.findall(flat))
    oracle_doc = re.findall(r"\u00a7([A-Za-z_][\w ]*?\w)(?=[),])", " ".join(
        (ROOT / "pymq_ref" / "oracle" / "__init__.py").read_text(encoding="utf-8").split()))
    cited.update(oracle_doc)
    assert "CommitLog record" in cited and "Store layout" in cited
    assert cited <= headings(), sorted(cited - headings())
