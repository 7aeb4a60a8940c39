"""The store: mapped segment files, CommitLog, ConsumeQueue, IndexFile, checkpoint, recovery,
dispatch, flush services, config files, and the :class:`MessageStore` facade.

Everything that touches store files lives here; record layouts live in ``pymq_ref.formats``.
"""

from pymq_ref.store.clock import Clock, ManualClock, SystemClock
from pymq_ref.store.commit_log import PutMessageResult, PutMessageStatus
from pymq_ref.store.message_store import GetMessageResult, GetMessageStatus, MessageStore, TagFilter
from pymq_ref.store.store_config import FlushDiskType, MessageStoreConfig

__all__ = ["Clock", "ManualClock", "SystemClock", "PutMessageResult", "PutMessageStatus", "GetMessageResult",
           "GetMessageStatus", "MessageStore", "TagFilter", "FlushDiskType", "MessageStoreConfig"]
