"""Replaying frames recorded against the real RocketMQ 4.9.4 broker at pymq-ref's broker, and the
comparison of the answers modulo what depends on the moment, the machine's hosts and ports, and
generated ids (no tests here; used by the admin and differential tests).

:func:`replay` opens one connection per recorded connection, sends each recorded client request
in the recorded order (waiting for its answer), and collects what the broker sent back and what
it asked the client. :func:`normalize` turns one answer into what must be equal on both sides.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field

from pymq_ref.formats.message import iter_records
from pymq_ref.remoting.codec import decode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.errors import RemotingTimeoutError
from pymq_ref.remoting.transport import RemotingClient

#: answer fields that are a time (ms) and differ on every run
TIME_KEYS = {"lastUpdateTimestamp", "lastTimestamp", "bootTimestamp", "indexLastUpdateTimestamp", "timestamp",
             "storeTimestamp", "runtime", "earliestMessageTimeStamp"}
#: runtime-info keys whose values depend on the machine or on statistics pymq-ref does not keep
RUNTIME_VALUE_FREE = {"commitLogDirCapacity", "commitLogDiskRatio", "consumeQueueDiskRatio", "bootTimestamp",
                      "runtime", "earliestMessageTimeStamp", "remainHowManyDataToFlush", "msgPutTotalTodayNow",
                      "putMessageTimesTotal", "putMessageSizeTotal", "putMessageAverageSize",
                      "putMessageEntireTimeMax", "getMessageEntireTimeMax", "putTps", "getTotalTps",
                      "getFoundTps", "getMissTps", "getTransferedTps", "msgGetTotalTodayNow", "putLatency99",
                      "putLatency999", "dispatchMaxBuffer", "pageCacheLockTimeMills", "putMessageFailedTimes",
                      "putMessageDistributeTime"}
#: body fields that are statistics pymq-ref does not keep
STAT_KEYS = {"consumeTps"}
_ADDR = re.compile(r"^\d+\.\d+\.\d+\.\d+:\d+$")
_ADDR_IN_TEXT = re.compile(r"\d+\.\d+\.\d+\.\d+:\d+")


@dataclass
class Exchange:
    """One recorded request and what each side did with it."""

    seq: int
    conn: int
    request: RemotingCommand
    recorded: RemotingCommand | None  # the real broker's answer (None: none recorded)
    ours: RemotingCommand | None = None
    ours_error: str | None = None
    step: str = ""


@dataclass
class Replay:
    exchanges: list[Exchange] = field(default_factory=list)
    last_seq: dict[int, int] = field(default_factory=dict)  # conn -> seq of its last recorded frame
    pushed_real: dict[int, list[RemotingCommand]] = field(default_factory=dict)  # conn -> broker's requests
    pushed_ours: dict[int, list[RemotingCommand]] = field(default_factory=dict)


def load_frames(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def command_of(frame: dict) -> RemotingCommand:
    return decode(bytes.fromhex(frame["frame_hex"])).command


def pair_up(frames: list[dict]) -> Replay:
    """The recorded requests with their recorded answers, and the broker's own requests per connection."""
    out = Replay()
    pending: dict[tuple[int, int], Exchange] = {}
    for fr in frames:
        out.last_seq[fr["conn"]] = fr["seq"]
        cmd = command_of(fr)
        if fr["direction"] == "c2s" and not cmd.is_response:
            ex = Exchange(fr["seq"], fr["conn"], cmd, None, step=fr.get("step", ""))
            out.exchanges.append(ex)
            if not cmd.is_oneway:
                pending[(fr["conn"], cmd.opaque)] = ex
        elif fr["direction"] == "s2c" and cmd.is_response:
            ex = pending.pop((fr["conn"], cmd.opaque), None)
            if ex is not None:
                ex.recorded = cmd
        elif fr["direction"] == "s2c":
            out.pushed_real.setdefault(fr["conn"], []).append(cmd)
    return out


