"""The numbers of the RocketMQ 4.x remoting protocol: request and response codes, languages,
serialize types, flag bits and the ``MQVersion`` ordinals a command carries in ``version``.

Sources (tag ``rocketmq-all-4.9.4``):
``common/src/main/java/org/apache/rocketmq/common/protocol/RequestCode.java``,
``common/src/main/java/org/apache/rocketmq/common/protocol/ResponseCode.java``,
``remoting/src/main/java/org/apache/rocketmq/remoting/protocol/{RemotingSysResponseCode,LanguageCode,SerializeType}.java``,
``common/src/main/java/org/apache/rocketmq/common/MQVersion.java``.
The 5.x request codes a 4.x peer may still meet are listed apart (:data:`RequestCode5`).

Pure definitions; no I/O. A code on the wire may be any int16/int32: decoders keep the raw
number and use :func:`request_code_name` / :func:`response_code_name` to show it.
"""

from __future__ import annotations

import enum


class RequestCode(enum.IntEnum):
    """Every request code of RocketMQ 4.9.4 (numbers not listed do not exist in 4.9.4)."""

    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    QUERY_MESSAGE = 12
    QUERY_BROKER_OFFSET = 13
    QUERY_CONSUMER_OFFSET = 14
    UPDATE_CONSUMER_OFFSET = 15
    UPDATE_AND_CREATE_TOPIC = 17
    GET_ALL_TOPIC_CONFIG = 21
    GET_TOPIC_CONFIG_LIST = 22
    GET_TOPIC_NAME_LIST = 23
    UPDATE_BROKER_CONFIG = 25
    GET_BROKER_CONFIG = 26
    TRIGGER_DELETE_FILES = 27
    GET_BROKER_RUNTIME_INFO = 28
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    UNREGISTER_CLIENT = 35
    CONSUMER_SEND_MSG_BACK = 36
    END_TRANSACTION = 37
    GET_CONSUMER_LIST_BY_GROUP = 38
    CHECK_TRANSACTION_STATE = 39
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    LOCK_BATCH_MQ = 41
    UNLOCK_BATCH_MQ = 42
    GET_ALL_CONSUMER_OFFSET = 43
    GET_ALL_DELAY_OFFSET = 45
    CHECK_CLIENT_CONFIG = 46
    UPDATE_AND_CREATE_ACL_CONFIG = 50
    DELETE_ACL_CONFIG = 51
    GET_BROKER_CLUSTER_ACL_INFO = 52
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53
    GET_BROKER_CLUSTER_ACL_CONFIG = 54
    PUT_KV_CONFIG = 100
    GET_KV_CONFIG = 101
    DELETE_KV_CONFIG = 102
    REGISTER_BROKER = 103
    UNREGISTER_BROKER = 104
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201
    GET_TOPIC_STATS_INFO = 202
    GET_CONSUMER_CONNECTION_LIST = 203
    GET_PRODUCER_CONNECTION_LIST = 204
    WIPE_WRITE_PERM_OF_BROKER = 205
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206
    DELETE_SUBSCRIPTIONGROUP = 207
    GET_CONSUME_STATS = 208
    SUSPEND_CONSUMER = 209
    RESUME_CONSUMER = 210
    RESET_CONSUMER_OFFSET_IN_CONSUMER = 211
    RESET_CONSUMER_OFFSET_IN_BROKER = 212
    ADJUST_CONSUMER_THREAD_POOL = 213
    WHO_CONSUME_THE_MESSAGE = 214
    DELETE_TOPIC_IN_BROKER = 215
    DELETE_TOPIC_IN_NAMESRV = 216
    GET_KVLIST_BY_NAMESPACE = 219
    RESET_CONSUMER_CLIENT_OFFSET = 220
    GET_CONSUMER_STATUS_FROM_CLIENT = 221
    INVOKE_BROKER_TO_RESET_OFFSET = 222
    INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223
    GET_TOPICS_BY_CLUSTER = 224
    QUERY_TOPIC_CONSUME_BY_WHO = 300
    REGISTER_FILTER_SERVER = 301
    REGISTER_MESSAGE_FILTER_CLASS = 302
    QUERY_CONSUME_TIME_SPAN = 303
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304
    GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305
    CLEAN_EXPIRED_CONSUMEQUEUE = 306
    GET_CONSUMER_RUNNING_INFO = 307
    QUERY_CORRECTION_OFFSET = 308
    CONSUME_MESSAGE_DIRECTLY = 309
    SEND_MESSAGE_V2 = 310
    GET_UNIT_TOPIC_LIST = 311
    GET_HAS_UNIT_SUB_TOPIC_LIST = 312
    GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313
    CLONE_GROUP_OFFSET = 314
    VIEW_BROKER_STATS_DATA = 315
    CLEAN_UNUSED_TOPIC = 316
    GET_BROKER_CONSUME_STATS = 317
    UPDATE_NAMESRV_CONFIG = 318
    GET_NAMESRV_CONFIG = 319
    SEND_BATCH_MESSAGE = 320
    QUERY_CONSUME_QUEUE = 321
    QUERY_DATA_VERSION = 322
    RESUME_CHECK_HALF_MESSAGE = 323
    SEND_REPLY_MESSAGE = 324
    SEND_REPLY_MESSAGE_V2 = 325
    PUSH_REPLY_MESSAGE_TO_CLIENT = 326
    ADD_WRITE_PERM_OF_BROKER = 327
    GET_ALL_PRODUCER_INFO = 328
    DELETE_EXPIRED_COMMITLOG = 329


