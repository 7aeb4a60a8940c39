"""pymq-ref: a readable, byte-exact reference implementation of the Apache RocketMQ 4.9.4 broker.

Layers (each depends only on the ones listed before it):

``formats``  pure bytes <-> records codecs, every field with its span
``store``    CommitLog, ConsumeQueue, IndexFile, checkpoint, recovery, the MessageStore facade
``viz``      hex views, field tables, diagrams and widgets for the book
``oracle``   the stable API for people who test their own RocketMQ-compatible code against us
"""

__version__ = "0.1.0"
