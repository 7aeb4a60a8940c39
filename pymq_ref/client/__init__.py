"""The RocketMQ 4.x client side: producers, consumers, rebalance and fault tolerance.

This package may depend on ``pymq_ref.remoting`` and ``pymq_ref.formats`` only — never on the
store or the broker, so that it can talk to any 4.x broker, the real one included. Decision
logic is pure (sans-IO, clock injected) and lives in its own modules:

* :mod:`pymq_ref.client.allocate` — the consumer's queue allocation strategies (rebalance);
* :mod:`pymq_ref.client.fault` — the producer's queue selection and latency fault tolerance.
"""
