"""Reading RocketMQ's own ``broker.conf`` (``BrokerStartup``, 4.9.4): Java properties, the same
names, 4.9.4's defaults.

One file configures four Java beans — ``BrokerConfig``, ``NettyServerConfig``, ``NettyClientConfig``
and ``MessageStoreConfig`` — by property name. Here the names the broker acts on fill
:class:`~pymq_ref.broker.config.BrokerConfig` and :class:`~pymq_ref.store.store_config.MessageStoreConfig`
(the facade's); every key is also kept as a string in :attr:`BrokerSettings.settings` (what
GET_BROKER_CONFIG reports). A key that is a 4.9.4 setting pymq-ref does not act on is accepted
quietly; a key 4.9.4 does not know is warned about, never fatal. As ``BrokerStartup`` does, a
master's ``brokerId`` becomes 0 and ``haListenPort`` is ``listenPort + 1``.

Pure: :func:`parse_broker_conf` takes the text; :func:`load_broker_conf` reads a file.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
from dataclasses import dataclass, field

from pymq_ref.broker.config import BrokerConfig
from pymq_ref.namesrv.config import parse_properties
from pymq_ref.store.store_config import BrokerRole, MessageStoreConfig

log = logging.getLogger("pymq_ref.broker.server")

#: Every property of 4.9.4's BrokerConfig, NettyServerConfig, NettyClientConfig and MessageStoreConfig
#: (the field names of ``common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java``,
#: ``remoting/.../netty/NettyServerConfig.java``, ``NettyClientConfig.java`` and
#: ``store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java``).
JAVA_KEYS = frozenset((
    "accessMessageInMemoryMaxRatio aclEnable adminBrokerThreadPoolNums autoCreateSubscriptionGroup "
    "autoCreateTopicEnable autoDeleteUnusedStats bitMapLengthConsumeQueueExt brokerClusterName "
    "brokerFastFailureEnable brokerIP1 brokerIP2 brokerId brokerName brokerPermission brokerRole brokerTopicEnable "
    "channelNotActiveInterval checkCRCOnRecover cleanFileForciblyEnable cleanResourceInterval "
    "clientAsyncSemaphoreValue clientCallbackExecutorThreads clientChannelMaxIdleTimeSeconds "
    "clientCloseSocketIfTimeout clientManageThreadPoolNums clientManagerThreadPoolQueueCapacity "
    "clientOnewaySemaphoreValue clientPooledByteBufAllocatorEnable clientSocketRcvBufSize clientSocketSndBufSize "
    "clientWorkerThreads clusterTopicEnable commercialBaseCount commercialBigCount commercialEnable "
    "commercialTimerCount commercialTransCount commitCommitLogLeastPages commitCommitLogThoroughInterval "
    "commitIntervalCommitLog compressedRegister connectTimeoutMillis consumerFallbehindThreshold "
    "consumerManageThreadPoolNums consumerManagerThreadPoolQueueCapacity dLegerGroup dLegerPeers dLegerSelfId "
    "debugLockEnable defaultQueryMaxNum defaultTopicQueueNums deleteCommitLogFilesInterval "
    "deleteConsumeQueueFilesInterval deleteWhen destroyMapedFileIntervalForcibly disableConsumeIfConsumerReadSlowly "
    "diskFallRecorded diskMaxUsedSpaceRatio duplicationEnable enableCalcFilterBitMap enableConsumeQueueExt "
    "enableDLegerCommitLog enableDetailStat enableLmq enableMultiDispatch enablePropertyFilter "
    "enableScheduleAsyncDeliver enableScheduleMessageStats endTransactionPoolQueueCapacity "
    "endTransactionThreadPoolNums expectConsumerNumUseFilter fastFailIfNoBufferInStorePool "
    "fetchNamesrvAddrByAddressServer fileReservedTime filterDataCleanTimeSpan filterServerNums filterSupportRetry "
    "flushCommitLogLeastPages flushCommitLogThoroughInterval flushCommitLogTimed flushConsumeQueueLeastPages "
    "flushConsumeQueueThoroughInterval flushConsumerOffsetHistoryInterval flushConsumerOffsetInterval "
    "flushDelayOffsetInterval flushDiskType flushIntervalCommitLog flushIntervalConsumeQueue "
    "flushLeastPagesWhenWarmMapedFile forceRegister haHousekeepingInterval haListenPort haMasterAddress "
    "haSendHeartbeatInterval haSlaveFallbehindMax haTransferBatchSize heartbeatThreadPoolNums "
    "heartbeatThreadPoolQueueCapacity highSpeedMode isEnableBatchPush isolateLogEnable listenPort longPollingEnable "
    "mappedFileSizeCommitLog mappedFileSizeConsumeQueue mappedFileSizeConsumeQueueExt maxDelayTime "
    "maxErrorRateOfBloomFilter maxHashSlotNum maxIndexNum maxLmqConsumeQueueNum maxMessageSize maxMsgsNumBatch "
    "maxTransferBytesOnMessageInDisk maxTransferBytesOnMessageInMemory maxTransferCountOnMessageInDisk "
    "maxTransferCountOnMessageInMemory messageDelayLevel messageIndexEnable messageIndexSafe messageStorePlugIn "
    "msgTraceTopicName namesrvAddr notifyConsumerIdsChangedEnable offsetCheckInSlave osPageCacheBusyTimeOutMills "
    "preferredLeaderId processReplyMessageThreadPoolNums pullMessageThreadPoolNums pullThreadPoolQueueCapacity "
    "putMessageFutureThreadPoolNums putMsgIndexHightWater putThreadPoolQueueCapacity queryMessageThreadPoolNums "
    "queryThreadPoolQueueCapacity readOnlyCommitLogStorePaths redeleteHangedFileInterval regionId "
    "registerBrokerTimeoutMills registerNameServerPeriod rejectTransactionMessage replyThreadPoolQueueCapacity "
    "rocketmqHome scheduleAsyncDeliverMaxPendingLimit scheduleAsyncDeliverMaxResendNum2Blocked "
    "sendMessageThreadPoolNums sendThreadPoolQueueCapacity serverAsyncSemaphoreValue serverCallbackExecutorThreads "
    "serverChannelMaxIdleTimeSeconds serverOnewaySemaphoreValue serverPooledByteBufAllocatorEnable "
    "serverSelectorThreads serverSocketBacklog serverSocketRcvBufSize serverSocketSndBufSize serverWorkerThreads "
    "shortPollingTimeMills slaveReadEnable slaveTimeout startAcceptSendRequestTimeStamp storePathCommitLog "
    "storePathDLedgerCommitLog storePathRootDir storeReplyMessageEnable syncFlushTimeout traceOn traceTopicEnable "
    "transactionCheckInterval transactionCheckMax transactionTimeOut transferMsgByHeap transientStorePoolEnable "
    "transientStorePoolSize useEpollNativeSelector useReentrantLockWhenPutMessage useTLS "
    "waitTimeMillsInHeartbeatQueue waitTimeMillsInPullQueue waitTimeMillsInSendQueue "
    "waitTimeMillsInTransactionQueue warmMapedFileEnable writeBufferHighWaterMark writeBufferLowWaterMark "
).split())

DEFAULT_STORE_ROOT = os.path.join(os.path.expanduser("~"), "store")


@dataclass
class BrokerSettings:
    """What a broker.conf says: the facade's two configs, the name servers, every key as text."""

    broker: BrokerConfig
    store: MessageStoreConfig
    namesrv_addr: list[str] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)
    unknown_keys: list[str] = field(default_factory=list)

    @property
    def ha_listen_port(self) -> int:
        return self.broker.listen_port + 1

    def with_ports(self, listen_port: int) -> "BrokerSettings":
        """The same settings on another listen port (the store host changes with it)."""
        self.broker = dataclasses.replace(self.broker, listen_port=listen_port)
        self.settings["listenPort"] = str(listen_port)
        self.store = dataclasses.replace(self.store, ha_listen_port=listen_port + 1)
        return self


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower().replace("i_p1", "ip1")


