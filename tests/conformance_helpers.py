"""Shared helpers for the conformance kit's tests: pymq up with the broker settings the kit wants,
a relay that corrupts one field of the broker's answers, and a planted off-by-one (no tests here)."""

from __future__ import annotations

import asyncio
import threading

from pymq_ref.remoting.codec import decode, encode, frame_length
from pymq_ref.remoting.codes import RequestCode

#: What the kit wants of a broker (see pymq_ref/oracle/conformance/scenarios.py), on a small store.
KIT_SETTINGS = {"mappedFileSizeCommitLog": str(8 * 1024 * 1024), "mappedFileSizeConsumeQueue": str(300 * 20),
                "maxHashSlotNum": "1024", "maxIndexNum": "4096", "enablePropertyFilter": "true",
                "transactionCheckInterval": "1000", "transactionTimeOut": "1000"}


def plant_offset_off_by_one(controller) -> None:
    """A deliberately broken broker: UPDATE_CONSUMER_OFFSET stores one less than it was asked to
    (``controller``: the BrokerController of pymq up; call on its loop)."""
    dispatcher = controller.dispatcher
    original = dispatcher.processors[RequestCode.UPDATE_CONSUMER_OFFSET]

    def update_consumer_offset(request, channel):
        ext = dict(request.ext())
        ext["commitOffset"] = str(int(ext["commitOffset"]) - 1)
        return original(request.with_(ext_fields=ext, custom_header=None), channel)

    dispatcher.register(RequestCode.UPDATE_CONSUMER_OFFSET, update_consumer_offset)


class CorruptingRelay:
    """127.0.0.1:port -> ``target``, rewriting ext ``key`` of every successful answer that has it
    (``change(value) -> value``); everything else is relayed byte for byte. Runs in its own thread."""

    def __init__(self, target: str, key: str | None, change):
        """``key`` None: ``change(frame bytes) -> bytes`` rewrites every answer's bytes."""
        self.target, self.key, self.change = target, key, change
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "CorruptingRelay":
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main())

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        await self._stop.wait()
        server.close()
        await server.wait_closed()

    async def _serve(self, client_r, client_w) -> None:
        host, port = self.target.rsplit(":", 1)
        broker_r, broker_w = await asyncio.open_connection(host, int(port))

        async def upstream():
            while data := await client_r.read(65536):
                broker_w.write(data)
            broker_w.close()

        async def downstream():
            buf = bytearray()
            while data := await broker_r.read(65536):
                buf += data
                while (n := frame_length(buf)) is not None and len(buf) >= n:
                    frame, buf[:] = bytes(buf[:n]), buf[n:]
                    client_w.write(self._rewrite(frame))
            client_w.close()

        await asyncio.gather(upstream(), downstream(), return_exceptions=True)

    def _rewrite(self, frame: bytes) -> bytes:
        if self.key is None:
            return self.change(frame)
        cmd = decode(frame).command
        ext = cmd.ext()
        if not cmd.is_response or cmd.code != 0 or self.key not in ext:
            return frame
        ext[self.key] = self.change(ext[self.key])
        return encode(cmd.with_(ext_fields=ext, custom_header=None))
