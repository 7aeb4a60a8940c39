"""The POP settings of 5.1.4's ``BrokerConfig`` (names and defaults), kept apart from the 4.9.4 config.

See ``common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java`` (5.1.4). Data only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PopConfig:
    revive_queue_num: int = 8          # reviveQueueNum: queues of the revive topic
    revive_interval: int = 1000        # reviveInterval (ms): how often each revive queue is scanned
    revive_max_slow: int = 3           # reviveMaxSlow (informational)
    pop_max_msg_nums: int = 32         # what a POP may ask for at most (the client's limit too)
    #: 5.x ``PopAckConstants.lockTime``: a queue lock older than this is taken over
    lock_time: int = 5000
    #: ``popResponseReturnActualRetryTopic``: false = a retried message carries its original topic
    pop_response_return_actual_retry_topic: bool = False
    #: ``initPopOffsetByCheckMsgInMem``: a new group starts at 0 while the queue's first message is in memory
    init_pop_offset_by_check_msg_in_mem: bool = True
    #: the revive scan's window: messages read per revive round at most
    revive_scan_max: int = 4096
