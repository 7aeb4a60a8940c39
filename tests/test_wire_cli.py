"""``pymq namesrv`` and ``pymq proxy`` as a user runs them: real processes, real sockets, signals."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import subprocess
import sys
import time

from pymq_ref.remoting import headers as H
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.transport import RemotingClient

PYMQ = [sys.executable, "-m", "pymq_ref.cli"]


def start(args, **kw) -> subprocess.Popen:
    return subprocess.Popen(PYMQ + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def address_from(stream, pattern: str, timeout: float = 20) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = stream.readline()
        m = re.search(pattern, line)
        if m:
            return m.group(1)
    raise AssertionError(f"no line matching {pattern!r}")


def ask_route(address: str, topic: str) -> RemotingCommand:
    async def main():
        client = RemotingClient()
        try:
            return await client.invoke(address, RemotingCommand.request(105, H.GetRouteInfoRequestHeader(topic=topic)))
        finally:
            await client.close()
    return asyncio.run(main())


def test_namesrv_serves_and_stops_cleanly_on_sigterm(tmp_path):
    proc = start(["namesrv", "--listen", "127.0.0.1:0", "--kv-config", str(tmp_path / "kv.json")])
    try:
        address = address_from(proc.stdout, r"listening on (\S+)")
        answer = ask_route(address, "NoSuchTopic")
        assert answer.code == 17 and "NoSuchTopic" in answer.remark
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert "name server stopped" in err


def test_namesrv_on_a_taken_port_says_so_and_exits_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = start(["namesrv", "--listen", f"127.0.0.1:{port}"])
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "cannot start the name server" in err and "Traceback" not in err


def test_proxy_relays_unchanged_and_records_both_directions(tmp_path):
    ns = start(["namesrv", "--listen", "127.0.0.1:0", "--kv-config", str(tmp_path / "kv.json")])
    jsonl, hexfile = tmp_path / "cap.jsonl", tmp_path / "cap.hex"
    try:
        ns_address = address_from(ns.stdout, r"listening on (\S+)")
        px = start(["proxy", "--listen", "127.0.0.1:0", "--to", ns_address, "--jsonl", str(jsonl), "--hex",
                    str(hexfile), "--raw"])
        try:
            px_address = address_from(px.stderr, r"pymq proxy: (\S+) ->")
            direct, relayed = ask_route(ns_address, "T"), ask_route(px_address, "T")
            assert (relayed.code, relayed.remark) == (direct.code, direct.remark)
        finally:
            px.send_signal(signal.SIGINT)
            px.communicate(timeout=20)
        assert px.returncode == 0
    finally:
        ns.send_signal(signal.SIGTERM)
        ns.communicate(timeout=20)
    records = [json.loads(line) for line in jsonl.read_text().splitlines()]
    request, response = records
    assert (request["direction"], request["code_name"], request["header"]["topic"]) == ("c2s", "GET_ROUTEINFO_BY_TOPIC", "T")
    assert (response["direction"], response["code_name"], response["request_code_name"]) == \
        ("s2c", "TOPIC_NOT_EXIST", "GET_ROUTEINFO_BY_TOPIC")
    assert bytes.fromhex(request["frame_hex"])[:4] == (request["frame_length"] - 4).to_bytes(4, "big")
    text = hexfile.read_text()
    assert "GET_ROUTEINFO_BY_TOPIC" in text and "extFields.topic" in text
