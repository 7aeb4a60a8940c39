"""What a user of ``pymq`` sees when a command fails in a way nobody planned for: one line.

:func:`run_command` runs one subcommand (whatever it is: ``main()`` calls it for every command,
so commands added later are covered too). The commands' own outcomes pass through: their exit
statuses, ``SystemExit`` (argparse's usage errors), and the errors :func:`pymq_ref.cli.main`
turns into one-line messages itself. Anything else is an *internal error* — a bug, or a failure
nobody anticipated: the full traceback goes to a file, stderr gets one line saying what failed,
where, and where the file is, and the exit status is :data:`INTERNAL_ERROR_STATUS` (70,
``EX_SOFTWARE`` in sysexits.h) — never 0 (success) or 1 (the data has findings). Ctrl-C is one
line too, status 130.

The file is ``pymq-internal-error-<time>-<pid>.txt`` in ``$PYMQ_ERROR_DIR`` or the system's
temporary directory; it holds the command line, the versions and the traceback. This module must
not import the commands it runs.
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import traceback
from typing import Callable

#: the exit status of an internal error (sysexits.h ``EX_SOFTWARE``)
INTERNAL_ERROR_STATUS = 70
#: the exit status after Ctrl-C (128 + SIGINT, as shells report it)
INTERRUPTED_STATUS = 130


def run_command(command: str | Callable[[], str], run: Callable[[], int], argv: list[str] | None = None) -> int:
    """``run()``'s exit status, or the status of an internal error (see the module docstring).
    ``command`` names the command in the message (a callable: asked once something failed)."""
    try:
        return run()
    except SystemExit:
        raise
    except KeyboardInterrupt:
        print(f"pymq {_name(command)}: interrupted", file=sys.stderr)
        return INTERRUPTED_STATUS
    except BaseException as exc:  # noqa: BLE001 - the whole point: nothing escapes as a traceback
        return report_internal_error(_name(command), exc, argv)


def _name(command) -> str:
    try:
        return command() if callable(command) else command
    except Exception:  # noqa: BLE001 - naming must not fail the report
        return "pymq"


def report_internal_error(command: str, exc: BaseException, argv: list[str] | None = None) -> int:
    """Write the traceback of ``exc`` to a file, print the one line, return the exit status."""
    where = _where(exc)
    what = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    what = " ".join(what.split())  # one line, whatever the message holds
    if len(what) > 300:
        what = what[:297] + "..."
    try:
        path = _write_report(command, exc, argv)
        tail = f"the full traceback is in {path}"
    except OSError as err:
        tail = f"the traceback could not be written ({err.strerror or err})"
    print(f"pymq {command}: internal error: {what}{where}; {tail} — please report it", file=sys.stderr)
    return INTERNAL_ERROR_STATUS


def _where(exc: BaseException) -> str:
    """`` (at pymq_ref/x.py:12 in f)``: the innermost frame of pymq_ref, else the innermost one."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    ours = [f for f in frames if f"{os.sep}pymq_ref{os.sep}" in f.filename]
    frame = (ours or frames)[-1]
    name = frame.filename
    marker = f"{os.sep}pymq_ref{os.sep}"
    if marker in name:
        name = "pymq_ref" + os.sep + name.split(marker, 1)[1]
    else:
        name = os.path.basename(name)
    return f" (at {name}:{frame.lineno} in {frame.name})"


def _write_report(command: str, exc: BaseException, argv: list[str] | None) -> str:
    from .. import __version__

    directory = os.environ.get("PYMQ_ERROR_DIR") or tempfile.gettempdir()
    os.makedirs(directory, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    fd, path = tempfile.mkstemp(prefix=f"pymq-internal-error-{stamp}-{os.getpid()}-", suffix=".txt", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(f"pymq {command}: internal error\n")
        f.write(f"command line: {' '.join(['pymq', *(argv if argv is not None else sys.argv[1:])])}\n")
        f.write(f"pymq-ref {__version__}, Python {sys.version.split()[0]}, {platform.platform()}\n\n")
        f.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return path
