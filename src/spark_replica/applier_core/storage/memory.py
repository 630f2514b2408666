"""The in-memory storage engine: the storage interface's reference implementation.

A ``TransactionalStore`` whose tables are Python dicts (``memory_tables.Table``) and whose
durability is a simulated group commit: ``commit`` waits until its group is flushed
(``group_commit``; ``commit_latency`` simulates the durable write), so with concurrent
committers ``stats().flushes < stats().commits`` (requirements T82).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spark_replica.applier_core.storage.ddl_operations import DdlOperation
from spark_replica.applier_core.storage.group_commit import EngineStats, GroupCommit
from spark_replica.applier_core.storage.interface import (
    ExecMode,
    Row,
    TableDef,
    TableRef,
    TransactionRef,
)
from spark_replica.applier_core.storage.locks import DEFAULT_LOCK_WAIT_TIMEOUT
from spark_replica.applier_core.storage.memory_tables import CommittedTable, Stage, Table
from spark_replica.applier_core.storage.prepared_xa import XaChanges
from spark_replica.applier_core.storage.store import StoreBacked, TransactionalStore


class InMemoryEngine(StoreBacked):
    """Tables in Python dicts; thread-safe: any number of sessions work at once."""

    def __init__(
        self,
        *,
        exec_mode: ExecMode = ExecMode.STRICT,
        lock_wait_timeout: float = DEFAULT_LOCK_WAIT_TIMEOUT,
        commit_latency: float = 0.0,
        on_flush: Callable[[tuple[TransactionRef, ...]], None] | None = None,
    ) -> None:
        self._flusher = GroupCommit(commit_latency, on_flush)
        self.store = TransactionalStore(
            self, exec_mode=exec_mode, lock_wait_timeout=lock_wait_timeout
        )

    def __repr__(self) -> str:
        return f"InMemoryEngine({self.store!r}, {self.stats()})"

    @property
    def commit_latency(self) -> float:
        """Seconds each flush (one per group of commits) takes."""
        return self._flusher.latency

    @commit_latency.setter
    def commit_latency(self, seconds: float) -> None:
        self._flusher.latency = seconds

    def rows(self, table: TableRef) -> list[Row]:
        return self.store.rows(table)

    @property
    def background_durability(self) -> bool:
        return False

    def after_durable(self, callback: Callable[[], None]) -> None:
        callback()  # a commit here is durable once ``commit(durable=True)`` returns

    def on_failure(self, callback: Callable[[str], None]) -> None:
        pass  # memory does not fail under the engine

    def stats(self) -> EngineStats:
        return self._flusher.stats()

    def flush(self) -> None:
        """Return once every transaction committed so far is flushed (flushing them when no
        flush runs)."""
        self._flusher.wait_flushed(self._flusher.last_group())

    def wait_for(self, predicate: Callable[[EngineStats], bool], timeout: float) -> bool:
        """Block until ``predicate(stats())`` holds (checked at every commit and flush);
        False when ``timeout`` seconds pass first."""
        return self._flusher.wait_for(predicate, timeout)

    def close(self) -> None:
        """Nothing to stop: commits are flushed by the sessions that make them."""

    def queries(self, max_queries: int) -> Any:
        """None: the server answers SELECTs on replicated tables from ``rows``."""
        return None

    # -- the store's durability ----------------------------------------------------------------

    def new_table(self, ref: TableRef, definition: TableDef) -> CommittedTable:
        return Table(ref, definition)

    def commit_number(self) -> int:
        return 0

    def committed(
        self,
        trx: TransactionRef,
        ddl: Sequence[DdlOperation],
        stages: Mapping[TableRef, Stage],
        xa: XaChanges,
        tables: Mapping[TableRef, CommittedTable],
    ) -> int:
        return self._flusher.enqueue(trx)

    def wait_flushed(self, group: int) -> None:
        self._flusher.wait_flushed(group)

    def throttle(self) -> None:
        """Nothing to wait for: commits are flushed by the sessions."""
