"""The sans-IO Connection and the asyncio shells, on real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gc
import socket
import time

import pytest

from pymq_ref.remoting.codec import encode
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.connection import NEED_DATA, Connection, ConnectionClosed, ConnectionState, Request, Response
from pymq_ref.remoting.dispatch import ProcessorError, RequestDispatcher
from pymq_ref.remoting.errors import (FrameError, FrameTooLargeError, RemotingClosedError, RemotingConnectError,
                                      RemotingStateError, RemotingTimeoutError)
from pymq_ref.remoting.transport import Limits, RemotingClient, RemotingServer


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


# -- the sans-IO connection -------------------------------------------------------------------------

def test_connection_takes_bytes_in_any_chunking():
    frames = b"".join(encode(RemotingCommand.request(105, {"topic": f"T{i}"}, opaque=i)) for i in range(3))
    conn = Connection()
    events = []
    for b in frames:  # one byte at a time
        conn.receive_data(bytes([b]))
        while (event := conn.next_event()) is not NEED_DATA:
            events.append(event)
    assert [e.command.ext_fields["topic"] for e in events] == ["T0", "T1", "T2"]
    assert all(isinstance(e, Request) for e in events) and conn.in_flight == 3


def test_responses_are_matched_by_opaque_and_requests_answered_once():
    client, server = Connection(), Connection()
    server.receive_data(client.send(RemotingCommand.request(105, {"topic": "T"}, opaque=client.new_opaque())))
    request = server.next_event()
    client.receive_data(server.send(request.command.answer(17, "no route")))
    response = client.next_event()
    assert isinstance(response, Response) and response.request_code == 105 and response.command.remark == "no route"
    with pytest.raises(RemotingStateError):
        server.send(request.command.answer(0))  # already answered
    oneway = RemotingCommand.request(34, oneway=True)
    server.receive_data(client.send(oneway))
    assert server.next_event().command.is_oneway and server.in_flight == 0
    client.receive_data(encode(RemotingCommand.response(0, opaque=99)))
    assert client.next_event().request_code is None  # nobody asked


def test_connection_states():
    conn = Connection()
    conn.receive_data(b"\x00\x00\x00\x02\x00\x00")
    with pytest.raises(FrameError):
        conn.next_event()
    assert conn.state is ConnectionState.ERROR
    with pytest.raises(RemotingStateError):
        conn.next_event()
    conn = Connection()
    conn.receive_data(encode(RemotingCommand.request(34))[:10])
    conn.receive_data(b"")
    closed = conn.next_event()
    assert isinstance(closed, ConnectionClosed) and closed.incomplete_bytes == 10
    assert conn.state is ConnectionState.CLOSED


def test_a_huge_length_is_refused_before_anything_is_buffered():
    conn = Connection()
    conn.receive_data((2**31 - 5).to_bytes(4, "big"))
    with pytest.raises(FrameTooLargeError):
        conn.next_event()
    assert conn.decoder.buffered == 4


# -- the asyncio shells -------------------------------------------------------------------------------

def echo_dispatcher() -> RequestDispatcher:
    d = RequestDispatcher()
    d.register(105, lambda req, ch: req.answer(0, None, {"topic": req.ext_fields["topic"]}, body=req.body))

    async def slow(req, ch):
        await asyncio.sleep(float(req.ext_fields["sleep"]))
        return req.answer(0)

    d.register(200, slow)
    d.register(201, lambda req, ch: (_ for _ in ()).throw(ValueError("boom")))
    d.register(202, lambda req, ch: (_ for _ in ()).throw(ProcessorError(17, "no such topic")))
    return d


def test_request_response_oneway_and_errors_over_a_socket():
    async def main():
        server = await RemotingServer(echo_dispatcher()).start()
        client = RemotingClient()
        try:
            r = await client.invoke(server.address, RemotingCommand.request(105, {"topic": "T"}, body=b"hi"))
            assert (r.code, r.ext_fields, r.body) == (0, {"topic": "T"}, b"hi")
            r = await client.invoke(server.address, RemotingCommand.request(999))
            assert (r.code, r.remark) == (3, " request type 999 not supported")
            r = await client.invoke(server.address, RemotingCommand.request(201))
            assert r.code == 1 and "boom" in r.remark
            r = await client.invoke(server.address, RemotingCommand.request(202))
            assert (r.code, r.remark) == (17, "no such topic")
            await client.invoke_oneway(server.address, RemotingCommand.request(105, {"topic": "T"}))
            with pytest.raises(RemotingTimeoutError):
                await client.invoke(server.address, RemotingCommand.request(200, {"sleep": "2"}), timeout=0.2)
            # the client closes a connection after a sync timeout, as the Java client does
            r = await client.invoke(server.address, RemotingCommand.request(105, {"topic": "again"}))
            assert r.ext_fields == {"topic": "again"}
            results = await asyncio.gather(*(client.invoke(server.address, RemotingCommand.request(
                200, {"sleep": str(0.05 * (5 - i))})) for i in range(5)))  # answered out of order
            assert [x.code for x in results] == [0] * 5
        finally:
            await client.close()
            await server.stop()
    run(main())


def test_the_server_calls_the_client_back_on_its_own_connection():
    async def main():
        seen = {}
        client_side = RequestDispatcher()
        client_side.register(RequestCode.CHECK_TRANSACTION_STATE, lambda req, ch: seen.setdefault("check", req))
        client_side.register(RequestCode.GET_CONSUMER_RUNNING_INFO, lambda req, ch: req.answer(0, body=b"{}"))
        server_side = RequestDispatcher()
        channels = []
        server_side.register(34, lambda req, ch: (channels.append(ch), req.answer(0))[1])
        server = await RemotingServer(server_side).start()
        client = RemotingClient(client_side)
        try:
            await client.invoke(server.address, RemotingCommand.request(34))
            (channel,) = channels
            channel.invoke_oneway(RemotingCommand.request(RequestCode.CHECK_TRANSACTION_STATE, {"msgId": "M"}))
            answer = await channel.invoke(RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO), timeout=2)
            assert answer.body == b"{}"
            for _ in range(50):
                if "check" in seen:
                    break
                await asyncio.sleep(0.01)
            assert seen["check"].ext_fields == {"msgId": "M"}
        finally:
            await client.close()
            await server.stop()
    run(main())


def test_a_bad_frame_closes_only_its_connection():
    async def main():
        server = await RemotingServer(echo_dispatcher()).start()
        host, port = server.host, server.port
        good_r, good_w = await asyncio.open_connection(host, port)
        bad_r, bad_w = await asyncio.open_connection(host, port)
        bad_w.write(b"\x00\x00\x00\x0c\x05\x00\x00\x08" + bytes(8))
        await bad_w.drain()
        assert await asyncio.wait_for(bad_r.read(), 5) == b""  # closed by the server
        good_w.write(encode(RemotingCommand.request(105, {"topic": "still"}, opaque=5)))
        await good_w.drain()
        head = await asyncio.wait_for(good_r.readexactly(4), 5)
        assert b"still" in await good_r.readexactly(int.from_bytes(head, "big"))
        good_w.close()
        await server.stop()
    run(main())


def test_limits_hold_whatever_the_peer_does():
    async def main():
        limits = Limits(max_in_flight=4, idle_timeout=0.5)
        server = await RemotingServer(echo_dispatcher(), limits=limits).start()
        host, port = server.host, server.port
        # a 2 GiB length: refused at once, nothing allocated
        r, w = await asyncio.open_connection(host, port)
        w.write((2**31 - 1).to_bytes(4, "big"))
        await w.drain()
        assert await asyncio.wait_for(r.read(), 5) == b""
        # a partial frame that never finishes: closed when idle
        r, w = await asyncio.open_connection(host, port)
        w.write(encode(RemotingCommand.request(105, {"topic": "T"}))[:9])
        await w.drain()
        t0 = time.monotonic()
        assert await asyncio.wait_for(r.read(), 5) == b""
        assert time.monotonic() - t0 < 3
        # more requests in flight than allowed: reading pauses, everything is answered in the end
        client = RemotingClient(limits=Limits(idle_timeout=None))
        slow = [asyncio.ensure_future(client.invoke(server.address, RemotingCommand.request(200, {"sleep": "0.2"})))
                for _ in range(12)]
        await asyncio.sleep(0.05)
        await asyncio.sleep(0.05)
        (protocol,) = [p for p in server.protocols if p.conn.frames_in]
        assert protocol.conn.in_flight <= 4 and protocol.paused
        assert [x.code for x in await asyncio.gather(*slow)] == [0] * 12
        # a client that disconnects mid-request: its task is cancelled, nothing leaks
        r, w = await asyncio.open_connection(host, port)
        w.write(encode(RemotingCommand.request(200, {"sleep": "5"})))
        await w.drain()
        await asyncio.sleep(0.1)
        w.close()
        await asyncio.sleep(0.2)
        assert all(not p.tasks for p in server.protocols)
        await client.close()
        await server.stop()
        assert not server.protocols
    run(main())


def test_connect_errors_and_closed_connections_are_typed():
    async def main():
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        client = RemotingClient(connect_timeout=1)
        with pytest.raises(RemotingConnectError):
            await client.invoke(f"127.0.0.1:{port}", RemotingCommand.request(105))
        server = await RemotingServer(echo_dispatcher()).start()
        pending = asyncio.ensure_future(client.invoke(server.address, RemotingCommand.request(200, {"sleep": "10"})))
        await asyncio.sleep(0.1)
        await server.stop()
        with pytest.raises(RemotingClosedError):
            await pending
        await client.close()
    run(main())


def test_no_tasks_or_protocols_leak_after_many_connections():
    async def main():
        server = await RemotingServer(echo_dispatcher()).start()
        for i in range(30):
            client = RemotingClient()
            await client.invoke(server.address, RemotingCommand.request(105, {"topic": str(i)}))
            await client.close()
        await asyncio.sleep(0.1)
        assert len(server.protocols) == 0
        await server.stop()
        current = asyncio.current_task()
        assert [t for t in asyncio.all_tasks() if t is not current] == []
    asyncio.run(main())
    gc.collect()
