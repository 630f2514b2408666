"""Requirements §11 scenarios through a running Change Stream Applier (in-memory engine)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from spark_replica.applier_core.channels.config import Until, UntilKind
from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.harness import (
    WAIT,
    Replica,
    copy_into_relay_log,
    generate,
    insert_locally,
)

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, seed=3)


def _replica(tmp_path: Path, spec: WorkloadSpec = SPEC, **kw: object) -> tuple[Replica, int]:
    transactions, _, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    return Replica(tmp_path / "data", **kw), len(transactions)  # type: ignore[arg-type]


def test_t35_start_runs_the_workers_and_a_scheduler(tmp_path: Path) -> None:
    replica, count = _replica(tmp_path, workers=3)
    try:
        began = time.perf_counter_ns()
        replica.start()
        names = {t.name for t in threading.enumerate()}
        assert {f"csa-c1-worker-{n}" for n in range(3)} <= names
        assert {"csa-c1-scheduler", "csa-c1-csa", "csa-c1-conflicts"} <= names
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{count}")
        rows = replica.status.snapshot().workers
        assert [w.worker_id for w in rows] == [1, 2, 3] and all(w.thread_id for w in rows)
        replica.stop()
        elapsed = time.perf_counter_ns() - began
        rows = replica.status.snapshot().workers
        assert [w.thread_id for w in rows] == [None, None, None]  # rows kept after STOP
        assert sum(w.metrics["transactions_committed"] for w in rows) == count
        metrics = replica.status.snapshot().metrics
        assert metrics["transactions_committed"] == count
        assert metrics["events_applied"] > 3 * count and metrics["time_applying_ns"] > 0
        assert metrics["dependency_window_width"] >= 1 and metrics["transactions_ongoing"] == 0
        # OBS.STAT.SCHED: one scheduler thread's time, within the run
        assert 0 < metrics["time_scheduling_ns"] <= elapsed
        applied = {w.last_applied.gtid for w in rows} - {""}  # a worker may have had no job
        assert applied and applied <= {f"{SPEC.server_uuid}:{n}" for n in range(1, count + 1)}
    finally:
        replica.close()


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_t36_stop_under_load_a_hundred_times_loses_nothing(
    tmp_path: Path, commit_order: bool
) -> None:
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=1500, conflict_share=0.2,
                        seed=9)  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=4, commit_order=commit_order)
    try:
        uuid, count = spec.server_uuid, len(transactions)
        for _ in range(100):
            executed = replica.executed.snapshot()
            missing = next((n for n in range(1, count + 1) if not executed.contains(uuid, "", n)),
                           None)  # fmt: skip
            replica.start()
            if missing is not None:  # stop once the first missing transaction is in
                assert replica.wait_for(f"{uuid}:{missing}")
            replica.stop()
            assert replica.exits == []
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert replica.content() == content
    finally:
        replica.close()


def test_t37_until_sql_after_gtids_stops_after_them(tmp_path: Path) -> None:
    replica, _ = _replica(tmp_path, workers=4)
    try:
        replica.start(Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{SPEC.server_uuid}:1-10"))
        assert replica.exited.wait(WAIT)
        assert replica.exits == [None]
        replica.stop()
        assert replica.executed.snapshot() == GtidSet.parse(f"{SPEC.server_uuid}:1-10")
    finally:
        replica.close()


def test_t38_until_sql_before_gtids_stops_before_them(tmp_path: Path) -> None:
    replica, _ = _replica(tmp_path, workers=4)
    try:
        replica.start(Until(UntilKind.SQL_BEFORE_GTIDS, gtids=f"{SPEC.server_uuid}:5"))
        assert replica.exited.wait(WAIT)
        replica.stop()
        assert replica.exits == [None]
        assert replica.executed.snapshot() == GtidSet.parse(f"{SPEC.server_uuid}:1-4")
    finally:
        replica.close()


def test_t40_t41_an_error_stops_only_its_channel(tmp_path: Path) -> None:
    first = WorkloadSpec(tables=1, rows_per_table=5, transactions=50, database="one", seed=1)
    second = WorkloadSpec(tables=1, rows_per_table=5, transactions=300, database="two", seed=2,
                          server_uuid="4e11fa47-71ca-11e1-9e33-c80aa9429562")  # fmt: skip
    first_transactions, _, files_one = generate(first, tmp_path / "one")
    second_transactions, second_content, files_two = generate(second, tmp_path / "two")
    data = tmp_path / "data"
    copy_into_relay_log(files_one, data, "c1")
    copy_into_relay_log(files_two, data, "c2")
    c1 = Replica(data, workers=2, channel="c1")
    c2 = c1.sibling("c2")
    try:
        # Until the database and table are created and loaded: later inserts stay to apply.
        c1.start(Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{first.server_uuid}:1-3"))
        assert c1.exited.wait(WAIT)
        c1.stop()
        assert c1.exits == [None]
        # A row the source inserts later is there already: c1 fails with 1062 when it gets
        # there.
        executed = c1.executed.snapshot()
        later = next(
            c
            for t in first_transactions
            if not executed.contains(first.server_uuid, "", t.gno)
            for c in t.changes
            if c.kind == "insert"
        )
        assert later.after is not None
        insert_locally(c1.engine, "one", later.table.name, later.after)
        c1.start()
        c2.start()
        assert c1.exited.wait(WAIT)
        assert c2.wait_for(f"{second.server_uuid}:1-{len(second_transactions)}")
        c2.stop()
        c1.stop()
        error = c1.exits[-1]  # the first: the UNTIL run's end
        assert error is not None and error.number == 1062
        assert error.message.startswith("Replica SQL for channel 'c1': Worker ")
        assert (
            "failed executing transaction '3e11fa47-71ca-11e1-9e33-c80aa9429562:" in error.message
        )
        assert "Could not execute Write_rows event on table one.sbtest1; Duplicate entry" in (
            error.message)  # fmt: skip
        assert "Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY" in error.message
        assert c1.status.snapshot().sql_error.number == 1062
        failed = [w for w in c1.status.snapshot().workers if w.last_error.number]
        assert len(failed) == 1 and failed[0].last_error.message.startswith("Worker ")
        assert c2.exits == []
        assert {k: v for k, v in c2.content().items() if k.startswith("two.")} == second_content
    finally:
        c2.stop()
        c1.close()


def test_t42_a_corrupt_relay_log_stops_the_channel_with_13121(tmp_path: Path) -> None:
    transactions, _, files = generate(SPEC, tmp_path / "source")
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF  # an event in the middle no longer matches its checksum
    files[0].write_bytes(bytes(data))
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=2)
    try:
        replica.start()
        assert replica.exited.wait(WAIT)
        replica.stop()
        error = replica.exits[0]
        assert error is not None and error.number == 13121
        assert error.message.startswith("Replica SQL for channel 'c1': Relay log read failure:")
        executed = replica.executed.snapshot()
        assert 0 < len(list(executed.intervals())) and not executed.contains(
            SPEC.server_uuid, "", len(transactions)
        )
    finally:
        replica.close()


def test_t74_applied_relay_log_files_are_purged(tmp_path: Path) -> None:
    spec = WorkloadSpec(tables=2, rows_per_table=10, transactions=200, rotate_every=50, seed=8)
    transactions, content, files = generate(spec, tmp_path / "source")
    assert len(files) >= 4
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=4)
    try:
        replica.start()
        assert replica.wait_for(f"{spec.server_uuid}:1-{len(transactions)}")
        replica.stop()
        relay = tmp_path / "data" / "relay" / "c1"
        left = sorted(p.name for p in relay.iterdir() if p.name.startswith("binlog."))
        assert left == [files[-1].name]  # every applied file but the last (active) one
        assert (relay / "relay-bin-c1.index").read_text().split() == [files[-1].name]
        assert replica.content() == content
    finally:
        replica.close()


def test_t39_the_applier_itself_refuses_other_until_conditions(tmp_path: Path) -> None:
    replica, _ = _replica(tmp_path)
    try:
        with pytest.raises(ReplicaError) as info:
            replica.start(Until(UntilKind.SOURCE_POS, log_file="binlog.000001", log_pos=4))
        assert info.value.code == 7505
        assert info.value.message == (
            "Replica SQL for channel: 'c1' Change Stream Applier accepts the following UNTIL "
            "conditions: SQL_BEFORE_GTIDS and SQL_AFTER_GTIDS"
        )
    finally:
        replica.close()
