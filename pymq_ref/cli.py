"""The ``pymq`` command: argument parsing only; each subcommand lives in :mod:`pymq_ref.tools`.

Exit status: 0 success, 1 the data has findings, 2 usage errors or unreadable input, 70 an
internal error (one line on stderr, the traceback in a file: :mod:`pymq_ref.tools.internal_error`,
which wraps every subcommand), 130 interrupted.
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
        prog="pymq", description="pymq-ref: inspect and test Apache RocketMQ 4.9.4 store files, and run its "
                                 "name server and a recording relay on the wire.")
    parser.add_argument("--version", action="version", version=f"pymq-ref {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    inspect = commands.add_parser(
        "inspect", help="decode a store file or summarise a store directory, read-only",
        description="Decode a store file (ours or a real RocketMQ broker's) without modifying it: a CommitLog "
                    "segment, a ConsumeQueue file, an IndexFile, the checkpoint or a config JSON file; or "
                    "summarise a whole store directory (topics, queues, offsets, files). The kind is recognised "
                    "from the path (commitlog/, consumequeue/T/Q/, consumequeue_ext/T/Q/, index/, checkpoint, config/*.json). "
                    "Segment files are named by their 20-digit start offset, which gives absolute offsets; any "
                    "segment size works. Exit 0 when everything is valid, 1 when something fails validation "
                    "(the walk stops there) or a body CRC mismatches, 2 when the path cannot be read.")
    inspect.add_argument("path", metavar="PATH",
                         help="a store file (e.g. store/commitlog/00000000000000000000) or a store directory")
    inspect.add_argument("--kind", choices=("commitlog", "consumequeue", "consumequeue_ext", "index", "checkpoint",
                                            "config"),
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
    _add_doctor(commands)
    _add_query(commands)
    _add_fill(commands)
    from .remoting.cli import add_wire_subcommands

    add_wire_subcommands(commands)
    from .broker.server.cli import add_broker_subcommands

    add_broker_subcommands(commands)
    from .oracle.conformance.cli import add_conformance_subcommand

    add_conformance_subcommand(commands)
    from .spark.cli import add_spark_subcommand  # imports pyspark only when a spark command runs

    add_spark_subcommand(commands)
    from .client.cli import add_client_subcommands

    add_client_subcommands(commands)
    return parser


def _positive(text: str) -> int:
    value = _count(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _add_geometry(p, *, cl: bool = True, cq: bool = True) -> None:
    if cl:
        p.add_argument("--commitlog-file-size", type=_positive, metavar="BYTES",
                       help="mappedFileSizeCommitLog (default: the size the store's segments have)")
    if cq:
        p.add_argument("--cq-file-size", type=_positive, metavar="BYTES",
                       help="mappedFileSizeConsumeQueue (default: the size the store's ConsumeQueue files have)")
    p.add_argument("--hash-slots", type=_positive, metavar="N",
                   help="IndexFile maxHashSlotNum (default: inferred from the index files)")
    p.add_argument("--index-num", type=_positive, metavar="N",
                   help="IndexFile maxIndexNum (default: inferred from the index files)")


def _add_doctor(commands) -> None:
    doctor = commands.add_parser(
        "doctor", help="check a whole store for consistency, read-only",
        description="Check every file of a store directory (ours or a real RocketMQ broker's) without modifying "
                    "it: every CommitLog record (magic, sizes, body CRC, blanks, PHYSICALOFFSET, stray bytes after "
                    "the data), every ConsumeQueue unit and IndexFile entry against the record the dispatcher "
                    "derives them from (missing, different or dangling units and entries, index chains), the "
                    "checkpoint, config files, and the layout (unknown files, wrong sizes, bad names, gaps). "
                    "Exit 0 when clean, 1 with findings (each with file, offset and reason), 2 when the store "
                    "cannot be read. Never writes, never takes the store lock.")
    doctor.add_argument("store", metavar="STORE_DIR", help="the store root (holding commitlog/, consumequeue/ ...)")
    doctor.add_argument("--json", action="store_true", help="print one JSON document (findings, notes, counts)")
    doctor.add_argument("--quiet", action="store_true", help="no progress or timing on stderr")
    doctor.add_argument("--max-findings", type=_positive, default=50, metavar="N",
                        help="list at most N findings per kind (the rest are counted; default 50)")
    doctor.add_argument("--jobs", type=_positive, default=1, metavar="N",
                        help="processes: with N > 1, N - 1 of them decode and CRC-check the CommitLog segments while "
                             "one checks them against the ConsumeQueues and the index (default 1)")
    doctor.add_argument("--message-delay-level", metavar="LEVELS",
                        help='the broker\'s messageDelayLevel (default "1s 5s 10s 30s 1m ... 2h"), for the tagsCode '
                             'of SCHEDULE_TOPIC_XXXX units')
    _add_geometry(doctor)
    doctor.set_defaults(run=_run_doctor)


def _run_doctor(args) -> int:
    from .store.store_config import DEFAULT_MESSAGE_DELAY_LEVEL
    from .tools.doctor import DoctorOptions, doctor_main

    options = DoctorOptions(commitlog_file_size=args.commitlog_file_size, cq_file_size=args.cq_file_size,
                            hash_slots=args.hash_slots, index_num=args.index_num,
                            message_delay_level=args.message_delay_level or DEFAULT_MESSAGE_DELAY_LEVEL,
                            max_findings_per_code=args.max_findings, jobs=args.jobs)
    return doctor_main(args.store, as_json=args.json, quiet=args.quiet, options=options)


def _add_query(commands) -> None:
    query = commands.add_parser(
        "query", help="find messages by key through the index files, read-only",
        description="Find the messages of a topic whose UNIQ_KEY or one of whose KEYS is KEY, through the "
                    "IndexFiles (newest first), re-checking topic, key and time against the CommitLog so that hash "
                    "collisions never show up. Prints the matches in CommitLog order. Exit 0 when something "
                    "matched, 1 when nothing did, 2 when the store cannot be read. Never writes.")
    query.add_argument("store", metavar="STORE_DIR")
    query.add_argument("--topic", required=True)
    query.add_argument("--key", required=True, help="a UNIQ_KEY or one KEYS token")
    query.add_argument("--begin", type=_count, default=0, metavar="MS", help="earliest store timestamp (epoch ms)")
    query.add_argument("--end", type=_count, default=2**63 - 1, metavar="MS", help="latest store timestamp (epoch ms)")
    query.add_argument("--max", type=_count, default=32, metavar="N",
                       help="at most N messages, the newest (default 32, RocketMQ's defaultQueryMaxNum)")
    query.add_argument("--format", choices=("text", "jsonl"), default="text",
                       help="text: one line per message; jsonl: one JSON object per message")
    _add_geometry(query, cl=False, cq=False)
    query.set_defaults(run=_run_query)


def _run_query(args) -> int:
    from .tools.query import query_main

    return query_main(args.store, args.topic, args.key, begin=args.begin, end=args.end, max_num=args.max,
                      fmt=args.format, hash_slots=args.hash_slots, index_num=args.index_num)


def _add_fill(commands) -> None:
    fill = commands.add_parser(
        "fill", help="write generated messages into a store through the real MessageStore",
        description="Append COUNT messages to the store at STORE_DIR (created if missing) through MessageStore."
                    "put_message, so ConsumeQueues, IndexFiles and the checkpoint are written as a broker writes "
                    "them. With --seed and --start-time the store is byte-for-byte reproducible. Prints progress "
                    "on stderr and a summary (messages, bytes, msg/s).")
    fill.add_argument("store", metavar="STORE_DIR")
    fill.add_argument("--topic", required=True)
    fill.add_argument("--count", type=_count, required=True, metavar="N")
    fill.add_argument("--body-size", type=_count, default=1024, metavar="B", help="body bytes (default 1024)")
    fill.add_argument("--tags", metavar="TAG[,TAG...]", help="TAGS of each message, rotating through the list")
    fill.add_argument("--keys", nargs="+", default=["key-{i}"], metavar="K",
                      help="KEYS tokens of each message, {i} = message number (default: key-{i})")
    fill.add_argument("--queues", type=_positive, default=4, metavar="Q", help="queues used round-robin (default 4)")
    fill.add_argument("--flush", choices=("sync", "async"), default="async", help="flushDiskType (default async)")
    fill.add_argument("--seed", type=int, default=0, help="seed of bodies and UNIQ_KEYs (default 0)")
    fill.add_argument("--start-time", type=_count, metavar="MS",
                      help="use a manual clock starting here (1 ms per put) instead of the wall clock")
    fill.add_argument("--born-host", default="127.0.0.1:50000", metavar="HOST:PORT")
    fill.add_argument("--store-host", default="127.0.0.1:10911", metavar="HOST:PORT")
    fill.add_argument("--json", action="store_true", help="print the summary as JSON")
    fill.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_geometry(fill)
    fill.set_defaults(run=_run_fill)


def _run_fill(args) -> int:
    from .tools.fill import FillOptions, fill_main

    options = FillOptions(topic=args.topic, count=args.count, body_size=args.body_size, tags=args.tags,
                          keys=tuple(args.keys), queues=args.queues, flush=args.flush, seed=args.seed,
                          start_time=args.start_time, commitlog_file_size=args.commitlog_file_size,
                          cq_file_size=args.cq_file_size, hash_slots=args.hash_slots, index_num=args.index_num,
                          born_host=args.born_host, store_host=args.store_host)
    return fill_main(args.store, options, as_json=args.json, quiet=args.quiet)


def _run_inspect(args) -> int:
    from .tools.inspect import InspectOptions, inspect_path

    return inspect_path(args.path, InspectOptions(format=args.format, at=args.at, limit=args.limit, kind=args.kind,
                                                  hash_slots=args.hash_slots, index_num=args.index_num))


def main(argv: list[str] | None = None) -> int:
    from .tools.internal_error import run_command

    words = [w for w in (argv if argv is not None else sys.argv[1:]) if not w.startswith("-")]
    state = {"command": words[0] if words else "pymq"}
    return run_command(lambda: state["command"], lambda: _main(argv, state), argv)


def _command_path(parser: argparse.ArgumentParser, args) -> str:
    """The subcommand words ``args`` were parsed with (``doctor``, ``spark verify`` ...)."""
    words = []
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, subs[0].dest, None) if subs else None
        if chosen is None:
            return " ".join(words)
        words.append(chosen)
        parser = subs[0].choices[chosen]


def _main(argv: list[str] | None, state: dict) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    state["command"] = _command_path(parser, args) or state["command"]
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
        raise  # anything else is an internal error (see pymq_ref.tools.internal_error)


if __name__ == "__main__":
    sys.exit(main())
