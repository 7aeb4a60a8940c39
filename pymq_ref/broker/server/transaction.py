"""END_TRANSACTION (37) and the broker's CHECK_TRANSACTION_STATE (39) back to the producer
(``broker/src/main/java/org/apache/rocketmq/broker/processor/EndTransactionProcessor.java``,
``broker/.../transaction/AbstractTransactionalMessageCheckListener.java`` and ``Broker2Client.java``).

END_TRANSACTION — oneway from the Java client, so normally unanswered — commits or rolls back a
half message through the facade; UNKNOW (0) is not answered at all. The facade's check service
decides which half messages to ask about; :func:`handlers` installs its checker, which sends
CHECK_TRANSACTION_STATE oneway over the connection of a live producer of the message's group
(``ProducerManager.getAvailableChannel``), the half message as the body. With no live producer
the check is dropped with a log line, as 4.9.4 does, and asked again next round.
"""

from __future__ import annotations

import logging

from pymq_ref.broker.response import BrokerError
from pymq_ref.broker.transaction import CheckTransactionState, EndTransactionRequest
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers import CheckTransactionStateRequestHeader, EndTransactionRequestHeader

from .context import BrokerContext
from .replies import refused

log = logging.getLogger("pymq_ref.broker.server")


_ROLLBACK = 0x0C  # MessageSysFlag.TRANSACTION_ROLLBACK_TYPE


def check_request(check: CheckTransactionState) -> RemotingCommand:
    """The CHECK_TRANSACTION_STATE request for one half message."""
    return RemotingCommand.request(RequestCode.CHECK_TRANSACTION_STATE, CheckTransactionStateRequestHeader(
        tran_state_table_offset=check.tran_state_table_offset, commit_log_offset=check.commit_log_offset,
        msg_id=check.msg_id, transaction_id=check.transaction_id, offset_msg_id=check.offset_msg_id), check.body)


def handlers(ctx: BrokerContext) -> dict:
    broker = ctx.broker

    def send_check(group: str, check: CheckTransactionState) -> None:
        channel = ctx.producers.available_channel(group)
        if channel is None or ctx.tell_client is None:
            log.warning("Check transaction failed, channel is null. groupId=%s", group)
            return
        ctx.tell_client(channel, check_request(check))
        ctx.extras["transaction_checks_sent"] = ctx.extras.get("transaction_checks_sent", 0) + 1

    broker.check_transaction_state = send_check

    def end_transaction(request, channel):
        h = request.header(EndTransactionRequestHeader)
        req = EndTransactionRequest(producer_group=h.producer_group or "",
                                    tran_state_table_offset=h.tran_state_table_offset or 0,
                                    commit_log_offset=h.commit_log_offset if h.commit_log_offset is not None else -1,
                                    commit_or_rollback=h.commit_or_rollback or 0,
                                    from_transaction_check=bool(h.from_transaction_check), msg_id=h.msg_id,
                                    transaction_id=h.transaction_id)
        try:
            result = broker.end_transaction(req)
        except BrokerError as e:
            return refused(e)
        if result is None:
            return None  # UNKNOW or any other value: no answer
        if req.commit_or_rollback == _ROLLBACK:
            # 4.9.4 answers a rollback with checkPrepareMessage's response, whose remark is still
            # createResponseCommand's default (EndTransactionProcessor.java)
            return RemotingCommand.response(ResponseCode.SUCCESS, "not set any response code")
        return RemotingCommand.response(ResponseCode.SUCCESS)

    return {RequestCode.END_TRANSACTION: end_transaction}
