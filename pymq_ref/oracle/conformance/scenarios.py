"""The scenario catalogue: what a RocketMQ 4.x broker and name server must do, group by group.

Each scenario is data (:class:`~.steps.Scenario`); the requests come from :mod:`.requests`. Topics
and groups are private to a run, so the same catalogue runs any number of times against one broker.
Set-up steps (``compare=None``) prepare state and are never judged (a broker without
UPDATE_AND_CREATE_TOPIC still passes when it creates topics on first send, as 4.9.4 does with
``autoCreateTopicEnable``). What the broker needs for every scenario to apply: ``autoCreateTopicEnable``
and ``autoCreateSubscriptionGroup`` (4.9.4's defaults), ``enablePropertyFilter=true`` for SQL92
(without it those scenarios are "not supported"), and for the check-back a short
``transactionCheckInterval`` (4.9.4's default of 60 s makes it wait up to ``--check-timeout``).
"""

from __future__ import annotations

import zlib

from pymq_ref.remoting.codes import RequestCode as R
from pymq_ref.remoting.codes import ResponseCode as C
from pymq_ref.remoting.command import RemotingCommand

from . import requests as q
from .normalize import decode_records
from .steps import Await, Call, Compare, ExpectRequest, Oneway, Poll, Raw, Scenario, Start, Vars

SETUP = None  # compare=SETUP: a set-up step
SEND = Compare(body="ignore")
PULLED = Compare(body="records")


# -- checks (pure: (vars, answer) -> problem or None) -----------------------------------------------

def code_is(*codes: int):
    def check(v: Vars, r: RemotingCommand) -> str | None:
        return None if r is not None and r.code in codes else \
            f"answer code {getattr(r, 'code', None)}, expected {' or '.join(map(str, codes))}"
    return check


def bodies_are(*bodies: bytes):
    def check(v: Vars, r: RemotingCommand) -> str | None:
        got = [rec.body for rec in decode_records(r.body or b"")]
        return None if got == list(bodies) else f"pulled bodies {got!r}, expected {list(bodies)!r}"
    return check


def pulled(count: int):
    def until(v: Vars, r: RemotingCommand) -> bool:
        return r.code == C.SUCCESS and len(decode_records(r.body or b"")) >= count
    return until


def ext_is(key: str, value: str):
    def check(v: Vars, r: RemotingCommand) -> str | None:
        got = r.ext().get(key)
        return None if got == value else f"{key} = {got!r}, expected {value!r}"
    return check


def save_ext(prefix: str):
    def save(v: Vars, r: RemotingCommand) -> dict:
        return {prefix: dict(r.ext())}
    return save


def save_record(prefix: str):
    def save(v: Vars, r: RemotingCommand) -> dict:
        rec = q.first_record(r)
        return {f"{prefix}.phy": rec.phy_offset, f"{prefix}.msgid": rec.properties.get("UNIQ_KEY", "")}
    return save


def no_sql92(r: RemotingCommand) -> str | None:
    if r.code == C.SYSTEM_ERROR and "does not support" in (r.remark or ""):
        return "the broker does not filter by SQL92 (4.9.4: enablePropertyFilter=false)"
    return None


def create(what: str, queues: int = 4, *, required: bool = False) -> Call:
    """UPDATE_AND_CREATE_TOPIC as set-up. ``required``: the scenario needs the topic before any send
    (an empty topic, a route); otherwise the first send creates it (autoCreateTopicEnable)."""
    return Call(f"create topic {what}", lambda v: q.create_topic(v, v.name(what), queues), compare=SETUP,
                required=required)


def send1(name: str, what: str, body: bytes, props: dict | None = None, **kw) -> Call:
    return Call(name, lambda v: q.send(v, v.name(what), body, props, **kw), compare=SEND,
                checks=(code_is(C.SUCCESS),), save=save_ext(name))


