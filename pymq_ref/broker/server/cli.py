"""``pymq broker -c broker.conf`` and ``pymq up``: argument parsing and start-up only
(the servers are :class:`~.controller.BrokerController` and :mod:`.up`)."""

from __future__ import annotations

import argparse
import sys


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0..65535, got {value}")
    return value


def add_broker_subcommands(commands) -> None:
    br = commands.add_parser(
        "broker", help="run a RocketMQ 4.9.4 broker from a broker.conf",
        description="Run the pymq-ref broker: it reads RocketMQ's own broker.conf (same property names, 4.9.4 "
                    "defaults; storePathRootDir, listenPort, namesrvAddr, flushDiskType ...), listens on "
                    "127.0.0.1 (listenPort, and listenPort-2 as 4.9.4's VIP channel), registers with every name "
                    "server of namesrvAddr every 30 s, and serves real RocketMQ clients. Stops cleanly on "
                    "Ctrl-C or SIGTERM (store flushed and closed, abort file removed).")
    br.add_argument("-c", "--config", metavar="FILE", help="broker.conf (Java properties)")
    br.add_argument("-n", "--namesrv", metavar="ADDRS", help="name servers, ';'-separated (overrides namesrvAddr)")
    br.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    br.add_argument("-v", "--verbose", action="count", default=1, help="more log lines (-vv: debug)")
    br.set_defaults(run=_run_broker)

    up = commands.add_parser(
        "up", help="a name server and a broker in one process on 127.0.0.1 (quick start)",
        description="Start an embedded name server and a broker in one process on 127.0.0.1, with a default store "
                    "directory (~/.pymq/up/store), print where everything is and how to point a client at it, "
                    "and stop both cleanly on Ctrl-C or SIGTERM.")
    up.add_argument("--store", metavar="DIR", help="store directory (default ~/.pymq/up/store)")
    up.add_argument("--namesrv-port", type=_port, default=9876, help="name server port (default 9876; 0: any free)")
    up.add_argument("--broker-port", type=_port, default=10911, help="broker port (default 10911; 0: any free)")
    up.add_argument("-c", "--config", metavar="FILE", help="a broker.conf for the broker's other settings")
    up.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    up.add_argument("--grpc", metavar="HOST:PORT",
                    help="also serve the 5.x gRPC endpoint (apache.rocketmq.v2) there, e.g. 127.0.0.1:8081")
    up.add_argument("-v", "--verbose", action="count", default=0, help="log lines on stderr (-vv: debug)")
    up.set_defaults(run=_run_up)


def _run_broker(args) -> int:
    from pymq_ref.tools.serve import configure_logging, run_until_signal

    from .config import load_broker_conf, parse_broker_conf
    from .controller import BrokerController
    configure_logging(args.verbose)
    overrides = {"namesrvAddr": args.namesrv} if args.namesrv else {}
    try:
        settings = load_broker_conf(args.config, **overrides) if args.config else parse_broker_conf("", **overrides)
    except OSError as e:
        print(f"pymq broker: cannot read {args.config}: {e.strerror}", file=sys.stderr)
        return 2
    except ValueError as e:
        print(f"pymq broker: bad setting in {args.config}: {e}", file=sys.stderr)
        return 2
    bc = BrokerController(settings, host=args.host)

    def ready(started) -> None:
        s = started.settings
        print(f"pymq broker {s.broker.broker_name} ({s.broker.broker_cluster_name}) listening on {started.address}",
              flush=True)
        print(f"  store: {s.store.store_path_root_dir}  ({s.store.flush_disk_type.name}, {s.store.broker_role.name})",
              flush=True)
        print(f"  name servers: {';'.join(s.namesrv_addr) or '(none: clients must be given the broker address)'}",
              flush=True)

    return run_until_signal(bc.start, bc.stop, ready, what="broker")


def _run_up(args) -> int:
    from pymq_ref.tools.serve import configure_logging, run_until_signal

    from .up import start_up, stop_up
    configure_logging(args.verbose)
    state = {}

    async def start():
        state["up"] = await start_up(args.store, namesrv_port=args.namesrv_port, broker_port=args.broker_port,
                                     host=args.host, conf=args.config, grpc=args.grpc)
        return state["up"]

    async def stop():
        if "up" in state:
            await stop_up(state["up"])

    return run_until_signal(start, stop, lambda up: print(up.describe(), flush=True), what="name server and broker")
