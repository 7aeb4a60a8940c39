"""Message filtering: tag expressions and SQL92 selectors, as RocketMQ 4.9.4 applies them.

* :func:`build_filter` — one subscription → a filter with ``is_matched_by_consume_queue`` (the
  tags-code test on a ConsumeQueue unit) and ``is_matched_by_commit_log`` (the test on the
  message properties); a drop-in for :class:`pymq_ref.store.message_store.TagFilter`.
* :func:`parse_tag_expression` — ``FilterAPI.buildSubscriptionData`` (tag set + hash-code set).
* :func:`compile_sql92` — SQL92 selectors (lexer, parser, three-valued evaluator).
* Errors: :class:`FilterSyntaxError` (with a caret under the column), :class:`FilterTypeError`
  (evaluation), :class:`TagExpressionError`, :class:`UnknownExpressionTypeError`.

Pure logic: no I/O, no clock, no store access. Must not import the broker core.
"""

from pymq_ref.broker.filter.errors import (
    FilterError, FilterSyntaxError, FilterTypeError, TagExpressionError, UnknownExpressionTypeError,
)
from pymq_ref.broker.filter.message_filter import (
    MessageFilter, RetryMessageFilter, Sql92MessageFilter, TagMessageFilter, build_filter, is_tag_type,
)
from pymq_ref.broker.filter.sql92 import Sql92Expression, compile_sql92
from pymq_ref.broker.filter.tags import TagSubscription, client_recheck, parse_tag_expression

__all__ = [
    "FilterError", "FilterSyntaxError", "FilterTypeError", "MessageFilter", "RetryMessageFilter",
    "Sql92Expression", "Sql92MessageFilter", "TagExpressionError", "TagMessageFilter", "TagSubscription",
    "UnknownExpressionTypeError", "build_filter", "client_recheck", "compile_sql92", "is_tag_type",
    "parse_tag_expression",
]