class RequestCode5(enum.IntEnum):
    """Request codes added by RocketMQ 5.x that this package understands (POP consumption).

    Source: ``remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RequestCode.java`` at
    tag ``rocketmq-all-5.1.4``. They exceed int16, so the ROCKETMQ binary header cannot carry them.
    """

    POP_MESSAGE = 200050
    ACK_MESSAGE = 200051
    PEEK_MESSAGE = 200052
    CHANGE_MESSAGE_INVISIBLETIME = 200053
    NOTIFICATION = 200054
    POLLING_INFO = 200055
    BATCH_ACK_MESSAGE = 200151


class ResponseCode(enum.IntEnum):
    """``RemotingSysResponseCode`` (0-4) and ``ResponseCode`` (10-211) of 4.9.4."""

    SUCCESS = 0
    SYSTEM_ERROR = 1
    SYSTEM_BUSY = 2
    REQUEST_CODE_NOT_SUPPORTED = 3
    TRANSACTION_FAILED = 4
    FLUSH_DISK_TIMEOUT = 10
    SLAVE_NOT_AVAILABLE = 11
    FLUSH_SLAVE_TIMEOUT = 12
    MESSAGE_ILLEGAL = 13
    SERVICE_NOT_AVAILABLE = 14
    VERSION_NOT_SUPPORTED = 15
    NO_PERMISSION = 16
    TOPIC_NOT_EXIST = 17
    TOPIC_EXIST_ALREADY = 18
    PULL_NOT_FOUND = 19
    PULL_RETRY_IMMEDIATELY = 20
    PULL_OFFSET_MOVED = 21
    QUERY_NOT_FOUND = 22
    SUBSCRIPTION_PARSE_FAILED = 23
    SUBSCRIPTION_NOT_EXIST = 24
    SUBSCRIPTION_NOT_LATEST = 25
    SUBSCRIPTION_GROUP_NOT_EXIST = 26
    FILTER_DATA_NOT_EXIST = 27
    FILTER_DATA_NOT_LATEST = 28
    TRANSACTION_SHOULD_COMMIT = 200
    TRANSACTION_SHOULD_ROLLBACK = 201
    TRANSACTION_STATE_UNKNOW = 202
    TRANSACTION_STATE_GROUP_WRONG = 203
    NO_BUYER_ID = 204
    NOT_IN_CURRENT_UNIT = 205
    CONSUMER_NOT_ONLINE = 206
    CONSUME_MSG_TIMEOUT = 207
    NO_MESSAGE = 208
    UPDATE_AND_CREATE_ACL_CONFIG_FAILED = 209
    DELETE_ACL_CONFIG_FAILED = 210
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED = 211


