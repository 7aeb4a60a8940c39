"""Transactional messages: half/op records, END_TRANSACTION, and the check-back service."""

from .bridge import (CHECK_IMMUNITY_TIME_IN_SECONDS, REMOVE_TAG, TRAN_PREPARED_QUEUE_OFFSET, TRANSACTION_CHECK_TIMES,
                     TRANSACTION_COMMIT_TYPE, TRANSACTION_NOT_TYPE, TRANSACTION_PREPARED_TYPE,
                     TRANSACTION_ROLLBACK_TYPE)
from .check_service import TransactionalMessageCheckService
from .service import (CheckRoundStats, CheckTransactionState, EndTransactionRequest, EndTransactionResult,
                      TransactionalMessageService)

__all__ = ["TransactionalMessageService", "TransactionalMessageCheckService", "EndTransactionRequest",
           "EndTransactionResult", "CheckTransactionState", "CheckRoundStats", "REMOVE_TAG",
           "TRANSACTION_CHECK_TIMES", "CHECK_IMMUNITY_TIME_IN_SECONDS", "TRAN_PREPARED_QUEUE_OFFSET",
           "TRANSACTION_NOT_TYPE", "TRANSACTION_PREPARED_TYPE", "TRANSACTION_COMMIT_TYPE",
           "TRANSACTION_ROLLBACK_TYPE"]
