"""How a failed transaction stops a legacy-applier channel (requirements §7.2 ERR.18).

The first failure wins: it is what SHOW REPLICA STATUS shows (Last_SQL_Errno/Last_SQL_Error),
while the coordinator marks the other workers to stop and exits (WL5569.ERR.1). A worker's
failure reaches the channel as the coordinator's text (mysql-reference §3, "Applier error
texts"); the single-threaded applier (0 workers) reports the failure itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from spark_replica.applier_core.apply.errors import SourcePosition, channel_error

_COORDINATOR_STOPPED = (
    "Coordinator stopped because there were error(s) in the worker(s). The most recent "
    "failure being: Worker {worker} failed executing transaction '{gtid}' at source log "
    "{log}, end_log_pos {pos}. See error log and/or "
    "performance_schema.replication_applier_status_by_worker table for more details about "
    "this failure or others, if any."
)


STOP_WARNING = (
    "The slave Coordinator and Worker threads are stopped, possibly\n"
    "leaving data in inconsistent state. The following restart\n"
    "shall restore consistency automatically. There might be\n"
    "exceptional situations in the recovery caused by combination\n"
    "of non-transactional storage for either of Coordinator or\n"
    "Workers info tables and updating non-transactional data tables\n"
    "or DDL queries. In such cases you have to examine your\n"
    "data (see documentation for de tails)."
)
"""Logged, verbatim, when a worker's error stops the multi-threaded applier (WL5569.WARN.1):
Last_SQL_Error shows the worker's error, this says what the stop may have left."""


class ChannelStopped(Exception):
    """Why transactions assigned but not started were given up: STOP REPLICA's time limit
    passed (WL5569.STOP.1). Not an error: the next START applies them."""


class WorkerFailed(Exception):
    """Raised when a transaction cannot be applied: the channel stops with ``code`` and
    ``channel_message`` (its Last_SQL_Error); ``worker_message`` is the worker's own
    LAST_ERROR_MESSAGE."""

    def __init__(self, code: int, worker_message: str, channel_message: str) -> None:
        super().__init__(channel_message)
        self.code = code
        self.worker_message = worker_message
        self.channel_message = channel_message


def transaction_failed(
    channel: str, worker: int, gtid: str, where: SourcePosition, detail: str
) -> tuple[str, str]:
    """The worker's and the channel's texts for a transaction that failed with ``detail``;
    ``worker`` 0 is the single-threaded applier."""
    if worker == 0:
        return detail, channel_error(channel, detail)
    worker_message = (
        f"Worker {worker} failed executing transaction '{gtid}' at source log "
        f"{where.log_name}, end_log_pos {where.end_log_pos}; {detail}"
    )
    coordinator = _COORDINATOR_STOPPED.format(
        worker=worker, gtid=gtid, log=where.log_name, pos=where.end_log_pos
    )
    return worker_message, channel_error(channel, coordinator)


class FailureSlot:
    """Keeps the channel's first failure and tells the channel once, when it is set."""

    def __init__(self, on_first: Callable[[], None]) -> None:
        # _lock guards _failure.
        self._lock = threading.Lock()
        self._failure: WorkerFailed | None = None
        self._on_first = on_first

    def __repr__(self) -> str:
        return f"<FailureSlot {self._failure!r}>"

    @property
    def failure(self) -> WorkerFailed | None:
        with self._lock:
            return self._failure

    def is_set(self) -> bool:
        return self.failure is not None

    def record(self, failure: WorkerFailed) -> None:
        """Keep ``failure`` unless one came first; the first one calls ``on_first`` (outside
        the lock)."""
        with self._lock:
            if self._failure is not None:
                return
            self._failure = failure
        self._on_first()
