"""An in-memory engine that records the order of commits and fails on demand: for the
scenarios on commit order, retries, conflicts and failures (T56, T57, T65–T70)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage import (
    EngineError,
    InMemoryEngine,
    RowChange,
    StoreSession,
    TableMap,
    TransactionRef,
)
from spark_replica.applier_core.storage.interface import HandlerError


class Faults:
    """What to fail: ``apply[gno]`` / ``commit[gno]`` = how many times, with which error."""

    def __init__(self) -> None:
        self.apply: dict[int, list[EngineError]] = {}
        self.commit: dict[int, list[EngineError]] = {}
        #: Commits that take a little longer: whatever orders commits must not depend on
        #: how long each takes.
        self.slow_commits: frozenset[int] = frozenset()
        #: ``gno -> event``: the transaction's first row change waits for the event.
        self.hold_apply: dict[int, threading.Event] = {}
        #: ``(gno, n) -> event``: the n-th rows event (from 1) of the transaction's first
        #: attempt waits for the event / sets it once applied.
        self.hold_nth: dict[tuple[int, int], threading.Event] = {}
        self.applied_nth: dict[tuple[int, int], threading.Event] = {}
        self._calls: dict[int, int] = {}
        #: ``gno -> event``: set once the transaction has prepared.
        self.prepared: dict[int, threading.Event] = {}
        #: ``gno -> (started, release)``: the first rollback of the open transaction sets
        #: ``started``, then waits for ``release`` before it rolls back.
        self.hold_rollback: dict[int, tuple[threading.Event, threading.Event]] = {}
        self.lock = threading.Lock()

    @staticmethod
    def timeout() -> EngineError:
        return EngineError.of(
            ErrorCode.LOCK_WAIT_TIMEOUT, handler_error=HandlerError.LOCK_WAIT_TIMEOUT
        )

    def take(self, table: dict[int, list[EngineError]], gno: int) -> EngineError | None:
        with self.lock:
            errors = table.get(gno)
            return errors.pop() if errors else None


class RecordingEngine(InMemoryEngine):
    """Commits are recorded in ``commits`` (GTID numbers, in commit order)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.faults = Faults()
        self.commits: list[int] = []
        self.commits_lock = threading.Lock()

    def session(self, name: str) -> StoreSession:
        return RecordingSession(self, name)


def _gno(trx: TransactionRef | None) -> int:
    assert trx is not None
    return int(trx.gtid.rsplit(":", 1)[1]) if ":" in trx.gtid else -1


class RecordingSession(StoreSession):
    def __init__(self, engine: RecordingEngine, name: str) -> None:
        super().__init__(engine.store, name)
        self._recording = engine

    def apply_rows(self, table_map: TableMap, changes: Sequence[RowChange]) -> None:
        faults = self._recording.faults
        gno = _gno(self.transaction)
        error = faults.take(faults.apply, gno)
        if error is not None:
            raise error
        with faults.lock:
            hold = faults.hold_apply.pop(gno, None)
            number = faults._calls[gno] = faults._calls.get(gno, 0) + 1
            nth = faults.hold_nth.pop((gno, number), None)
            applied = faults.applied_nth.pop((gno, number), None)
        for event in (hold, nth):
            if event is not None:
                assert event.wait(30), f"transaction {gno} held too long"
        super().apply_rows(table_map, changes)
        if applied is not None:
            applied.set()

    def prepare(self) -> None:
        super().prepare()
        done = self._recording.faults.prepared.get(_gno(self.transaction))
        if done is not None:
            done.set()

    def rollback(self) -> None:
        if self.transaction is not None:
            faults = self._recording.faults
            with faults.lock:
                hold = faults.hold_rollback.pop(_gno(self.transaction), None)
            if hold is not None:
                started, release = hold
                started.set()
                assert release.wait(30), "rollback held too long"
        super().rollback()

    def commit(self, *, durable: bool = True) -> None:
        gno = _gno(self.transaction)
        error = self._recording.faults.take(self._recording.faults.commit, gno)
        if error is not None:
            raise error
        if gno in self._recording.faults.slow_commits:
            time.sleep(0.002)
        with self._recording.commits_lock:
            super().commit(durable=False)
            self._recording.commits.append(gno)
        if durable:
            self.wait_durable()
