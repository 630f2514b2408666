"""The rows of ``performance_schema.replication_applier_status_by_worker`` for CSA workers.

Pool workers are threads named ``<pool>-worker-<n>`` (n from 0); worker ids count from 1, as
MySQL's do. A worker's row shows the transaction it applies, the last one it applied (with
their commit timestamps and the times it started and ended them) and its last error; after
STOP REPLICA the rows stay, with THREAD_ID NULL.
"""

from __future__ import annotations

import threading
import time

from spark_replica.applier_core.channels.status import (
    ErrorInfo,
    StatusBoard,
    TransactionInfo,
    WorkerStatus,
    next_thread_id,
)
from spark_replica.applier_core.csa.job import Job

_MICROS = 1e-6


class WorkerBoard:
    """Keeps the channel's worker rows up to date; implements ``job.Workers``."""

    def __init__(self, status: StatusBoard, count: int) -> None:
        self._status = status
        self._count = count
        self._numbers: dict[int, int] = {}  # thread ident -> worker number
        status.set_workers(
            [WorkerStatus(worker_id=n, thread_id=next_thread_id()) for n in range(1, count + 1)]
        )

    def current(self) -> int:
        """The worker number (1-based) of the calling pool thread. A spare worker (started
        while the others wait for locks) counts as one of the numbered ones."""
        ident = threading.get_ident()
        number = self._numbers.get(ident)
        if number is None:
            name = threading.current_thread().name
            number = self._numbers[ident] = int(name.rsplit("-", 1)[1]) % self._count + 1
        return number

    def applying(self, worker: int, job: Job) -> None:
        self._status.update_worker(worker, applying=_info(job, start=time.time()))

    def applied(self, worker: int, job: Job, *, committed: bool) -> None:
        if committed:
            info = _info(job, start=job.started, end=time.time())
            self._status.update_worker(worker, last_applied=info, applying=TransactionInfo())
        else:
            self._status.update_worker(worker, applying=TransactionInfo())

    def failed(self, worker: int, code: int, message: str) -> None:
        self._status.update_worker(worker, last_error=ErrorInfo.now(code, message))

    def stopped(self) -> None:
        """The workers have ended: their rows stay, without thread ids."""
        for number in range(1, self._count + 1):
            self._status.update_worker(number, thread_id=None, applying=TransactionInfo())


def _info(job: Job, *, start: float, end: float = 0.0) -> TransactionInfo:
    gtid = job.trx.gtid
    return TransactionInfo(
        gtid=job.trx.gtid_text,
        original_commit=gtid.original_commit_timestamp * _MICROS,
        immediate_commit=gtid.immediate_commit_timestamp * _MICROS,
        start=start,
        end=end,
        retries=job.retries,
    )
