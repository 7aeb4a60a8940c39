"""``pymq namesrv`` and ``pymq proxy``: argument parsing and start-up only.

The name server is :class:`pymq_ref.namesrv.server.NamesrvController`; the relay is
:class:`pymq_ref.remoting.proxy.RecordingProxy`.
"""

from __future__ import annotations

import argparse
import sys


def address_arg(text: str) -> str:
    """argparse type for a HOST:PORT (checked, returned as given)."""
    from .transport import parse_address
    try:
        parse_address(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def add_wire_subcommands(commands) -> None:
    ns = commands.add_parser(
        "namesrv", help="run a RocketMQ 4.9.4 name server (127.0.0.1:9876 by default)",
        description="Run the pymq-ref name server: brokers register with it (REGISTER_BROKER every 30 s), clients "
                    "ask it for routes (GET_ROUTEINFO_BY_TOPIC). It answers every request the 4.9.4 name server "
                    "answers, the same way; brokers silent for 120 s or whose connection closes are removed. "
                    "Stops cleanly on Ctrl-C or SIGTERM.")
    ns.add_argument("--listen", type=address_arg, default="127.0.0.1:9876", metavar="HOST:PORT",
                    help="where to listen (default 127.0.0.1:9876; 0.0.0.0:9876 for every interface)")
    ns.add_argument("-c", "--config", metavar="FILE",
                    help="a namesrv.conf (Java properties: kvConfigPath, orderMessageEnable, listenPort ...)")
    ns.add_argument("--kv-config", metavar="FILE",
                    help="where the KV config is kept (default: kvConfigPath of the config, else ~/namesrv/kvConfig.json)")
    ns.add_argument("-v", "--verbose", action="count", default=1, help="more log lines (-vv: debug)")
    ns.set_defaults(run=_run_namesrv)

    px = commands.add_parser(
        "proxy", help="a recording relay between a RocketMQ client and a name server or broker",
        description="Relay every byte between the clients that connect to --listen and the server at --to, "
                    "unchanged, and record every frame of both directions decoded (typed headers, JSON bodies, "
                    "which request a response answers) as JSON lines; --hex adds a hex view with the field spans "
                    "of each frame. Point a client's name server or broker address at the --listen address. "
                    "Stops cleanly on Ctrl-C or SIGTERM.")
    px.add_argument("--listen", type=address_arg, required=True, metavar="HOST:PORT", help="where clients connect")
    px.add_argument("--to", type=address_arg, required=True, metavar="HOST:PORT", help="the name server or broker")
    px.add_argument("--jsonl", metavar="FILE", help="write the JSON lines here (default: standard output)")
    px.add_argument("--hex", metavar="FILE", help="also write a hex view with field spans per frame ('-' = stdout)")
    px.add_argument("--raw", action="store_true", help="include each frame's bytes (frame_hex) in the JSON lines")
    px.add_argument("-v", "--verbose", action="count", default=0, help="log connections on stderr")
    px.set_defaults(run=_run_proxy)


def _run_namesrv(args) -> int:
    from pymq_ref.namesrv.config import parse_properties
    from pymq_ref.namesrv.server import NamesrvController
    from pymq_ref.tools.serve import configure_logging, run_until_signal

    from .transport import parse_address
    configure_logging(args.verbose)
    settings = {}
    if args.config:
        try:
            with open(args.config, encoding="utf-8") as f:
                settings = parse_properties(f.read())
        except OSError as e:
            print(f"pymq namesrv: cannot read {args.config}: {e.strerror}", file=sys.stderr)
            return 2
    host, port = parse_address(args.listen)
    kv_path = args.kv_config or settings.get("kvConfigPath")
    ns = NamesrvController(host, port, kv_config_path=kv_path, settings=settings)

    def ready(started) -> None:
        print(f"pymq name server listening on {started.address}", flush=True)
        print(f"  KV config: {started.settings['kvConfigPath']}", flush=True)
        print(f"  clients: -n {started.address}  (Java: setNamesrvAddr(\"{started.address}\"))", flush=True)

    return run_until_signal(ns.start, ns.stop, ready, what="name server")


def _run_proxy(args) -> int:
    from pymq_ref.tools.serve import configure_logging, run_until_signal

    from .proxy import FrameSink, RecordingProxy
    configure_logging(args.verbose)
    files = []
    try:
        jsonl = open(args.jsonl, "a", encoding="utf-8") if args.jsonl else sys.stdout
        if args.jsonl:
            files.append(jsonl)
        hex_out = None
        if args.hex:
            hex_out = sys.stdout if args.hex == "-" else open(args.hex, "a", encoding="utf-8")
            if args.hex != "-":
                files.append(hex_out)
    except OSError as e:
        print(f"pymq proxy: cannot open {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    proxy = RecordingProxy(args.listen, args.to, FrameSink(jsonl, hex_out, raw=args.raw))

    def ready(started) -> None:
        print(f"pymq proxy: {started.address} -> {args.to}, recording to {args.jsonl or 'stdout'}",
              file=sys.stderr, flush=True)

    try:
        return run_until_signal(proxy.start, proxy.stop, ready, what="proxy")
    finally:
        for f in files:
            f.close()
