"""What the 5.x proxy does with the messages a POP returns before a gRPC client sees them
(``proxy/.../grpc/v2/consumer/PopMessageResultFilterImpl.java``, ``ConsumerProcessor.popMessage``,
``ProducerProcessor.forwardMessageToDeadLetterQueue``).

* a message whose tag the subscription does not match is acked at once;
* a message already delivered ``maxAttempts`` times (``reconsumeTimes >= maxAttempts``, where
  ``maxAttempts = retryMaxTimes + 1`` of the group) goes to ``%DLQ%<group>`` — a
  CONSUMER_SEND_MSG_BACK with ``delayLevel = -1`` by CommitLog offset — and is acked;
* the rest is handed out.

Pure decisions plus calls on the broker facade (no second DLQ implementation).
"""

from __future__ import annotations

import enum

from pymq_ref.broker.retry import ConsumerSendMsgBackRequest
from pymq_ref.formats import pop
from pymq_ref.store.message_store import TagFilter

from .service import AckRequest, PoppedMessage


class FilterResult(enum.Enum):
    MATCH = "MATCH"
    NO_MATCH = "NO_MATCH"
    TO_DLQ = "TO_DLQ"


class ReceiveFilter:
    """``PopMessageResultFilterImpl(maxAttempts)`` with the subscription's tag expression."""

    def __init__(self, max_attempts: int, expression: str = "*"):
        self.max_attempts = max_attempts
        self.tags = TagFilter(expression)

    def filter(self, msg: PoppedMessage) -> FilterResult:
        tag = msg.record.tags
        if not self.tags.match_all and (tag is None or tag not in self.tags.tags):
            return FilterResult.NO_MATCH
        if msg.reconsume_times >= self.max_attempts:
            return FilterResult.TO_DLQ
        return FilterResult.MATCH


def max_attempts(broker, group: str) -> int:
    """``GrpcClientSettingsManager``: the backoff policy's maxAttempts = group retryMaxTimes + 1."""
    sgc = broker.subscriptions.find_subscription_group_config(group)
    return (sgc.retry_max_times if sgc is not None else 16) + 1


def ack_popped(service, group: str, msg: PoppedMessage) -> None:
    service.ack(AckRequest(group, msg.real_topic, msg.queue_id, msg.queue_offset, msg.extra_info))


def forward_to_dead_letter_queue(service, group: str, handle: pop.ExtraInfo, topic: str, msg_id: str | None = None):
    """The proxy's ForwardMessageToDeadLetterQueue: send back with ``delayLevel -1`` (DLQ), then ack."""
    broker = service.broker
    real_topic = handle.real_topic(topic, group)
    result = broker.consumer_send_msg_back(ConsumerSendMsgBackRequest(
        offset=handle.commit_log_offset, group=group, delay_level=-1, origin_msg_id=msg_id,
        origin_topic=real_topic, max_reconsume_times=0))
    service.ack(AckRequest(group, real_topic, handle.queue_id, handle.queue_offset, handle.encode()))
    return result


def apply_filter(service, group: str, topic: str, messages: list[PoppedMessage], flt: ReceiveFilter):
    """The messages to hand out; the others acked or sent to the DLQ (as the proxy does)."""
    out = []
    for msg in messages:
        verdict = flt.filter(msg)
        if verdict is FilterResult.MATCH:
            out.append(msg)
        elif verdict is FilterResult.NO_MATCH:
            ack_popped(service, group, msg)
        else:
            info = pop.parse_receipt_handle(msg.receipt_handle)
            forward_to_dead_letter_queue(service, group, info, topic, msg.record.uniq_key)
    return out
