"""Message filters as the pull path uses them: one ConsumeQueue test, one CommitLog test.

RocketMQ's ``DefaultMessageStore.getMessage`` asks a ``MessageFilter`` twice per ConsumeQueue
unit: ``isMatchedByConsumeQueue(tagsCode, cqExtUnit)`` before reading the CommitLog (cheap: only
the 20-byte unit), then ``isMatchedByCommitLog(msgBuffer, properties)`` on the record. Who does
what in RocketMQ 4.9.4:

==========  ==============================================  ==========================================
type        ConsumeQueue check (broker)                     CommitLog check
==========  ==============================================  ==========================================
TAG         ``*`` or unknown code → pass; else the unit's   broker: always pass. **Client**
            ``(int) tagsCode`` must be in the code set      (``PullAPIWrapper``): the ``TAGS`` string
            (hash only: collisions pass)                    must be in the tag set — here, by default
SQL92       pass, unless the bloom-filter bitmap path is    broker: evaluate the selector on the
            on (``enableCalcFilterBitMap`` +                properties; only TRUE passes; an
            ConsumeQueueExt, both off by default): **not    evaluation error is logged and the
            implemented here**; without it the results are message does not pass
            the same, the bitmap only saves CommitLog reads
==========  ==============================================  ==========================================

:class:`TagMessageFilter` behaves like the 4.9.4 *broker* by default: its CommitLog test passes
everything, so a hash collision is delivered, as on the wire (``MessageStore.get_message`` calls
both tests on the broker path). The client's string re-check is :meth:`TagMessageFilter.is_matched_by_client`;
``client_side_tag_check=True`` folds it into the CommitLog test, for an in-process broker +
client pair that should filter exactly like RocketMQ end to end. :class:`RetryMessageFilter` is ``ExpressionForRetryMessageFilter`` (broker option
``filterSupportRetry``, default false): a consumer's retry topic ``%RETRY%<group>`` is subscribed
with ``*``, so without it SQL-filtered consumers get *every* message they failed back, filtered
or not; with it, the original topic's SQL filter (found by the message's ``RETRY_TOPIC``
property) is applied to retry messages too.

Filters hold no I/O and no clock. ``evaluation_errors`` counts swallowed evaluation errors
(RocketMQ logs them); ``last_error`` keeps the most recent one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from pymq_ref.broker.filter.errors import FilterSyntaxError, FilterTypeError, UnknownExpressionTypeError
from pymq_ref.broker.filter.sql92 import Sql92Expression, compile_sql92
from pymq_ref.broker.filter.tags import (
    TagSubscription, client_recheck, is_matched_by_tags_code, parse_tag_expression,
)

RETRY_GROUP_TOPIC_PREFIX = "%RETRY%"
PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
TAG = "TAG"
SQL92 = "SQL92"


def is_tag_type(expression_type: str | None) -> bool:
    """``ExpressionType.isTagType``: ``None``, ``""`` or ``"TAG"``."""
    return expression_type is None or expression_type in ("", TAG)


@runtime_checkable
class MessageFilter(Protocol):
    """What ``MessageStore.get_message`` calls (``tag_filter=``); a drop-in for the store's ``TagFilter``."""

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool: ...

    def is_matched_by_commit_log(self, properties: Mapping[str, str] | None) -> bool: ...


class TagMessageFilter:
    """A TAG subscription (``"*"``, ``"TagA || TagB"``). See the module docstring for the split."""

    expression_type = TAG

    def __init__(self, subscription: TagSubscription, *, client_side_tag_check: bool = False):
        self.subscription = subscription
        self.client_side_tag_check = client_side_tag_check

    @property
    def expression(self) -> str:
        return self.subscription.sub_string

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        """Broker: ``*``, or ``tags_code is None``, or ``(int) tags_code`` in the code set."""
        return is_matched_by_tags_code(self.subscription, tags_code)

    def is_matched_by_commit_log(self, properties: Mapping[str, str] | None) -> bool:
        """Broker (4.9.4): always ``True`` for TAG. With ``client_side_tag_check=True``: :meth:`is_matched_by_client`."""
        if not self.client_side_tag_check:
            return True
        return self.is_matched_by_client(properties)

    def is_matched_by_client(self, properties: Mapping[str, str] | None) -> bool:
        """Client (``PullAPIWrapper.processPullResult``): with a tag set, keep only a ``TAGS`` string in it."""
        return client_recheck(self.subscription, properties or {})

    def __repr__(self) -> str:
        return f"TagMessageFilter({self.expression!r}, codes={sorted(self.subscription.code_set)})"


