"""The client's scenarios, one per mode of issue 13 (no tests here): each runs pymq-ref's producer
or consumers against a live name server + broker, asserts what must come out, and records every
request the client sent with the broker's answer code.

Used twice: ``tools/rocketmq_client_live/record.py`` runs them against the real RocketMQ 4.9.4 and
writes ``tests/data/rocketmq-4.9.4-client-live/requests.jsonl``; ``tests/test_client_live.py`` runs
them against pymq-ref's broker and checks that the client still sends requests of the same shapes
(codes, header fields, the deterministic values) as those the real broker accepted.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field

from pymq_ref.client.config import ClientConfig
from pymq_ref.client.consumer.consume import ConsumeConcurrentlyStatus, ConsumeOrderlyStatus
from pymq_ref.client.consumer.lite_pull import DefaultLitePullConsumer
from pymq_ref.client.consumer.push import DefaultMQPushConsumer
from pymq_ref.client.instance import MQClientInstance
from pymq_ref.client.message import Message, create_reply_message
from pymq_ref.client.producer import DefaultMQProducer, select_by_hash
from pymq_ref.client.transaction import LocalTransactionState, TransactionMQProducer
from pymq_ref.formats.properties import decode_properties
from pymq_ref.remoting.bodies.bean import parse_json
from pymq_ref.remoting.codes import request_code_name

#: header values that are the same on every run (others — times, offsets, ids — vary)
STABLE_KEYS = {"a", "c", "d", "f", "h", "k", "m", "producerGroup", "consumerGroup", "group", "defaultTopic",
               "defaultTopicQueueNums", "sysFlag", "flag", "maxMsgNums", "suspendTimeoutMillis", "expressionType",
               "delayLevel", "commitOrRollback", "fromTransactionCheck", "unitMode", "batch", "maxReconsumeTimes"}
#: keys whose value names the scenario's topic (normalised to "<T>")
TOPIC_KEYS = {"b", "topic", "originTopic"}


class Recorder:
    """Stands in for an instance's RemotingClient and notes each request and its answer's code."""

    def __init__(self, inner, log: list, scenario: str, role: str, topic_prefix: str):
        self.inner, self.log, self.scenario, self.role, self.prefix = inner, log, scenario, role, topic_prefix

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def _note(self, addr, request, response, oneway=False):
        self.log.append(shape(self.scenario, self.role, request, response, oneway, self.prefix))

    async def invoke(self, addr, request, timeout=3.0):
        try:
            response = await self.inner.invoke(addr, request, timeout)
        except Exception:
            self._note(addr, request, None)
            raise
        self._note(addr, request, response)
        return response

    async def invoke_oneway(self, addr, request):
        await self.inner.invoke_oneway(addr, request)
        self._note(addr, request, None, oneway=True)


def _topic(value: str, prefix: str) -> str:
    """The run's prefix → ``<P>``, and a scenario's group name → ``<P>PG`` / ``<P>CG``."""
    if not value:
        return value
    return re.sub(r"<P>(PG|CG)_[\w-]+", r"<P>\1", value.replace(prefix, "<P>"))


def shape(scenario, role, request, response, oneway, prefix) -> dict:
    """What is compared of one request: code, header keys, the stable values, property names, the body's kind."""
    ext = request.ext()
    values = {}
    for k, v in sorted(ext.items()):
        if k in STABLE_KEYS:
            values[k] = _topic(v, prefix) if isinstance(v, str) else v
        elif k in TOPIC_KEYS:
            values[k] = _topic(v, prefix)
    if request.code == 11 and "sysFlag" in values:  # the commit bit depends on timing (an offset to commit yet?)
        values["sysFlag"] = str(int(values["sysFlag"]) & ~1)
    props = ext.get("i") or ext.get("properties")
    body_kind = None
    if request.body:
        body_kind = "bytes"
        if request.body[:1] == b"{":
            try:
                tree = parse_json(request.body)
                body_kind = "json:" + ",".join(sorted(tree)) if isinstance(tree, dict) else "json"
            except ValueError:
                pass
    return {"scenario": scenario, "role": role, "code": request.code, "name": request_code_name(request.code),
            "oneway": oneway, "keys": sorted(ext), "values": values,
            "property_names": sorted(decode_properties(props)) if props else None, "body": body_kind,
            "remark": request.remark is not None,
            "response_code": None if response is None else response.code}


def shape_key(s: dict, with_scenario: bool = True) -> str:
    """The comparable identity of a shape (everything but the answer; optionally not the scenario either)."""
    keys = ("code", "oneway", "keys", "values", "property_names", "body", "remark")
    if with_scenario:
        keys = ("scenario", "role") + keys
    return json.dumps({k: s[k] for k in keys}, sort_keys=True)


