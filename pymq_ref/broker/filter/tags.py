"""Tag expressions: ``"*"``, ``"TagA || TagB"`` — what a consumer subscribes with by default.

Mirrors ``FilterAPI.buildSubscriptionData`` (RocketMQ 4.9.4, ``common/filter/FilterAPI.java``):

* ``None``, ``""`` or exactly ``"*"`` subscribe to everything (``subString = "*"``, empty sets);
* anything else is split on the literal ``||`` (Java ``String.split("\\\\|\\\\|")``, which drops
  *trailing* empty pieces), each piece is trimmed the Java way (``String.trim`` removes chars
  ``<= U+0020`` only), and each non-empty piece goes to ``tags_set`` while its Java
  ``String.hashCode`` goes to ``code_set``;
* an expression made only of separators (``"||"``) splits into nothing at all, and Java throws
  ``"subString split error"`` — :class:`~pymq_ref.broker.filter.errors.TagExpressionError` here.
  ``" * "`` is *not* ``"*"``: it subscribes to the tag named ``*``.

The broker compares only hash codes (the ConsumeQueue stores ``hashCode(TAGS)``, see
:mod:`pymq_ref.formats.hashing`); the client re-checks the tag *string* because two tags can share
a hash (``"Aa"`` and ``"BB"`` both hash to 2112). :func:`client_recheck` is that second step.

Pure functions and frozen values; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pymq_ref.broker.filter.errors import TagExpressionError
from pymq_ref.formats.hashing import java_string_hash

SUB_ALL = "*"
_JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def java_trim(s: str) -> str:
    """Java ``String.trim``: strip chars ``<= U+0020`` (not Unicode whitespace such as U+00A0)."""
    return s.strip(_JAVA_TRIM)


def java_split_double_bar(s: str) -> list[str]:
    """Java ``s.split("\\\\|\\\\|")``: non-overlapping left-to-right pieces, trailing empties removed."""
    pieces = s.split("||")
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


@dataclass(frozen=True, slots=True)
class TagSubscription:
    """The tag part of a ``SubscriptionData``: ``sub_string``, ``tags_set`` and ``code_set``.

    ``tags`` keeps the order in which tags were written (Java keeps a ``HashSet``; order is not
    observable on the broker, only in a heartbeat's JSON).
    """

    sub_string: str
    tags: tuple[str, ...] = ()
    codes: tuple[int, ...] = ()

    @property
    def tags_set(self) -> frozenset[str]:
        return frozenset(self.tags)

    @property
    def code_set(self) -> frozenset[int]:
        return frozenset(self.codes)

    @property
    def is_sub_all(self) -> bool:
        """``subString.equals("*")`` — the test ``ExpressionMessageFilter`` makes."""
        return self.sub_string == SUB_ALL


def parse_tag_expression(expression: str | None) -> TagSubscription:
    """``FilterAPI.buildSubscriptionData`` for a TAG expression (see the module docstring)."""
    if expression is None or expression == "" or expression == SUB_ALL:
        return TagSubscription(SUB_ALL)
    pieces = java_split_double_bar(expression)
    if not pieces:
        raise TagExpressionError(expression, "only '||' separators, no tag (Java: 'subString split error')")
    tags: list[str] = []
    for piece in pieces:
        tag = java_trim(piece)
        if tag and tag not in tags:
            tags.append(tag)
    return TagSubscription(expression, tuple(tags), tuple(dict.fromkeys(java_string_hash(t) for t in tags)))


def tags_code_as_int(tags_code: int) -> int:
    """Java ``tagsCode.intValue()``: the low 32 bits of the stored long, as a signed int."""
    low = tags_code & 0xFFFFFFFF
    return low - 0x100000000 if low & 0x80000000 else low


def is_matched_by_tags_code(sub: TagSubscription, tags_code: int | None) -> bool:
    """The broker's ConsumeQueue test (``ExpressionMessageFilter.isMatchedByConsumeQueue``, TAG branch).

    ``None`` (an ext address that could not be read) passes; ``"*"`` passes; otherwise the int
    value of the code must be in ``code_set``.
    """
    if tags_code is None or sub.is_sub_all:
        return True
    return tags_code_as_int(tags_code) in sub.code_set


def client_recheck(sub: TagSubscription, properties: Mapping[str, str]) -> bool:
    """The client's string re-check (``PullAPIWrapper.processPullResult``).

    When ``tags_set`` is non-empty, keep a message only if it has a ``TAGS`` property and that
    string is in ``tags_set`` (messages without a tag are dropped). With ``"*"`` keep everything.
    """
    if not sub.tags:
        return True
    tags = properties.get("TAGS")
    return tags is not None and tags in sub.tags_set
