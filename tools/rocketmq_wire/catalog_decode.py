"""Decode cases of the golden frame corpus (reader tolerance): frames written by hand — the way
other clients, old versions or broken peers write them — that the recorder feeds to the real
NettyDecoder, RemotingCommand.decode and decodeCommandCustomHeader; and JSON bodies written the
ways non-Java clients write them, fed to fastjson. Nothing here runs Java.
"""

from __future__ import annotations

import json
import struct

from catalog_headers import NS, P

GET_ROUTE = NS + "GetRouteInfoRequestHeader"
V2 = P + "SendMessageRequestHeaderV2"
BASE = '"flag":0,"language":"JAVA","opaque":{op},"serializeTypeCurrentRPC":"JSON","version":401'


# -- frame builders --------------------------------------------------------------------------
def frame(header: bytes, serialize_type: int, body: bytes = b"", total: int | None = None,
          header_len: int | None = None) -> bytes:
    """totalLength, (type << 24 | headerLength), header, body — lengths overridable to lie."""
    hl = len(header) if header_len is None else header_len
    tl = 4 + len(header) + len(body) if total is None else total
    return struct.pack(">iI", tl, ((serialize_type & 0xFF) << 24) | (hl & 0xFFFFFF)) + header + body


def json_header(ext: dict | None = None, code: int = 105, opaque: int = 1, **members) -> str:
    """A JSON header as fastjson writes it (members sorted), from Python values."""
    doc = {"code": code, "flag": 0, "language": "JAVA", "opaque": opaque,
           "serializeTypeCurrentRPC": "JSON", "version": 401}
    if ext is not None:
        doc["extFields"] = ext
    doc.update(members)
    return json.dumps(dict(sorted(doc.items())), separators=(",", ":"), ensure_ascii=False)


def rmq_header(code=105, lang=0, version=401, opaque=1, flag=0, remark: bytes = b"",
               ext: list | tuple = (), ext_len: int | None = None, remark_len: int | None = None) -> bytes:
    """A ROCKETMQ binary header; ext is (key bytes, value bytes[, keyLenOverride]) entries."""
    entries = b""
    for e in ext:
        k, v = e[0], e[1]
        klen = e[2] if len(e) > 2 else len(k)
        entries += struct.pack(">h", klen) + k + struct.pack(">i", len(v)) + v
    head = struct.pack(">HBHii", code & 0xFFFF, lang, version & 0xFFFF, opaque, flag)
    head += struct.pack(">i", len(remark) if remark_len is None else remark_len) + remark
    return head + struct.pack(">i", len(entries) if ext_len is None else ext_len) + entries


def dcase(name, chunks, decode_as=None, note=None, **extra) -> dict:
    if isinstance(chunks, bytes):
        chunks = [chunks]
    c = {"name": name, "chunks": [c.hex() for c in chunks], "decodeAs": decode_as}
    if note:
        c["note"] = note
    c.update(extra)
    return c


def jcase(name, text, decode_as=None, note=None, body=b"", **extra):
    return dcase(name, frame(text.encode("utf-8"), 0, body), decode_as, note, headerText=text, **extra)


def jraw(name, raw: bytes, decode_as=None, note=None, **extra):
    return dcase(name, frame(raw, 0), decode_as, note, headerText=raw.decode("utf-8", "replace"), **extra)


V2_FIELDS = {"a": "PG_golden", "b": "TopicTest", "c": "TBW102", "d": "4", "e": "1", "f": "0",
             "g": "1700000000000", "h": "0", "i": "TAGS\x01TagA\x02WAIT\x01true", "j": "0", "k": "false",
             "m": "false"}


def _bool_cases():
    out = []
    for label, v in (("TRUE", '"TRUE"'), ("True", '"True"'), ("yes", '"yes"'), ("1", '"1"'), ("empty", '""'),
                     ("json_true", "true"), ("json_false", "false")):
        text = '{"code":105,"extFields":{"topic":"TopicTest","acceptStandardJsonOnly":%s},%s}' % (
            v, BASE.format(op=40))
        out.append(jcase(f"json.boolean.{label}", text, GET_ROUTE, "Boolean.parseBoolean on the ext value"))
    return out


