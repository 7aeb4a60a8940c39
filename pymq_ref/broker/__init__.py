"""Broker services on top of the store, in-process and clock-driven: topics, consumer offsets,
subscription groups, sending, pulling with long polling, delay levels and the 5.x timer wheel,
retry and DLQ, transactions, tag and SQL92 filtering. The network layer only wraps these.

Entry point: :class:`pymq_ref.broker.broker.Broker` (also importable as ``pymq_ref.broker.Broker``)
with :class:`~pymq_ref.broker.config.BrokerConfig`. Exports are resolved lazily so that the
sub-packages (filter, schedule, timer) can be imported without loading the broker core.
"""

_EXPORTS = {
    "Broker": "broker", "BrokerConfig": "config", "ResponseCode": "response", "BrokerError": "response",
    "SendMessageRequest": "send", "SendResult": "send", "PullMessageRequest": "pull", "PullResult": "pull",
    "ConsumerSendMsgBackRequest": "retry", "EndTransactionRequest": "transaction",
    "CheckTransactionState": "transaction", "ManualScheduler": "scheduler", "ThreadScheduler": "scheduler",
}


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pymq_ref.broker' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"pymq_ref.broker.{module}"), name)


__all__ = list(_EXPORTS)
