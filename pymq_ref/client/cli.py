"""``pymq send`` and ``pymq consume``: the client on the command line, against any 4.x broker.

``pymq send`` prints one line per send result; ``pymq consume`` one line (text or JSON) per message
and exits after ``--count`` messages (or after ``--idle`` seconds without one). ``--namesrv``
defaults to ``$NAMESRV_ADDR``, else ``pymq up``'s 127.0.0.1:9876. Errors (no route, timeouts, a
broker's refusal) are one line on stderr and exit status 2.

A consumer stopped after ``--count`` leaves any further message it had already pulled
unacknowledged, so the next run gets it again (at-least-once).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from .config import DEFAULT_NAMESRV


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _delay_level(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 18:
        raise argparse.ArgumentTypeError(f"expected a delay level 0..18, got {text!r}")
    return value


def _namesrv_default() -> str:
    return os.environ.get("NAMESRV_ADDR") or DEFAULT_NAMESRV


def add_client_subcommands(commands) -> None:
    send = commands.add_parser(
        "send", help="send messages to a topic (any 4.x broker)",
        description="Send --count messages (the body from --body or --file) to TOPIC through the name server, "
                    "as the 4.9.4 Java producer does (route lookup, queue round robin, retries). One line per "
                    "send result: status, msgId (UNIQ_KEY), offsetMsgId, broker, queue and queue offset.")
    send.add_argument("--topic", "-t", required=True)
    body = send.add_mutually_exclusive_group()
    body.add_argument("--body", "-b", help="the body text (UTF-8)")
    body.add_argument("--file", "-f", metavar="F", help="read the body from this file")
    send.add_argument("--tags", help="the TAGS property")
    send.add_argument("--keys", help="the KEYS property (space-separated keys)")
    send.add_argument("--delay-level", type=_delay_level, default=0, metavar="N", help="delay level 1..18 (0: none)")
    send.add_argument("--count", "-c", type=_positive, default=1, metavar="N", help="messages to send (default 1)")
    send.add_argument("--mode", choices=("sync", "async", "oneway"), default="sync", help="send mode (default sync)")
    send.add_argument("--group", "-g", default="pymq-send", help="producer group (default pymq-send)")
    send.add_argument("--timeout", type=float, default=3.0, metavar="S", help="sendMsgTimeout in seconds (default 3)")
    send.add_argument("--namesrv", "-n", default=_namesrv_default(), metavar="ADDR",
                      help=f"name server(s), ';'-separated (default $NAMESRV_ADDR or {DEFAULT_NAMESRV})")
    send.set_defaults(run=_run_send)

    consume = commands.add_parser(
        "consume", help="consume messages of a topic with a push consumer (any 4.x broker)",
        description="Start a push consumer of GROUP on TOPIC and print one line per message; exit after --count "
                    "messages, or after --idle seconds without a message.")
    consume.add_argument("--topic", "-t", required=True)
    consume.add_argument("--group", "-g", required=True)
    expr = consume.add_mutually_exclusive_group()
    expr.add_argument("--tag", metavar="EXPR", help="tag expression, e.g. 'TagA || TagB' (default *)")
    expr.add_argument("--sql", metavar="EXPR", help="SQL92 expression (the broker needs enablePropertyFilter=true)")
    consume.add_argument("--from", dest="from_", choices=("first", "last", "timestamp"), default="last",
                         help="where a group without offsets starts (default last)")
    consume.add_argument("--timestamp", metavar="yyyyMMddHHmmss", help="with --from timestamp (default 30 min ago)")
    consume.add_argument("--orderly", action="store_true", help="consume each queue in order, holding its broker lock")
    consume.add_argument("--broadcasting", action="store_true", help="BROADCASTING model (offsets in a local file)")
    consume.add_argument("--count", "-c", type=_positive, metavar="N", help="exit after N messages")
    consume.add_argument("--idle", type=float, metavar="S", help="exit after S seconds without a message")
    consume.add_argument("--format", choices=("text", "jsonl"), default="text")
    consume.add_argument("--pace", type=float, default=0.0, metavar="MS",
                         help="wait MS milliseconds after each message (to watch rebalancing and failures)")
    consume.add_argument("--namesrv", "-n", default=_namesrv_default(), metavar="ADDR",
                         help=f"name server(s), ';'-separated (default $NAMESRV_ADDR or {DEFAULT_NAMESRV})")
    consume.set_defaults(run=_run_consume)


def _run_send(args) -> int:
    from .message import Message
    from .producer import DefaultMQProducer

    if args.file is not None:
        with open(args.file, "rb") as f:
            body = f.read()
    elif args.body is not None:
        body = args.body.encode("utf-8")
    else:
        print("pymq send: error: give the body with --body TEXT or --file F", file=sys.stderr)
        return 2

    async def main() -> int:
        producer = DefaultMQProducer(args.group, args.namesrv, send_msg_timeout=args.timeout)
        await producer.start()
        try:
            pending = []
            for i in range(args.count):
                msg = Message(args.topic, body, tags=args.tags, keys=args.keys, delay_time_level=args.delay_level)
                if args.mode == "sync":
                    print((await producer.send(msg)).line(), flush=True)
                elif args.mode == "async":
                    pending.append(producer.send_async(msg))
                else:
                    await producer.send_oneway(msg)
                    print(f"ONEWAY msgId={msg.uniq_key} topic={args.topic}", flush=True)
            failed = 0
            for task in pending:
                try:
                    print((await task).line(), flush=True)
                except Exception as e:
                    failed += 1
                    print(f"FAILED {e}", flush=True)
            return 1 if failed else 0
        finally:
            await producer.shutdown()

    return asyncio.run(main())


def _format_message(msg, fmt: str) -> str:
    if fmt == "jsonl":
        return json.dumps(msg.to_json(), ensure_ascii=False)
    body = msg.body.decode("utf-8", "replace")
    return (f"{msg.topic} {msg.broker_name}/{msg.queue_id}@{msg.queue_offset} msgId={msg.msg_id} "
            f"tags={msg.tags} keys={msg.keys} reconsume={msg.reconsume_times} body={body!r}")


def _run_consume(args) -> int:
    from .consumer.consume import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
    from .consumer.push import DefaultMQPushConsumer

    where = {"first": "CONSUME_FROM_FIRST_OFFSET", "last": "CONSUME_FROM_LAST_OFFSET",
             "timestamp": "CONSUME_FROM_TIMESTAMP"}[args.from_]

    async def main() -> int:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        activity = [loop.time()]
        printed = [0]
        consumer = DefaultMQPushConsumer(
            args.group, args.namesrv, consume_from_where=where, consume_timestamp=args.timestamp,
            message_model="BROADCASTING" if args.broadcasting else "CLUSTERING", consume_thread_max=1)
        if args.sql:
            consumer.subscribe(args.topic, args.sql, "SQL92")
        else:
            consumer.subscribe(args.topic, args.tag or "*")

        async def listener(msgs, context):
            for msg in msgs:
                if args.count is not None and printed[0] >= args.count:
                    await asyncio.Event().wait()  # never acknowledged: the next run gets it again
                print(_format_message(msg, args.format), flush=True)
                printed[0] += 1
                if args.pace:
                    await asyncio.sleep(args.pace / 1000)
                activity[0] = loop.time()
                if args.count is not None and printed[0] >= args.count:
                    done.set()
            return ConsumeOrderlyStatus.SUCCESS if args.orderly else ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        consumer.register_message_listener(listener, orderly=args.orderly)
        await consumer.start()
        try:
            while not done.is_set():
                try:
                    await asyncio.wait_for(done.wait(), 0.2)
                except asyncio.TimeoutError:
                    pass
                if args.idle is not None and loop.time() - activity[0] > args.idle:
                    break
        finally:
            await consumer.shutdown()
        return 0 if args.count is None or printed[0] >= args.count else 1

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130
