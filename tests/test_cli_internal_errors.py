"""No traceback reaches a user: an unexpected exception in any ``pymq`` command prints one line
(what failed, where, and the file holding the traceback) and exits with status 70, never 0 or 1.

Each command is driven into an internal error from inside its real code (a function it calls
raises), and every subcommand the parser knows — including ones added later — is checked by
making its entry point raise.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from pymq_ref import cli
from pymq_ref.tools.internal_error import INTERNAL_ERROR_STATUS

REAL_STORE = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"


class Boom(RuntimeError):
    pass


def _boom(*_a, **_k):
    raise Boom("injected failure: the unforeseen happened")


def _check(capsys, tmp_path, status: int, command: str) -> str:
    err = capsys.readouterr().err
    assert status == INTERNAL_ERROR_STATUS, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # one line, no traceback
    line = lines[0]
    assert line.startswith(f"pymq {command}: internal error: Boom: injected failure"), line
    assert "Traceback" not in err
    path = Path(re.search(r"the full traceback is in (\S+)", line).group(1))
    assert path.parent == tmp_path / "errors"
    text = path.read_text()
    assert "Traceback (most recent call last)" in text and "Boom: injected failure" in text
    return line


@pytest.fixture
def errors_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PYMQ_ERROR_DIR", str(tmp_path / "errors"))
    return tmp_path / "errors"


@pytest.mark.parametrize("command, argv, target", [
    ("inspect", ["inspect", str(REAL_STORE / "commitlog" / "00000000000000000000")],
     "pymq_ref.tools.segments.decode_record"),
    ("inspect", ["inspect", str(REAL_STORE)], "pymq_ref.tools.store_summary.consume_queue_summary"),
    ("doctor", ["doctor", str(REAL_STORE), "--quiet"], "pymq_ref.tools.doctor.units_match"),
    ("query", ["query", str(REAL_STORE), "--topic", "TopicTest", "--key", "k"],
     "pymq_ref.store.index.IndexFile.select_phy_offset"),
    ("fill", ["fill", "STORE", "--topic", "T", "--count", "3", "--quiet"],
     "pymq_ref.store.message_store.MessageStore.put_message"),
    ("spark verify", ["spark", "verify", str(REAL_STORE), "--quiet"], "pymq_ref.spark.files.commitlog_files"),
    ("spark analyze", ["spark", "analyze", str(REAL_STORE), "traffic", "--quiet"],
     "pymq_ref.spark.files.commitlog_files"),
    ("spark export", ["spark", "export", str(REAL_STORE), "--out", "OUT", "--quiet"],
     "pymq_ref.spark.files.commitlog_files"),
])
def test_each_command_reports_an_internal_error_in_one_line(command, argv, target, tmp_path, errors_dir, capsys,
                                                           monkeypatch):
    monkeypatch.setattr(target, _boom)
    argv = [str(tmp_path / a) if a in ("STORE", "OUT") else a for a in argv]
    line = _check(capsys, tmp_path, cli.main(argv), command)
    assert "(at pymq_ref" in line  # where it failed: the innermost pymq_ref frame


def _leaf_parsers(parser: argparse.ArgumentParser, path=()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaf_parsers(sub, path + (name,))


def _dummy_argv(parser: argparse.ArgumentParser) -> list[str]:
    """Values for the required arguments that the argument types accept."""
    out, tail = [], []
    for action in parser._actions:
        if not (action.required or (not action.option_strings and action.nargs != "?")) or \
                isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        value = None
        for candidate in ([str(c) for c in action.choices] if action.choices else []) + ["1", "x", "127.0.0.1:1"]:
            try:
                (action.type or str)(candidate)
            except Exception:
                continue
            value = candidate
            break
        assert value is not None, action
        (tail if not action.option_strings else out).extend(
            ([action.option_strings[0]] if action.option_strings else []) + [value])
    return tail + out


def test_every_subcommand_is_covered(errors_dir, tmp_path, capsys, monkeypatch):
    """Every leaf subcommand of the parser (also those added after this test was written)."""
    real_build = cli.build_parser
    leaves = list(_leaf_parsers(real_build()))
    assert {p for p, _ in leaves} >= {("inspect",), ("doctor",), ("query",), ("fill",), ("spark", "verify"),
                                      ("spark", "analyze"), ("spark", "export")}
    for path, _ in leaves:
        def build():
            parser = real_build()
            leaf = dict(_leaf_parsers(parser))[path]
            leaf.set_defaults(run=_boom)
            return parser

        monkeypatch.setattr(cli, "build_parser", build)
        leaf = dict(_leaf_parsers(build()))[path]
        status = cli.main([*path, *_dummy_argv(leaf)])
        _check(capsys, tmp_path, status, " ".join(path))


def test_expected_outcomes_keep_their_status(errors_dir, tmp_path, capsys):
    assert cli.main(["doctor", str(tmp_path / "missing")]) == 2  # a typed error: one line, status 2
    assert capsys.readouterr().err.startswith("pymq doctor: error:")
    with pytest.raises(SystemExit) as e:  # argparse's usage errors stay as they are
        cli.main(["doctor"])
    assert e.value.code == 2
    assert not errors_dir.exists()
