"""5.x POP consumption on the broker facade: pop with invisible time, ack, change invisible time,
the revive service that turns un-acked checkpoints into retries, and the proxy's DLQ rule.

* :mod:`.config` — the POP settings of ``BrokerConfig`` (5.1.4 names and defaults).
* :mod:`.locks` — ``QueueLockManager``: one POP at a time per (topic, group, queue).
* :mod:`.revive_log` — the CK / ACK messages put into ``rmq_sys_REVIVE_LOG_<cluster>``.
* :mod:`.service` — :class:`PopService`: POP_MESSAGE, ACK_MESSAGE, CHANGE_INVISIBLETIME.
* :mod:`.revive` — :class:`PopReviveService`: pairs CK and ACK records, re-puts what was not acked.
* :mod:`.receive` — what the 5.x proxy does with popped messages (max attempts → DLQ).

Everything reads time from the broker's clock and runs periodic work on its scheduler, so a
whole POP timeline can be played in simulated time.
"""

from .config import PopConfig
from .locks import QueueLockManager
from .receive import ReceiveFilter, forward_to_dead_letter_queue
from .revive import PopReviveService
from .service import (AckRequest, ChangeInvisibleTimeRequest, ChangeInvisibleTimeResult, PopRequest, PopResult,
                      PopService, PopStatus, PoppedMessage)

__all__ = ["PopConfig", "QueueLockManager", "PopService", "PopRequest", "PopResult", "PopStatus", "PoppedMessage",
           "AckRequest", "ChangeInvisibleTimeRequest", "ChangeInvisibleTimeResult", "PopReviveService",
           "ReceiveFilter", "forward_to_dead_letter_queue"]
