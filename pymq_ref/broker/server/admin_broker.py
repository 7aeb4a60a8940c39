"""The broker's own state on the wire: GET_BROKER_RUNTIME_INFO (28), GET_BROKER_CONFIG (26),
UPDATE_BROKER_CONFIG (25) — what ``mqadmin brokerStatus``, ``clusterList``, ``getBrokerConfig`` and
``updateBrokerConfig`` send (``broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java``).

The runtime table has 4.9.4's keys. Values pymq-ref knows (offsets, the boot time, disk ratios,
dispatch lag, queue capacities, versions) are real; the traffic statistics 4.9.4 keeps in
``BrokerStatsManager`` (TPS, put latencies, today's totals) are not kept by pymq-ref and read 0 —
a deliberate difference, masked by the differential test. The configuration is every setting
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

BROKER_VERSION = 401  # MQVersion.CURRENT_VERSION of 4.9.4 (V4_9_4)
BROKER_VERSION_DESC = "V4_9_4"
#: 4.9.4's BrokerConfig defaults of the thread-pool queue capacities the runtime table reports
QUEUE_CAPACITIES = {"sendThreadPoolQueueCapacity": "10000", "pullThreadPoolQueueCapacity": "100000",
                    "queryThreadPoolQueueCapacity": "20000", "EndTransactionThreadPoolQueueCapacity": "100000"}
#: statistics of ``BrokerStatsManager`` / ``StoreStatsService`` that pymq-ref does not keep
ZERO_STATS = {"msgPutTotalYesterdayMorning": "0", "msgPutTotalTodayMorning": "0", "msgPutTotalTodayNow": "0",
              "msgGetTotalYesterdayMorning": "0", "msgGetTotalTodayMorning": "0", "msgGetTotalTodayNow": "0",
              "putTps": "0.0  ", "getFoundTps": "0.0  ", "getMissTps": "0.0  ", "getTransferedTps": "0.0  ",
              "getTotalTps": "0.0 0.0 0.0", "putMessageDistributeTime": "null", "putMessageFailedTimes": "0",
              "putLatency99": "0.00", "putLatency999": "0.00", "putMessageEntireTimeMax": "0",
              "getMessageEntireTimeMax": "0", "putMessageTimesTotal": "0", "putMessageSizeTotal": "0",
              "putMessageAverageSize": "0.0", "dispatchMaxBuffer": "0", "pageCacheLockTimeMills": "0",
              "sendThreadPoolQueueSize": "0", "pullThreadPoolQueueSize": "0", "queryThreadPoolQueueSize": "0",
              "EndTransactionQueueSize": "0", "sendThreadPoolQueueHeadWaitTimeMills": "0",
              "pullThreadPoolQueueHeadWaitTimeMills": "0", "queryThreadPoolQueueHeadWaitTimeMills": "0"}


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


def all_configs(ctx: BrokerContext) -> dict[str, str]:
    """Every setting under its Java name: the facade's configs, then what broker.conf set."""
    out: dict[str, str] = {}
    for bean in (ctx.config, ctx.broker.store_config):
        for f in dataclasses.fields(bean):
            value = getattr(bean, f.name)
            if value is None or not isinstance(value, (str, int, float, bool)) and not hasattr(value, "name"):
                continue
            text = value.name if hasattr(value, "name") and not isinstance(value, (str, int)) else value
            out[_java_name(f.name).replace("Ip1", "IP1").replace("Ip2", "IP2")] = (
                str(text).lower() if isinstance(text, bool) else str(text))
    out.update(ctx.settings)
    return out


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker
    state = ctx.extras.setdefault("admin_broker", {"boot": ctx.now_ms,
                                                   "config_version": DataVersion(0, ctx.now_ms)})

    def runtime_info(request, channel):
        store = broker.store
        root = broker.store_dir
        table = dict(ZERO_STATS)
        table.update(QUEUE_CAPACITIES)
        ratio = _disk_ratio(root)
        commit_log_dir = broker.store_config.store_path_commit_log or os.path.join(root, "commitlog")
        table.update({
            "brokerVersionDesc": BROKER_VERSION_DESC, "brokerVersion": str(BROKER_VERSION),
            "bootTimestamp": str(state["boot"]), "runtime": runtime_text(ctx.now_ms - state["boot"]),
            "commitLogMinOffset": str(store.get_min_phy_offset()), "commitLogMaxOffset": str(store.get_max_phy_offset()),
            "dispatchBehindBytes": str(store.dispatch_behind_bytes()),
            "earliestMessageTimeStamp": str(_earliest(store)),
            "startAcceptSendRequestTimeStamp": str(ctx.config.start_accept_send_request_time_stamp),
            "remainTransientStoreBufferNumbs": str(store.remain_transient_store_buffer_nums()),
            "remainHowManyDataToFlush": human_bytes(max(0, store.commit_log.max_offset - _flushed(store))),
            "commitLogDiskRatio": ratio, f"commitLogDiskRatio_{commit_log_dir}": ratio,
            "consumeQueueDiskRatio": ratio,
        })
        try:
            usage = shutil.disk_usage(root)
            table["commitLogDirCapacity"] = f"Total : {human_bytes(usage.total)}, Free : {human_bytes(usage.free)}."
        except OSError:
            pass
        return RemotingCommand.response(ResponseCode.SUCCESS, body=encode_body(KVTable(table)))

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
