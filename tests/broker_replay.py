"""Replaying the broker frames the real 4.9.4 Java client exchanged with the real 4.9.4 broker
(``tests/data/rocketmq-4.9.4-broker-live/``, recorded by ``tools/rocketmq_broker_live/record.py``)
to pymq-ref's broker, and comparing the answers (no tests here).

Every recorded client connection gets its own connection to our broker; the client's requests go
out in the recorded order, paced by the recorded gaps (at most 0.2 s each), so that what the
store has dispatched by then matches. A request whose recorded answer took a second or more (a
held pull, a long-polled rebalance) is sent but not compared. Answers are compared modulo what
depends on time, hosts and generated ids (:func:`normalize`).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field

from pymq_ref.formats.message import iter_records
from pymq_ref.remoting.codec import decode
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.errors import RemotingTimeoutError
from pymq_ref.remoting.transport import RemotingClient

HELD_S = 1.0
MAX_GAP_S = 0.2
_HOST = re.compile(r"\d+\.\d+\.\d+\.\d+:\d+")
#: record fields that depend on time or hosts
_RECORD_VOLATILE = {"born_timestamp", "store_timestamp", "born_host", "store_host", "phy_offset",
                    "prepared_transaction_offset", "total_size"}
#: properties whose values depend on time, hosts or the store's offsets
_PROP_VOLATILE = {"ORIGIN_MESSAGE_ID", "PUSH_REPLY_TIME", "TRAN_PREPARED_QUEUE_OFFSET", "TIMER_OUT_MS",
                  "CHECK_IMMUNITY_TIME_IN_SECONDS", "TRANSACTION_CHECK_TIMES"}
#: ext fields whose values depend on time or the broker's address
_EXT_VOLATILE = {"timestamp", "bornHost", "storeHost", "storeTimestamp"}


def load_frames(path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def command(rec: dict) -> RemotingCommand:
    return decode(bytes.fromhex(rec["frame_hex"])).command


def normalize_records(body: bytes) -> list:
    out = []
    for r in iter_records(body, with_spans=False):
        d = {k: v for k, v in r._asdict().items() if k not in _RECORD_VOLATILE}
        d.pop("spans", None)
        props = dict(d.pop("properties", {}) or {})
        d.pop("properties_string", None)
        d["properties"] = {k: v for k, v in props.items() if k not in _PROP_VOLATILE}
        out.append(d)
    return out


def normalize(request: RemotingCommand, response: RemotingCommand) -> dict:
    """What must be equal between the real broker's answer and ours."""
    ext = dict(response.ext() or {})
    for key in _EXT_VOLATILE & set(ext):
        ext[key] = "<volatile>"
    if "msgId" in ext:  # store host + CommitLog offset: the recording broker's store held every scenario
        ext["msgId"] = "<offset msg id>"
    body = response.body
    if body and request.code == RequestCode.PULL_MESSAGE and response.code == 0:
        body = normalize_records(body)
    elif body and body[:1] in (b"{", b"["):
        try:
            body = json.loads(body)
        except ValueError:
            body = body.decode("utf-8", "replace")
    if isinstance(body, dict) and isinstance(body.get("consumerIdList"), list):
        body["consumerIdList"] = sorted(body["consumerIdList"])  # 4.9.4: a ConcurrentHashMap of channels, any order
    remark = _HOST.sub("<host>", response.remark) if response.remark else response.remark
    return {"code": response.code, "remark": remark, "ext": ext, "body": body}


#: requests that name a CommitLog offset, and the header field that does
OFFSET_FIELDS = {RequestCode.END_TRANSACTION: "commitLogOffset", RequestCode.CONSUMER_SEND_MSG_BACK: "offset"}


def commit_log_offsets(response: RemotingCommand) -> list[int]:
    """The CommitLog offsets an answer reveals: a send's offset msg id, a pull's records."""
    msg_id = (response.ext() or {}).get("msgId")
    if msg_id and len(msg_id) == 32 and response.code == 0:
        return [int(msg_id[16:], 16)]
    if response.body and response.code == 0 and response.ext().get("nextBeginOffset") is not None:
        try:
            return [r.phy_offset for r in iter_records(response.body, with_spans=False)]
        except Exception:
            return []
    return []