def pull_until(name: str, what: str, count: int, checks=(), save=None, **kw) -> Poll:
    """Pull until ``count`` messages are readable: 4.9.4 dispatches to the ConsumeQueue a moment after
    the send is answered, so a pull right after a send may still find nothing."""
    return Poll(name, lambda v: q.pull(v, v.name(what), **kw), until=pulled(count), compare=PULLED,
                checks=tuple(checks), save=save)


def max_offset_until(name: str, what: str, offset: int, queue_id: int = 0, topic=None) -> Poll:
    """GET_MAX_OFFSET until the queue holds ``offset`` units (dispatch is asynchronous)."""
    def build(v: Vars) -> RemotingCommand:
        return q.queue_request(R.GET_MAX_OFFSET, topic(v) if topic else v.name(what), queue_id)
    return Poll(name, build, until=lambda v, r: r.code == C.SUCCESS and r.ext().get("offset") == str(offset))


# -- sending ----------------------------------------------------------------------------------------

SENDING = [
    Scenario("send.single", "sending", "one message with SEND_MESSAGE_V2, pulled back", (
        create("single"),
        send1("send", "single", b"hello conformance", {"TAGS": "TagA", "KEYS": "k1 k2"}),
        pull_until("pull", "single", 1, checks=(code_is(C.SUCCESS), bodies_are(b"hello conformance"))),
    )),
    Scenario("send.v1", "sending", "SEND_MESSAGE with the long header names", (
        create("v1"),
        send1("send", "v1", b"v1 body", {"TAGS": "TagA"}, v2=False),
        pull_until("pull", "v1", 1, checks=(bodies_are(b"v1 body"),)),
    )),
    Scenario("send.batch", "sending", "SEND_BATCH_MESSAGE: three messages in one request, offsets 0..2", (
        create("batch"),
        Call("send", lambda v: q.send_batch(v, v.name("batch"), [b"b0", b"b1", b"b2"]), compare=SEND,
             checks=(code_is(C.SUCCESS), ext_is("queueOffset", "0"))),
        pull_until("pull", "batch", 3, checks=(bodies_are(b"b0", b"b1", b"b2"),)),
    )),
    Scenario("send.compressed", "sending", "a zlib-compressed body (sysFlag bit 0) is stored as sent", (
        create("zip"),
        send1("send", "zip", q.compressed(b"z" * 5000), {"TAGS": "TagZ"}, sys_flag=q.COMPRESSED),
        pull_until("pull", "zip", 1, checks=(lambda v, r: None if zlib.decompress(q.first_record(r).body) == b"z" * 5000
                     else "the stored body does not inflate to what was sent",
                     lambda v, r: None if q.first_record(r).sys_flag & 1 else "sysFlag lost the compressed bit")),
    )),
    Scenario("send.properties", "sending", "user and system properties, non-ASCII text, kept as sent", (
        create("props"),
        send1("send", "props", "größe=½ 中文".encode(), {"TAGS": "Tag-ü", "KEYS": "a b c", "color": "blue",
                                                          "empty": "", "long": "x" * 300}),
        pull_until("pull", "props", 1, checks=(lambda v, r: None if q.first_record(r).properties.get("color") == "blue"
                     else "user property 'color' lost",)),
    )),
    Scenario("send.oneway", "sending", "a oneway send is stored although nothing answers it", (
        create("ow"),
        Oneway("send oneway", lambda v: q.send(v, v.name("ow"), b"fire and forget", {"TAGS": "TagO"})),
        pull_until("pull", "ow", 1, checks=(bodies_are(b"fire and forget"),)),
    )),
    Scenario("send.rocketmq_serialization", "sending", "requests with the binary ROCKETMQ header get answers in it", (
        create("bin"),
        Call("send", lambda v: q.in_rocketmq_serialization(
            q.send(v, v.name("bin"), b"binary header", {"TAGS": "TagB"})),
             compare=SEND, checks=(code_is(C.SUCCESS),)),
        Poll("pull", lambda v: q.in_rocketmq_serialization(q.pull(v, v.name("bin"))), until=pulled(1), compare=PULLED,
             checks=(bodies_are(b"binary header"),)),
        Call("unknown code", lambda v: q.in_rocketmq_serialization(RemotingCommand.request(9999))),
    )),
    Scenario("send.queue_offsets", "sending", "queue offsets count per queue; max/min offsets follow", (
        create("qo"),
        send1("send q0 #1", "qo", b"a"), send1("send q0 #2", "qo", b"b"), send1("send q1", "qo", b"c", queue_id=1),
        max_offset_until("max offset q0", "qo", 2, 0),
        max_offset_until("max offset q1", "qo", 1, 1),
        Call("min offset q0", lambda v: q.queue_request(R.GET_MIN_OFFSET, v.name("qo"), 0)),
    )),
]