@dataclass
class Context:
    namesrv: str
    prefix: str  # topics and groups of this run start with it (unique per run)
    log: list = field(default_factory=list)
    offset_dir: str | None = None
    instances: list = field(default_factory=list)

    def topic(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def instance(self, scenario: str, role: str) -> MQClientInstance:
        config = ClientConfig(self.namesrv, instance_name=f"{scenario}-{role}-{time.monotonic_ns()}",
                              poll_name_server_interval=1.0, rebalance_interval=2.0)
        inst = MQClientInstance(config)
        inst.remoting = Recorder(inst.remoting, self.log, scenario, role, self.prefix)
        self.instances.append(inst)
        return inst


async def wait_until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


async def _producer(ctx: Context, scenario: str, cls=DefaultMQProducer, **kwargs):
    p = cls(f"{ctx.prefix}PG_{scenario}", instance=ctx.instance(scenario, "producer"), **kwargs)
    await p.start()
    return p


async def _push_consumer(ctx: Context, scenario: str, group: str, topic: str, expression: str, listener, *,
                         orderly: bool = False, **kwargs) -> DefaultMQPushConsumer:
    """A started push consumer of ``topic`` (from its first offset unless told otherwise)."""
    kwargs.setdefault("consume_from_where", "CONSUME_FROM_FIRST_OFFSET")
    c = DefaultMQPushConsumer(f"{ctx.prefix}{group}", instance=ctx.instance(scenario, "consumer"), **kwargs)
    c.subscribe(topic, expression)
    c.register_message_listener(listener, orderly=orderly)
    await c.start()
    return c


async def _close(*clients) -> None:
    for c in clients:
        await c.shutdown()
        if c.instance is not None and not c.instance.stopped:
            await c.instance.shutdown()


# -- producing ------------------------------------------------------------------------------

async def produce_modes(ctx: Context) -> dict:
    """sync, async, oneway, batch, a compressed body, selector (ordered) sends, a delayed message."""
    t = ctx.topic("Modes")
    p = await _producer(ctx, "produce")
    try:
        results = [await p.send(Message(t, b"sync-%d" % i, tags="TagA", keys=f"k{i}")) for i in range(3)]
        results += [await p.send_async(Message(t, b"async-%d" % i, tags="TagB")) for i in range(2)]
        await p.send_oneway(Message(t, b"oneway-0"))
        results.append(await p.send_batch([Message(t, b"batch-%d" % i) for i in range(3)]))
        big = Message(t, b"z" * 5000, tags="Big")
        results.append(await p.send(big))
        results += [await p.send(Message(t, b"ordered-%d" % i), selector=select_by_hash, arg=42) for i in range(3)]
        results.append(await p.send(Message(t, b"delayed", delay_time_level=1)))
        assert all(r.send_status.value == "SEND_OK" for r in results), results
        ordered = {r.message_queue for r in results[-4:-1]}
        assert len(ordered) == 1, ordered
        return {"sent": len(results) + 1 + 2, "batch_ids": results[5].msg_id.count(",") + 1}
    finally:
        await _close(p)


async def consume_concurrently(ctx: Context) -> dict:
    """Everything produce_modes sent comes back (bodies inflated); one message fails once and is
    redelivered through the retry topic (send back with delay level 1)."""
    t = ctx.topic("Modes")
    seen: list = []
    failed_once = set()

    async def listener(msgs, context):
        for m in msgs:
            seen.append((m.body, m.reconsume_times, m.topic))
            if m.body == b"sync-1" and m.msg_id not in failed_once:
                failed_once.add(m.msg_id)
                context.delay_level_when_next_consume = 1
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c = await _push_consumer(ctx, "push", "CG_push", t, "*", listener)
    try:
        bodies = lambda: {b for b, _, _ in seen}
        await wait_until(lambda: len(bodies()) >= 14 and any(r == 1 for _, r, _ in seen), 60, "all messages + 1 retry")
        assert b"z" * 5000 in bodies()
        retried = [(b, r, topic) for b, r, topic in seen if r == 1]
        assert retried == [(b"sync-1", 1, t)], retried
        await c.persist_consumer_offset()
        return {"consumed": len(seen)}
    finally:
        await _close(c)


async def consume_tag_filter(ctx: Context) -> dict:
    t = ctx.topic("Modes")
    seen = []

    async def listener(msgs, context):
        seen.extend(m.tags for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c = await _push_consumer(ctx, "tags", "CG_tags", t, "TagA || TagB", listener)
    try:
        await wait_until(lambda: len(seen) >= 5, 30, "5 tagged messages")
        await asyncio.sleep(0.3)
        assert sorted(seen) == ["TagA"] * 3 + ["TagB"] * 2, seen
        return {"consumed": len(seen)}
    finally:
        await _close(c)


async def consume_orderly(ctx: Context) -> dict:
    """Messages with one selector argument come back in send order, under the broker's queue lock."""
    t = ctx.topic("Orderly")
    p = await _producer(ctx, "orderly")
    try:
        for i in range(10):
            await p.send(Message(t, b"%d" % i), selector=select_by_hash, arg="order-7")
    finally:
        await _close(p)
    seen = []
    suspended = []

    async def listener(msgs, context):
        for m in msgs:
            if m.body == b"5" and not suspended:
                suspended.append(m.queue_offset)
                context.suspend_current_queue_time_millis = 100
                return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
            seen.append(int(m.body))
        return ConsumeOrderlyStatus.SUCCESS

    c = await _push_consumer(ctx, "orderly", "CG_orderly", t, "*", listener, orderly=True)
    try:
        await wait_until(lambda: len(seen) >= 10, 60, "10 ordered messages")
        assert seen == list(range(10)), seen
        locked = [pq.locked for mq, pq in c.rebalance.process_queue_table.items() if mq.topic == t]
        assert any(locked)
        return {"consumed": len(seen)}
    finally:
        await _close(c)


async def consume_broadcasting(ctx: Context) -> dict:
    t = ctx.topic("Modes")
    seen = set()

    async def listener(msgs, context):
        seen.update(m.body for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c = await _push_consumer(ctx, "broadcasting", "CG_bc", t, "*", listener, message_model="BROADCASTING",
                             offset_store_dir=ctx.offset_dir)
    try:
        await wait_until(lambda: len(seen) >= 14, 30, "14 messages")
        await c.persist_consumer_offset()
        assert c.offset_store.path.exists()
        return {"consumed": len(seen)}
    finally:
        await _close(c)


async def lite_pull(ctx: Context) -> dict:
    t = ctx.topic("Modes")
    out = {}
    c = DefaultLitePullConsumer(f"{ctx.prefix}CG_lite_sub", instance=ctx.instance("lite-subscribe", "consumer"),
                                consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    c.subscribe(t, "*")
    await c.start()
    try:
        got = set()
        deadline = time.monotonic() + 30
        while len(got) < 14 and time.monotonic() < deadline:
            got.update(m.body for m in await c.poll(1.0))
        assert len(got) >= 14, len(got)
        await c.commit_sync()
        out["subscribe"] = len(got)
    finally:
        await _close(c)
    c = DefaultLitePullConsumer(f"{ctx.prefix}CG_lite_assign", instance=ctx.instance("lite-assign", "consumer"),
                                consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    await c.start()
    try:
        mqs = await c.fetch_message_queues(t)
        c.assign(mqs)
        got = set()
        deadline = time.monotonic() + 30
        while len(got) < 14 and time.monotonic() < deadline:
            got.update(m.body for m in await c.poll(1.0))
        assert len(got) >= 14, len(got)
        await c.commit_sync()
        out["assign"] = len(got)
    finally:
        await _close(c)
    return out


class _Tx:
    def __init__(self):
        self.checked = []

    def execute_local_transaction(self, msg, arg):
        return arg

    def check_local_transaction(self, msg):
        self.checked.append(msg.body)
        return LocalTransactionState.COMMIT_MESSAGE


async def transaction(ctx: Context, wait_check: bool = True) -> dict:
    """COMMIT is delivered, ROLLBACK never; UNKNOW is delivered after the broker checks back (when
    ``wait_check``: the broker must check within a minute)."""
    t = ctx.topic("Tx")
    listener = _Tx()
    p = await _producer(ctx, "transaction", TransactionMQProducer, listener=listener)
    c = None
    try:
        for state in LocalTransactionState:
            r = await p.send_message_in_transaction(Message(t, state.value.encode()), state)
            assert r.local_transaction_state == state
        seen = []

        async def consume(msgs, context):
            seen.extend(m.body for m in msgs)
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        c = await _push_consumer(ctx, "transaction", "CG_tx", t, "*", consume)
        want = {b"COMMIT_MESSAGE", b"UNKNOW"} if wait_check else {b"COMMIT_MESSAGE"}
        await wait_until(lambda: want <= set(seen), 90 if wait_check else 30, f"{want}")
        assert b"ROLLBACK_MESSAGE" not in seen
        if wait_check:
            assert b"UNKNOW" in listener.checked
        return {"consumed": sorted(seen), "checked": len(listener.checked)}
    finally:
        await _close(*([c] if c else []), p)


async def request_reply(ctx: Context) -> dict:
    t = ctx.topic("Request")
    responder = await _producer(ctx, "reply-responder")
    requester = await _producer(ctx, "reply-requester")
    await responder.send(Message(t, b"warm-up"))  # creates the topic so the consumer has a route
    replies = []

    async def serve(msgs, context):
        for m in msgs:
            if m.properties.get("CORRELATION_ID"):
                replies.append(await responder.send(create_reply_message(m, b"re: " + m.body)))
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c = await _push_consumer(ctx, "reply", "CG_reply", t, "*", serve,
                             consume_from_where="CONSUME_FROM_LAST_OFFSET")  # the consumer's default
    try:
        await wait_until(lambda: any(mq.topic == t for mq in c.rebalance.process_queue_table), 30, "queues")
        await asyncio.sleep(1.0)
        reply = await requester.request(Message(t, b"ping"), timeout=10.0)
        assert reply.body == b"re: ping", reply
        await wait_until(lambda: replies, 10, "the reply's send result")
        return {"reply": reply.body.decode(), "reply_send": replies[0].send_status.value}
    finally:
        await _close(c, requester, responder)


SCENARIOS = {
    "produce": produce_modes,
    "push": consume_concurrently,
    "tags": consume_tag_filter,
    "orderly": consume_orderly,
    "broadcasting": consume_broadcasting,
    "lite": lite_pull,
    "transaction": transaction,
    "reply": request_reply,
}
