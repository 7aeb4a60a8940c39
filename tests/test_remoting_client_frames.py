"""Every frame the real RocketMQ 4.9.4 Java client, name server and broker exchanged (both header
serializations, recorded by ``tools/rocketmq_client_frames/record.py``) decodes and encodes back to
the same bytes — with the typed header where 4.9.4 writes a ``FastCodesHeader`` field by field."""

from __future__ import annotations

import json
import pathlib

import pytest

from pymq_ref.remoting.codec import decode, encode
from pymq_ref.remoting.codes import SerializeType
from pymq_ref.remoting.protocol import api_of

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-client-frames" / "frames.jsonl"


def frames() -> list[dict]:
    return [json.loads(line) for line in DATA.read_text().splitlines()]


def with_request_codes(recs: list[dict]):
    """(record, command, request code it answers or its own code), matching responses by opaque."""
    pending = {}
    for rec in recs:
        cmd = decode(bytes.fromhex(rec["frame_hex"])).command
        if cmd.is_response:
            other = "c2s" if rec["direction"] == "s2c" else "s2c"
            code = pending.pop((rec["peer"], rec["conn"], other, cmd.opaque), None)
        else:
            code = pending[(rec["peer"], rec["conn"], rec["direction"], cmd.opaque)] = cmd.code
        yield rec, cmd, code


def test_the_recording_has_both_serializations_and_both_peers():
    recs = frames()
    seen = {(r["run"], r["peer"], bytes.fromhex(r["frame_hex"])[4]) for r in recs}
    assert {("json", "namesrv", 0), ("json", "broker", 0), ("rocketmq", "namesrv", 1), ("rocketmq", "broker", 1)} <= seen
    codes = {decode(bytes.fromhex(r["frame_hex"])).command.code_name for r in recs}
    assert {"SEND_MESSAGE_V2", "PULL_MESSAGE", "HEART_BEAT", "NOTIFY_CONSUMER_IDS_CHANGED"} <= codes


@pytest.mark.parametrize("run", ["json", "rocketmq"])
def test_every_frame_encodes_back_to_its_bytes(run):
    checked = typed = 0
    for rec, cmd, code in with_request_codes([r for r in frames() if r["run"] == run]):
        frame = bytes.fromhex(rec["frame_hex"])
        again = encode(cmd)
        if again != frame:
            # a FastCodesHeader writes its own fields first, in declaration order (ROCKETMQ only)
            api = api_of(code)
            cls = api.response_header if cmd.is_response else api.request_header
            assert cmd.serialize_type == SerializeType.ROCKETMQ and cls is not None and cls.FAST, rec["seq"]
            header = cmd.header(cls)
            rest = {k: v for k, v in cmd.ext().items() if k not in header.to_ext()}
            again = encode(cmd.with_(ext_fields=rest or None, custom_header=header))
            typed += 1
        assert again == frame, (rec["seq"], cmd)
        checked += 1
    assert checked > 30
    assert (typed > 0) == (run == "rocketmq")
