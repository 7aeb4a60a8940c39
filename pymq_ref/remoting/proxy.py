"""``pymq proxy``: a recording relay between any RocketMQ client and any name server or broker.

Every byte is relayed unchanged, in both directions; a copy of each direction is cut into frames and
decoded (typed header, JSON body, the request a response answers) and written as one JSON line per
frame, and optionally as a hex view with field spans. It never alters, delays beyond the copy, or
injects traffic, so what it records is what the two peers really said. A frame that does not
decode is recorded with its error and its bytes; decoding of that direction stops (framing is
lost), relaying does not.

Legal call order: ``proxy = RecordingProxy(listen, target, sink)``; ``await proxy.start()``;
… ``await proxy.stop()``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Callable, TextIO

from .codec import MAX_FRAME_LENGTH, decode_checked
from .connection import FrameDecoder
from .errors import FrameError
from .record import FrameTracker
from .transport import format_address, parse_address

log = logging.getLogger("pymq_ref.remoting.proxy")


class FrameSink:
    """Where decoded frames go: JSON lines and/or hex views (files or streams)."""

    def __init__(self, jsonl: TextIO | None = None, hex_out: TextIO | None = None, raw: bool = False,
                 clock: Callable[[], float] = time.time):
        self.jsonl, self.hex_out, self.raw, self.clock = jsonl, hex_out, raw, clock
        self.count = 0

    def write(self, rec: dict, frame: bytes | None, spans=()) -> None:
        self.count += 1
        rec = {"seq": self.count, "time": round(self.clock(), 6), **rec}
        if self.raw and frame is not None:
            rec["frame_hex"] = frame.hex()
        if self.jsonl is not None:
            self.jsonl.write(json.dumps(rec, ensure_ascii=False) + "\n")
            self.jsonl.flush()
        if self.hex_out is not None and frame is not None:
            from pymq_ref.viz.hexview import hex_text
            title = (f"#{self.count} conn {rec['conn']} {rec['direction']} {rec.get('code_name', '?')} "
                     f"opaque={rec.get('opaque')}")
            self.hex_out.write(hex_text(frame, spans, title=title, max_field_rows=4) + "\n\n")
            self.hex_out.flush()


class _Direction:
    def __init__(self, name: str, conn_id: int, peers: tuple[str, str], tracker: FrameTracker, sink: FrameSink,
                 max_frame_length: int):
        self.name, self.conn_id, self.peers = name, conn_id, peers
        self.tracker, self.sink = tracker, sink
        self.decoder = FrameDecoder(max_frame_length)
        self.broken = False

    def feed(self, data: bytes) -> None:
        if self.broken:
            return
        self.decoder.feed(data)
        while True:
            try:
                got = self.decoder.next_frame()
                if got is None:
                    return
                frame, at = got
                decoded = decode_checked(frame, len(frame), with_spans=self.sink.hex_out is not None, base=0)
            except FrameError as e:
                self.broken = True
                self.sink.write({"conn": self.conn_id, "direction": self.name, "from": self.peers[0],
                                 "to": self.peers[1], "error": str(e),
                                 "bytes_hex": bytes(self.decoder._buf[:256]).hex()}, None)
                return
            rec = self.tracker.record(decoded, self.name)
            self.sink.write({"conn": self.conn_id, "direction": self.name, "from": self.peers[0], "to": self.peers[1],
                             **rec}, frame, decoded.spans)


class RecordingProxy:
    def __init__(self, listen: str, target: str, sink: FrameSink, *, max_frame_length: int = MAX_FRAME_LENGTH):
        self.listen_host, self.listen_port = parse_address(listen)
        self.target = target
        self.sink = sink
        self.max_frame_length = max_frame_length
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._conn_ids = 0

    async def start(self) -> "RecordingProxy":
        self._server = await asyncio.start_server(self._accept, self.listen_host, self.listen_port)
        self.listen_port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def address(self) -> str:
        return format_address(self.listen_host, self.listen_port)

    async def _accept(self, c_reader: asyncio.StreamReader, c_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        self._conn_ids += 1
        conn_id = self._conn_ids
        client = format_address(*c_writer.get_extra_info("peername")[:2])
        try:
            host, port = parse_address(self.target)
            s_reader, s_writer = await asyncio.open_connection(host, port)
        except OSError as e:
            log.warning("proxy: connection %d from %s: cannot reach %s: %s", conn_id, client, self.target, e)
            c_writer.close()
            self._tasks.discard(task)
            return
        tracker = FrameTracker()
        c2s = _Direction("c2s", conn_id, (client, self.target), tracker, self.sink, self.max_frame_length)
        s2c = _Direction("s2c", conn_id, (self.target, client), tracker, self.sink, self.max_frame_length)
        log.info("proxy: connection %d: %s <-> %s", conn_id, client, self.target)
        try:
            await asyncio.gather(self._pump(c_reader, s_writer, c2s), self._pump(s_reader, c_writer, s2c))
        finally:
            for w in (c_writer, s_writer):
                w.close()
            self._tasks.discard(task)

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, direction: _Direction) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                direction.feed(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if writer.can_write_eof():
                try:
                    writer.write_eof()
                except (OSError, RuntimeError):
                    pass

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