def _json_cases():
    route = json_header({"topic": "TopicTest"})
    return [
        jcase("json.basic", route, GET_ROUTE, "what a 4.9.4 Java client sends for GET_ROUTEINFO_BY_TOPIC"),
        jcase("json.ext_value_types",
              '{"code":105,"extFields":{"topic":"TopicTest","acceptStandardJsonOnly":true,"int":12,"neg":-7,'
              '"float":1.50,"exp":1e3,"big":12345678901234567890,"nul":null,"obj":{"x":1,"y":[2]},"arr":[1,"a"]},'
              + BASE.format(op=2) + "}", GET_ROUTE, "ext values that are not JSON strings"),
        jcase("json.language_ordinal", json_header({"topic": "T"}, language=9), GET_ROUTE),
        jcase("json.language_ordinal_out_of_range", json_header({"topic": "T"}, language=13), GET_ROUTE),
        jcase("json.language_unknown_name", json_header({"topic": "T"}, language="NODE_JS"), GET_ROUTE),
        jcase("json.language_lowercase", json_header({"topic": "T"}, language="java"), GET_ROUTE),
        jcase("json.language_null", json_header({"topic": "T"}, language=None), GET_ROUTE),
        jcase("json.language_mixed_case", json_header({"topic": "T"}, language="Go"), GET_ROUTE,
              "fastjson matches enum names ignoring ASCII case"),
        jcase("json.language_empty", json_header({"topic": "T"}, language=""), GET_ROUTE),
        jcase("json.missing_members", '{"code":34}', None,
              "flag, language, version, opaque absent: opaque keeps the value Java's process-wide "
              "request counter gave the new object, so it depends on the recorder run, not the frame"),
        jcase("json.response_without_flag", '{"code":0,"extFields":{"offset":"5"},"opaque":7,"version":401}',
              P + "QueryConsumerOffsetResponseHeader", "flag absent: 0, so a Java peer takes it for a request"),
        jcase("json.unknown_members", '{"code":105,"extFields":{"topic":"TopicTest","future":"x"},"flag":0,'
              '"language":"JAVA","nested":{"a":[1,{"b":null}]},"opaque":3,"zzz":true,"version":401,"bodyCrc":1}',
              GET_ROUTE),
        jcase("json.required_missing", json_header({"acceptStandardJsonOnly": "true"}, opaque=4), GET_ROUTE,
              "@CFNotNull topic absent: 4.9.4 logs it and leaves the field null"),
        jcase("json.required_missing_fastcodes", json_header({k: v for k, v in V2_FIELDS.items() if k not in "ag"},
                                                             code=310, opaque=5), V2),
        jcase("json.unparsable_numbers", json_header({"consumerGroup": "CG", "topic": "T", "queueId": "+3",
                                                      "commitOffset": "9223372036854775808"}, code=15, opaque=6),
              P + "UpdateConsumerOffsetRequestHeader", "Integer.parseInt accepts a leading +; an overflow is logged"),
        jcase("json.unparsable_numbers_more", json_header({"topic": "T", "queueId": " 1", "timestamp": "1.7E12"},
                                                          code=29, opaque=7), P + "SearchOffsetRequestHeader"),
        jcase("json.unparsable_fastcodes", json_header({**V2_FIELDS, "d": "four"}, code=310, opaque=8), V2,
              "the FastCodesHeader decode does not catch NumberFormatException"),
        jcase("json.unparsable_fastcodes_pull", json_header({
            "consumerGroup": "CG", "topic": "T", "queueId": "0", "queueOffset": "", "maxMsgNums": "32",
            "sysFlag": "2", "commitOffset": "0", "suspendTimeoutMillis": "15000", "subVersion": "1"}, code=11, opaque=9),
            P + "PullMessageRequestHeader"),
        jcase("json.v2_go_client", json_header(V2_FIELDS, code=310, opaque=10, language="GO"), V2,
              "short keys; converted with createSendMessageRequestHeaderV1 (v1)"),
        jcase("json.v2_batch", json_header({**V2_FIELDS, "m": "true", "l": "3"}, code=320, opaque=11), V2),
        jcase("json.v2_5x_keys", json_header({**V2_FIELDS, "n": "broker-a", "bname": "broker-a"}, code=310,
                                             opaque=12), V2, "a 5.x client adds n (brokerName)"),
        jcase("json.no_extFields", json_header(None, opaque=13), GET_ROUTE,
              "no extFields member: an all-null header, checkFields not called"),
        jcase("json.end_transaction_no_ext", json_header(None, code=37, opaque=14), P + "EndTransactionRequestHeader"),
        jcase("json.end_transaction_empty_ext", json_header({}, code=37, opaque=15), P + "EndTransactionRequestHeader",
              "extFields {}: checkFields unboxes a null commitOrRollback"),
        jcase("json.end_transaction_bad_state", json_header({
            "producerGroup": "PG", "tranStateTableOffset": "1", "commitLogOffset": "2", "commitOrRollback": "5",
            "msgId": "X"}, code=37, opaque=16), P + "EndTransactionRequestHeader"),
        jcase("json.create_topic_bad_filter", json_header({
            "topic": "T", "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6",
            "topicFilterType": "BAD", "order": "false"}, code=17, opaque=17), P + "CreateTopicRequestHeader"),
        jcase("json.extFields_string", '{"code":105,"extFields":"topic=T",' + BASE.format(op=18) + "}", GET_ROUTE),
        jcase("json.extFields_array", '{"code":105,"extFields":[],' + BASE.format(op=19) + "}", GET_ROUTE),
        jcase("json.empty_header", "", None),
        jcase("json.not_json", "hello", None),
        jcase("json.truncated", '{"code":105,"flag":0', None),
        jcase("json.trailing_garbage", route + " xyz", GET_ROUTE),
        jcase("json.trailing_whitespace", route + "\n \t", GET_ROUTE),
        jcase("json.bom", "\ufeff" + route, GET_ROUTE),
        jcase("json.pretty", json.dumps(json.loads(route), indent=2), GET_ROUTE),
        jcase("json.unquoted_keys", "{code:105,extFields:{topic:'TopicTest'},flag:0,language:'JAVA',opaque:20,"
              "version:401}", GET_ROUTE, "fastjson's default parser features allow both"),
        jcase("json.duplicate_members", '{"code":105,"code":106,"extFields":{"topic":"a","topic":"b"},'
              + BASE.format(op=21) + ',"opaque":22}', GET_ROUTE),
        jcase("json.numbers_as_strings", '{"code":"105","extFields":{"topic":"T"},"flag":"0","language":"JAVA",'
              '"opaque":"23","version":"401"}', GET_ROUTE),
        jcase("json.code_float", '{"code":105.9,"extFields":{"topic":"T"},' + BASE.format(op=24) + "}", GET_ROUTE),
        jcase("json.opaque_overflow", '{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA",'
              '"opaque":4294967297,"version":401}', GET_ROUTE),
        jcase("json.flag_response_oneway", json_header({"topic": "T"}, opaque=25, flag=3), GET_ROUTE),
        jcase("json.serializeType_member_ignored", json_header({"topic": "T"}, opaque=26,
                                                               serializeTypeCurrentRPC="ROCKETMQ"), GET_ROUTE),
        jraw("json.invalid_utf8", b'{"code":105,"extFields":{"topic":"T\xff\xfeX"},' + BASE.format(op=27).encode()
             + b"}", GET_ROUTE),
        jcase("json.empty_strings", json_header({"namespace": "", "key": "k", "value": ""}, code=100, opaque=28,
                                                remark=""), NS + "PutKVConfigRequestHeader",
              "empty strings stay empty in JSON (ROCKETMQ turns them into null)"),
        jcase("json.escapes_in_input", '{"code":100,"extFields":{"namespace":"\\u00e9\\/\\ud83d\\ude00",'
              '"key":"a\\u2028b\\tc","value":"\\"q\\"\\\\é中"},' + BASE.format(op=29) + "}",
              NS + "PutKVConfigRequestHeader"),
        jcase("json.with_body", json_header({"topic": "T"}, opaque=30), GET_ROUTE, body=b"\x00\x01body"),
        dcase("json.header_length_exceeds_frame", frame(json_header({"topic": "T"}).encode(), 0, header_len=500),
              GET_ROUTE),
        dcase("json.serialize_type_2", frame(json_header({"topic": "T"}).encode(), 2), GET_ROUTE),
        dcase("json.header_typed_as_rocketmq", frame(json_header({"topic": "T"}).encode(), 1), GET_ROUTE),
    ] + _bool_cases()