def parse_broker_conf(text: str, **overrides: str) -> BrokerSettings:
    """Settings from broker.conf text; ``overrides`` (Java names) win over the file."""
    props = parse_properties(text)
    props.update({k: str(v) for k, v in overrides.items() if v is not None})
    unknown = sorted(k for k in props if k not in JAVA_KEYS)
    for key in unknown:
        log.warning("broker.conf: %s is not a RocketMQ 4.9.4 broker setting (ignored)", key)
    props.setdefault("storePathRootDir", DEFAULT_STORE_ROOT)
    store = MessageStoreConfig.from_java_properties(props)
    broker_fields = {f.name for f in dataclasses.fields(BrokerConfig)}
    known = {k: v for k, v in props.items() if _snake(k) in broker_fields}
    broker = BrokerConfig.from_java_properties(known)
    if store.broker_role is not BrokerRole.SLAVE and broker.broker_id != 0:
        broker = dataclasses.replace(broker, broker_id=0)  # BrokerStartup: a master is broker 0
    store = dataclasses.replace(store, ha_listen_port=broker.listen_port + 1)
    namesrv = [a.strip() for a in (props.get("namesrvAddr") or "").split(";") if a.strip()]
    settings = dict(props)
    settings["listenPort"] = str(broker.listen_port)
    settings["brokerId"] = str(broker.broker_id)
    return BrokerSettings(broker, store, namesrv, settings, unknown)


def load_broker_conf(path: str, **overrides: str) -> BrokerSettings:
    with open(path, encoding="utf-8") as f:
        return parse_broker_conf(f.read(), **overrides)
