"""Store-level errors: what went wrong with a store directory, a file, or a put.

Format errors inside a file (bad magic, size mismatch, CRC) are ``pymq_ref.errors.FormatError``
subclasses; the errors here are about files, configuration, limits and lifecycle.
"""

from __future__ import annotations

from pymq_ref.errors import PymqError


class StoreError(PymqError):
    """Base class of the store's own errors."""


class WrongFileSizeError(StoreError):
    """A segment file whose length is not the configured segment size (RocketMQ refuses to start)."""

    def __init__(self, path: str, expected: int, actual: int):
        self.path, self.expected, self.actual = path, expected, actual
        super().__init__(f"{path}: expected a file of {expected} bytes, found {actual} bytes")


class StoreLockedError(StoreError):
    """Another store (process or object) holds the ``lock`` file of this directory."""


class StoreClosedError(StoreError):
    """The store (or file) is shut down, or was never started, for this operation."""


class ReadOnlyStoreError(StoreError):
    """A write was attempted on a store or file opened read-only (inspection mode)."""


class MessageIllegalError(StoreError):
    """A message violates a store limit (PutMessageStatus.MESSAGE_ILLEGAL)."""

    def __init__(self, field: str, limit: int, found: int):
        self.field, self.limit, self.found = field, limit, found
        super().__init__(f"message illegal: {field} is {found}, the limit is {limit}")


class PropertiesSizeExceededError(MessageIllegalError):
    """The properties string is longer than 32767 bytes (PutMessageStatus.PROPERTIES_SIZE_EXCEEDED)."""


# the brief's name for it
PropertiesSizeExceeded = PropertiesSizeExceededError


class CreateMappedFileError(StoreError):
    """The CommitLog needed a new segment and could not create it (PutMessageStatus.CREATE_MAPEDFILE_FAILED):
    the file could not be made (``OSError``), or the transient store pool is empty and
    ``fastFailIfNoBufferInStorePool`` is set."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: could not create the next CommitLog file: {reason}")
        self.path = path
