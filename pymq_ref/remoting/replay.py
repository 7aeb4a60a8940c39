"""Replaying a recorded client conversation to a live server, request by request, over real sockets.

A capture of ``pymq proxy --raw`` (JSON lines with ``conn``, ``seq``, ``direction``, ``kind``,
``opaque``, ``frame_hex``) holds what a real client sent and what the real server answered. This
module sends the same requests, in the recorded order, one socket per recorded connection, to
another server, and pairs each of its answers with the recorded one. Requests the server sends to
the client on those sockets (CHECK_TRANSACTION_STATE, NOTIFY_CONSUMER_IDS_CHANGED) are collected;
a recorded client request that followed such a server request waits for it first, so the
conversation keeps its order.

It knows nothing of brokers beyond what a client copies from a server's answers: requests go out as
recorded (opaques are fresh, as on any new connection), except END_TRANSACTION, whose CommitLog and
queue offsets the client copies from the server (from the send's answer, or from the server's
CHECK_TRANSACTION_STATE) — those are taken from this server's answers, as the client would
(``client/src/main/java/org/apache/rocketmq/client/impl/producer/DefaultMQProducerImpl.java``
``endTransaction``, ``ClientRemotingProcessor.checkTransactionState``). A pull the recorded server
held in long polling and answered with nothing found (or never answered) is not replayed: that
answer came from the clock, not from the request.

Legal call order: ``pairs = conversation(load_capture(path))``; ``exchanges = await replay(address,
pairs)`` (or :func:`replay_blocking` from sync code).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field

from .codec import decode
from .codes import RequestCode, ResponseCode
from .command import RemotingCommand
from .dispatch import RequestDispatcher
from .transport import RemotingClient

#: Server requests a replay waits for before sending what the client sent after them.
AWAITED = frozenset({RequestCode.CHECK_TRANSACTION_STATE})


@dataclass
class Exchange:
    """One recorded client frame: the request, the recorded answer, our server's answer."""
    record: dict
    request: RemotingCommand
    recorded: RemotingCommand | None = None
    ours: RemotingCommand | None = None
    skipped: str | None = None
    error: str | None = None

    @property
    def same_code(self) -> bool:
        return self.recorded is not None and self.ours is not None and self.recorded.code == self.ours.code


@dataclass
class ServerRequest:
    """A request the server sent to the client (in the recording, or during the replay)."""
    conn: int
    command: RemotingCommand


@dataclass
class Conversation:
    exchanges: list[Exchange]
    #: recorded server requests, each with the index of the first client exchange after it
    server_requests: list[tuple[int, ServerRequest]] = field(default_factory=list)


