"""Fuzzed frames: the codec raises typed errors only; a live name server keeps serving.

Inputs: random bytes; real frames (what the real 4.9.4 broker, mqadmin and Java client sent,
``tests/data/rocketmq-4.9.4-namesrv/clients.jsonl``) with bytes flipped, cut, repeated; lying
length fields (total, header, remark, ext); headers that are not JSON or not objects; unknown
serialize types. Everything a server does with a frame is exercised: framing, header decoding,
the typed header of the request code, the JSON body.
"""

from __future__ import annotations

import asyncio
import gc
import json
import pathlib
import random
import tracemalloc

from pymq_ref.formats.json_reader import JsonSyntaxError
from pymq_ref.namesrv import NamesrvController
from pymq_ref.remoting.bodies.bean import BodyError
from pymq_ref.remoting.codec import encode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.connection import NEED_DATA, Connection, ConnectionClosed
from pymq_ref.remoting.errors import FrameError
from pymq_ref.remoting.protocol import body_of, header_of

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-namesrv" / "clients.jsonl"
TYPED = (FrameError, BodyError, JsonSyntaxError)


def real_frames() -> list[bytes]:
    return [bytes.fromhex(json.loads(line)["frame_hex"]) for line in DATA.read_text().splitlines()]


def fuzz_inputs(rng: random.Random, seeds: list[bytes]):
    """Endless fuzzed byte strings (each one connection's worth of input)."""
    while True:
        kind = rng.randrange(8)
        base = bytearray(rng.choice(seeds))
        if kind == 0:
            yield bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 64)))
        elif kind == 1:  # flip bytes anywhere
            for _ in range(rng.randrange(1, 6)):
                base[rng.randrange(len(base))] = rng.getrandbits(8)
            yield bytes(base)
        elif kind == 2:  # lying total length
            base[0:4] = rng.choice([0, 1, 3, 4, 7, len(base) + rng.randrange(1, 99), 2**31 - 1, 2**32 - 1,
                                    rng.getrandbits(32)]).to_bytes(4, "big")
            yield bytes(base)
        elif kind == 3:  # lying header length / serialize type
            base[4:8] = ((rng.choice([0, 1, 2, 7, 255]) << 24) | rng.choice(
                [0, 1, len(base), 0xFFFFFF, rng.getrandbits(24)])).to_bytes(4, "big")
            yield bytes(base)
        elif kind == 4:  # cut anywhere, then more frames
            yield bytes(base[:rng.randrange(len(base))]) + rng.choice(seeds)
        elif kind == 5:  # a JSON header that is not the bean
            text = rng.choice([b"{", b"[]", b"null", b'{"code":"x"}', b'{"code":1,"extFields":[1]}',
                               b'{"code":1,"extFields":{"a":{"b":1}}}', b'{"code":1e999}', b"{" * 5000,
                               b'{"code":105,"extFields":{"topic":"\\ud800"}}', b'\xff\xfe{"code":1}'])
            yield (4 + len(text)).to_bytes(4, "big") + len(text).to_bytes(4, "big") + text
        elif kind == 6:  # ROCKETMQ headers with lying inner lengths
            hdr = bytearray(rng.getrandbits(8) for _ in range(rng.randrange(13, 40)))
            hdr[13:17] = rng.choice([0, 1, 5, 100, 2**31 - 1]).to_bytes(4, "big")
            yield (4 + len(hdr)).to_bytes(4, "big") + ((1 << 24) | len(hdr)).to_bytes(4, "big") + bytes(hdr)
        else:  # a valid frame of any request code with a garbage body
            cmd = RemotingCommand.request(rng.choice([34, 41, 42, 46, 103, 105, 322, 36, 10, 310, 11]),
                                          {"compressed": rng.choice(["true", "false"]), "topic": "T"},
                                          body=bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 40))))
            yield encode(cmd)


def consume(data: bytes) -> int:
    """Everything a server does with one connection's bytes; returns the commands decoded."""
    conn = Connection()
    conn.receive_data(data)
    conn.receive_data(b"")
    n = 0
    try:
        while True:
            event = conn.next_event()
            if event is NEED_DATA or isinstance(event, ConnectionClosed):
                return n
            n += 1
            cmd = event.command
            for decoder in (header_of, body_of):
                try:
                    decoder(cmd)
                except TYPED:
                    pass
    except FrameError:
        return n


def test_a_hundred_thousand_fuzzed_frames_give_typed_errors_only():
    rng = random.Random(20261125)
    inputs = fuzz_inputs(rng, real_frames())
    decoded = sum(consume(next(inputs)) for _ in range(100_000))
    assert decoded > 10_000  # plenty of the mutated frames still decode (and go through the decoders)


def test_a_live_name_server_keeps_serving_through_fuzz():
    async def main():
        ns = await NamesrvController("127.0.0.1", 0, kv_config_path=None, scan=False).start()
        host, port = ns.address.rsplit(":", 1)
        rng = random.Random(7)
        inputs = fuzz_inputs(rng, real_frames())
        steady_answers = []

        async def steady():
            r, w = await asyncio.open_connection(host, port)
            for i in range(200):
                w.write(encode(RemotingCommand.request(106, opaque=i)))
                await w.drain()
                head = await asyncio.wait_for(r.readexactly(4), 5)
                await r.readexactly(int.from_bytes(head, "big"))
                steady_answers.append(i)
                await asyncio.sleep(0.002)
            w.close()

        async def attacker(k: int):
            for _ in range(20):
                try:
                    r, w = await asyncio.open_connection(host, port)
                    w.write(next(inputs))
                    await w.drain()
                    w.write_eof()
                    await asyncio.wait_for(r.read(), 2)
                    w.close()
                except (ConnectionError, asyncio.TimeoutError):
                    pass

        tracemalloc.start()
        before = tracemalloc.take_snapshot()
        await asyncio.gather(steady(), *(attacker(k) for k in range(50)))
        await asyncio.sleep(0.2)
        gc.collect()  # closed connections are reference cycles (protocol <-> channel) until collected
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        ours = [tracemalloc.Filter(True, "*pymq_ref*"), tracemalloc.Filter(True, "*asyncio*")]
        grown = sum(d.size_diff for d in after.filter_traces(ours).compare_to(before.filter_traces(ours), "filename"))
        assert steady_answers == list(range(200))  # never missed an answer while 1,000 fuzzed connections came
        assert not ns.server.protocols  # every connection gone
        assert grown < 1024 * 1024, f"{grown} bytes still held by pymq_ref and asyncio"
        await ns.stop()
        current = asyncio.current_task()
        assert [t for t in asyncio.all_tasks() if t is not current] == []

    asyncio.run(main())
