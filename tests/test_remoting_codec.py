"""The remoting codec: frames, both header serializations, typed headers, JSON bodies, spans."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import (BrokerData, ConsumeStats, HeartbeatData, OffsetWrapper, QueueData, TopicRouteData,
                                      decode_json, encode_json)
from pymq_ref.remoting.codec import MAX_FRAME_LENGTH, decode, encode, frame_length
from pymq_ref.remoting.codes import (LanguageCode, RequestCode, ResponseCode, SerializeType, request_code_name,
                                     version_name)
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.errors import EncodeError, FrameError, FrameTooLargeError, HeaderFieldError

ROUTE_JSON_FRAME = bytes.fromhex(
    "00000087000000837b22636f6465223a3130352c226578744669656c6473223a7b22746f706963223a22546f70696354657374"
    "227d2c22666c6167223a302c226c616e6775616765223a224a415641222c226f7061717565223a312c2273657269616c697a65"
    "5479706543757272656e74525043223a224a534f4e222c2276657273696f6e223a3430317d")
ROUTE_ROCKETMQ_FRAME = bytes.fromhex(
    "0000002d010000290069000191000000010000000000000000000000140005746f70696300000009546f70696354657374")


def test_get_route_request_is_the_bytes_a_java_client_sends():
    cmd = RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, H.GetRouteInfoRequestHeader(topic="TopicTest"),
                                  opaque=1)
    assert encode(cmd) == ROUTE_JSON_FRAME
    assert encode(cmd.with_(serialize_type=SerializeType.ROCKETMQ)) == ROUTE_ROCKETMQ_FRAME
    for frame, stype in ((ROUTE_JSON_FRAME, SerializeType.JSON), (ROUTE_ROCKETMQ_FRAME, SerializeType.ROCKETMQ)):
        got = decode(frame).command
        assert (got.code, got.opaque, got.flag, got.version, got.language) == (105, 1, 0, 401, LanguageCode.JAVA)
        assert got.ext_fields == {"topic": "TopicTest"} and got.serialize_type == stype and got.body is None
        assert got.header(H.GetRouteInfoRequestHeader).topic == "TopicTest"


def test_json_header_member_order_and_omitted_nulls():
    cmd = RemotingCommand.response(ResponseCode.SUCCESS, "ok", {"b": "2", "a": "1"}, b"xy", opaque=7)
    header = encode(cmd)[8:-2].decode()
    assert list(json.loads(header)) == ["code", "extFields", "flag", "language", "opaque", "remark",
                                        "serializeTypeCurrentRPC", "version"]
    no_extras = encode(RemotingCommand.request(34))[8:].decode()
    assert "extFields" not in no_extras and "remark" not in no_extras
    with_empty_header = encode(RemotingCommand.response(0, header=H.UnregisterClientResponseHeader()))
    assert b'"extFields":{}' in with_empty_header


def test_ext_fields_follow_java_hashmap_order():
    header = H.SendMessageRequestHeader(producer_group="PG", topic="T", default_topic="TBW102", default_topic_queue_nums=4,
                                        queue_id=0, sys_flag=0, born_timestamp=1, flag=0)
    ext = json.loads(encode(RemotingCommand.request(10, header))[8:])["extFields"]
    from pymq_ref.formats.properties import java_hashmap_order
    assert list(ext) == java_hashmap_order(list(header.to_ext()))


def test_fast_header_goes_first_in_declaration_order_in_the_binary_header():
    header = H.SendMessageResponseHeader(msg_id="ID", queue_id=1, queue_offset=2)
    cmd = RemotingCommand.response(0, None, header, serialize_type=SerializeType.ROCKETMQ,
                                   ext_fields={"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"})
    got = decode(encode(cmd)).command
    assert list(got.ext_fields)[:3] == ["msgId", "queueId", "queueOffset"]
    assert got.ext_fields["MSG_REGION"] == "DefaultRegion" and got.ext_fields["TRACE_ON"] == "true"


def test_fastjson_escaping_of_strings():
    cmd = RemotingCommand.response(1, 'q"b\\s/\x01\n\x7f\x85\u2028é中😀')
    header = encode(cmd)[8:].decode("utf-8")
    assert '"remark":"q\\"b\\\\s/\\u0001\\n\\u007F\\u0085\\u2028é中😀"' in header
    assert decode(encode(cmd)).command.remark == cmd.remark


def test_reader_accepts_what_clients_write():
    header = (b'{"code":"310","extFields":{"a":"PG","d":4,"k":true,"z":null},"language":"PYTHON","opaque":3,'
              b'"flag":0,"unknownMember":[1,2]}')
    cmd = decode(len(header).to_bytes(4, "big").rjust(4) and (4 + len(header)).to_bytes(4, "big")
                 + len(header).to_bytes(4, "big") + header).command
    assert cmd.code == 310 and cmd.language == LanguageCode.PYTHON and cmd.version == 0
    assert cmd.ext_fields == {"a": "PG", "d": "4", "k": "true", "z": None}
    unknown_language = b'{"code":1,"language":"COBOL"}'
    assert decode((4 + len(unknown_language)).to_bytes(4, "big") + len(unknown_language).to_bytes(4, "big")
                  + unknown_language).command.language is None


def test_rocketmq_empty_strings_decode_as_null():
    cmd = RemotingCommand.request(105, {"topic": ""}, serialize_type=SerializeType.ROCKETMQ, remark="")
    got = decode(encode(cmd)).command
    assert got.ext_fields == {"topic": None} and got.remark is None


@pytest.mark.parametrize("frame, field", [
    (b"\x00\x00\x00\x02\x00\x00", "total_length"),
    (bytes.fromhex("0000000c050000080000000000000000"), "serialize_type"),
    ((8).to_bytes(4, "big") + (100).to_bytes(4, "big") + b"abcd", "header_length"),
    ((16).to_bytes(4, "big") + (12).to_bytes(4, "big") + b"{not json!!}", "header"),
    ((9).to_bytes(4, "big") + (5).to_bytes(4, "big") + b"[1,2]", "header"),
    ((4 + 25).to_bytes(4, "big") + ((1 << 24) | 25).to_bytes(4, "big") + bytes.fromhex("0069000191000000010000000000000000")
     + (9999).to_bytes(4, "big") + b"abcd", "header.ext_length"),
])
def test_bad_frames_raise_typed_errors_naming_the_field(frame, field):
    with pytest.raises(FrameError) as err:
        decode(frame)
    assert err.value.field == field


def test_a_frame_above_the_limit_is_refused_from_its_length_field():
    with pytest.raises(FrameTooLargeError):
        frame_length((0x7FFFFFF0).to_bytes(4, "big"))
    assert frame_length((MAX_FRAME_LENGTH - 4).to_bytes(4, "big")) == MAX_FRAME_LENGTH
    with pytest.raises(EncodeError):
        encode(RemotingCommand.request(10, body=bytes(MAX_FRAME_LENGTH)))


def test_rocketmq_header_cannot_carry_codes_above_int16():
    with pytest.raises(EncodeError):
        encode(RemotingCommand.request(200050, serialize_type=SerializeType.ROCKETMQ))


def test_spans_cover_every_field_of_both_serializations():
    for frame in (ROUTE_JSON_FRAME, ROUTE_ROCKETMQ_FRAME):
        spans = decode(frame, with_spans=True, base=100).spans
        paths = {s.path for s in spans} | {c.path for s in spans for c in s.children}
        assert {"total_length", "serialize_type", "header_length", "code", "opaque", "flag", "extFields.topic"} <= paths
        assert all(100 <= s.offset and s.end <= 100 + len(frame) for s in spans)
    json_spans = {s.path: s for s in decode(ROUTE_JSON_FRAME, with_spans=True).spans}
    assert ROUTE_JSON_FRAME[json_spans["code"].offset:json_spans["code"].end] == b'"code":105'


def test_headers_decode_leniently_like_4_9_4():
    h = H.SendMessageRequestHeader.from_ext({"producerGroup": "PG", "queueId": "x", "batch": "TRUE"})
    assert h.producer_group == "PG" and h.queue_id is None and h.batch is True
    assert "topic" in h.missing and h.invalid == ("queueId",)
    assert H.SendMessageRequestHeader.from_ext(None).missing == ()
    with pytest.raises(HeaderFieldError) as err:
        H.PullMessageRequestHeader.from_ext({"queueId": "1.5"})
    assert "NumberFormatException" in err.value.java_message


def test_send_v2_is_v1_under_short_names():
    v1 = H.SendMessageRequestHeader(producer_group="PG", topic="T", default_topic="TBW102", default_topic_queue_nums=4,
                                    queue_id=-1, sys_flag=0, born_timestamp=5, flag=0, properties="a\x01b",
                                    max_reconsume_times=16, batch=True)
    v2 = H.SendMessageRequestHeaderV2.from_v1(v1)
    assert v2.to_ext()["l"] == "16" and v2.to_ext()["m"] == "true"
    assert v2.to_v1() == v1
    assert H.SendMessageRequestHeaderV2.from_ext(v2.to_ext()).to_v1() == v1


def test_every_header_class_is_declared_with_meanings():
    assert len(H.ALL_HEADERS) == 80
    for cls in H.ALL_HEADERS.values():
        for f in cls.FIELDS:
            assert f.doc, f"{cls.JAVA}.{f.name} has no meaning"


def test_bodies_as_fastjson_writes_them():
    route = TopicRouteData(None, [QueueData("broker-a", 4, 4, 6, 0)],
                           [BrokerData("DefaultCluster", "broker-a", {1: "127.0.0.1:10921", 0: "127.0.0.1:10911"})], {})
    assert encode_json(route, standard=True) == (
        '{"brokerDatas":[{"brokerAddrs":{"0":"127.0.0.1:10911","1":"127.0.0.1:10921"},"brokerName":"broker-a",'
        '"cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":"broker-a","perm":6,'
        '"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}')
    assert '"brokerAddrs":{0:"127.0.0.1:10911",1:"127.0.0.1:10921"}' in encode_json(route)
    assert decode_json(TopicRouteData, encode_json(route)) == decode_json(TopicRouteData, encode_json(route, standard=True))
    stats = ConsumeStats({MessageQueue("TopicTest", "broker-a", 0): OffsetWrapper(10, 7, 1650000000000)})
    text = encode_json(stats)
    assert text.startswith('{"consumeTps":0.0,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"TopicTest"}:')
    assert decode_json(ConsumeStats, text) == stats


def test_heartbeat_body_reads_python_and_java_forms():
    java = ('{"clientID":"c1","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":'
            '"CONSUME_PASSIVELY","groupName":"CG","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":'
            'false,"codeSet":[2598919],"expressionType":"TAG","subString":"TagA","subVersion":1,"tagsSet":["TagA"],'
            '"topic":"T"}],"unitMode":false}],"producerDataSet":[]}')
    hb = decode_json(HeartbeatData, java)
    assert hb.client_id == "c1" and hb.consumer_data_set[0].subscription_data_set[0].code_set == [2598919]
    assert encode_json(hb) == java


def test_names_of_codes_and_versions():
    assert request_code_name(310) == "SEND_MESSAGE_V2" and request_code_name(9999) == "UNKNOWN_REQUEST(9999)"
    assert version_name(401) == "V4_9_4" and version_name(37) == "V3_0_11" and version_name(10**6) == "HIGHER_VERSION"


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_commands = st.builds(
    RemotingCommand, code=st.integers(-32768, 32767), language=st.sampled_from(list(LanguageCode)),
    version=st.integers(-32768, 32767), opaque=st.integers(-2**31, 2**31 - 1), flag=st.integers(0, 3),
    remark=st.one_of(st.none(), _text.filter(bool)),
    ext_fields=st.one_of(st.none(), st.dictionaries(_text.filter(bool), _text.filter(bool), max_size=6)),
    body=st.one_of(st.none(), st.binary(min_size=1, max_size=64)),
    serialize_type=st.sampled_from(list(SerializeType)))


@settings(max_examples=300, deadline=None)
@given(_commands)
def test_any_command_round_trips_through_both_serializations(cmd):
    got = decode(encode(cmd)).command
    ext = None if cmd.ext_fields is None else dict(cmd.ext_fields)
    if cmd.serialize_type == SerializeType.ROCKETMQ and not ext:
        ext = None  # the binary header writes no map for an empty one; Java reads a null map back
    assert got == cmd.with_(ext_fields=ext)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["topic", "queueId", "x", "ä"]), _text), max_size=5))
def test_json_ext_fields_reencode_byte_for_byte(pairs):
    cmd = RemotingCommand.request(11, dict(pairs))
    assert encode(decode(encode(cmd)).command) == encode(cmd)


def test_compressed_registration_is_the_bytes_java_writes():
    """RegisterBrokerBody.encode(true) copies the topics into a default ConcurrentHashMap first: its
    order, not the broker table's, is the order of the compressed body (corpus/frames/bodies/)."""
    from pathlib import Path

    from pymq_ref.remoting.bodies import decode_register_body
    from pymq_ref.remoting.bodies.route import encode_register_body

    bodies = Path(__file__).resolve().parents[1] / "corpus" / "frames" / "bodies"
    for case in ("RegisterBrokerBody", "RegisterBrokerBody.filterServers"):
        body = decode_register_body((bodies / f"{case}.default.bin").read_bytes())
        assert encode_register_body(body, compressed=True) == (bodies / f"{case}.compressed.bin").read_bytes(), case