# -- pulling and long polling --------------------------------------------------------------------------

PULLING = [
    Scenario("pull.empty", "pulling", "pulling an empty queue without suspending: PULL_NOT_FOUND", (
        create("empty", required=True),
        Call("pull", lambda v: q.pull(v, v.name("empty")), checks=(code_is(C.PULL_NOT_FOUND),)),
    )),
    Scenario("pull.offsets", "pulling", "offsets past the end and a partial pull (maxMsgNums)", (
        create("po"),
        send1("send #1", "po", b"1"), send1("send #2", "po", b"2"), send1("send #3", "po", b"3"),
        max_offset_until("max offset", "po", 3),
        Call("pull 2 of 3", lambda v: q.pull(v, v.name("po"), max_msgs=2), compare=PULLED,
             checks=(bodies_are(b"1", b"2"), ext_is("nextBeginOffset", "2"))),
        Call("pull from 1", lambda v: q.pull(v, v.name("po"), 1), compare=PULLED, checks=(bodies_are(b"2", b"3"),)),
        Call("pull at the end", lambda v: q.pull(v, v.name("po"), 3)),
        Call("pull past the end", lambda v: q.pull(v, v.name("po"), 10)),
    )),
    Scenario("pull.long_polling", "pulling", "a held pull is answered when a message arrives", (
        create("lp", required=True),
        Call("pull (nothing yet)", lambda v: q.pull(v, v.name("lp")), checks=(code_is(C.PULL_NOT_FOUND),)),
        Start("held pull", lambda v: q.pull(v, v.name("lp"), suspend_ms=20000)),
        send1("send", "lp", b"wake up"),
        Await("held pull", compare=PULLED, checks=(code_is(C.SUCCESS), bodies_are(b"wake up"))),
    )),
    Scenario("pull.suspend_timeout", "pulling", "a held pull with nothing to read ends after its suspend timeout", (
        create("st", required=True),
        Start("held pull", lambda v: q.pull(v, v.name("st"), suspend_ms=1000)),
        Await("held pull", checks=(code_is(C.PULL_NOT_FOUND),), timeout=30),
    ), slow=True),
]

# -- offsets ------------------------------------------------------------------------------------------

