"""Pure codecs for RocketMQ's bytes: every decoder returns values and the span of each field.

Modules: ``message`` (CommitLog record, blank, scan), ``properties`` (properties string, Java
HashMap order), ``hashing`` (String.hashCode, tagsCode, key hash, body CRC), ``hosts``,
``msgid`` (offset msg id, UNIQ_KEY), ``batch`` (SEND_BATCH_MESSAGE body), ``sysflag``,
``spans`` and ``schemas`` (construct layouts with a spec sentence per field), plus the store
structures (ConsumeQueue unit, IndexFile, checkpoint, fastjson config files).
Nothing here performs I/O.
"""
