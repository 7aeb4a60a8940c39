"""pymq_ref.remoting.explain: a meaning for every field path the codec's spans name."""

from __future__ import annotations

import json
import pathlib

from pymq_ref.formats.spans import walk
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.codec import decode, encode
from pymq_ref.remoting.codes import RequestCode, ResponseCode, SerializeType
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.explain import FRAME_FIELDS, body_meaning, ext_key_meaning, field_meaning, frame_meaning

DATA = pathlib.Path(__file__).parent / "data" / "rocketmq-4.9.4-client-frames" / "frames.jsonl"


def real_send_frames():
    for line in DATA.read_text().splitlines():
        rec = json.loads(line)
        if rec["code"] == RequestCode.SEND_MESSAGE_V2 and rec["direction"] == "c2s":
            yield bytes.fromhex(rec["frame_hex"])


def test_every_span_of_real_frames_has_a_meaning_in_both_serializations():
    kinds = set()
    for frame in real_send_frames():
        decoded = decode(frame, with_spans=True)
        meaning = frame_meaning(decoded.command)
        kinds.add(decoded.command.serialize_type)
        for span in walk(decoded.spans):
            assert meaning(span.path), span.path
    assert kinds == {SerializeType.JSON, SerializeType.ROCKETMQ}


def test_short_keys_of_send_message_v2_name_their_long_field():
    send = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, H.SendMessageRequestHeaderV2(producer_group="g"))
    assert field_meaning("extFields.a", send) == "(producerGroup, String, required) the producer group"
    assert field_meaning("extFields.d", send).startswith("(defaultTopicQueueNums, Integer, required) queues of")
    assert field_meaning("extFields", send).startswith("the custom header SendMessageRequestHeaderV2:")
    # the long-named V1 header: no alias
    v1 = RemotingCommand.request(RequestCode.SEND_MESSAGE, H.SendMessageRequestHeader(topic="t"))
    assert field_meaning("extFields.topic", v1) == "(String, required) the topic"


def test_values_complete_the_sentence():
    route = RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"}, opaque=9)
    assert field_meaning("code", route) == "what to do (RequestCode) — GET_ROUTEINFO_BY_TOPIC"
    assert field_meaning("version", route).endswith("— V4_9_4")
    assert field_meaning("flag", route).endswith("here 0: a two-way request")
    assert field_meaning("flag", route.with_(flag=2)).endswith("here 2: a oneway request (no response)")
    answer = route.answer(ResponseCode.TOPIC_NOT_EXIST, "no route")
    assert field_meaning("code", answer, RequestCode.GET_ROUTEINFO_BY_TOPIC) == \
        "how it went (ResponseCode) — TOPIC_NOT_EXIST to GET_ROUTEINFO_BY_TOPIC"
    assert field_meaning("code", answer) == "how it went (ResponseCode) — TOPIC_NOT_EXIST"
    assert field_meaning("serialize_type", route.with_(serialize_type=SerializeType.ROCKETMQ)).endswith("ROCKETMQ")


def test_ext_keys_outside_header_classes():
    assert "AclClientRPCHook" in ext_key_meaning("Signature", H.GetRouteInfoRequestHeader)
    assert "SendMessageProcessor" in ext_key_meaning("MSG_REGION", H.SendMessageResponseHeader)
    assert ext_key_meaning("brokerName", H.GetRouteInfoRequestHeader).startswith(
        "not declared by GetRouteInfoRequestHeader; the broker's name")
    assert ext_key_meaning("no-such-key", H.GetRouteInfoRequestHeader) == "not declared by GetRouteInfoRequestHeader"
    assert ext_key_meaning("no-such-key") == "an ext entry no known header class declares"


def test_bodies_and_unknown_paths():
    register = RemotingCommand.request(RequestCode.REGISTER_BROKER, body=b"{}")
    assert "RegisterBrokerBody" in body_meaning(register)
    answer = RemotingCommand.response(0, body=b"{}")
    assert body_meaning(answer, RequestCode.GET_ROUTEINFO_BY_TOPIC) == "JSON body: TopicRouteData, as fastjson writes it"
    assert body_meaning(answer) == FRAME_FIELDS["body"]  # a response, its request unknown
    assert "message body" in field_meaning("body", RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, body=b"x"))
    assert field_meaning("no.such.path", register) == ""
    assert field_meaning("opaque") == FRAME_FIELDS["opaque"]  # no command: the fixed sentence


def test_meaning_of_every_layout_field_of_an_encoded_frame():
    cmd = RemotingCommand.response(ResponseCode.SYSTEM_ERROR, "boom", {"k": "v"}, b"\x01",
                                   serialize_type=SerializeType.ROCKETMQ)
    for span in walk(decode(encode(cmd), with_spans=True).spans):
        assert field_meaning(span.path, cmd), span.path
