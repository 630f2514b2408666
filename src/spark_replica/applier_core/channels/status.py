"""What a channel's threads report while they run; the status tables read it.

Receivers and appliers write through the methods here, from their own threads; the server
reads ``snapshot()`` copies. One lock per channel guards every field.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

_thread_ids = itertools.count(1)
_thread_ids_lock = threading.Lock()


def next_thread_id() -> int:
    """A process-wide THREAD_ID for a newly started replication thread."""
    with _thread_ids_lock:
        return next(_thread_ids)


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """LAST_ERROR_NUMBER / LAST_ERROR_MESSAGE / LAST_ERROR_TIMESTAMP; number 0 means none."""

    number: int = 0
    message: str = ""
    timestamp: float = 0.0

    @classmethod
    def now(cls, number: int, message: str) -> ErrorInfo:
        return cls(number, message, time.time())


NO_ERROR = ErrorInfo()


@dataclass(frozen=True, slots=True)
class TransactionInfo:
    """A transaction a thread processed or is processing, with its timestamps (epoch seconds)."""

    gtid: str = ""
    original_commit: float = 0.0
    immediate_commit: float = 0.0
    start: float = 0.0
    end: float = 0.0
    retries: int = 0
    last_transient_error: ErrorInfo = NO_ERROR


NO_TRANSACTION = TransactionInfo()


@dataclass(slots=True)
class WorkerStatus:
    """One row of replication_applier_status_by_worker."""

    worker_id: int
    thread_id: int | None = None
    last_error: ErrorInfo = NO_ERROR
    last_applied: TransactionInfo = NO_TRANSACTION
    applying: TransactionInfo = NO_TRANSACTION
    #: Statistics counters by lower-case column name of replication_applier_progress_by_worker.
    metrics: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class ChannelStatus:
    """Run-time state of one channel (not persisted)."""

    io_thread_id: int | None = None
    io_connecting: bool = False
    sql_thread_id: int | None = None
    io_error: ErrorInfo = NO_ERROR
    sql_error: ErrorInfo = NO_ERROR
    coordinator_error: ErrorInfo = NO_ERROR
    count_transactions_retries: int = 0
    count_received_heartbeats: int = 0
    last_heartbeat: float = 0.0
    received_transaction_set: str = ""
    #: The source's server_uuid and server_id, as it answered at the last connection.
    source_uuid: str = ""
    source_server_id: int = 0
    last_queued: TransactionInfo = NO_TRANSACTION
    queueing: TransactionInfo = NO_TRANSACTION
    last_processed: TransactionInfo = NO_TRANSACTION
    processing: TransactionInfo = NO_TRANSACTION
    workers: list[WorkerStatus] = field(default_factory=list)
    io_state_text: str = ""
    sql_state_text: str = ""
    #: time.monotonic() when each state text last changed (SHOW PROCESSLIST's Time).
    io_state_since: float = 0.0
    sql_state_since: float = 0.0
    until_condition: str = "None"
    until_log_file: str = ""
    until_log_pos: int = 0
    relay_log_file: str = ""
    relay_log_pos: int = 0
    relay_log_space: int = 0
    #: Seconds_Behind_Source's inputs (``lag.py``): the applier's ``last_master_timestamp``
    #: (epoch seconds, 0 when unknown) and whether it has caught up with the relay log; the
    #: receiver's measure of how far the replica's clock is ahead of the source's (seconds).
    source_commit_time: float = 0.0
    applier_caught_up: bool = False
    source_clock_diff: int = 0
    #: Statistics counters by lower-case column name of replication_applier_metrics.
    metrics: dict[str, int] = field(default_factory=dict)


_STATE_SINCE = {"io_state_text": "io_state_since", "sql_state_text": "sql_state_since"}


class StatusBoard:
    """Thread-safe holder of a ``ChannelStatus``."""

    def __init__(self) -> None:
        # _lock guards _status and every WorkerStatus in it.
        self._lock = threading.Lock()
        self._status = ChannelStatus()
        self._sources: tuple[Callable[[], None], ...] = ()

    def add_source(self, refresh: Callable[[], None]) -> None:
        """``refresh`` brings fields up to date (through ``update`` and ``update_worker``)
        before each ``snapshot``: an applier that only notes what it does, without taking
        this lock per transaction, fills the fields when somebody reads them."""
        self._sources = (*self._sources, refresh)

    def remove_source(self, refresh: Callable[[], None]) -> None:
        """Detach ``refresh`` (nothing when it is not attached)."""
        self._sources = tuple(s for s in self._sources if s != refresh)

    def snapshot(self) -> ChannelStatus:
        """A deep copy that a reader may keep."""
        for refresh in self._sources:
            refresh()
        with self._lock:
            copy = replace(self._status, metrics=dict(self._status.metrics))
            copy.workers = [replace(w, metrics=dict(w.metrics)) for w in self._status.workers]
            return copy

    def update(self, **changes: object) -> None:
        with self._lock:
            for key, value in changes.items():
                if not hasattr(self._status, key):
                    raise AttributeError(key)
                if key in _STATE_SINCE and getattr(self._status, key) != value:
                    setattr(self._status, _STATE_SINCE[key], time.monotonic())
                setattr(self._status, key, value)

    def set_workers(self, workers: list[WorkerStatus]) -> None:
        with self._lock:
            self._status.workers = workers

    def update_worker(self, worker_id: int, **changes: object) -> None:
        with self._lock:
            workers = self._status.workers
            if 0 < worker_id <= len(workers) and workers[worker_id - 1].worker_id == worker_id:
                found: WorkerStatus | None = workers[worker_id - 1]  # rows are by id, from 1
            else:
                found = next((w for w in workers if w.worker_id == worker_id), None)
            if found is None:
                raise KeyError(worker_id)
            for key, value in changes.items():
                setattr(found, key, value)

    def add_retries(self, count: int = 1) -> None:
        with self._lock:
            self._status.count_transactions_retries += count

    def clear_errors(self) -> None:
        """CHANGE REPLICATION SOURCE and RESET REPLICA clear applier and worker errors."""
        with self._lock:
            self._status.sql_error = NO_ERROR
            self._status.coordinator_error = NO_ERROR
            for worker in self._status.workers:
                worker.last_error = NO_ERROR

    def reset(self, *, keep_workers: bool = False) -> None:
        """RESET REPLICA: forget errors, counters and receiver progress."""
        with self._lock:
            workers = self._status.workers if keep_workers else []
            self._status = ChannelStatus(workers=workers)
