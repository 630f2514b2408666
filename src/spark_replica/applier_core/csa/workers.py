"""The rows of ``performance_schema.replication_applier_status_by_worker`` for CSA workers.

Pool workers are threads named ``<pool>-worker-<n>`` (n from 0); worker ids count from 1, as
MySQL's do. A worker's row shows the transaction it applies, the last one it applied (with
their commit timestamps and the times it started and ended them) and its last error; after
STOP REPLICA the rows stay, with THREAD_ID NULL.

A worker only notes, in its own slot, the job it applies and the last one it applied (a
reference and a time: no lock, nothing built); the rows are made from the slots when the
status board is read (``refresh``), so the hot path pays for them once per query, not twice
per transaction.
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


#: A worker's note of the job it applies: the job and when it started it.
_Applying = tuple[Job, float]
#: A worker's note of the last job it committed: the job, when it started and ended it.
_Applied = tuple[Job, float, float]


class WorkerBoard:
    """Keeps the channel's worker rows up to date; implements ``job.Workers``."""

    def __init__(self, status: StatusBoard, count: int) -> None:
        self._status = status
        self._count = count
        self._numbers: dict[int, int] = {}  # thread ident -> worker number
        # Per worker (index = number - 1), written by that worker alone.
        self._applying: list[_Applying | None] = [None] * count
        self._applied: list[_Applied | None] = [None] * count
        # What the rows show now, per worker: the notes they were made from.
        self._shown: list[tuple[_Applying | None, _Applied | None]] = [(None, None)] * count
        self._refresh_lock = threading.Lock()
        status.set_workers(
            [WorkerStatus(worker_id=n, thread_id=next_thread_id()) for n in range(1, count + 1)]
        )
        status.add_source(self.refresh)

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
        self._applying[worker - 1] = (job, time.time())

    def applied(self, worker: int, job: Job, *, committed: bool) -> None:
        if committed:
            self._applied[worker - 1] = (job, job.started, time.time())
        self._applying[worker - 1] = None

    def failed(self, worker: int, code: int, message: str) -> None:
        self._status.update_worker(worker, last_error=ErrorInfo.now(code, message))

    def refresh(self) -> None:
        """Make the rows of the workers whose notes changed since the last refresh."""
        with self._refresh_lock:
            for index in range(self._count):
                # The last applied first: a job noted as applying after it is a later one.
                applied = self._applied[index]
                applying = self._applying[index]
                if applying is None and (applying, applied) == self._shown[index]:
                    continue  # (a job being applied may have retried since: rebuilt)
                self._shown[index] = (applying, applied)
                changes: dict[str, TransactionInfo] = {
                    "applying": TransactionInfo() if applying is None else _info(*applying)
                }
                if applied is not None:
                    changes["last_applied"] = _info(*applied)
                self._status.update_worker(index + 1, **changes)

    def stopped(self) -> None:
        """The workers have ended: their rows stay, without thread ids."""
        self._status.remove_source(self.refresh)
        self._applying = [None] * self._count
        self.refresh()
        for number in range(1, self._count + 1):
            self._status.update_worker(number, thread_id=None, applying=TransactionInfo())


def _info(job: Job, start: float, end: float = 0.0) -> TransactionInfo:
    gtid = job.trx.gtid
    return TransactionInfo(
        gtid=job.trx.gtid_text,
        original_commit=gtid.original_commit_timestamp * _MICROS,
        immediate_commit=gtid.immediate_commit_timestamp * _MICROS,
        start=start,
        end=end,
        retries=job.retries,
    )
