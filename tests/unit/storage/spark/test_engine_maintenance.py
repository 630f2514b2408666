"""The Spark engine's maintenance thread: compaction runs beside the flusher, which records
what it compacted; a write that loses a race with a compaction runs again."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage import RowChange, TableRef
from spark_replica.applier_core.storage.spark import table_writes
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.maintenance import ORPHAN_AGE, Maintenance
from spark_replica.applier_core.storage.spark.state import StoredTable
from tests.unit.storage.spark.test_engine_durability import T, Writer, setup_tables

WAIT = 60.0


@pytest.mark.spark
def test_flushes_go_on_while_a_compaction_runs(
    spark: Any, place: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compaction held on the maintenance thread does not hold flushes; once it ends the
    flusher records its snapshot, with the rows flushed meanwhile."""
    entered, release = threading.Event(), threading.Event()
    compact = Maintenance.compact

    def held(self: Maintenance, table: StoredTable) -> None:
        entered.set()
        assert release.wait(WAIT)
        compact(self, table)

    monkeypatch.setattr(Maintenance, "compact", held)
    root, store = place
    engine = SparkEngine(spark, root, store, flush_interval=0.05, compact_after=2)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((1, "a"))])
        writer.rows(T, [RowChange.insert((2, "b"))])
        assert engine.wait_for(lambda s: s.queued == 0, WAIT)
        writer.rows(T, [RowChange.update((1, "a"), (1, "c"))])
        assert engine.wait_for(lambda s: s.queued == 0, WAIT)
        assert entered.wait(WAIT)  # the compaction started after an earlier flush
        for i in range(3, 6):  # flushes while it is held
            writer.rows(T, [RowChange.insert((i, "x"))])
            assert engine.wait_for(lambda s: s.queued == 0, WAIT)
        assert engine.durable_state().tables[T].changes >= 3
        release.set()
        engine.flush()  # returns once the round after the last flush is recorded
        state = engine.durable_state()
        assert engine.iceberg.current_snapshot(T) == state.tables[T].snapshot
        name = engine.iceberg.sql_name(T)
        operations = {
            r[0] for r in engine.spark.sql(f"SELECT operation FROM {name}.snapshots").collect()
        }
        assert "replace" in operations  # the compaction's commit is in the table's history
        expected = [(1, "c"), (2, "b"), (3, "x"), (4, "x"), (5, "x")]
        assert sorted(engine.rows(T)) == expected  # type: ignore[type-var]
        with engine.snapshot() as snapshot:
            rows = engine.spark.sql(f"SELECT * FROM `{snapshot.view(T)}`").collect()
        assert sorted(tuple(r) for r in rows) == expected
    finally:
        release.set()
        engine.close()
    assert not [t for t in threading.enumerate() if t.name == "spark-engine-maintenance"]


class FakeSpark:
    """Runs statements, the first ``losses`` of them failing as Iceberg refuses a commit
    that conflicts with a compaction."""

    def __init__(self, losses: int, error: str = table_writes.VALIDATION_ERROR) -> None:
        self.losses = losses
        self.error = error
        self.ran: list[str] = []

    def sql(self, statement: str) -> None:
        self.ran.append(statement)
        if len(self.ran) <= self.losses:
            raise RuntimeError(f"{self.error}: Found new conflicting delete files")


