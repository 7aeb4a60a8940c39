"""Request/response through our transport on 127.0.0.1, against a raw asyncio protocol that echoes
the same frames.

A load generator in its own process (raw asyncio, frames prepared in advance, responses only
counted) drives, in turn, with 8 connections each waiting for its answer before sending the next
request (request/response — the target row) and then each keeping 16 requests in flight
(pipelined — informational):

* baseline: an ``asyncio.Protocol`` that cuts frames by their length field and writes each one back
  unchanged — the cheapest server a frame can have;
* ours: :class:`~pymq_ref.remoting.transport.RemotingServer` with one processor that answers each
  GET_ROUTEINFO_BY_TOPIC request with a fixed response (no service behind it): the sans-IO
  connection, the codec, the dispatch rules, the limits — everything a pymq-ref server adds.

Each server runs in its own process too, so both sides get a core. Target: ours >= 0.7x on the
request/response row. Two informational rows put that target in context, pipelined so that they
measure work per frame rather than wake-ups: ours against a protocol that does only the codec's
work (cut, decode, encode — what the shell itself costs), and a protocol doing nothing but
``json`` + ``struct`` per frame against the echo (the best any Python server of this protocol can
do).

On these 2-core virtual machines the request/response row has two regimes. When waking a
sleeping process is slow, every server — the echo included — serves about 25k round trips per
second and the ratio is near 1; when it is fast, the echo reaches about 90k and the row shows
what each side costs per request. Run it more than once. Pipelined, the echo answers a whole burst with one copy and one write while
ours decodes, dispatches and encodes every frame, so that row measures the codec's cost per frame
more than the transport.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

CONNECTIONS = 8


def _frame(opaque: int) -> bytes:
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codec import encode
    from pymq_ref.remoting.command import RemotingCommand
    return encode(RemotingCommand.request(105, H.GetRouteInfoRequestHeader(topic="TopicTest"), opaque=opaque))


class _Echo(asyncio.Protocol):
    """Cuts frames by their length field and writes each one back unchanged (``answer``), a
    burst in one write."""

    def connection_made(self, transport):
        self.t, self.buf = transport, bytearray()

    def data_received(self, data):
        self.buf += data
        out = []
        while len(self.buf) >= 4:
            n = struct.unpack_from(">i", self.buf)[0] + 4
            if len(self.buf) < n:
                break
            out.append(self.answer(bytes(self.buf[:n])))
            del self.buf[:n]
        if out:
            self.t.write(b"".join(out))

    @staticmethod
    def answer(frame: bytes) -> bytes:
        return frame


class _CodecOnly(_Echo):
    """Decodes each request and encodes its answer with pymq_ref's codec alone: what any server
    speaking this protocol with this codec pays, without our shell."""

    @staticmethod
    def answer(frame: bytes) -> bytes:
        from pymq_ref.remoting.codec import decode_command, encode
        from pymq_ref.remoting.dispatch import stamp
        return encode(stamp(_ANSWER, decode_command(frame, len(frame))))


class _JsonOnly(_Echo):
    """The least any Python server of this protocol can do per frame: ``json.loads`` the header,
    ``json.dumps`` an answer header with the request's opaque, ``struct`` the lengths — no
    command objects, no validation, no fastjson rules."""

    @staticmethod
    def answer(frame: bytes) -> bytes:
        request = json.loads(frame[8:8 + (struct.unpack_from(">I", frame, 4)[0] & 0xFFFFFF)])
        header = json.dumps({"code": 0, "flag": 1, "language": "JAVA", "opaque": request["opaque"],
                             "serializeTypeCurrentRPC": "JSON", "version": request["version"]},
                            separators=(",", ":")).encode()
        return struct.pack(">iI", 4 + len(header) + len(_BODY), len(header)) + header + _BODY


_BODY = b'{"brokerDatas":[],"queueDatas":[]}'


def _answer():
    from pymq_ref.remoting.command import RemotingCommand
    return RemotingCommand.response(0, body=_BODY)


def _serve(kind: str, ready, stop) -> None:
    async def main():
        global _ANSWER
        _ANSWER = _answer()
        if kind in ("raw", "codec", "json"):
            protocol = {"raw": _Echo, "codec": _CodecOnly, "json": _JsonOnly}[kind]
            server = await asyncio.get_running_loop().create_server(protocol, "127.0.0.1", 0)
            port = server.sockets[0].getsockname()[1]
        else:
            from pymq_ref.remoting.dispatch import RequestDispatcher
            from pymq_ref.remoting.transport import RemotingServer
            d = RequestDispatcher()
            d.register(105, lambda req, ch: _ANSWER)
            server = await RemotingServer(d).start()
            port = server.port
        ready.put(port)
        while not stop.is_set():
            await asyncio.sleep(0.05)
    asyncio.run(main())


class _Load(asyncio.Protocol):
    def __init__(self, frame: bytes, total: int, done, depth: int):
        self.frame, self.left, self.inflight, self.done, self.depth = frame, total, 0, done, depth
        self.buf = bytearray()

    def connection_made(self, transport):
        self.t = transport
        self._send(self.depth)

    def _send(self, k: int):
        k = min(k, self.left)
        if k > 0:
            self.left -= k
            self.inflight += k
            self.t.write(self.frame * k)

    def data_received(self, data):
        self.buf += data
        got = 0
        while len(self.buf) >= 4:
            n = struct.unpack_from(">i", self.buf)[0] + 4
            if len(self.buf) < n:
                break
            del self.buf[:n]
            got += 1
        self.inflight -= got
        self._send(got)
        if self.left == 0 and self.inflight == 0 and not self.done.done():
            self.done.set_result(None)


def _drive(port: int, requests: int, depth: int) -> float:
    async def main():
        loop = asyncio.get_running_loop()
        frame = _frame(1)
        per = requests // CONNECTIONS
        dones = [loop.create_future() for _ in range(CONNECTIONS)]
        start = time.perf_counter()
        for fut in dones:
            await loop.create_connection(lambda f=fut: _Load(frame, per, f, depth), "127.0.0.1", port)
        await asyncio.gather(*dones)
        return per * CONNECTIONS / (time.perf_counter() - start)
    return asyncio.run(main())


def measure(kind: str, requests: int, depth: int) -> float:
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(kind, ready, stop), daemon=True)
    proc.start()
    try:
        port = ready.get(timeout=30)
        _drive(port, requests // 10, depth)  # warm-up
        return _drive(port, requests, depth)
    finally:
        stop.set()
        proc.join(10)


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    requests = 10_000 if args.quick else 50_000
    repeat = args.repeat or (2 if args.quick else 3)
    rows = []
    for depth, target, name in ((1, 0.7, "request/response"), (16, None, "pipelined, 16 in flight")):
        o, b = interleaved_best(lambda: measure("ours", requests, depth), lambda: measure("raw", requests, depth),
                                repeat)
        rows.append(Row(f"{name}, {CONNECTIONS} connections", o, b, "req/s", target,
                        "ours: RemotingServer (codec + sans-IO connection + dispatch); baseline: a protocol "
                        "echoing the frames"))
    o, c = interleaved_best(lambda: measure("ours", requests, 16), lambda: measure("codec", requests, 16), repeat)
    rows.append(Row(f"pipelined, vs the codec alone", o, c, "req/s", None,
                    "baseline: a protocol that only cuts, decodes and encodes with pymq_ref's codec — the "
                    "cost of the shell itself (sans-IO connection, dispatch, limits)"))
    j, e = interleaved_best(lambda: measure("json", requests, 16), lambda: measure("raw", requests, 16), repeat)
    rows.append(Row(f"pipelined, the floor: json + struct only vs the echo", j, e, "req/s", None,
                    "not ours: a protocol doing only json.loads/json.dumps/struct per frame against the echo — "
                    "the best any Python server of this protocol can do"))
    return report("bench_transport", "Transport on 127.0.0.1 vs a raw asyncio echo of the same frames", rows,
                  {"requests": requests, "connections": CONNECTIONS, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