OFFSETS = [
    Scenario("offsets.consumer", "offsets", "a group's committed offset: unknown, updated, read back", (
        create("off"),
        send1("send", "off", b"x"),
        max_offset_until("max offset", "off", 1),
        Call("query (never committed)", lambda v: q.query_offset(v, v.name("off"), v.name("og"))),
        Call("update to 1", lambda v: q.update_offset(v, v.name("off"), v.name("og"), 1)),
        Call("query", lambda v: q.query_offset(v, v.name("off"), v.name("og")), checks=(ext_is("offset", "1"),)),
        Call("update past the end", lambda v: q.update_offset(v, v.name("off"), v.name("og"), 7)),
        Call("query again", lambda v: q.query_offset(v, v.name("off"), v.name("og"))),
    )),
    Scenario("offsets.pull_commit", "offsets", "a pull with FLAG_COMMIT_OFFSET commits the group's offset", (
        create("pc"),
        send1("send #1", "pc", b"1"), send1("send #2", "pc", b"2"), max_offset_until("max offset", "pc", 2),
        Call("pull from 1, committing 1", lambda v: q.pull(v, v.name("pc"), 1, group=v.name("pcg"), commit_offset=1),
             compare=PULLED, checks=(bodies_are(b"2"),)),
        Call("query", lambda v: q.query_offset(v, v.name("pc"), v.name("pcg")), checks=(ext_is("offset", "1"),)),
    )),
    Scenario("offsets.by_time", "offsets", "SEARCH_OFFSET_BY_TIMESTAMP before the first and after the last message", (
        create("bt"),
        send1("send #1", "bt", b"1"), send1("send #2", "bt", b"2"), max_offset_until("max offset", "bt", 2),
        Call("search at 0", lambda v: q.queue_request(R.SEARCH_OFFSET_BY_TIMESTAMP, v.name("bt"), timestamp="0")),
        Call("search far ahead", lambda v: q.queue_request(R.SEARCH_OFFSET_BY_TIMESTAMP, v.name("bt"),
                                                           timestamp=str(4102444800000))),
        Call("earliest store time", lambda v: q.queue_request(R.GET_EARLIEST_MSG_STORETIME, v.name("bt")),
             compare=Compare(ignore=("timestamp",))),
    )),
    Scenario("offsets.heartbeat", "offsets", "a heartbeat registers the consumer; the group lists it", (
        create("hb"),
        Call("heartbeat", lambda v: q.heartbeat(v, consumer_group=v.name("hbg"), topic=v.name("hb"))),
        Call("consumer list", lambda v: RemotingCommand.request(R.GET_CONSUMER_LIST_BY_GROUP,
                                                                {"consumerGroup": v.name("hbg")}),
             checks=(lambda v, r: None if q.client_id(v) in (r.body or b"").decode() else "our client is not listed",)),
        Call("unregister", lambda v: RemotingCommand.request(R.UNREGISTER_CLIENT, {
            "clientID": q.client_id(v), "consumerGroup": v.name("hbg")})),
        Call("consumer list after", lambda v: RemotingCommand.request(R.GET_CONSUMER_LIST_BY_GROUP,
                                                                      {"consumerGroup": v.name("hbg")})),
    )),
]

# -- queries ------------------------------------------------------------------------------------------

QUERIES = [
    Scenario("query.view_message", "queries", "VIEW_MESSAGE_BY_ID reads the record at a CommitLog offset", (
        create("vm"),
        send1("send", "vm", b"look at me", {"TAGS": "TagV", "KEYS": "kv"}),
        pull_until("pull", "vm", 1, save=save_record("m")),
        Call("view", lambda v: q.view_message(v, v["m.phy"]), compare=PULLED, checks=(bodies_are(b"look at me"),)),
        Call("view a bad offset", lambda v: q.view_message(v, 1 << 40)),
    )),
    Scenario("query.by_key", "queries", "QUERY_MESSAGE finds messages by a KEYS token through the index", (
        create("qk"),
        send1("send k1", "qk", b"first", {"KEYS": "order-1 shared"}),
        send1("send k2", "qk", b"second", {"KEYS": "order-2 shared"}),
        Poll("query shared", lambda v: q.query_message(v, v.name("qk"), "shared"),
             until=lambda v, r: r.code == C.SUCCESS and len(decode_records(r.body or b"")) == 2, compare=PULLED),
        Call("query order-2", lambda v: q.query_message(v, v.name("qk"), "order-2"), compare=PULLED,
             checks=(bodies_are(b"second"),)),
        Call("query a key nobody has", lambda v: q.query_message(v, v.name("qk"), "nobody")),
    )),
]

# -- retry and DLQ ------------------------------------------------------------------------------------

