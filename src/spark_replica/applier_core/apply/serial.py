"""The serial applier: one thread applies whole transactions, one after the other.

It is what a replica with no parallelism does, the reference the parallel appliers' final
states are checked against, and the baseline their benchmarks are measured against. It reads
binary log or relay log files with the codec, skips transactions whose GTID is executed, and
applies every other one through a single engine session.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from spark_replica.applier_core.apply.transaction import ApplyError, TransactionApplier
from spark_replica.applier_core.binlog.events import Event, Gtid, TransactionPayload
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.binlog.payload import payload_events
from spark_replica.applier_core.binlog.versions import SourceVersion
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.storage import EngineSession, StorageEngine, TransactionRef


@dataclass(slots=True)
class SerialResult:
    """What a run applied: transactions committed, skipped (already executed) and cut off."""

    committed: int = 0
    skipped: int = 0
    truncated: int = 0


class SerialApplier:
    """Applies files of events to ``engine`` in one thread, in file order."""

    def __init__(self, engine: StorageEngine, executed: ExecutedGtids | None = None) -> None:
        self.engine = engine
        self.executed = executed if executed is not None else ExecutedGtids()
        self._session: EngineSession = engine.session("serial")
        self._order = 0

    def apply_files(self, paths: Iterable[str | os.PathLike[str]]) -> SerialResult:
        """Apply every transaction of ``paths``; raises ``ApplyError`` on the first failure
        (the failed transaction is rolled back)."""
        result = SerialResult()
        current: TransactionApplier | None = None
        gtid: Gtid | None = None
        for name, event in _events(paths):
            if isinstance(event, Gtid):
                if current is not None:  # a GTID cuts off an unfinished transaction
                    self._session.rollback()
                    result.truncated += 1
                current, gtid = None, event
                if not event.anonymous and self.executed.contains(event.uuid, event.tag, event.gno):
                    result.skipped += 1
                    continue
                self._order += 1
                self._session.begin(TransactionRef(event.gtid_text, self._order))
                version = SourceVersion.of_gtid_event(event.original_server_version)
                current = TransactionApplier(self._session, event.gtid_text, name, version)
                continue
            if current is None:
                continue  # outside a transaction, or in a skipped one
            try:
                ended = current.apply(event)
            except ApplyError:
                self._session.rollback()
                raise
            if ended:
                self._session.prepare()
                self._session.commit()
                assert gtid is not None
                if not gtid.anonymous:
                    self.executed.add(gtid.uuid, gtid.tag, gtid.gno)
                current = None
                result.committed += 1
        if current is not None:
            self._session.rollback()
            result.truncated += 1
        return result


def _events(paths: Iterable[str | os.PathLike[str]]) -> Iterator[tuple[str, Event]]:
    """Every event of ``paths`` in order, compressed transactions opened, with its file's
    name."""
    for path in paths:
        name = os.path.basename(os.fspath(path))
        reader = BinlogFileReader(path)
        for _pos, _end, event in reader:
            if isinstance(event, TransactionPayload):
                for inner in payload_events(event, reader.fde, reader.table_maps):
                    yield name, inner
            else:
                yield name, event
