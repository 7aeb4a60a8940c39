"""Consumers: the push consumer (pull loop + listener), the lite pull consumer, and their parts —
:mod:`.process_queue` (flow control, the offset to commit), :mod:`.offset_store` (remote / local file),
:mod:`.consume` (concurrent and orderly consumption)."""