def _rmq_cases():
    topic = [(b"topic", b"TopicTest")]
    v2_cpp = [(b"e", b"2"), (b"b", b"TopicTest"), (b"a", b"PG_cpp"), (b"n", b"broker-a"), (b"c", b"TBW102"),
              (b"d", b"4"), (b"f", b"0"), (b"g", b"1700000000000"), (b"h", b"0"), (b"k", b"FALSE"), (b"m", b"TRUE")]
    pull = [(b"consumerGroup", b"CG"), (b"topic", b"T"), (b"queueId", b"0"), (b"maxMsgNums", b"32"),
            (b"sysFlag", b"2"), (b"commitOffset", b"0"), (b"suspendTimeoutMillis", b"15000"), (b"subVersion", b"1")]
    good = frame(rmq_header(ext=topic), 1)
    return [
        dcase("rocketmq.basic", good, GET_ROUTE, "the frame of GET_ROUTEINFO_BY_TOPIC, TopicTest, opaque 1"),
        dcase("rocketmq.empty_strings", frame(rmq_header(code=100, ext=[(b"namespace", b""), (b"key", b"k"),
                                                                        (b"", b"v"), (b"value", b"x")]), 1),
              NS + "PutKVConfigRequestHeader", "length 0 reads as null: an empty value and an empty key"),
        dcase("rocketmq.ext_length_exceeds_header", frame(rmq_header(ext=topic, ext_len=1000), 1), GET_ROUTE),
        dcase("rocketmq.remark_length_exceeds_header", frame(rmq_header(remark=b"abc", remark_len=1000), 1)),
        dcase("rocketmq.ext_entries_overrun", frame(rmq_header(ext=topic + [(b"acceptStandardJsonOnly", b"true")],
                                                               ext_len=5), 1, b"BODY"), GET_ROUTE,
              "extFieldsLength smaller than the entries: the reader stops after the entry that crosses it"),
        dcase("rocketmq.negative_ext_length", frame(rmq_header(ext=topic, ext_len=-1), 1, b"BODY"), GET_ROUTE),
        dcase("rocketmq.negative_remark_length", frame(rmq_header(remark=b"abc", remark_len=-1), 1)),
        dcase("rocketmq.negative_key_length", frame(rmq_header(ext=[(b"topic", b"T", -2)]), 1), GET_ROUTE),
        dcase("rocketmq.unknown_language", frame(rmq_header(lang=99, ext=topic), 1), GET_ROUTE),
        dcase("rocketmq.signed_code_version", frame(rmq_header(code=50000, version=0xFFFF, ext=topic), 1),
              GET_ROUTE, "code and version are int16 on the wire"),
        dcase("rocketmq.truncated_header", frame(rmq_header(ext=topic)[:10], 1)),
        dcase("rocketmq.invalid_utf8", frame(rmq_header(ext=[(b"topic", b"T\xff\xfeX")], remark=b"r\xc3"), 1),
              GET_ROUTE),
        dcase("rocketmq.duplicate_keys", frame(rmq_header(ext=[(b"topic", b"a"), (b"topic", b"b")]), 1), GET_ROUTE),
        dcase("rocketmq.v2_cpp_client", frame(rmq_header(code=310, lang=1, version=317, opaque=77, ext=v2_cpp), 1,
                                              b"Hello"), V2, "keys in another order, an unknown key n, booleans in caps"),
        dcase("rocketmq.pull_missing_required", frame(rmq_header(code=11, ext=pull), 1), P + "PullMessageRequestHeader",
              "queueOffset absent"),
        dcase("rocketmq.bool_caps", frame(rmq_header(code=317, ext=[(b"isOrder", b"TRUE")]), 1),
              P + "GetConsumeStatsInBrokerHeader"),
        dcase("rocketmq.no_ext_response", frame(rmq_header(code=0, flag=1), 1), P + "SendMessageResponseHeader",
              "extFieldsLength 0: extFields null, the header object all null"),
        dcase("rocketmq.remark_and_body", frame(rmq_header(code=1, flag=1, remark="é中 \n".encode()), 1,
                                                bytes(range(8))), None),
    ]