def run_statement(spark: FakeSpark, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow as pa

    monkeypatch.setattr(table_writes, "_view", lambda spark, table, part: "v")
    table = StoredTable(1, TableRef("d", "t"), None)  # type: ignore[arg-type]
    table_writes._run(spark, table, pa.table({"a": [1]}), lambda view: f"MERGE ... {view}")


def test_a_write_that_lost_a_race_with_a_compaction_runs_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spark = FakeSpark(losses=2)
    run_statement(spark, monkeypatch)
    assert spark.ran == ["MERGE ... v"] * 3


def test_a_write_keeps_losing_or_fails_otherwise_and_the_flush_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spark = FakeSpark(losses=table_writes.RACE_ATTEMPTS)
    with pytest.raises(RuntimeError, match="ValidationException"):
        run_statement(spark, monkeypatch)
    assert len(spark.ran) == table_writes.RACE_ATTEMPTS
    other = FakeSpark(losses=1, error="java.io.IOException")
    with pytest.raises(RuntimeError, match="IOException"):
        run_statement(other, monkeypatch)
    assert len(other.ran) == 1


def one_row_compacted_at_the_next_flush(spark: Any, place: Any) -> tuple[SparkEngine, Writer]:
    """An engine that compacts a table at its second flush, with the tables of
    ``setup_tables`` and one row of ``t`` flushed; its writer."""
    root, store = place
    engine = SparkEngine(spark, root, store, flush_interval=0.05, compact_after=2)
    writer = Writer(engine)
    setup_tables(writer)
    writer.rows(T, [RowChange.insert((1, "a"))])
    engine.flush()
    return engine, writer


@pytest.mark.spark
def test_a_compaction_round_removes_old_orphan_files_only(spark: Any, place: Any) -> None:
    """Files under a table's location that no snapshot names (a failed write's) go once
    older than ``orphan_age``; a younger one stays (a write in progress may own it)."""
    root, _ = place
    engine, writer = one_row_compacted_at_the_next_flush(spark, place)
    try:
        data = Path(root) / f"t{engine.durable_state().tables[T].id}" / "data"
        data.mkdir(parents=True, exist_ok=True)
        old, young = data / "orphan-old.parquet", data / "orphan-young.parquet"
        for path in (old, young):
            path.write_bytes(b"PAR1 not a data file of any snapshot PAR1")
        long_ago = time.time() - ORPHAN_AGE - 3600
        os.utime(old, (long_ago, long_ago))
        writer.rows(T, [RowChange.insert((2, "b"))])
        engine.flush()  # the second flush since the table was made: a compaction round
        assert not old.exists() and young.exists()
        assert sorted(engine.rows(T)) == [(1, "a"), (2, "b")]  # type: ignore[type-var]
        with engine.snapshot() as snapshot:
            rows = engine.spark.sql(f"SELECT * FROM `{snapshot.view(T)}`").collect()
        assert sorted(tuple(r) for r in rows) == [(1, "a"), (2, "b")]
    finally:
        engine.close()


@pytest.mark.spark
def test_a_table_an_earlier_version_made_takes_the_table_properties_at_its_compaction(
    spark: Any, place: Any
) -> None:
    """A table made before a property joined ``TABLE_PROPERTIES`` (here: manifests merged
    at each commit, small row groups) gets it at its next compaction, without a snapshot of
    its own; the format version stays as it was made."""
    from spark_replica.applier_core.storage.spark.catalog import TABLE_PROPERTIES

    engine, writer = one_row_compacted_at_the_next_flush(spark, place)
    try:
        name = engine.iceberg.sql_name(T)
        dropped = ("commit.manifest.min-count-to-merge", "write.parquet.row-group-size-bytes")
        listed = ", ".join(f"'{key}'" for key in dropped)
        engine.spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ({listed})")
        ref = engine.durable_state().tables[T]
        assert engine.iceberg.current_snapshot(T) == ref.snapshot  # metadata only
        writer.rows(T, [RowChange.insert((2, "b"))])
        engine.flush()  # the second flush since the table was made: a compaction round
        properties = dict(
            engine.spark.sql(f"SHOW TBLPROPERTIES {name}").collect()  # type: ignore[arg-type]
        )
        assert {key: properties.get(key) for key in dropped} == {
            key: TABLE_PROPERTIES[key] for key in dropped
        }
        assert properties["format-version"] == "3"
        assert engine.iceberg.adopt_properties(T, ref.definition) == []  # nothing more to take
        assert sorted(engine.rows(T)) == [(1, "a"), (2, "b")]  # type: ignore[type-var]
    finally:
        engine.close()
