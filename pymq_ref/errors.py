"""Typed errors shared by every layer.

Each error says *what* was expected, *where* (structure, field, absolute offset) and what was
found instead, so that a reader of a damaged file or a bad frame can act on the message alone.
This module must not import anything from the rest of the package.
"""

from __future__ import annotations


class PymqError(Exception):
    """Base class of every error raised on purpose by pymq_ref."""


class FormatError(PymqError, ValueError):
    """Bytes that do not follow a RocketMQ layout.

    ``structure`` names the layout (``"message"``, ``"consume_queue_unit"`` ...), ``field`` the
    field path inside it, ``offset`` the absolute byte offset of that field.
    """

    def __init__(self, structure: str, field: str, offset: int, expected: str, found: object = None):
        self.structure = structure
        self.field = field
        self.offset = offset
        self.expected = expected
        self.found = found
        where = f"{structure}.{field} at offset {offset}"
        tail = "" if found is None else f", found {found}"
        super().__init__(f"{where}: expected {expected}{tail}")


class TruncatedError(FormatError):
    """The buffer ends before the field does."""


class BadMagicError(FormatError):
    """A magic code that is neither a message nor a blank record."""


class SizeMismatchError(FormatError):
    """A stored length disagrees with the length recomputed from the fields."""


class CrcMismatchError(FormatError):
    """The stored body CRC disagrees with the CRC of the stored body."""


class EncodeError(PymqError, ValueError):
    """A value that cannot be encoded into a RocketMQ layout (too long, wrong type, inconsistent flags)."""

    def __init__(self, structure: str, field: str, expected: str, found: object = None):
        self.structure = structure
        self.field = field
        self.expected = expected
        self.found = found
        tail = "" if found is None else f", got {found!r}"
        super().__init__(f"cannot encode {structure}.{field}: expected {expected}{tail}")