def load_capture(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def frame_of(record: dict) -> RemotingCommand:
    return decode(bytes.fromhex(record["frame_hex"])).command


def conversation(records: list[dict]) -> Conversation:
    """The client's requests in recorded order, each with the recorded answer (by connection and opaque)."""
    records = sorted(records, key=lambda r: r["seq"])
    answers = {(r["conn"], r["opaque"]): r for r in records if r["direction"] == "s2c" and r["kind"] == "response"}
    conv = Conversation([])
    for rec in records:
        if rec["direction"] == "s2c" and rec["kind"] != "response":
            conv.server_requests.append((len(conv.exchanges), ServerRequest(rec["conn"], frame_of(rec))))
        elif rec["direction"] == "c2s" and rec["kind"] != "response":
            request = frame_of(rec)
            answer = answers.get((rec["conn"], rec["opaque"])) if rec["kind"] == "request" else None
            ex = Exchange(rec, request, frame_of(answer) if answer is not None else None)
            if request.code == RequestCode.PULL_MESSAGE and (
                    ex.recorded is None or ex.recorded.code == ResponseCode.PULL_NOT_FOUND):
                ex.skipped = "a pull the recorded broker held (long polling) and answered with nothing or not at all"
            conv.exchanges.append(ex)
    return conv


class _Collector:
    """The client side's processor for requests the server sends: kept, answered with nothing."""

    def __init__(self, conn: int, into: list[ServerRequest], arrived: asyncio.Event):
        self.conn, self.into, self.arrived = conn, into, arrived

    def __call__(self, request: RemotingCommand, channel=None):
        self.into.append(ServerRequest(self.conn, request))
        self.arrived.set()
        return None


async def replay(address: str, conv: Conversation, *, timeout: float = 15.0, wait_for_server: float = 30.0,
                 awaited=AWAITED, before_request=None) -> tuple[list[Exchange], list[ServerRequest]]:
    """Send every exchange's request (skipped ones excepted) to ``address``; fill in ``ours``.
    Returns the exchanges and the requests the server sent to the replaying client.

    ``before_request(exchange)``, a coroutine function, runs before each request is sent: the
    caller's way to let the server settle where the recorded client paused (a replay sends as fast
    as the server answers, the recorded client took seconds) — e.g. wait, before a pull, for a
    broker to have dispatched what it stored."""
    received: list[ServerRequest] = []
    arrived = asyncio.Event()
    clients: dict[int, RemotingClient] = {}
    due = {}  # exchange index -> server request codes that must have arrived first
    for index, sr in conv.server_requests:
        if sr.command.code in awaited:
            due.setdefault(index, []).append(sr.command.code)
    try:
        for i, ex in enumerate(conv.exchanges):
            for code in due.get(i, ()):
                await _wait_for(received, arrived, code, wait_for_server)
            if ex.skipped:
                continue
            if before_request is not None:
                await before_request(ex)
            conn = ex.record["conn"]
            if conn not in clients:
                clients[conn] = RemotingClient(RequestDispatcher(_Collector(conn, received, arrived)),
                                               name=f"replay-{conn}")
            request = adapt(ex, conv.exchanges[:i], received)
            try:
                if request.is_oneway:
                    await clients[conn].invoke_oneway(address, request)
                    await asyncio.sleep(0.05)  # let the server act on it before the next request
                else:
                    ex.ours = await clients[conn].invoke(address, request, _timeout_of(request, timeout))
            except Exception as e:  # a refused or silent server is reported per exchange, not raised
                ex.error = f"{type(e).__name__}: {e}"
    finally:
        for client in clients.values():
            await client.close()
    return conv.exchanges, received


def _uniq_key(command: RemotingCommand) -> str | None:
    props = (command.ext_fields or {}).get("properties") or (command.ext_fields or {}).get("i") or ""
    for pair in props.split("\x02"):
        name, _, value = pair.partition("\x01")
        if name == "UNIQ_KEY":
            return value
    return None


def adapt(ex: Exchange, before: list[Exchange], received: list[ServerRequest]) -> RemotingCommand:
    """The request to send for ``ex``: as recorded, but for END_TRANSACTION the offsets the client
    copied from the recorded server, taken from this server's answer to the same message's send (by
    its UNIQ_KEY, the header's ``msgId``) or from this server's check of it."""
    request = ex.request
    if request.code != RequestCode.END_TRANSACTION or not request.ext_fields:
        return request
    ext = dict(request.ext_fields)
    if ext.get("fromTransactionCheck") == "true":
        check = next((sr.command for sr in reversed(received) if sr.command.code == RequestCode.CHECK_TRANSACTION_STATE
                      and (sr.command.ext_fields or {}).get("msgId") == ext.get("msgId")), None)
        if check is None:
            return request
        ext["commitLogOffset"] = check.ext_fields["commitLogOffset"]
        ext["tranStateTableOffset"] = check.ext_fields["tranStateTableOffset"]
    else:
        sent = next((e for e in reversed(before) if e.ours is not None and e.request.code in SEND_CODES
                     and _uniq_key(e.request) == ext.get("msgId")), None)
        if sent is None or not sent.ours.ext_fields:
            return request
        answer = sent.ours.ext_fields
        ext["commitLogOffset"] = str(int(answer["msgId"][-16:], 16))  # the offset message id ends with the offset
        ext["tranStateTableOffset"] = answer["queueOffset"]
    return request.with_(ext_fields=ext)


SEND_CODES = frozenset({RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2})


def _timeout_of(request: RemotingCommand, timeout: float) -> float:
    """A pull may be held by long polling up to its ``suspendTimeoutMillis``: wait that long, and more."""
    if request.code == RequestCode.PULL_MESSAGE:
        try:
            return max(timeout, int((request.ext_fields or {}).get("suspendTimeoutMillis") or 0) / 1000 + timeout)
        except ValueError:
            pass
    return timeout


async def _wait_for(received: list[ServerRequest], arrived: asyncio.Event, code: int, limit: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not any(sr.command.code == code for sr in received):
        arrived.clear()
        left = deadline - loop.time()
        if left <= 0:
            return
        try:
            await asyncio.wait_for(arrived.wait(), left)
        except asyncio.TimeoutError:
            return


def replay_blocking(address: str, conv: Conversation, **kwargs):
    """:func:`replay` from sync code (runs its own event loop)."""
    return asyncio.run(replay(address, conv, **kwargs))


_PORT = re.compile(r"(127\.0\.0\.1|localhost)[:@](\d+)")


def mask_ports(text: str) -> str:
    """Addresses with their port replaced by ``<port>`` (ports differ between runs)."""
    return _PORT.sub(lambda m: f"{m.group(1)}:<port>", text)


def _answer_text(cmd: RemotingCommand | None) -> str:
    return "-" if cmd is None else cmd.code_name


def exchange_table(exchanges: list[Exchange], *, start: int | None = None) -> str:
    """One line per replayed request: what it was, what the recorded server answered, what ours did.
    ``seq`` is renumbered from 1 in recorded order (or from ``start``)."""
    lines = [f"{'#':>3}  {'request':28} {'recorded answer':24} {'answer now'}"]
    for n, ex in enumerate(exchanges, start or 1):
        if ex.skipped:
            now = "(not replayed: long poll)"
        elif ex.request.is_oneway:
            now = "(oneway: no answer)"
        elif ex.error:
            now = "error: " + ex.error.split(":")[0]
        else:
            now = _answer_text(ex.ours)
        recorded = "(oneway)" if ex.request.is_oneway else _answer_text(ex.recorded)
        lines.append(f"{n:>3}  {ex.request.code_name:28} {recorded:24} {now}")
    return "\n".join(lines)


def frame_view(record_or_frame, title: str | None = None, request_code: int | None = None, **options):
    """The hex view of a recorded frame (a capture record or bytes), its meaning column filled by
    :mod:`pymq_ref.remoting.explain`. ``options`` go to :func:`pymq_ref.viz.hexview`."""
    import dataclasses

    from pymq_ref.viz import hexview

    from .explain import frame_meaning
    data = bytes.fromhex(record_or_frame["frame_hex"]) if isinstance(record_or_frame, dict) else bytes(record_or_frame)
    decoded = decode(data, with_spans=True)
    view = hexview(data, decoded.spans, title=title, **options)
    return dataclasses.replace(view, meaning=frame_meaning(decoded.command, request_code))
