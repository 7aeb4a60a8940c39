"""The golden frame corpus (corpus/frames/) is complete and consistent with itself.

The corpus was recorded from the real RocketMQ 4.9.4 encoders by tools/rocketmq_wire/; these
tests need neither Java nor pymq_ref's codec. They check what a reader of the corpus relies on:
every listed file exists and matches the hex in its expected file, every frame's length fields
add up (and a ROCKETMQ header walks exactly to its end), every JSON header is JSON and agrees with
the case, and every header and body class of 4.9.4 has a case.
"""

from __future__ import annotations

import json
import struct
import zlib
from functools import cache
from pathlib import Path

import pytest

FRAMES = Path(__file__).resolve().parents[1] / "corpus" / "frames"
PROTOCOL = "org.apache.rocketmq.common.protocol."

# Every CommandCustomHeader under common/src/main/java/org/apache/rocketmq/common/protocol/header/**
# of rocketmq-all-4.9.4, as wire.Schema listed them (relative to org.apache.rocketmq.common.protocol).
HEADER_CLASSES_4_9_4 = [
    "header.CheckTransactionStateRequestHeader", "header.CheckTransactionStateResponseHeader",
    "header.CloneGroupOffsetRequestHeader", "header.ConsumeMessageDirectlyResultRequestHeader",
    "header.ConsumerSendMsgBackRequestHeader", "header.CreateAccessConfigRequestHeader",
    "header.CreateTopicRequestHeader", "header.DeleteAccessConfigRequestHeader",
    "header.DeleteSubscriptionGroupRequestHeader", "header.DeleteTopicRequestHeader",
    "header.EndTransactionRequestHeader", "header.EndTransactionResponseHeader",
    "header.GetAllProducerInfoRequestHeader", "header.GetAllTopicConfigResponseHeader",
    "header.GetBrokerAclConfigResponseHeader", "header.GetBrokerClusterAclConfigResponseHeader",
    "header.GetBrokerConfigResponseHeader", "header.GetConsumeStatsInBrokerHeader",
    "header.GetConsumeStatsRequestHeader", "header.GetConsumerConnectionListRequestHeader",
    "header.GetConsumerListByGroupRequestHeader", "header.GetConsumerListByGroupResponseHeader",
    "header.GetConsumerRunningInfoRequestHeader", "header.GetConsumerStatusRequestHeader",
    "header.GetEarliestMsgStoretimeRequestHeader", "header.GetEarliestMsgStoretimeResponseHeader",
    "header.GetMaxOffsetRequestHeader", "header.GetMaxOffsetResponseHeader",
    "header.GetMinOffsetRequestHeader", "header.GetMinOffsetResponseHeader",
    "header.GetProducerConnectionListRequestHeader", "header.GetTopicStatsInfoRequestHeader",
    "header.GetTopicsByClusterRequestHeader", "header.NotifyConsumerIdsChangedRequestHeader",
    "header.PullMessageRequestHeader", "header.PullMessageResponseHeader",
    "header.QueryConsumeQueueRequestHeader", "header.QueryConsumeTimeSpanRequestHeader",
    "header.QueryConsumerOffsetRequestHeader", "header.QueryConsumerOffsetResponseHeader",
    "header.QueryCorrectionOffsetHeader", "header.QueryMessageRequestHeader",
    "header.QueryMessageResponseHeader", "header.QueryTopicConsumeByWhoRequestHeader",
    "header.ReplyMessageRequestHeader", "header.ResetOffsetRequestHeader",
    "header.ResumeCheckHalfMessageRequestHeader", "header.SearchOffsetRequestHeader",
    "header.SearchOffsetResponseHeader", "header.SendMessageRequestHeader",
    "header.SendMessageRequestHeaderV2", "header.SendMessageResponseHeader",
    "header.UnregisterClientRequestHeader", "header.UnregisterClientResponseHeader",
    "header.UpdateConsumerOffsetRequestHeader", "header.UpdateConsumerOffsetResponseHeader",
    "header.UpdateGlobalWhiteAddrsConfigRequestHeader", "header.ViewBrokerStatsDataRequestHeader",
    "header.ViewMessageRequestHeader", "header.ViewMessageResponseHeader",
    "header.filtersrv.RegisterFilterServerRequestHeader",
    "header.filtersrv.RegisterFilterServerResponseHeader",
    "header.filtersrv.RegisterMessageFilterClassRequestHeader",
    "header.namesrv.AddWritePermOfBrokerRequestHeader", "header.namesrv.AddWritePermOfBrokerResponseHeader",
    "header.namesrv.DeleteKVConfigRequestHeader", "header.namesrv.DeleteTopicFromNamesrvRequestHeader",
    "header.namesrv.GetKVConfigRequestHeader", "header.namesrv.GetKVConfigResponseHeader",
    "header.namesrv.GetKVListByNamespaceRequestHeader", "header.namesrv.GetRouteInfoRequestHeader",
    "header.namesrv.PutKVConfigRequestHeader", "header.namesrv.QueryDataVersionRequestHeader",
    "header.namesrv.QueryDataVersionResponseHeader", "header.namesrv.RegisterBrokerRequestHeader",
    "header.namesrv.RegisterBrokerResponseHeader", "header.namesrv.RegisterOrderTopicRequestHeader",
    "header.namesrv.UnRegisterBrokerRequestHeader", "header.namesrv.WipeWritePermOfBrokerRequestHeader",
    "header.namesrv.WipeWritePermOfBrokerResponseHeader",
]
# The JSON body classes (and the beans inside them) the corpus must show, by short name.
BODY_CLASSES_4_9_4 = [
    "DataVersion", "BrokerData", "BrokerStatsData", "BrokerStatsItem", "CheckClientRequestBody",
    "ClusterAclVersionInfo", "ClusterInfo", "Connection", "ConsumeByWho", "ConsumeMessageDirectlyResult",
    "ConsumeQueueData", "ConsumeStats", "ConsumeStatsList", "ConsumeStatus", "ConsumerConnection", "ConsumerData",
    "ConsumerOffsetSerializeWrapper", "ConsumerRunningInfo", "DelayOffsetSerializeWrapper",
    "GetBrokerClusterAclConfigResponseBody", "GetConsumerListByGroupResponseBody", "GetConsumerStatusBody",
    "GroupList", "HeartbeatData", "KVConfigSerializeWrapper", "KVTable", "LockBatchRequestBody",
    "LockBatchResponseBody", "MessageQueue", "MessageQueueForC", "OffsetMovedEvent", "OffsetSerializeWrapper",
    "OffsetWrapper", "PlainAccessConfig", "ProcessQueueInfo", "ProducerConnection", "ProducerData", "ProducerInfo",
    "ProducerTableInfo", "QueryConsumeQueueResponseBody", "QueryConsumeTimeSpanBody", "QueryCorrectionOffsetBody",
    "QueueData", "QueueTimeSpan", "RegisterBrokerBody", "ResetOffsetBody", "ResetOffsetBodyForC", "RollbackStats",
    "SubscriptionData", "SubscriptionGroupConfig", "SubscriptionGroupWrapper", "TopicConfig",
    "TopicConfigSerializeWrapper", "TopicList", "TopicOffset", "TopicRouteData", "TopicStatsTable",
    "UnlockBatchRequestBody",
]