class Sql92MessageFilter:
    """A SQL92 subscription, evaluated on the message properties (``ExpressionMessageFilter``)."""

    expression_type = SQL92

    def __init__(self, compiled: Sql92Expression):
        self.compiled = compiled
        self.evaluation_errors = 0
        self.last_error: FilterTypeError | None = None

    @property
    def expression(self) -> str:
        return self.compiled.expression

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        """Always ``True``: the bloom-filter bitmap path (ConsumeQueueExt) is not implemented."""
        return True

    def is_matched_by_commit_log(self, properties: Mapping[str, str] | None) -> bool:
        """``TRUE`` matches; ``FALSE``, UNKNOWN (``None``) and evaluation errors don't."""
        return _evaluate(self, self.compiled, properties)

    def __repr__(self) -> str:
        return f"Sql92MessageFilter({self.expression!r})"


def _evaluate(owner: Sql92MessageFilter | RetryMessageFilter, compiled: Sql92Expression,
              properties: Mapping[str, str] | None) -> bool:
    """Evaluate; an evaluation error is counted on ``owner`` and is no match (RocketMQ logs it)."""
    try:
        return compiled.evaluate(properties) is True
    except FilterTypeError as e:
        owner.evaluation_errors += 1
        owner.last_error = e
        return False


#: ``(real_topic, consumer_group) -> compiled SQL filter or None`` (``ConsumerFilterManager.get``).
FilterLookup = Callable[[str, str], Sql92Expression | None]


class RetryMessageFilter:
    """``ExpressionForRetryMessageFilter``: the pulled topic may be a retry topic ``%RETRY%<group>``.

    For a retry topic the CommitLog test looks up the SQL filter registered for
    ``(properties["RETRY_TOPIC"], <group>)`` and evaluates it (no filter found → pass). For any
    other topic it behaves like :class:`TagMessageFilter`/:class:`Sql92MessageFilter` (wrapped
    in ``own``). Java throws a NullPointerException for a retry message without ``RETRY_TOPIC``
    (the broker always sets it when a message is sent back); here such a message passes.
    """

    def __init__(self, topic: str, own: TagMessageFilter | Sql92MessageFilter, lookup: FilterLookup):
        self.topic = topic
        self.own = own
        self.lookup = lookup
        self.evaluation_errors = 0
        self.last_error: FilterTypeError | None = None
        self.expression_type = own.expression_type

    @property
    def expression(self) -> str:
        return self.own.expression

    @property
    def is_retry_topic(self) -> bool:
        return self.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)

    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool:
        return self.own.is_matched_by_consume_queue(tags_code)

    def is_matched_by_commit_log(self, properties: Mapping[str, str] | None) -> bool:
        if not self.is_retry_topic:
            return self.own.is_matched_by_commit_log(properties)
        real_topic = (properties or {}).get(PROPERTY_RETRY_TOPIC)
        if real_topic is None:
            return True
        compiled = self.lookup(real_topic, self.topic[len(RETRY_GROUP_TOPIC_PREFIX):])
        if compiled is None:
            return True
        return _evaluate(self, compiled, properties)

    def __repr__(self) -> str:
        return f"RetryMessageFilter({self.topic!r}, {self.own!r})"


def build_filter(expression_type: str | None = TAG, expression: str | None = "*", *,
                 topic: str | None = None, filter_support_retry: bool = False,
                 lookup: FilterLookup | None = None, client_side_tag_check: bool = False,
                 strict: bool = False) -> TagMessageFilter | Sql92MessageFilter | RetryMessageFilter:
    """The filter for one subscription (``FilterAPI.build`` + ``ConsumerFilterManager.build``).

    * TAG (``None``/``""``/``"TAG"``): :func:`~pymq_ref.broker.filter.tags.parse_tag_expression`
      rules; raises ``TagExpressionError`` for ``"||"``.
    * ``"SQL92"``: :func:`~pymq_ref.broker.filter.sql92.compile_sql92`; an empty or missing
      expression or one RocketMQ cannot compile raises :class:`FilterSyntaxError` (the broker
      answers ``SUBSCRIPTION_PARSE_FAILED`` / refuses to register the filter data).
    * anything else: :class:`UnknownExpressionTypeError`.
    * ``filter_support_retry=True`` with ``topic`` and ``lookup``: wrap in :class:`RetryMessageFilter`.

    Note: checking the broker switch ``enablePropertyFilter`` (SQL92 refused when false) is the
    caller's job; this function only builds the filter.
    """
    own: TagMessageFilter | Sql92MessageFilter
    if is_tag_type(expression_type):
        own = TagMessageFilter(parse_tag_expression(expression), client_side_tag_check=client_side_tag_check)
    elif expression_type == SQL92:
        if not expression:
            raise FilterSyntaxError(expression or "", 0, "a non-empty SQL92 expression", "nothing",
                                    reason="Expression can't be null! SQL92")
        own = Sql92MessageFilter(compile_sql92(expression, strict=strict))
    else:
        raise UnknownExpressionTypeError(str(expression_type))
    if filter_support_retry:
        if topic is None or lookup is None:
            raise ValueError("filter_support_retry needs topic= and lookup=")
        return RetryMessageFilter(topic, own, lookup)
    return own
