"""The broker's own state on the wire: GET_BROKER_RUNTIME_INFO (28), GET_BROKER_CONFIG (26),
UPDATE_BROKER_CONFIG (25) — what ``mqadmin brokerStatus``, ``clusterList``, ``getBrokerConfig`` and
``updateBrokerConfig`` send (``broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java``).

The runtime table has 4.9.4's keys. Values pymq-ref knows (offsets, the boot time, disk ratios,
dispatch lag, queue capacities, versions) are real; the traffic statistics 4.9.4 keeps in
``StoreStatsService`` and ``BrokerStats`` (TPS, put latencies and sizes, today's totals) are not
kept by pymq-ref and read as an idle 4.9.4 broker reports them — a deliberate difference, masked by
the differential test. The configuration is every setting
of the facade's two configs under its Java name, overlaid with what ``broker.conf`` said.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil

from pymq_ref.formats.beans import DataVersion
from pymq_ref.namesrv.config import parse_properties
from pymq_ref.remoting.bodies import KVTable, encode_body, encode_json
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import GetBrokerConfigResponseHeader

from .context import BrokerContext
from .java_settings import java_only_settings

BROKER_VERSION = 401  # MQVersion.CURRENT_VERSION of 4.9.4 (V4_9_4)
BROKER_VERSION_DESC = "V4_9_4"
#: statistics of ``StoreStatsService`` / ``BrokerStats`` that pymq-ref does not keep (reported as an
#: idle 4.9.4 broker reports them)
STORE_STATS_IDLE = (("putMessageEntireTimeMax", "0"), ("putMessageTimesTotal", "1"), ("putMessageFailedTimes", "0"),
                    ("putMessageSizeTotal", "0"), ("putMessageDistributeTime", "null"),
                    ("putMessageAverageSize", "0.0"), ("dispatchMaxBuffer", "0"), ("getMessageEntireTimeMax", "0"),
                    ("putTps", "0.0  "), ("getFoundTps", "0.0  "), ("getMissTps", "0.0  "),
                    ("getTotalTps", "0.0 0.0 0.0"), ("getTransferedTps", "0.0  "), ("putLatency99", "0.00"),
                    ("putLatency999", "0.00"))
BROKER_STATS_IDLE = ("msgPutTotalYesterdayMorning", "msgPutTotalTodayMorning", "msgPutTotalTodayNow",
                     "msgGetTotalYesterdayMorning", "msgGetTotalTodayMorning", "msgGetTotalTodayNow")
#: 4.9.4's BrokerConfig defaults of the thread-pool queue capacities (the queues themselves: 0)
QUEUE_CAPACITIES = (("sendThreadPoolQueue", "10000"), ("pullThreadPoolQueue", "100000"),
                    ("queryThreadPoolQueue", "20000"))


def human_bytes(n: int) -> str:
    """``MixAll.humanReadableByteCount(bytes, false)``: 1024-based, one decimal, "B" below 1 KiB."""
    if n < 1024:
        return f"{n} B"
    exp = 0
    value = float(n)
    while value >= 1024 and exp < 6:
        value /= 1024
        exp += 1
    return f"{value:.1f} {'KMGTPE'[exp - 1]}iB"


def runtime_text(ms: int) -> str:
    """``StoreStatsService.getFormatRuntime``."""
    s = ms // 1000
    return f"[ {s // 86400} days, {s % 86400 // 3600} hours, {s % 3600 // 60} minutes, {s % 60} seconds ]"


def _java_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


#: Java names the snake_case conversion does not give back
JAVA_NAMES = {"check_crc_on_recover": "checkCRCOnRecover", "broker_ip1": "brokerIP1", "broker_ip2": "brokerIP2"}
#: settings only pymq-ref has (not reported: a 4.9.4 tool would not know them)
PYMQ_ONLY = {"randomSeed", "strictLoad", "timerWheelEnable", "totalPhysicalMemorySize", "transactionEndIdempotent",
             "indexFileTimeZone"}


def all_configs(ctx: BrokerContext) -> dict[str, str]:
    """Every 4.9.4 setting under its Java name: the defaults of those pymq-ref does not act on,
    the facade's two configs, then what broker.conf set."""
    out: dict[str, str] = dict(java_only_settings())
    for bean in (ctx.config, ctx.broker.store_config):
        for f in dataclasses.fields(bean):
            value = getattr(bean, f.name)
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, (str, int, float)):
                text = str(value)
            elif value is not None and hasattr(value, "name"):  # an enum
                text = value.name
            else:
                continue
            name = JAVA_NAMES.get(f.name) or _java_name(f.name)
            if name not in PYMQ_ONLY:
                out[name] = text
    out.setdefault("brokerIP2", ctx.config.broker_ip1)  # 4.9.4: the same address unless set
    out.setdefault("storePathCommitLog", os.path.join(ctx.broker.store_dir, "commitlog"))
    out.update(ctx.settings)
    return out


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker
    state = ctx.extras.setdefault("admin_broker", {"boot": ctx.now_ms,
                                                   "config_version": DataVersion(0, ctx.now_ms)})

    def runtime_info(request, channel):
        """``prepareRuntimeInfo``: the keys inserted in 4.9.4's order (it decides the order of
        colliding keys in the HashMap fastjson writes)."""
        store = broker.store
        root = broker.store_dir
        commit_log_dir = broker.store_config.store_path_commit_log or os.path.join(root, "commitlog")
        ratio = _disk_ratio(root)
        t: dict[str, str] = {"bootTimestamp": str(state["boot"]), "runtime": runtime_text(ctx.now_ms - state["boot"])}
        t.update(STORE_STATS_IDLE)
        t[f"commitLogDiskRatio_{commit_log_dir}"] = ratio
        t["commitLogDiskRatio"] = ratio
        t["consumeQueueDiskRatio"] = ratio
        t["commitLogMinOffset"] = str(store.get_min_phy_offset())
        t["commitLogMaxOffset"] = str(store.get_max_phy_offset())
        t["brokerVersionDesc"] = BROKER_VERSION_DESC
        t["brokerVersion"] = str(BROKER_VERSION)
        t.update((k, "0") for k in BROKER_STATS_IDLE)
        for name, capacity in QUEUE_CAPACITIES:
            t[f"{name}Size"] = "0"
            t[f"{name}Capacity"] = capacity
        t["EndTransactionQueueSize"] = "0"
        t["EndTransactionThreadPoolQueueCapacity"] = "100000"
        t["dispatchBehindBytes"] = str(store.dispatch_behind_bytes())
        t["pageCacheLockTimeMills"] = "0"
        for name, _ in QUEUE_CAPACITIES:
            t[f"{name}HeadWaitTimeMills"] = "0"
        t["earliestMessageTimeStamp"] = str(_earliest(store))
        t["startAcceptSendRequestTimeStamp"] = str(ctx.config.start_accept_send_request_time_stamp)
        t["remainTransientStoreBufferNumbs"] = str(store.remain_transient_store_buffer_nums())
        if broker.store_config.transient_store_pool_enable:
            t["remainHowManyDataToCommit"] = human_bytes(max(0, store.commit_log.max_offset - _committed(store)))
        t["remainHowManyDataToFlush"] = human_bytes(max(0, store.commit_log.max_offset - _flushed(store)))
        try:
            usage = shutil.disk_usage(root)
            t["commitLogDirCapacity"] = f"Total : {human_bytes(usage.total)}, Free : {human_bytes(usage.free)}."
        except OSError:
            pass
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(KVTable(t)))

    def get_broker_config(request, channel):
        text = "".join(f"{k}={v}\n" for k, v in all_configs(ctx).items())
        header = GetBrokerConfigResponseHeader(version=encode_json(state["config_version"]))
        return RemotingCommand.response(ResponseCode.SUCCESS, None, header, text.encode("utf-8"))

    def update_broker_config(request, channel):
        if request.body is not None:
            props = parse_properties(request.body.decode("utf-8", "replace"))
            fields = {_java_name(f.name): f for f in dataclasses.fields(ctx.config)}
            for key, value in props.items():
                ctx.settings[key] = value
                f = fields.get(key)
                if f is not None:
                    default = f.default
                    try:
                        typed = (value.strip().lower() == "true" if isinstance(default, bool)
                                 else int(value) if isinstance(default, int) else value)
                    except ValueError:
                        continue  # 4.9.4 ignores a value it cannot convert
                    setattr(ctx.config, f.name, typed)
            state["config_version"].next_version(ctx.now_ms)
            if "brokerPermission" in props:
                broker.topics.data_version.next_version(ctx.now_ms)
                ctx.register_broker_all()
        return RemotingCommand.response(ResponseCode.SUCCESS)

    return {RequestCode.GET_BROKER_RUNTIME_INFO: runtime_info, RequestCode.GET_BROKER_CONFIG: get_broker_config,
            RequestCode.UPDATE_BROKER_CONFIG: update_broker_config}


def _disk_ratio(path: str) -> str:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return "-1.0"
    ratio = (usage.total - usage.free) / usage.total if usage.total else -1.0
    return re.sub(r"0+$", "", f"{ratio:.4f}").rstrip(".") if ratio >= 0 else "-1.0"


def _earliest(store) -> int:
    """``getEarliestMessageTime``: 4.9.4 reads ``2 * maxMessageSize`` bytes at the min offset, which
    fails (-1) unless that many bytes are written — kept as is."""
    try:
        return store.commit_log.pickup_store_timestamp(store.get_min_phy_offset(),
                                                       2 * store.config.max_message_size)
    except Exception:
        return -1


def _flushed(store) -> int:
    return store.commit_log.queue.flushed_where


def _committed(store) -> int:
    return getattr(store.commit_log.queue, "committed_where", store.commit_log.queue.flushed_where)