RETRY = [
    Scenario("retry.send_back", "retry and DLQ", "a message sent back with delay level 1 comes back in %RETRY%", (
        create("rt"),
        send1("send", "rt", b"try again", {"TAGS": "TagR"}),
        pull_until("pull", "rt", 1, save=save_record("m")),
        Call("send back", lambda v: q.send_back(v, v.name("rg"), v["m.phy"], v.name("rt"), delay_level=1,
                                                origin_msg_id=v["m.msgid"]), checks=(code_is(C.SUCCESS),)),
        Poll("pull %RETRY%", lambda v: q.pull(v, "%RETRY%" + v.name("rg"), group=v.name("rg")), until=pulled(1),
             compare=PULLED, checks=(bodies_are(b"try again"),
                                     lambda v, r: None if q.first_record(r).reconsume_times == 1
                                     else "reconsumeTimes should be 1")),
    )),
    Scenario("retry.dlq", "retry and DLQ", "past maxReconsumeTimes a message goes to %DLQ%", (
        create("dl"),
        send1("send", "dl", b"dead letter"),
        pull_until("pull", "dl", 1, save=save_record("m")),
        Call("send back, max 0", lambda v: q.send_back(v, v.name("dg"), v["m.phy"], v.name("dl"), max_reconsume=0,
                                                       origin_msg_id=v["m.msgid"]), checks=(code_is(C.SUCCESS),)),
        max_offset_until("max offset %DLQ%", "", 1, topic=lambda v: "%DLQ%" + v.name("dg")),
        Poll("pull %DLQ%", lambda v: q.pull(v, "%DLQ%" + v.name("dg"), group=v.name("dg")), until=pulled(1),
             compare=PULLED, checks=(bodies_are(b"dead letter"),)),
    )),
    Scenario("retry.bad_offset", "retry and DLQ", "sending back an offset that holds no message", (
        Call("send back", lambda v: q.send_back(v, v.name("bg"), 1 << 40, v.name("nothing"))),
    )),
]

# -- delay levels ---------------------------------------------------------------------------------------

DELAY = [
    Scenario("delay.level1", "delay levels", "DELAY=1 holds a message for level 1 (1 s) before it is readable", (
        create("dly"),
        Call("send", lambda v: q.send(v, v.name("dly"), b"later", {"DELAY": "1", "TAGS": "TagD"}),
             compare=Compare(ignore=("queueOffset",), body="ignore"), checks=(code_is(C.SUCCESS),)),
        Call("pull at once", lambda v: q.pull(v, v.name("dly")), checks=(code_is(C.PULL_NOT_FOUND),)),
        Poll("pull later", lambda v: q.pull(v, v.name("dly")), until=pulled(1), compare=PULLED,
             checks=(bodies_are(b"later"),), timeout=30),
    ), slow=True),
]

# -- transactions ----------------------------------------------------------------------------------------

HALF = {"TRAN_MSG": "true", "TAGS": "TagT"}


def half(name: str, what: str, body: bytes, group_key: str, extra: dict | None = None) -> Call:
    return Call(name, lambda v: q.send(v, v.name(what), body, {**HALF, "PGROUP": v.name(group_key), **(extra or {})},
                                       group=v.name(group_key), sys_flag=q.TRANSACTION_PREPARED),
                compare=Compare(ignore=("queueOffset",), body="ignore"), checks=(code_is(C.SUCCESS),),
                save=save_ext(name))


