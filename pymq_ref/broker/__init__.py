"""Broker services on top of the store, in-process and clock-driven: topics, consumer offsets,
subscription groups, sending, pulling with long polling, delay levels and the 5.x timer wheel,
retry and DLQ, transactions, tag and SQL92 filtering. The network layer only wraps these."""