def translate_offsets(req: RemotingCommand, offsets: dict[int, int]) -> RemotingCommand:
    key = OFFSET_FIELDS[req.code]
    ext = dict(req.ext())
    if ext.get(key) is not None and int(ext[key]) in offsets:
        ext[key] = str(offsets[int(ext[key])])
    return req.with_(ext_fields=ext, custom_header=None)


@dataclass
class ReplayResult:
    compared: int = 0
    held: int = 0
    oneway: int = 0
    differences: list = field(default_factory=list)  # (seq, code name, recorded, ours)
    broker_requests: dict = field(default_factory=dict)  # code -> count the broker sent us


async def replay(frames: list[dict], broker_addr: str) -> ReplayResult:
    result = ReplayResult()
    by_key = {(f["conn"], f["opaque"]): f for f in frames if f["direction"] == "s2c" and f["kind"] == "response"}
    requests = sorted((f for f in frames if f["direction"] == "c2s" and f["kind"] in ("request", "oneway")),
                      key=lambda f: f["seq"])
    clients: dict[int, RemotingClient] = {}

    def on_broker_request(req, channel):
        result.broker_requests[req.code] = result.broker_requests.get(req.code, 0) + 1
        return RemotingCommand.response(0)

    calls = []  # (recorded request, recorded answer or None, task)
    offsets: dict[int, int] = {}  # the recording broker's CommitLog offsets -> ours

    def learn(rec_answer, task) -> None:
        """Pair the CommitLog offsets of a recorded answer with ours (send msg ids, pulled records)."""
        if task.cancelled() or task.exception() is not None:
            return
        real, ours = command(rec_answer), task.result()
        for a, b in zip(commit_log_offsets(real), commit_log_offsets(ours)):
            offsets[a] = b
    last_time = None
    try:
        for rec in requests:
            if last_time is not None:
                await asyncio.sleep(min(MAX_GAP_S, max(0.0, rec["time"] - last_time)))
            last_time = rec["time"]
            client = clients.get(rec["conn"])
            if client is None:
                client = clients[rec["conn"]] = RemotingClient(RequestDispatcher(default=on_broker_request))
            req = command(rec)
            if req.code in OFFSET_FIELDS:
                # it names a CommitLog offset of the recording broker's store: wait for the answers that
                # tell where that record is in ours, then translate
                earlier = [t for r, _, a, t in calls if a is not None and a["time"] <= rec["time"]]
                if earlier:
                    await asyncio.wait(earlier, timeout=10)
                req = translate_offsets(req, offsets)
            channel = await client.channel(broker_addr)
            if req.is_oneway:
                channel.invoke_oneway(req)
                result.oneway += 1
                continue
            answer = by_key.get((rec["conn"], rec["opaque"]))
            wait = 3 + (answer["time"] - rec["time"] if answer is not None else 20)
            # sent now, answered whenever: a held pull is woken by a later request of the replay
            task = asyncio.ensure_future(channel.invoke(req, wait))
            if answer is not None:
                task.add_done_callback(lambda t, answer=answer: learn(answer, t))
            calls.append((rec, req, answer, task))
            await asyncio.sleep(0)
        for rec, req, answer, task in calls:
            if answer is None or answer["time"] - rec["time"] >= HELD_S:
                result.held += 1
                continue
            try:
                b = normalize(req, await task)
            except RemotingTimeoutError:
                b = "no answer"
            a = normalize(req, command(answer))
            result.compared += 1
            if a != b:
                result.differences.append((rec["seq"], req.code_name, a, b))
    finally:
        for *_, task in calls:
            task.cancel()
        await asyncio.gather(*(task for *_, task in calls), return_exceptions=True)
        for client in clients.values():
            await client.close()
    return result