TRANSACTIONS = [
    Scenario("tx.commit", "transactions", "a half message is invisible until END_TRANSACTION commits it", (
        create("txc"),
        Call("heartbeat", lambda v: q.heartbeat(v, producer_group=v.name("tpg")), compare=SETUP),
        half("send half", "txc", b"committed", "tpg"),
        max_offset_until("max offset", "txc", 0),
        Call("pull before commit", lambda v: q.pull(v, v.name("txc")), checks=(code_is(C.PULL_NOT_FOUND),)),
        Call("commit", lambda v: q.end_transaction(v, v.name("tpg"), v["send half"], True)),
        Poll("pull after commit", lambda v: q.pull(v, v.name("txc")), until=pulled(1), compare=PULLED,
             checks=(bodies_are(b"committed"),)),
    )),
    Scenario("tx.rollback", "transactions", "a rolled back half message is never readable", (
        create("txr"),
        Call("heartbeat", lambda v: q.heartbeat(v, producer_group=v.name("tpg")), compare=SETUP),
        half("send half", "txr", b"rolled back", "tpg"),
        Call("rollback", lambda v: q.end_transaction(v, v.name("tpg"), v["send half"], False)),
        Call("pull after rollback", lambda v: q.pull(v, v.name("txr")), checks=(code_is(C.PULL_NOT_FOUND),)),
    )),
    Scenario("tx.check_back", "transactions", "an unresolved half message is checked back; the answer commits it", (
        create("txk"),
        Call("heartbeat", lambda v: q.heartbeat(v, producer_group=v.name("kpg")), compare=SETUP),
        half("send half", "txk", b"checked", "kpg", {"CHECK_IMMUNITY_TIME_IN_SECONDS": "1"}),
        ExpectRequest("CHECK_TRANSACTION_STATE", R.CHECK_TRANSACTION_STATE,
                      reply=lambda v, check: q.end_checked_transaction(v, v.name("kpg"), check, True),
                      compare=Compare(body="records", ignore_body_keys=("queueOffset",)),
                      checks=(lambda v, r: None if q.first_record(r).body == b"checked"
                              else "the check carries another message",)),
        Poll("pull after the check", lambda v: q.pull(v, v.name("txk")), until=pulled(1), compare=PULLED,
             checks=(bodies_are(b"checked"),)),
    ), slow=True),
]

# -- filters --------------------------------------------------------------------------------------------

TAGGED = [(b"m-a", "TagA", "1"), (b"m-b", "TagB", "2"), (b"m-c", "TagC", "3")]


def send_tagged(what: str) -> list[Call]:
    return [send1(f"send {tag}", what, body, {"TAGS": tag, "a": a}) for body, tag, a in TAGGED]


FILTERS = [
    Scenario("filter.tag", "filters", "a tag subscription (TagA || TagC) skips other tags", (
        create("ft"), *send_tagged("ft"), max_offset_until("max offset", "ft", 3),
        Call("pull TagA || TagC", lambda v: q.pull(v, v.name("ft"), subscription="TagA || TagC"), compare=PULLED,
             checks=(bodies_are(b"m-a", b"m-c"),)),
    )),
    Scenario("filter.sql92", "filters", "an SQL92 subscription (a > 1) on user properties", (
        create("fs"), *send_tagged("fs"), max_offset_until("max offset", "fs", 3),
        Call("pull a > 1", lambda v: q.pull(v, v.name("fs"), subscription="a > 1", expression_type="SQL92"),
             compare=PULLED, checks=(bodies_are(b"m-b", b"m-c"),), unsupported=no_sql92),
    )),
    Scenario("filter.sql92_tags", "filters", "SQL92 on TAGS and a property together", (
        create("fq"), *send_tagged("fq"), max_offset_until("max offset", "fq", 3),
        Call("pull TAGS in ('TagA','TagB') AND a >= 2", lambda v: q.pull(
            v, v.name("fq"), subscription="TAGS in ('TagA', 'TagB') AND a >= 2", expression_type="SQL92"),
            compare=PULLED, checks=(bodies_are(b"m-b"),), unsupported=no_sql92),
    )),
]

# -- orderly locks ----------------------------------------------------------------------------------------