@cache
def index() -> dict:
    return json.loads((FRAMES / "index.json").read_text())


@cache
def expected(folder: str, name: str) -> dict:
    return json.loads((FRAMES / folder / name).read_text())


def frame_parts(raw: bytes) -> tuple[int, int, int, bytes, bytes]:
    """totalLength, serializeType, headerLength, header, body — checked to add up."""
    total, word = struct.unpack_from(">iI", raw)
    kind, hlen = word >> 24, word & 0xFFFFFF
    assert total == len(raw) - 4, "totalLength counts everything after itself"
    assert 4 + hlen <= total, "header inside the frame"
    return total, kind, hlen, raw[8:8 + hlen], raw[8 + hlen:]


def walk_rocketmq_header(header: bytes) -> dict:
    """Read a ROCKETMQ header field by field; every length must land exactly on the header's end."""
    code, lang, version, opaque, flag, rlen = struct.unpack_from(">hbhiii", header)
    pos = 17
    remark = header[pos:pos + rlen].decode("utf-8", "replace")
    pos += rlen
    (elen,) = struct.unpack_from(">i", header, pos)
    pos += 4
    end, ext = pos + elen, []
    while pos < end:
        (klen,) = struct.unpack_from(">h", header, pos)
        key = header[pos + 2:pos + 2 + klen]
        pos += 2 + klen
        (vlen,) = struct.unpack_from(">i", header, pos)
        ext.append((key, header[pos + 4:pos + 4 + vlen]))
        pos += 4 + vlen
    assert pos == end == len(header), "ext entries fill extFieldsLength and the header exactly"
    return {"code": code, "language": lang, "version": version, "opaque": opaque, "flag": flag,
            "remark": remark, "ext": ext}