class LanguageCode(enum.IntEnum):
    """``LanguageCode``: the sender's language; JSON headers carry the name, ROCKETMQ headers the byte."""

    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12


class SerializeType(enum.IntEnum):
    """How the header is written: the top byte of the header-length word."""

    JSON = 0
    ROCKETMQ = 1


#: ``flag`` bit 0: the command is a response (``RemotingCommand.RPC_TYPE``).
FLAG_RESPONSE = 0x1
#: ``flag`` bit 1: the request expects no response (``RemotingCommand.RPC_ONEWAY``).
FLAG_ONEWAY = 0x2


# -- MQVersion ------------------------------------------------------------------------------------
# The enum is append-only: V3_0_0_SNAPSHOT, V3_0_0_ALPHA1, V3_0_0_BETA1..BETA9 (with SNAPSHOTs from
# BETA6), V3_0_0_FINAL, then a (SNAPSHOT, release) pair per version below, then HIGHER_VERSION.
_V3_0_0 = ["V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1", "V3_0_0_BETA1", "V3_0_0_BETA2", "V3_0_0_BETA3", "V3_0_0_BETA4",
           "V3_0_0_BETA5", "V3_0_0_BETA6_SNAPSHOT", "V3_0_0_BETA6", "V3_0_0_BETA7_SNAPSHOT", "V3_0_0_BETA7",
           "V3_0_0_BETA8_SNAPSHOT", "V3_0_0_BETA8", "V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9", "V3_0_0_FINAL"]
#: (major, minor, first patch, last patch) of the paired versions, in enum order.
_PAIRED = [(3, 0, 1, 15), (3, 1, 0, 9), (3, 2, 0, 9)] + [(3, m, 1, 9) for m in range(3, 10)] + \
          [(major, m, 0, 9) for major in (4, 5) for m in range(10)]


def _version_names() -> list[str]:
    names = list(_V3_0_0)
    for major, minor, first, last in _PAIRED:
        for patch in range(first, last + 1):
            base = f"V{major}_{minor}_{patch}"
            names += [base + "_SNAPSHOT", base]
    return names + ["HIGHER_VERSION"]


MQ_VERSION_NAMES: tuple[str, ...] = tuple(_version_names())
MQ_VERSION: dict[str, int] = {name: i for i, name in enumerate(MQ_VERSION_NAMES)}

V3_0_11 = MQ_VERSION["V3_0_11"]  # 37: REGISTER_BROKER carries a RegisterBrokerBody from here on
V3_4_9 = MQ_VERSION["V3_4_9"]  # 121: maxReconsumeTimes honoured in send / send-back
V4_1_0_SNAPSHOT = MQ_VERSION["V4_1_0_SNAPSHOT"]  # 232: brokers from here on filter by SQL92
V4_9_4 = MQ_VERSION["V4_9_4"]  # 401: CURRENT_VERSION of 4.9.4; standard-JSON route data from here on
CURRENT_VERSION = V4_9_4


def version_name(ordinal: int) -> str:
    """``MQVersion.getVersionDesc``: the enum name, or HIGHER_VERSION past the end."""
    if 0 <= ordinal < len(MQ_VERSION_NAMES):
        return MQ_VERSION_NAMES[ordinal]
    return "HIGHER_VERSION" if ordinal >= len(MQ_VERSION_NAMES) else f"UNKNOWN({ordinal})"


def request_code_name(code: int) -> str:
    """The name of a request code, or ``UNKNOWN_REQUEST(n)``."""
    for enum_cls in (RequestCode, RequestCode5):
        try:
            return enum_cls(code).name
        except ValueError:
            pass
    return f"UNKNOWN_REQUEST({code})"


def response_code_name(code: int) -> str:
    """The name of a response code, or ``UNKNOWN_RESPONSE(n)``."""
    try:
        return ResponseCode(code).name
    except ValueError:
        return f"UNKNOWN_RESPONSE({code})"


def language_name(code: int | None) -> str | None:
    try:
        return None if code is None else LanguageCode(code).name
    except ValueError:
        return None