async def replay(rep: Replay, broker_addr: str, *, timeout: float = 10.0, settle: float = 0.05,
                 before_each=None) -> Replay:
    """Send every recorded request to ``broker_addr`` on its own connection, in order;
    ``before_each()`` (a coroutine function) runs before each request — the tests wait there
    until the broker's store has dispatched what was sent (mqadmin's commands came seconds
    apart; a replay comes microseconds apart)."""
    clients: dict[int, RemotingClient] = {}

    def client_for(conn: int) -> RemotingClient:
        if conn not in clients:
            got = rep.pushed_ours.setdefault(conn, [])

            def record(request, channel, got=got):
                got.append(request)
                return None
            clients[conn] = RemotingClient(RequestDispatcher(default=record), name=f"replay-{conn}")
        return clients[conn]

    try:
        for ex in rep.exchanges:
            for conn in [c for c in clients if rep.last_seq.get(c, 0) < ex.seq and c != ex.conn]:
                await clients.pop(conn).close()  # the recorded connection had ended (its client left)
            if before_each is not None:
                await before_each()
            client = client_for(ex.conn)
            req = ex.request.with_(opaque=0)
            try:
                if ex.request.is_oneway:
                    await client.invoke_oneway(broker_addr, req)
                    await asyncio.sleep(settle)
                else:
                    ex.ours = await client.invoke(broker_addr, req, timeout)
            except (RemotingTimeoutError, OSError, asyncio.TimeoutError) as e:
                ex.ours_error = f"{type(e).__name__}: {e}"
        await asyncio.sleep(0.2)  # oneway requests the broker sends last
    finally:
        for c in clients.values():
            await c.close()
    return rep


def _mask(value, key: str | None = None):
    if isinstance(value, dict):
        return {k: _mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if key in TIME_KEYS and value not in (0, -1, "0", "-1", None):
        return "<time>"
    if key in STAT_KEYS:
        return "<statistic>"
    if key in ("clientAddr", "bornHost", "storeHost", "brokerAddr") and isinstance(value, str):
        return "<addr>"
    if isinstance(value, str) and _ADDR.match(value):
        return "<addr>"
    return value


def _records(body: bytes) -> list[dict]:
    out = []
    for rec in iter_records(body, with_spans=False):
        props = dict(rec.properties)
        for k in ("MIN_OFFSET", "MAX_OFFSET"):
            props.pop(k, None)
        out.append({"topic": rec.topic, "queue_id": rec.queue_id, "queue_offset": rec.queue_offset,
                    "phy_offset": rec.phy_offset, "sys_flag": rec.sys_flag, "flag": rec.flag,
                    "born_timestamp": rec.born_timestamp, "reconsume_times": rec.reconsume_times,
                    "prepared_transaction_offset": rec.prepared_transaction_offset, "body": rec.body.hex(),
                    "properties": props, "total_size": rec.total_size})
    return out


def _json_body(body: bytes):
    from pymq_ref.remoting.bodies import parse_json
    return parse_json(body.decode("utf-8"))


def normalize(cmd: RemotingCommand | None, request_code: int) -> dict | None:
    """What must be equal between the real broker's answer and ours."""
    if cmd is None:
        return None
    ext = dict(cmd.ext()) if cmd.has_ext() else None
    if ext is not None:
        if "msgId" in ext:  # the offset msg id: store host (masked) + CommitLog offset
            ext["msgId"] = "<host>" + ext["msgId"][-16:]
        if "version" in ext and ext["version"].startswith("{"):
            ext["version"] = _mask(json.loads(ext["version"]))
        ext = _mask(ext)
    remark = _ADDR_IN_TEXT.sub("<addr>", cmd.remark) if cmd.remark else cmd.remark
    out = {"code": cmd.code, "remark": remark, "ext": ext, "flag": cmd.flag & ~0x2,
           "serialize_type": cmd.serialize_type}
    body = cmd.body
    if body is None:
        out["body"] = None
    elif request_code in (11, 12, 33):  # stored records
        try:
            out["body"] = _records(body)
        except Exception as e:  # not records: compare the bytes
            out["body"] = {"undecodable": str(e), "hex": body.hex()}
    elif request_code == 26:  # Java properties text: the keys both sides know must agree in value
        out["body"] = "<properties>"
    else:
        try:
            data = _json_body(body)
        except Exception:
            out["body"] = body.hex()
        else:
            if request_code == 28:  # runtime info: same keys in the same order (but the one naming a
                # path, which hashes differently), values only where they mean the same on both sides
                table = {k: ("<value>" if k in RUNTIME_VALUE_FREE else v)
                         for k, v in data["table"].items() if not k.startswith("commitLogDiskRatio_")}
                paths = sum(k.startswith("commitLogDiskRatio_") for k in data["table"])
                out["body"] = {"table": table, "commitLogDiskRatio_<path> keys": paths}
            else:
                out["body"] = _mask(data)
    return out


def properties_text(body: bytes | None) -> dict[str, str]:
    from pymq_ref.namesrv.config import parse_properties
    return parse_properties(body.decode("utf-8")) if body else {}


async def dispatched(store, timeout: float = 5.0) -> None:
    """Wait until the store's reput has dispatched everything in the CommitLog (bounded)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while store.dispatch_behind_bytes() > 0 and loop.time() < deadline:
        await asyncio.sleep(0.002)