LOCKS = [
    Scenario("lock.batch", "orderly locks", "LOCK_BATCH_MQ grants a queue to one client at a time", (
        create("lk"),
        Call("A locks q0, q1", lambda v: q.lock(v, v.name("lg"), "a", v.name("lk"), (0, 1))),
        Call("B locks q0, q1", lambda v: q.lock(v, v.name("lg"), "b", v.name("lk"), (0, 1))),
        Call("B locks q2", lambda v: q.lock(v, v.name("lg"), "b", v.name("lk"), (2,))),
        Call("A unlocks q0", lambda v: q.lock(v, v.name("lg"), "a", v.name("lk"), (0,), unlock=True)),
        Call("B locks q0, q1 again", lambda v: q.lock(v, v.name("lg"), "b", v.name("lk"), (0, 1))),
    )),
]

# -- routes and registration --------------------------------------------------------------------------------

FAKE = ("fake", "fakecluster", "127.0.0.1:9")


def has_route(v: Vars, r: RemotingCommand) -> bool:
    return r.code == C.SUCCESS


ROUTES = [
    Scenario("namesrv.route", "routes", "a topic created on the broker gets a route on the name server", (
        create("rte", required=True),
        Poll("route", lambda v: q.route(v, v.name("rte")), target="namesrv", until=has_route),
    ), needs_namesrv=True),
    Scenario("namesrv.unknown_topic", "routes", "the route of an unknown topic: TOPIC_NOT_EXIST", (
        Call("route", lambda v: q.route(v, v.name("nope")), target="namesrv", checks=(code_is(C.TOPIC_NOT_EXIST),)),
    ), needs_namesrv=True),
    Scenario("namesrv.registration", "routes", "a broker registers, is routed to, unregisters", (
        Call("register", lambda v: q.register_broker(v, v.name(FAKE[0]), v.name(FAKE[1]), FAKE[2], {
            v.name("fake-topic"): 2}), target="namesrv"),
        Call("route", lambda v: q.route(v, v.name("fake-topic")), target="namesrv"),
        Call("unregister", lambda v: q.unregister_broker(v, v.name(FAKE[0]), v.name(FAKE[1]), FAKE[2]),
             target="namesrv"),
        Call("route after", lambda v: q.route(v, v.name("fake-topic")), target="namesrv",
             checks=(code_is(C.TOPIC_NOT_EXIST),)),
    ), needs_namesrv=True),
    Scenario("namesrv.kv_config", "routes", "the name server's KV config: put, get, delete, get again", (
        Call("put", lambda v: q.kv_config(R.PUT_KV_CONFIG, v.name("ns"), "k", "v1"), target="namesrv"),
        Call("get", lambda v: q.kv_config(R.GET_KV_CONFIG, v.name("ns"), "k"), target="namesrv",
             checks=(ext_is("value", "v1"),)),
        Call("delete", lambda v: q.kv_config(R.DELETE_KV_CONFIG, v.name("ns"), "k"), target="namesrv"),
        Call("get after delete", lambda v: q.kv_config(R.GET_KV_CONFIG, v.name("ns"), "k"), target="namesrv"),
    ), needs_namesrv=True),
    Scenario("namesrv.cluster", "routes", "the cluster table lists the broker under test", (
        Call("cluster info", lambda v: RemotingCommand.request(R.GET_BROKER_CLUSTER_INFO), target="namesrv",
             compare=Compare(body="ignore"),
             checks=(lambda v, r: None if v.broker in (r.body or b"").decode() else
                     f"{v.broker} is not in the cluster table",)),
    ), needs_namesrv=True),
]

# -- errors and malformed requests ------------------------------------------------------------------------------

