"""The name server's settings: ``NamesrvConfig`` and ``NettyServerConfig`` of 4.9.4, by their Java
property names, with a ``namesrv.conf`` reader (Java properties) and the ``key=value`` text that
GET_NAMESRV_CONFIG answers.

Sources: ``common/src/main/java/org/apache/rocketmq/common/namesrv/NamesrvConfig.java``,
``remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyServerConfig.java`` (the name
server listens on 9876 instead of 8888). ``listenHost`` is ours: 4.9.4 binds every interface.
Pure; the caller reads files.
"""

from __future__ import annotations

import os

#: Keys a peer may not change with UPDATE_NAMESRV_CONFIG. 4.9.4 accepts them, which lets any peer
#: make the name server write files where it likes (fixed upstream after 4.9.4 the same way).
BLACKLISTED_KEYS = frozenset({"configStorePath", "kvConfigPath", "rocketmqHome"})


def default_settings(kv_config_path: str | None = None) -> dict[str, str]:
    """Every setting with its 4.9.4 default, as strings, in declaration order."""
    home = os.path.expanduser("~")
    return {
        "rocketmqHome": os.environ.get("ROCKETMQ_HOME", ""),
        "kvConfigPath": kv_config_path or os.path.join(home, "namesrv", "kvConfig.json"),
        "configStorePath": os.path.join(home, "namesrv", "namesrv.properties"),
        "productEnvName": "center",
        "clusterTest": "false",
        "orderMessageEnable": "false",
        "listenPort": "9876",
        "serverWorkerThreads": "8",
        "serverCallbackExecutorThreads": "0",
        "serverSelectorThreads": "3",
        "serverOnewaySemaphoreValue": "256",
        "serverAsyncSemaphoreValue": "64",
        "serverChannelMaxIdleTimeSeconds": "120",
        "serverSocketSndBufSize": "0",
        "serverSocketRcvBufSize": "0",
        "writeBufferHighWaterMark": "0",
        "writeBufferLowWaterMark": "0",
        "serverSocketBacklog": "1024",
        "serverPooledByteBufAllocatorEnable": "true",
        "useEpollNativeSelector": "false",
    }


def parse_properties(text: str) -> dict[str, str]:
    """Java ``Properties.load`` for the simple files RocketMQ uses: ``key=value`` or ``key: value``
    lines, ``#``/``!`` comments, surrounding blanks trimmed; later keys win."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if cut < 0:
            key, value = line, ""
        else:
            key, value = line[:cut].strip(), line[cut + 1:].strip()
        out[key] = value
    return out


def format_properties(settings: dict[str, str]) -> str:
    """``MixAll.properties2String``: one ``key=value`` line per setting."""
    return "".join(f"{k}={v}\n" for k, v in settings.items())
