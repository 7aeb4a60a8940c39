"""``MessageStoreConfig``: the store's settings, with RocketMQ 4.9.4's names and defaults.

Names are the snake_case forms of the Java bean properties (``mappedFileSizeCommitLog`` ->
``mapped_file_size_commit_log``) so that a broker.conf can be mapped 1:1 (see
:meth:`MessageStoreConfig.from_java_properties`). Settings that only pymq-ref has are grouped at
the end and say so.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
from dataclasses import dataclass

from pymq_ref.formats.consume_queue import round_file_size
# the level table and its one parser (Java's rules) live with the put-time rewrite; re-exported here
from pymq_ref.store.delay import DEFAULT_MESSAGE_DELAY_LEVEL, parse_delay_level  # noqa: F401


def total_physical_memory() -> int:
    """The machine's physical memory in bytes (16 GiB where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 16 * 1024 ** 3


class FlushDiskType(enum.Enum):
    ASYNC_FLUSH = "ASYNC_FLUSH"
    SYNC_FLUSH = "SYNC_FLUSH"


class BrokerRole(enum.Enum):
    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


@dataclass
class MessageStoreConfig:
    store_path_root_dir: str = os.path.join(os.path.expanduser("~"), "store")
    store_path_commit_log: str | None = None  # default {root}/commitlog
    mapped_file_size_commit_log: int = 1024 * 1024 * 1024
    mapped_file_size_consume_queue: int = 300_000 * 20
    enable_consume_queue_ext: bool = False
    mapped_file_size_consume_queue_ext: int = 48 * 1024 * 1024  # ConsumeQueueExt files (not rounded)
    bit_map_length_consume_queue_ext: int = 64  # bits of the filter bitmap (enableCalcFilterBitMap)
    flush_interval_commit_log: int = 500
    commit_interval_commit_log: int = 200
    use_reentrant_lock_when_put_message: bool = True
    flush_commit_log_timed: bool = True
    flush_interval_consume_queue: int = 1000
    clean_resource_interval: int = 10_000
    delete_commit_log_files_interval: int = 100
    delete_consume_queue_files_interval: int = 100
    destroy_maped_file_interval_forcibly: int = 120_000
    redelete_hanged_file_interval: int = 120_000
    delete_when: str = "04"
    disk_max_used_space_ratio: int = 75
    file_reserved_time: int = 72  # hours
    put_msg_index_hight_water: int = 600_000
    max_message_size: int = 1024 * 1024 * 4
    check_crc_on_recover: bool = True
    flush_commit_log_least_pages: int = 4
    commit_commit_log_least_pages: int = 4
    flush_least_pages_when_warm_maped_file: int = 4096
    flush_consume_queue_least_pages: int = 2
    flush_commit_log_thorough_interval: int = 10_000
    commit_commit_log_thorough_interval: int = 200
    flush_consume_queue_thorough_interval: int = 60_000
    max_transfer_bytes_on_message_in_memory: int = 256 * 1024
    max_transfer_count_on_message_in_memory: int = 32
    max_transfer_bytes_on_message_in_disk: int = 64 * 1024
    max_transfer_count_on_message_in_disk: int = 8
    access_message_in_memory_max_ratio: int = 40
    #: ``offsetCheckInSlave``: a SLAVE also corrects a pull's next offset (else it echoes the request's)
    offset_check_in_slave: bool = False
    message_index_enable: bool = True
    max_hash_slot_num: int = 5_000_000
    max_index_num: int = 5_000_000 * 4
    max_msgs_num_batch: int = 64
    message_index_safe: bool = False
    ha_listen_port: int = 10912
    broker_role: BrokerRole = BrokerRole.ASYNC_MASTER
    flush_disk_type: FlushDiskType = FlushDiskType.ASYNC_FLUSH
    sync_flush_timeout: int = 5000
    slave_timeout: int = 3000
    message_delay_level: str = DEFAULT_MESSAGE_DELAY_LEVEL
    flush_delay_offset_interval: int = 10_000
    clean_file_forcibly_enable: bool = True
    warm_maped_file_enable: bool = False
    duplication_enable: bool = False
    os_page_cache_busy_time_out_mills: int = 1000
    default_query_max_num: int = 32
    transient_store_pool_enable: bool = False
    transient_store_pool_size: int = 5
    fast_fail_if_no_buffer_in_store_pool: bool = False
    enable_d_leger_commit_log: bool = False
    enable_schedule_async_deliver: bool = False
    enable_lmq: bool = False
    enable_multi_dispatch: bool = False
    max_lmq_consume_queue_num: int = 20_000

    # -- RocketMQ 5.x (not in 4.9.4) ---------------------------------------------------------
    #: ``timerWheelEnable``: the 5.x timer wheel (``TIMER_DELIVER_MS`` / ``TIMER_DELAY_SEC`` /
    #: ``TIMER_DELAY_MS``, :mod:`pymq_ref.broker.timer`). 5.x defaults to true; off here, so that
    #: the broker behaves like 4.9.4 (the properties are stored and otherwise ignored).
    timer_wheel_enable: bool = False

    # -- pymq-ref only ----------------------------------------------------------------------
    #: Load, recover and write the checkpoint exactly as RocketMQ 4.9.4 does (for comparisons with
    #: its store classes). Off (the default), the store comes back by itself after a power loss:
    #: the short last files a power loss leaves are rebuilt (one log line each) and recovery is
    #: abnormal; abnormal recovery re-dispatches far enough back to rebuild every index entry
    #: (4.9.4 only does with ``messageIndexSafe``); a ConsumeQueue whose last three files were
    #: never synced is recovered from the newest written one; the checkpoint's logics timestamp
    #: only ever names ConsumeQueue units already synced. See chapter 05.
    strict_load: bool = False
    #: Time zone of index file names (RocketMQ: the JVM's local zone). "UTC" keeps the book
    #: deterministic; "local" follows the machine; otherwise an IANA name ("Asia/Shanghai").
    index_file_time_zone: str = "UTC"
    #: ``StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE`` (Java reads the machine's): with
    #: ``access_message_in_memory_max_ratio`` it decides whether a message is "in disk" (smaller
    #: pull batches, the suggest-slave hint). Fixed in tests and the book.
    total_physical_memory_size: int = dataclasses.field(default_factory=total_physical_memory)

    def is_transient_store_pool_enable(self) -> bool:
        """Java's ``isTransientStorePoolEnable()``: the flag, and only with ASYNC_FLUSH on a
        broker that is not a SLAVE (otherwise the pool is silently not used)."""
        return (self.transient_store_pool_enable and self.flush_disk_type is FlushDiskType.ASYNC_FLUSH
                and self.broker_role is not BrokerRole.SLAVE)

    @property
    def store_path_commit_log_dir(self) -> str:
        return self.store_path_commit_log or os.path.join(self.store_path_root_dir, "commitlog")

    @property
    def mapped_file_size_consume_queue_rounded(self) -> int:
        """``getMappedFileSizeConsumeQueue``: rounded up to a multiple of 20."""
        return round_file_size(self.mapped_file_size_consume_queue)

    @property
    def delay_level_table(self) -> dict[int, int]:
        """``message_delay_level`` parsed (Java's rules; a bad string raises
        :class:`~pymq_ref.store.delay.DelayLevelFormatError`)."""
        return parse_delay_level(self.message_delay_level)

    @classmethod
    def from_java_properties(cls, props: dict[str, str], **overrides) -> "MessageStoreConfig":
        """Build from broker.conf-style ``{"mappedFileSizeCommitLog": "1024", ...}``; unknown keys ignored."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {}
        for key, raw in props.items():
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()
            if name not in fields:
                continue
            default = getattr(cls, name, None) if not isinstance(fields[name].default, dataclasses._MISSING_TYPE) else None
            if isinstance(default, bool):
                value = str(raw).strip().lower() == "true"
            elif isinstance(default, int):
                value = int(raw)
            elif isinstance(default, enum.Enum):
                value = type(default)(str(raw).strip())
            else:
                value = raw
            kwargs[name] = value
        kwargs.update(overrides)
        return cls(**kwargs)