def _frame_cases():
    good = frame(rmq_header(ext=[(b"topic", b"TopicTest")]), 1)
    big_head = json_header({"topic": "T"}, opaque=90).encode()
    return [
        dcase("frame.too_long", (16777213).to_bytes(4, "big"), None,
              "totalLength 16777213: + 4 exceeds NettyDecoder's 16777216; the 4 length bytes are enough "
              "to fail", direct=False),
        dcase("frame.longest_accepted", frame(big_head, 0, total=16777212), GET_ROUTE,
              "totalLength 16777212 (+4 = 16 MiB): the largest NettyDecoder accepts; the body is zeros",
              appendZeroBytes=16777212 - 4 - len(big_head)),
        dcase("frame.negative_length", bytes.fromhex("80000000") + bytes(8), None, direct=False),
        dcase("frame.zero_length", bytes.fromhex("00000000"), None),
        dcase("frame.length_3", bytes.fromhex("00000003") + b"\x01\x00\x00", None),
        dcase("frame.partial", good[:20], None, "half a frame: nothing yet, the channel stays open", direct=False),
        dcase("frame.two_in_one_chunk", good + frame(rmq_header(opaque=2, ext=[(b"topic", b"B")]), 1), GET_ROUTE,
              direct=False),
        dcase("frame.split_bytewise", [good[i:i + 1] for i in range(len(good))], GET_ROUTE),
        dcase("frame.bad_then_good", frame(b"{", 0) + good, None,
              "a frame that fails to decode, then a good one in the same read", direct=False),
    ]


DECODE = _json_cases() + _rmq_cases() + _frame_cases()
