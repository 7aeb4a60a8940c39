"""The ``pymq`` command: argument parsing only; each subcommand lives in :mod:`pymq_ref.tools`.

Exit status: 0 success, 1 the data has findings, 2 usage errors or unreadable input.
"""

from __future__ import annotations

import argparse
import sys

from . import __version__


def _offset(text: str) -> int:
    """An offset in decimal or 0x-hex."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a decimal or 0x-hex offset, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative offset, got {value}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative count, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pymq", description="pymq-ref: inspect and test Apache RocketMQ 4.9.4 store files.")
    parser.add_argument("--version", action="version", version=f"pymq-ref {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    inspect = commands.add_parser(
        "inspect", help="decode a store file or summarise a store directory, read-only",
        description="Decode a store file (ours or a real RocketMQ broker's) without modifying it: a CommitLog "
                    "segment, a ConsumeQueue file, an IndexFile, the checkpoint or a config JSON file; or "
                    "summarise a whole store directory (topics, queues, offsets, files). The kind is recognised "
                    "from the path (commitlog/, consumequeue/T/Q/, index/, checkpoint, config/*.json). "
                    "Segment files are named by their 20-digit start offset, which gives absolute offsets; any "
                    "segment size works. Exit 0 when everything is valid, 1 when something fails validation "
                    "(the walk stops there) or a body CRC mismatches, 2 when the path cannot be read.")
    inspect.add_argument("path", metavar="PATH",
                         help="a store file (e.g. store/commitlog/00000000000000000000) or a store directory")
    inspect.add_argument("--kind", choices=("commitlog", "consumequeue", "index", "checkpoint", "config"),
                         help="the file kind, when it cannot be told from the path")
    inspect.add_argument("--hash-slots", type=_count, metavar="N",
                         help="IndexFile maxHashSlotNum (default: inferred from the file size, 5000000 for RocketMQ's default)")
    inspect.add_argument("--index-num", type=_count, metavar="N",
                         help="IndexFile maxIndexNum (default: inferred from the file size, 20000000 for RocketMQ's default)")
    inspect.add_argument("--format", choices=("text", "html", "json", "jsonl"), default="text",
                         help="text: hex view and field table per record (default); html: the same as a web page; "
                              "json: one document; jsonl: one object per record")
    inspect.add_argument("--at", type=_offset, metavar="OFFSET",
                         help="CommitLog/ConsumeQueue: start at this absolute offset (file base + position)")
    inspect.add_argument("--limit", type=_count, metavar="N", help="stop after N records (units, entries)")
    inspect.set_defaults(run=_run_inspect)
    return parser


def _run_inspect(args) -> int:
    from .tools.inspect import InspectOptions, inspect_path

    return inspect_path(args.path, InspectOptions(format=args.format, at=args.at, limit=args.limit, kind=args.kind,
                                                  hash_slots=args.hash_slots, index_num=args.index_num))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:  # e.g. `pymq inspect ... | head`
        sys.stderr.close()
        return 0
    except Exception as exc:  # typed, user-facing errors of the tools
        from .errors import PymqError
        from .tools.inspect import InspectError

        if isinstance(exc, (InspectError, PymqError, OSError)):
            print(f"pymq {args.command}: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
