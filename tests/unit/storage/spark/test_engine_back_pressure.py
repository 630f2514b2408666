"""Back-pressure: committed rows the Spark engine has not flushed yet live in memory, so a
session that commits past ``max_unflushed_rows`` waits for the flusher; memory stays bounded
whatever the applier's lead."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from spark_replica.applier_core.storage import RowChange
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from tests.unit.storage.spark.test_engine_durability import (
    WAIT,
    GatedStore,
    T,
    Writer,
    setup_tables,
)

pytestmark = pytest.mark.spark


def test_a_session_past_the_bound_waits_for_the_flush(spark: Any, place: Any) -> None:
    root, inner = place
    store = GatedStore(inner)
    engine = SparkEngine(spark, root, store, flush_interval=0.05, flush_rows=10,  # type: ignore[arg-type]
                         max_unflushed_rows=20)  # fmt: skip
    try:
        writer = Writer(engine)
        setup_tables(writer)
        engine.flush()
        store.gate.clear()  # the next commit point waits: its flush's rows stay in memory
        store.reached.clear()
        committed: list[int] = []

        def write() -> None:
            for batch in range(3):
                rows = [RowChange.insert((batch * 100 + i, "r")) for i in range(15)]
                writer.rows(T, rows)
                committed.append(batch)

        thread = threading.Thread(target=write, name="test-writer")
        thread.start()
        assert store.reached.wait(WAIT)  # the first 15 rows are being flushed
        # 15 rows flushing + 15 committed > 20: the session waits after its second commit
        # (committed, not returned yet).
        assert engine.throttled_sessions(1, WAIT)
        assert committed == [0] and engine.stats().queued == 2
        store.gate.set()
        thread.join(WAIT)
        assert not thread.is_alive() and committed == [0, 1, 2]
        engine.flush()
        assert len(engine.rows(T)) == 45
    finally:
        store.gate.set()
        engine.close()


def test_no_wait_while_flushes_fail(spark: Any, place: Any) -> None:
    """A failing flush leaves the rows in memory; sessions go on (the failure is logged and
    retried) rather than stall the channel."""
    root, inner = place
    store = GatedStore(inner, fail=True)
    engine = SparkEngine(spark, root, store, flush_interval=0.05, flush_rows=5,  # type: ignore[arg-type]
                         max_unflushed_rows=5)  # fmt: skip
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((i, "r")) for i in range(10)])
        assert engine.wait_for(lambda s: engine.flush_error is not None, WAIT)
        writer.rows(T, [RowChange.insert((i, "r")) for i in range(10, 20)])  # returns
        store.fail = False
        engine.flush()
        assert len(engine.rows(T)) == 20
    finally:
        engine.close()