ERRORS = [
    Scenario("error.unknown_code", "errors", "an unknown request code: REQUEST_CODE_NOT_SUPPORTED", (
        Call("code 9999", lambda v: RemotingCommand.request(9999), checks=(code_is(C.REQUEST_CODE_NOT_SUPPORTED),)),
    )),
    Scenario("error.unknown_topic", "errors", "sending to or pulling from a topic that does not exist", (
        Call("send (no default topic)", lambda v: q.send(v, v.name("ghost"), b"x", default_topic="NO_SUCH_TOPIC")),
        Call("pull", lambda v: q.pull(v, v.name("ghost"))),
        Call("max offset", lambda v: q.queue_request(R.GET_MAX_OFFSET, v.name("ghost"))),
    )),
    Scenario("error.bad_queue", "errors", "a queue id past the topic's queues", (
        create("bq", required=True),
        Call("send to q9", lambda v: q.send(v, v.name("bq"), b"x", queue_id=9)),
        Call("pull q9", lambda v: q.pull(v, v.name("bq"), queue_id=9)),
    )),
    Scenario("error.missing_fields", "errors", "requests without required header fields", (
        create("mf", required=True),
        Call("send without topic (b)", lambda v: q.send(v, v.name("mf"), b"x", drop=("b",))),
        Call("pull without queueOffset", lambda v: q.pull(v, v.name("mf"), drop=("queueOffset",))),
        Call("query offset without consumerGroup", lambda v: RemotingCommand.request(
            R.QUERY_CONSUMER_OFFSET, {"topic": v.name("mf"), "queueId": "0"})),
    )),
    Scenario("error.bad_sql", "errors", "an SQL92 expression that does not parse, in a pull's subscription", (
        create("bs"), send1("send", "bs", b"x", {"a": "1"}), max_offset_until("max offset", "bs", 1),
        Call("pull a >>> 1", lambda v: q.pull(v, v.name("bs"), subscription="a >>> 1", expression_type="SQL92"),
             compare=PULLED, unsupported=no_sql92),
    )),
    Scenario("error.body_too_large", "errors", "a body over maxMessageSize (4 MiB): MESSAGE_ILLEGAL", (
        create("big"),
        Call("send 4 MiB + 1", lambda v: q.send(v, v.name("big"), b"x" * (4 * 1024 * 1024 + 1)),
             checks=(code_is(C.MESSAGE_ILLEGAL),)),
    )),
    Scenario("error.oneway_unknown_code", "errors", "a oneway request with an unknown code gets no answer", (
        Raw("oneway code 9999", lambda v: q.encoded(RemotingCommand.request(9999), opaque=77, oneway=True),
            timeout=1.5),
    )),
    Scenario("error.oversized_frame", "errors",
             "a length field over 16 MiB closes the connection; the server serves on", (
        Raw("frame of 16 MiB + 1", lambda v: q.raw_frame(16 * 1024 * 1024 + 1, b"{}")),
        Call("next request", lambda v: RemotingCommand.request(9999)),
    )),
    Scenario("error.bad_header", "errors", "a header that is not JSON closes the connection; the server serves on", (
        Raw("header 'not json'", lambda v: q.raw_frame(4 + 8, b"not json")),
        Call("next request", lambda v: RemotingCommand.request(9999)),
    )),
]

GROUPS = {"sending": SENDING, "pulling": PULLING, "offsets": OFFSETS, "queries": QUERIES, "retry and DLQ": RETRY,
          "delay levels": DELAY, "transactions": TRANSACTIONS, "filters": FILTERS, "orderly locks": LOCKS,
          "routes": ROUTES, "errors": ERRORS}
#: Every scenario, in the order they run.
SCENARIOS: list[Scenario] = [s for group in GROUPS.values() for s in group]


def select(pattern: str | None) -> list[Scenario]:
    """The scenarios whose id or group matches ``pattern`` (fnmatch, comma-separated; a bare prefix such as
    ``tx`` selects ``tx.*``; None: all)."""
    from fnmatch import fnmatch
    if not pattern:
        return list(SCENARIOS)
    pats = [p.strip() for p in pattern.split(",") if p.strip()]
    return [s for s in SCENARIOS if any(fnmatch(s.id, p) or fnmatch(s.group, p) or s.id.startswith(p + ".")
                                      for p in pats)]