def test_index_lists_every_case_of_the_catalog_and_every_file_exists():
    catalog = json.loads((FRAMES / "catalog.json").read_text())
    ix = index()
    for part, folder in (("headers", "headers"), ("decode", "decode"), ("bodies", "bodies"),
                         ("bodyDecode", "body-decode")):
        assert [c["name"] for c in catalog[part]] == [e["case"] for e in ix[part]], part
        for entry in ix[part]:
            names = [entry["expected"], *entry.get("files", {}).values()]
            names += [entry["input"]] if "input" in entry else []
            for name in names:
                assert (FRAMES / folder / name).is_file(), f"{folder}/{name}"
    listed = {e["expected"] for e in ix["headers"]} | {f for e in ix["headers"] for f in e["files"].values()}
    on_disk = {p.name for p in (FRAMES / "headers").iterdir()}
    assert on_disk == listed, "no stray files in headers/"


def test_frame_corpus_is_modest():
    assert sum(p.stat().st_size for p in FRAMES.rglob("*") if p.is_file()) < 1536 * 1024


def test_every_4_9_4_header_class_has_a_case_and_schema():
    ix = index()
    assert sorted(PROTOCOL + n for n in HEADER_CLASSES_4_9_4) == ix["headerClasses"]
    used = {e["headerClass"] for e in ix["headers"]}
    assert set(ix["headerClasses"]) <= used
    schemas = json.loads((FRAMES / "schemas.json").read_text())["classes"]
    assert all(schemas[c]["kind"] == "header" for c in ix["headerClasses"])


def test_every_body_class_is_shown_by_some_body_case():
    seen = set()
    for e in index()["bodies"]:
        seen |= {c.rsplit(".", 1)[1] for c in expected("bodies", e["expected"])["classesSeen"]}
    wanted = set(BODY_CLASSES_4_9_4)
    assert wanted <= seen, sorted(wanted - seen)
    assert {c.rsplit(".", 1)[1] for c in index()["bodyClasses"]} <= seen


@pytest.mark.parametrize("entry", index()["headers"], ids=lambda e: e["case"])
def test_header_case_frames_are_consistent(entry):
    exp = expected("headers", entry["expected"])
    case = exp["input"]
    assert set(case["serializeTypes"]) == set(exp["frames"])
    for st, frame in exp["frames"].items():
        assert "error" not in frame, f"{st}: the 4.9.4 encoder failed"
        raw = (FRAMES / "headers" / entry["files"][st]).read_bytes()
        assert raw.hex() == frame["hex"]
        assert frame["unpooledSame"], "NettyEncoder and fastEncodeHeader on an Unpooled buffer agree"
        total, kind, hlen, header, body = frame_parts(raw)
        assert (total, kind, hlen, len(body)) == (frame["totalLength"], frame["serializeType"],
                                                  frame["headerLength"], frame["bodyLength"])
        assert kind == {"JSON": 0, "ROCKETMQ": 1}[st]
        decoded = exp["decoded"][st]["command"]
        assert (body.hex() if body else None) == decoded["body"]
        want_flag = (1 if case["kind"] == "response" else 0) | (2 if case.get("oneway") else 0)
        if st == "JSON":
            doc = json.loads(header.decode("utf-8"))
            assert header.decode("utf-8") == frame["headerText"]
            assert (doc["code"], doc["opaque"], doc["flag"]) == (case["code"], case["opaque"], want_flag)
            assert (doc["code"], doc["opaque"], doc["flag"]) == (decoded["code"], decoded["opaque"], decoded["flag"])
            assert doc["language"] == case.get("language", "JAVA") == decoded["language"]
            assert doc.get("remark") == case["remark"] == decoded["remark"]
        else:
            h = walk_rocketmq_header(header)
            short_code = (case["code"] + 0x8000) % 0x10000 - 0x8000
            assert (h["code"], h["opaque"], h["flag"]) == (short_code, case["opaque"], want_flag)
            assert (h["code"], h["opaque"], h["flag"]) == (decoded["code"], decoded["opaque"], decoded["flag"])
            ext = {k.decode(): v.decode("utf-8", "replace") or None for k, v in h["ext"]}
            assert ext == (decoded["extFields"] or {})


