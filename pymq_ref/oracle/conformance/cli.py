"""``pymq conformance``: argument parsing, the reachability check and writing the report.

Exit status: 0 when every scenario run passed, 1 when one failed or was not supported (unless
``--allow-not-supported``), 2 for usage errors or an address nothing listens on.
"""

from __future__ import annotations

import socket
import sys

from pymq_ref.remoting.cli import address_arg


def add_conformance_subcommand(commands) -> None:
    p = commands.add_parser(
        "conformance", help="check a RocketMQ-compatible broker and name server against 4.9.4's answers",
        description="Play the conformance scenarios (sending, batches, compression, properties, pulling and long "
                    "polling, offsets, retry and DLQ, delay levels, transactions with check-back, tag and SQL92 "
                    "filters, orderly locks, routes and registration, errors and malformed requests) against the "
                    "broker at HOST:PORT (and the name server given with --namesrv) over real sockets, and compare "
                    "every answer, modulo times, hosts and ids, with what the real RocketMQ 4.9.4 answered. Each "
                    "scenario passes, fails (the frames that differ shown as hex views, the differing fields "
                    "marked) or is not supported. Exit 0 only when every scenario passed.")
    p.add_argument("broker", type=address_arg, metavar="HOST:PORT", help="the broker under test")
    p.add_argument("--namesrv", type=address_arg, metavar="HOST:PORT",
                   help="its name server (without it the route scenarios are not supported)")
    p.add_argument("--format", choices=("text", "json", "html"), default="text",
                   help="text (default), json (one document) or html (one self-contained page)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here (default: standard output)")
    p.add_argument("--only", metavar="PATTERN",
                   help="run only the scenarios whose id or group matches (fnmatch, comma-separated: 'send.*,tx.*')")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--skip-slow", action="store_true",
                   help="skip the scenarios that wait on the broker's timers (suspend timeout, delay level, "
                        "transaction check-back); they count as not supported")
    p.add_argument("--check-timeout", type=float, metavar="SECONDS",
                   help="how long to wait for CHECK_TRANSACTION_STATE (default 75 s: 4.9.4 checks every 60 s "
                        "unless transactionCheckInterval is lower)")
    p.add_argument("--allow-not-supported", action="store_true",
                   help="exit 0 when nothing failed, even if some scenarios were not supported")
    p.add_argument("--run-id", metavar="ID", help="the id in this run's topic and group names (default: random)")
    p.add_argument("--expected", metavar="FILE", help="compare with another recording (default: the 4.9.4 one "
                                                      "shipped with pymq-ref)")
    p.add_argument("--no-hex", action="store_true", help="text report without hex views")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(run=run)


def _reachable(address: str) -> str | None:
    from pymq_ref.remoting.transport import parse_address
    host, port = parse_address(address)
    try:
        with socket.create_connection((host, port), timeout=3):
            return None
    except OSError as e:
        return f"cannot connect to {address}: {e}"


def run(args) -> int:
    from . import expected as recorded
    from . import render_html, render_json, render_text
    from .runner import FAIL, NOT_SUPPORTED, Runner
    from .scenarios import select

    scenarios = select(args.only)
    if args.list:
        for s in scenarios:
            flags = " (slow)" if s.slow else ""
            flags += " (needs --namesrv)" if s.needs_namesrv else ""
            print(f"{s.id:24}  {s.group:14}  {s.title}{flags}")
        return 0
    if not scenarios:
        print(f"pymq conformance: error: no scenario matches {args.only!r} (see --list)", file=sys.stderr)
        return 2
    for address in filter(None, (args.broker, args.namesrv)):
        problem = _reachable(address)
        if problem:
            print(f"pymq conformance: error: {problem}", file=sys.stderr)
            return 2
    recording = recorded.load(args.expected)
    table = recording["scenarios"]
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    import asyncio
    runner = Runner(args.broker, args.namesrv, expected=table, run_id=args.run_id, skip_slow=args.skip_slow,
                    check_timeout=args.check_timeout, progress=progress)
    results = asyncio.run(runner.run(scenarios))
    if args.format == "json":
        text = render_json(results, broker=args.broker, namesrv=args.namesrv, run=runner.vars.run,
                           recorded_from=recording.get("recorded_from"))
    elif args.format == "html":
        text = render_html(results, broker=args.broker, namesrv=args.namesrv)
    else:
        text = render_text(results, broker=args.broker, namesrv=args.namesrv, hex_views=not args.no_hex,
                           timings=True)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    else:
        print(text)
    failed = any(r.status == FAIL for r in results)
    unsupported = any(r.status == NOT_SUPPORTED for r in results)
    return 1 if failed or (unsupported and not args.allow_not_supported) else 0
