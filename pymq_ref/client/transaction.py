"""``TransactionMQProducer``: half messages, the local transaction, and the broker's check-back
(``client/producer/TransactionMQProducer.java``, ``DefaultMQProducerImpl#sendMessageInTransaction``,
``#endTransaction``, ``#checkTransactionState``).

A transactional send is a sync send of a *half* message (properties TRAN_MSG=true and PGROUP; sysFlag
PREPARED), invisible to consumers. On SEND_OK the user's ``execute_local_transaction(msg, arg)``
runs; its answer (COMMIT_MESSAGE, ROLLBACK_MESSAGE or UNKNOW — an exception or None count as UNKNOW)
goes to the broker one-way in END_TRANSACTION. If that answer is lost or UNKNOW, the broker later
sends CHECK_TRANSACTION_STATE with the half message; ``check_local_transaction(msg)`` answers it,
again one-way. Errors while ending are swallowed: the check-back is the safety net.

Legal call order: as :class:`~pymq_ref.client.producer.DefaultMQProducer`; a listener is required
before ``start``. Check-backs run one at a time (``checkThreadPoolMaxSize = 1``), at most
``check_request_hold_max`` queued.
"""

from __future__ import annotations

import asyncio
import enum
import inspect
import logging

from pymq_ref.formats import properties as P
from pymq_ref.formats.msgid import parse_offset_msg_id

from . import requests as R
from .errors import MQClientError
from .message import TRANSACTION_ID_USER_PROPERTY, Message, MessageExt, SendResult, SendStatus
from .producer import DefaultMQProducer

log = logging.getLogger("pymq_ref.client")


class LocalTransactionState(str, enum.Enum):
    COMMIT_MESSAGE = "COMMIT_MESSAGE"
    ROLLBACK_MESSAGE = "ROLLBACK_MESSAGE"
    UNKNOW = "UNKNOW"  # sic, as in Java


COMMIT_OR_ROLLBACK = {LocalTransactionState.COMMIT_MESSAGE: 0x8, LocalTransactionState.ROLLBACK_MESSAGE: 0xC,
                      LocalTransactionState.UNKNOW: 0}


class TransactionSendResult(SendResult):
    local_transaction_state: LocalTransactionState


async def _call(fn, *args):
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


class TransactionMQProducer(DefaultMQProducer):
    """``listener`` has ``execute_local_transaction(msg, arg)`` and ``check_local_transaction(msg_ext)``
    (plain or coroutine methods) returning a :class:`LocalTransactionState`."""

    def __init__(self, group: str = "DEFAULT_PRODUCER", namesrv_addr: str | None = None, *, listener=None,
                 check_request_hold_max: int = 2000, **kwargs):
        super().__init__(group, namesrv_addr, **kwargs)
        self.transaction_listener = listener
        self.check_request_hold_max = check_request_hold_max
        self._checks: asyncio.Queue | None = None
        self._checker: asyncio.Task | None = None
        self.end_transactions: list[dict] = []  # what we answered (observers: tests, the book)

    async def start(self) -> None:
        if self.transaction_listener is None:
            raise MQClientError("TransactionListener is null")
        self._checks = asyncio.Queue(self.check_request_hold_max)
        await super().start()
        self._checker = asyncio.get_running_loop().create_task(self._check_loop())

    async def shutdown(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
            self._checker = None
        await super().shutdown()

    async def send_message_in_transaction(self, msg: Message, arg=None) -> SendResult:
        self._check_running()
        msg.properties.pop(P.DELAY, None)
        msg.properties[P.TRAN_MSG] = "true"
        msg.properties[P.PGROUP] = self.group
        result = await self.send(msg)
        error: BaseException | None = None
        state = LocalTransactionState.UNKNOW
        if result.send_status == SendStatus.SEND_OK:
            if result.transaction_id is not None:
                msg.properties[TRANSACTION_ID_USER_PROPERTY] = result.transaction_id
            transaction_id = msg.properties.get(P.UNIQ_KEY)
            if transaction_id:
                msg.transaction_id = transaction_id
            try:
                state = await _call(self.transaction_listener.execute_local_transaction, msg, arg)
                state = LocalTransactionState(state) if state is not None else LocalTransactionState.UNKNOW
            except Exception as e:
                log.info("%s: executeLocalTransaction of %s raised: %r", self.group, msg.uniq_key, e)
                error = e
                state = LocalTransactionState.UNKNOW
        else:
            state = LocalTransactionState.ROLLBACK_MESSAGE
        try:
            await self._end_transaction(msg, result, state, error)
        except Exception as e:
            log.info("%s: END_TRANSACTION of %s failed (the broker will check back): %s", self.group,
                     msg.uniq_key, e)
        out = TransactionSendResult(**{k: getattr(result, k) for k in result.__dataclass_fields__})
        object.__setattr__(out, "local_transaction_state", state)
        return out

    async def _end_transaction(self, msg: Message, result: SendResult, state: LocalTransactionState,
                               error: BaseException | None) -> None:
        offset_id = result.offset_msg_id or result.msg_id
        _, commit_log_offset = parse_offset_msg_id(offset_id)
        addr = await self._broker_addr(result.message_queue.broker_name, msg.topic)
        remark = f"executeLocalTransactionBranch exception: {error}" if error is not None else None
        request = R.end_transaction(group=self.group, tran_state_table_offset=result.queue_offset,
                                    commit_log_offset=commit_log_offset, commit_or_rollback=COMMIT_OR_ROLLBACK[state],
                                    msg_id=msg.uniq_key, transaction_id=result.transaction_id, from_check=False,
                                    remark=remark)
        self.end_transactions.append({"msg_id": msg.uniq_key, "state": state.value, "from_check": False})
        await self.instance.remoting.invoke_oneway(addr, request)

    # -- check-back ---------------------------------------------------------------------------
    def check_transaction_state(self, addr: str, msg: MessageExt, header) -> None:
        try:
            self._checks.put_nowait((addr, msg, header))
        except asyncio.QueueFull:
            log.warning("%s: too many transaction checks queued; %s dropped", self.group, msg.msg_id)

    async def _check_loop(self) -> None:
        while True:
            addr, msg, header = await self._checks.get()
            try:
                await self._check_one(addr, msg, header)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                log.info("%s: transaction check of %s failed: %s", self.group, msg.msg_id, e)

    async def _check_one(self, addr: str, msg: MessageExt, header) -> None:
        error = None
        try:
            state = await _call(self.transaction_listener.check_local_transaction, msg)
            state = LocalTransactionState(state) if state is not None else LocalTransactionState.UNKNOW
        except Exception as e:
            error = e
            state = LocalTransactionState.UNKNOW
        uniq = msg.properties.get(P.UNIQ_KEY)
        request = R.end_transaction(group=self.group, tran_state_table_offset=header.tran_state_table_offset,
                                    commit_log_offset=header.commit_log_offset,
                                    commit_or_rollback=COMMIT_OR_ROLLBACK[state], msg_id=uniq or header.msg_id,
                                    transaction_id=header.transaction_id, from_check=True,
                                    remark=f"checkLocalTransactionState Exception: {error}" if error else None)
        self.end_transactions.append({"msg_id": uniq or header.msg_id, "state": state.value, "from_check": True})
        await self.instance.remoting.invoke_oneway(addr, request)
