"""The 4.9.4 settings pymq-ref accepts but does not act on (thread pools, Netty buffers, HA
timings, commercial counters …) with 4.9.4's defaults, so that GET_BROKER_CONFIG (``mqadmin
getBrokerConfig``) lists every key a real 4.9.4 broker lists.

The values are the defaults a real 4.9.4 broker reported (``tools/rocketmq_broker_admin/``; the
fields of ``common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java``,
``remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyServerConfig.java`` and
``NettyClientConfig.java``); the ones 4.9.4 derives from the CPU count are computed the same way
here (:func:`per_cpu`). A value set in broker.conf wins. Data only.
"""

from __future__ import annotations

import os

DEFAULTS: dict[str, str] = {
    "aclEnable": "false",
    "adminBrokerThreadPoolNums": "16",
    "autoDeleteUnusedStats": "false",
    "brokerFastFailureEnable": "true",
    "channelNotActiveInterval": "60000",
    "clientAsyncSemaphoreValue": "65535",
    "clientChannelMaxIdleTimeSeconds": "120",
    "clientCloseSocketIfTimeout": "true",
    "clientManageThreadPoolNums": "32",
    "clientManagerThreadPoolQueueCapacity": "1000000",
    "clientOnewaySemaphoreValue": "65535",
    "clientPooledByteBufAllocatorEnable": "false",
    "clientSocketRcvBufSize": "0",
    "clientSocketSndBufSize": "0",
    "clientWorkerThreads": "4",
    "commercialBaseCount": "1",
    "commercialBigCount": "1",
    "commercialEnable": "true",
    "commercialTimerCount": "1",
    "commercialTransCount": "1",
    "compressedRegister": "false",
    "connectTimeoutMillis": "3000",
    "consumerFallbehindThreshold": "17179869184",
    "consumerManageThreadPoolNums": "32",
    "consumerManagerThreadPoolQueueCapacity": "1000000",
    "debugLockEnable": "false",
    "disableConsumeIfConsumerReadSlowly": "false",
    "diskFallRecorded": "true",
    "enableCalcFilterBitMap": "false",
    "enableDetailStat": "true",
    "enableScheduleMessageStats": "true",
    "endTransactionPoolQueueCapacity": "100000",
    "expectConsumerNumUseFilter": "32",
    "fetchNamesrvAddrByAddressServer": "false",
    "filterDataCleanTimeSpan": "86400000",
    "filterServerNums": "0",
    "flushConsumerOffsetHistoryInterval": "60000",
    "forceRegister": "true",
    "haHousekeepingInterval": "20000",
    "haSendHeartbeatInterval": "5000",
    "haSlaveFallbehindMax": "268435456",
    "haTransferBatchSize": "32768",
    "heartbeatThreadPoolQueueCapacity": "50000",
    "highSpeedMode": "false",
    "isEnableBatchPush": "false",
    "isolateLogEnable": "false",
    "maxDelayTime": "40",
    "maxErrorRateOfBloomFilter": "20",
    "messageStorePlugIn": "",
    "notifyConsumerIdsChangedEnable": "true",
    "pullThreadPoolQueueCapacity": "100000",
    "putThreadPoolQueueCapacity": "10000",
    "queryThreadPoolQueueCapacity": "20000",
    "registerBrokerTimeoutMills": "6000",
    "registerNameServerPeriod": "30000",
    "replyThreadPoolQueueCapacity": "10000",
    "scheduleAsyncDeliverMaxPendingLimit": "2000",
    "scheduleAsyncDeliverMaxResendNum2Blocked": "3",
    "sendThreadPoolQueueCapacity": "10000",
    "serverAsyncSemaphoreValue": "64",
    "serverCallbackExecutorThreads": "0",
    "serverChannelMaxIdleTimeSeconds": "120",
    "serverOnewaySemaphoreValue": "256",
    "serverPooledByteBufAllocatorEnable": "true",
    "serverSelectorThreads": "3",
    "serverSocketBacklog": "1024",
    "serverSocketRcvBufSize": "0",
    "serverSocketSndBufSize": "0",
    "serverWorkerThreads": "8",
    "storeReplyMessageEnable": "true",
    "transferMsgByHeap": "true",
    "useEpollNativeSelector": "false",
    "useTLS": "false",
    "waitTimeMillsInHeartbeatQueue": "31000",
    "waitTimeMillsInPullQueue": "5000",
    "waitTimeMillsInSendQueue": "200",
    "waitTimeMillsInTransactionQueue": "3000",
    "writeBufferHighWaterMark": "0",
    "writeBufferLowWaterMark": "0",
}


def per_cpu(cpus: int | None = None) -> dict[str, str]:
    """The defaults 4.9.4 computes from ``Runtime.availableProcessors()``."""
    n = cpus or os.cpu_count() or 1
    return {"sendMessageThreadPoolNums": str(min(n, 4)), "putMessageFutureThreadPoolNums": str(min(n, 4)),
            "pullMessageThreadPoolNums": str(16 + n * 2), "processReplyMessageThreadPoolNums": str(16 + n * 2),
            "queryMessageThreadPoolNums": str(8 + n), "heartbeatThreadPoolNums": str(min(32, n)),
            "endTransactionThreadPoolNums": str(max(8 + n * 2, min(n, 4) * 4)), "clientCallbackExecutorThreads": str(n)}


def java_only_settings(cpus: int | None = None) -> dict[str, str]:
    return {**DEFAULTS, **per_cpu(cpus)}
