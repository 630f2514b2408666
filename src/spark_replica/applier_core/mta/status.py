"""The status rows of a legacy-applier channel: ``replication_applier_status_by_worker`` and
``_by_coordinator`` (mysql-reference §1.3, §1.4).

With N workers there is one worker row per worker (WORKER_ID 1..N) and the coordinator's row
shows the transaction it is handing out and the last one it handed out (its buffer
timestamps). The single-threaded applier (0 workers) has one worker row, WORKER_ID 0, for its
SQL thread, and no coordinator row. A worker row shows the transaction being applied and the
last one applied, with their commit timestamps, apply start and end times, retries and last
transient error, and the worker's last error; after a stop the rows stay, THREAD_ID NULL.
"""

from __future__ import annotations

import time
from dataclasses import replace

from spark_replica.applier_core.channels.status import (
    ErrorInfo,
    StatusBoard,
    TransactionInfo,
    WorkerStatus,
    next_thread_id,
)
from spark_replica.applier_core.provider import FetchableTransaction

_MICROS = 1e-6


def transaction_info(trx: FetchableTransaction, *, start: float) -> TransactionInfo:
    """``trx`` with its source commit timestamps, started at ``start`` (epoch seconds)."""
    gtid = trx.gtid
    return TransactionInfo(
        gtid=trx.gtid_text,
        original_commit=gtid.original_commit_timestamp * _MICROS,
        immediate_commit=gtid.immediate_commit_timestamp * _MICROS,
        start=start,
    )


class MtaStatus:
    """Writes one channel's rows; each worker writes its own row, the coordinator its own."""

    def __init__(self, status: StatusBoard, workers: int, sql_thread_id: int | None) -> None:
        self._status = status
        self._ids = list(range(1, workers + 1)) if workers else [0]
        status.set_workers(
            [WorkerStatus(n, sql_thread_id if n == 0 else next_thread_id()) for n in self._ids]
        )
        self._processing: TransactionInfo | None = None

    # -- workers -------------------------------------------------------------------------------

    def applying(self, worker: int, trx: FetchableTransaction) -> TransactionInfo:
        """``worker`` starts applying ``trx``; returns its APPLYING_TRANSACTION values."""
        info = transaction_info(trx, start=time.time())
        self._status.update_worker(worker, applying=info)
        return info

    def retried(
        self, worker: int, info: TransactionInfo, code: int, message: str
    ) -> TransactionInfo:
        """``worker`` retries the transaction of ``info`` after a transient error."""
        info = replace(info, retries=info.retries + 1,
                       last_transient_error=ErrorInfo.now(code, message))  # fmt: skip
        self._status.update_worker(worker, applying=info)
        return info

    def applied(self, worker: int, info: TransactionInfo) -> None:
        """``worker`` committed the transaction of ``info``."""
        self._status.update_worker(
            worker, last_applied=replace(info, end=time.time()), applying=TransactionInfo()
        )

    def abandoned(self, worker: int) -> None:
        """``worker`` ends its transaction without committing it."""
        self._status.update_worker(worker, applying=TransactionInfo())

    def failed(self, worker: int, code: int, message: str) -> None:
        self._status.update_worker(worker, last_error=ErrorInfo.now(code, message))

    # -- the coordinator -----------------------------------------------------------------------

    def processing(self, trx: FetchableTransaction) -> None:
        """The coordinator starts handing ``trx`` out (multi-threaded only)."""
        info = transaction_info(trx, start=time.time())
        self._processing = info
        self._status.update(processing=info)

    def processed(self) -> None:
        """The transaction being handed out is with its worker."""
        info, self._processing = self._processing, None
        if info is not None:
            self._status.update(last_processed=replace(info, end=time.time()),
                                processing=TransactionInfo())  # fmt: skip

    def stopped(self) -> None:
        """Every thread has ended: the rows stay, without thread ids."""
        for number in self._ids:
            self._status.update_worker(number, thread_id=None, applying=TransactionInfo())
        self._status.update(processing=TransactionInfo())
