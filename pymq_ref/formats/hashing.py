"""The hashes and checksums RocketMQ writes into its files.

* :func:`java_string_hash` — Java's ``String.hashCode`` (over UTF-16 code units, 32-bit wrap-around),
  the basis of the ConsumeQueue ``tagsCode`` and of IndexFile key hashes.
* :func:`tags_code` — what the dispatcher stores in a ConsumeQueue unit for a ``TAGS`` value.
* :func:`index_key_hash` — ``abs(hashCode)`` as ``IndexFile.indexKeyHashMethod`` computes it.
* :func:`body_crc` — the masked CRC-32 stored in BODYCRC.

Pure functions; no I/O.
"""

from __future__ import annotations

import operator
import sys
import zlib
from array import array

_MASK32 = 0xFFFFFFFF
_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"

# 31**k mod 2**32, highest power first, so that sum(unit_i * 31**(n-1-i)) is one C-level pass.
_POWERS: list[int] = []


def _powers(n: int) -> list[int]:
    if len(_POWERS) < n:
        size = max(n, 2 * len(_POWERS), 256)
        table = [1] * size
        for k in range(1, size):
            table[k] = (table[k - 1] * 31) & _MASK32
        _POWERS[:] = table[::-1]
    return _POWERS[len(_POWERS) - n:]


def java_string_hash(s: str) -> int:
    """``s.hashCode()`` as a signed 32-bit int, exactly as a JVM computes it.

    Characters outside the BMP count as two UTF-16 code units (a surrogate pair), as in Java.
    """
    try:
        units = array("H", s.encode(_UTF16))
    except UnicodeEncodeError:
        units = _units_of_odd_text(s)
    n = len(units)
    if n == 0:
        return 0
    h = sum(map(operator.mul, units, _powers(n))) & _MASK32
    return h - 0x100000000 if h & 0x80000000 else h


def _units_of_odd_text(s: str) -> array:
    """UTF-16 units of text holding lone surrogates.

    Our decoders keep undecodable UTF-8 bytes as surrogate escapes (U+DC80..U+DCFF) so that
    records re-encode byte for byte; Java decodes those bytes to U+FFFD before hashing, and so
    do we here. Any other lone surrogate is hashed as the single code unit a Java String holds.
    """
    try:
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        pass
    return array("H", s.encode(_UTF16, "surrogatepass"))


def tags_code(tags: str | None) -> int:
    """The ConsumeQueue tagsCode of a ``TAGS`` value: 0 when absent/empty, else the sign-extended hashCode.

    Store it with ``struct.pack('>q', ...)``: a negative hash becomes ``FF FF FF FF xx xx xx xx``.
    (The dispatcher replaces it by the delivery time for ``SCHEDULE_TOPIC_XXXX``; not done here.)
    """
    return java_string_hash(tags) if tags else 0


def index_key_hash(key: str) -> int:
    """IndexFile key hash: ``abs(key.hashCode())``, and 0 for ``Integer.MIN_VALUE`` (whose abs overflows)."""
    h = java_string_hash(key)
    return 0 if h == -0x80000000 else abs(h)


def body_crc(body: bytes) -> int:
    """BODYCRC: ``CRC32(body) & 0x7FFFFFFF`` (standard zlib CRC-32 with the top bit cleared)."""
    return zlib.crc32(body) & 0x7FFFFFFF
