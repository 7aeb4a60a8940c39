"""Headers of transactions: END_TRANSACTION and CHECK_TRANSACTION_STATE.

Declared from ``common/src/main/java/org/apache/rocketmq/common/protocol/header/`` (4.9.4): Java field
names, types, ``@CFNotNull`` and initial values, in declaration order. Data only; see
:mod:`pymq_ref.remoting.header` for what the declarations drive.
"""

from __future__ import annotations

from ..header import CommandHeader, field, BOOLEAN, INTEGER, LONG, STRING


class EndTransactionRequestHeader(CommandHeader):
    """END_TRANSACTION (37), oneway: commit or roll back a half message."""

    FIELDS = (
        field("producerGroup", STRING, required=True),
        field("tranStateTableOffset", LONG, required=True),
        field("commitLogOffset", LONG, required=True),
        field("commitOrRollback", INTEGER, required=True),
        field("fromTransactionCheck", BOOLEAN, default=False),
        field("msgId", STRING, required=True),
        field("transactionId", STRING),
    )


class EndTransactionResponseHeader(CommandHeader):
    """The answer to END_TRANSACTION (no fields)."""

    FIELDS = ()


class CheckTransactionStateRequestHeader(CommandHeader):
    """CHECK_TRANSACTION_STATE (39), broker to producer: what became of this transaction?"""

    FIELDS = (
        field("tranStateTableOffset", LONG, required=True),
        field("commitLogOffset", LONG, required=True),
        field("msgId", STRING),
        field("transactionId", STRING),
        field("offsetMsgId", STRING),
    )


class CheckTransactionStateResponseHeader(CommandHeader):
    """Declared in 4.9.4 for a check's answer; producers answer with END_TRANSACTION instead."""

    FIELDS = (
        field("producerGroup", STRING, required=True),
        field("tranStateTableOffset", LONG, required=True),
        field("commitLogOffset", LONG, required=True),
        field("commitOrRollback", INTEGER, required=True),
    )


class ResumeCheckHalfMessageRequestHeader(CommandHeader):
    """RESUME_CHECK_HALF_MESSAGE (323): check a half message again (admin)."""

    FIELDS = (
        field("msgId", STRING),
    )