def java_hashmap_order(keys: list[str]) -> list[str]:
    """java.util.HashMap's iteration order for String keys put in this order into new HashMap()."""
    def bucket(key: str, capacity: int) -> int:
        h = 0
        units = key.encode("utf-16-be")
        for i in range(0, len(units), 2):
            h = (31 * h + int.from_bytes(units[i:i + 2], "big")) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)
    unique = list(dict.fromkeys(keys))
    capacity = 16
    while len(unique) > capacity * 3 // 4:
        capacity *= 2
    return sorted(unique, key=lambda k: (bucket(k, capacity), unique.index(k)))


def test_json_ext_fields_follow_the_documented_hashmap_order():
    """README fact: extras first, then the header's fields in getDeclaredFields order, in HashMap order."""
    classes = json.loads((FRAMES / "schemas.json").read_text())["classes"]
    checked = 0
    for entry in index()["headers"]:
        exp = expected("headers", entry["expected"])
        case, frame = exp["input"], exp["frames"]["JSON"]
        ext = json.loads(frame["headerText"]).get("extFields")
        if ext is None:
            continue
        keys = [k for k, v in (case.get("extFields") or {}).items() if v is not None]
        for field in classes[case["headerClass"]]["fields"] if case["headerClass"] else []:
            primitive = field["type"] in ("boolean", "int", "long")
            if not field["static"] and (primitive or case["fields"].get(field["name"]) is not None):
                keys.append(field["name"])
        assert list(ext) == java_hashmap_order(keys), entry["case"]
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("entry", index()["decode"], ids=lambda e: e["case"])
def test_decode_case_input_file_matches_catalog(entry):
    exp = expected("decode", entry["expected"])
    raw = (FRAMES / "decode" / entry["input"]).read_bytes()
    assert raw == b"".join(bytes.fromhex(c) for c in exp["input"]["chunks"])
    assert {"commands", "channelOpen"} <= set(exp["nettyDecoder"]) and "frameLengths" in exp["framing"]
    if exp["input"].get("direct", True):
        assert ("command" in exp["decode"]) != ("error" in exp["decode"])


@pytest.mark.parametrize("entry", index()["bodies"], ids=lambda e: e["case"])
def test_body_case_files_match_and_parse(entry):
    exp = expected("bodies", entry["expected"])
    for enc, e in exp["encodings"].items():
        assert "error" not in e, f"{enc}: the 4.9.4 encoder failed"
        raw = (FRAMES / "bodies" / entry["files"][enc]).read_bytes()
        assert raw.hex() == e["hex"] and e["stable"]
        if enc == "compressed":
            assert zlib.decompress(raw).hex() == e["plainHex"]
            continue
        assert raw.decode("utf-8") == e["text"]
        if enc == "standard":
            json.loads(raw)  # the name server's route form is standard JSON


@pytest.mark.parametrize("entry", index()["bodyDecode"], ids=lambda e: e["case"])
def test_body_decode_case_has_an_outcome(entry):
    exp = expected("body-decode", entry["expected"])
    raw = (FRAMES / "body-decode" / entry["input"]).read_bytes()
    case = exp["input"]
    assert raw == (bytes.fromhex(case["hex"]) if "hex" in case else case["text"].encode("utf-8"))
    assert ("decoded" in exp) != ("error" in exp)
