"""Threads, STOP REPLICA and errors of the legacy applier (requirements §7.2 ERR.14/ERR.18,
WL5569.ERR.1, WL#7846 FR8, style §7 rule 8)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from spark_replica.applier_core.apply.serial import SerialApplier
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.mta.failure import STOP_WARNING
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.storage import InMemoryEngine, TransactionRef
from spark_replica.tools.generator.simulate import GeneratedTransaction, WorkloadSpec
from tests.unit.csa_apply.harness import (
    WAIT,
    copy_into_relay_log,
    engine_content,
    generate,
    insert_locally,
)
from tests.unit.csa_apply.test_conflicts import Stream, _update
from tests.unit.mta.harness import MtaReplica, TimelineEngine, channel_threads, wait_until

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, conflict_share=0.2,
                    rotate_every=70, seed=31)  # fmt: skip
UUID = SPEC.server_uuid


@pytest.mark.parametrize(("workers", "expected"), [
    (4, ["coordinator", "worker-1", "worker-2", "worker-3", "worker-4"]),
    (0, ["coordinator", "reader"]),
])  # fmt: skip
def test_named_threads_all_joined_by_stop(
    tmp_path: Path, workers: int, expected: list[str]
) -> None:
    """replica_parallel_workers (taken at START) workers, mta-<channel>-worker-<n>; 0 workers:
    the coordinator applies (WL5569.R0). STOP joins them all."""
    transactions, _, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=workers)
    try:
        replica.start()
        replica.settings.set_internal("replica_parallel_workers", 7)  # read at START only
        assert channel_threads() == sorted(f"mta-c1-{name}" for name in expected)
        assert replica.wait_for(f"{UUID}:1-{len(transactions)}")
        replica.stop()
        replica.stop()  # idempotent
        assert channel_threads() == []
    finally:
        replica.close()


def _serial_content(files: list[Path], executed: GtidSet, count: int) -> object:
    """The content that applying exactly ``executed``, in relay-log order, gives."""
    others = ExecutedGtids()
    for gno in range(1, count + 1):
        if not executed.contains(UUID, "", gno):
            others.add(UUID, "", gno)
    engine = InMemoryEngine()
    SerialApplier(engine, others).apply_files(files)
    return engine_content(engine)


def _prefix(executed: GtidSet, count: int) -> int:
    """k when ``executed`` is exactly 1..k of the source's GTIDs."""
    k = sum(1 for gno in range(1, count + 1) if executed.contains(UUID, "", gno))
    assert all(executed.contains(UUID, "", gno) for gno in range(1, k + 1)), "a gap"
    return k


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_stop_while_applying_leaves_no_thread_and_nothing_half_committed(
    tmp_path: Path, commit_order: bool
) -> None:
    """STOP REPLICA while a worker is inside a transaction: the assigned transactions finish,
    every thread is joined, the committed ones are a prefix of the relay log whose content
    is exactly theirs; the next START applies the rest, once (T82-style exactly once)."""
    transactions, content, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    held = transactions[len(transactions) // 2]
    engine = TimelineEngine()
    began = engine.began[held.gno] = threading.Event()
    release = engine.faults.hold_apply[held.gno] = threading.Event()
    replica = MtaReplica(tmp_path / "data", workers=4, commit_order=commit_order, engine=engine)
    try:
        handle = replica.start()
        assert began.wait(WAIT)
        stopper = threading.Thread(target=replica.stop, name="test-stopper")
        stopper.start()
        assert handle.stop_requested.wait(WAIT)
        release.set()
        stopper.join(WAIT)
        assert not stopper.is_alive()
        assert channel_threads() == []
        assert replica.exits == []
        executed = replica.executed.snapshot()
        k = _prefix(executed, len(transactions))
        assert k >= held.gno  # it was assigned: it finished
        assert replica.content() == _serial_content(files, executed, len(transactions))
        replica.start()
        assert replica.wait_for(f"{UUID}:1-{len(transactions)}")
        replica.stop()
        assert replica.content() == content
    finally:
        replica.close()


def _later_insert(transactions: list[GeneratedTransaction]) -> tuple[int, str, tuple[object, ...]]:
    """A workload transaction, in the second half, that inserts a new row."""
    for trx in transactions[len(transactions) // 2 :]:
        for change in trx.changes:
            if change.kind == "insert" and change.after is not None:
                return trx.gno, change.table.name, change.after
    raise AssertionError("no insert")


def _create_schema(replica: MtaReplica, transactions: list[GeneratedTransaction]) -> None:
    """Run the source's leading DDL on the replica's engine by hand and mark it executed
    (the applier skips it)."""
    session = replica.engine.session("dba")
    for trx in transactions:
        if trx.ddl is None:
            return
        session.begin(TransactionRef(f"{UUID}:{trx.gno}", -1))
        session.apply_ddl(trx.ddl, trx.ddl_database)
        session.prepare()
        session.commit()
        replica.executed.add(UUID, "", trx.gno)


@pytest.mark.parametrize(("workers", "commit_order"), [(4, True), (4, False), (0, False)],
                         ids=["4-rpco", "4-no-rpco", "single-threaded"])  # fmt: skip
def test_a_duplicate_key_stops_the_channel_with_1062(
    tmp_path: Path, workers: int, commit_order: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """ERR.18 / WL5569.ERR.1: a row the source inserts is there already; the channel stops
    with 1062 and the failing transaction in Last_SQL_Error. Under commit order (and
    single-threaded) everything before it committed and nothing after it (WL#7846 FR8). The
    multi-threaded applier logs the stop warning of WL5569.WARN.1 verbatim (T47)."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=200, seed=8)
    transactions, _, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=workers, commit_order=commit_order)
    failing, table, row = _later_insert(transactions)
    try:
        _create_schema(replica, transactions)
        insert_locally(replica.engine, spec.database, table, row)
        replica.start()
        assert replica.exited.wait(WAIT)
        replica.stop()
        assert channel_threads() == []
        [error] = replica.exits
        assert error is not None and error.number == 1062
        assert replica.status.snapshot().sql_error.number == 1062
        gtid = f"{UUID}:{failing}"
        if workers:
            assert error.message.startswith(
                "Replica SQL for channel 'c1': Coordinator stopped because there were error(s) "
                "in the worker(s). The most recent failure being: Worker "
            )
            assert f"failed executing transaction '{gtid}' at source log" in error.message
        else:
            assert error.message.startswith(
                f"Replica SQL for channel 'c1': Could not execute Write_rows event on table "
                f"{spec.database}.{table}; Duplicate entry"
            )
            assert "Error_code: 1062; handler error HA_ERR_FOUND_DUPP_KEY" in error.message
        executed = replica.executed.snapshot()
        assert not executed.contains(UUID, "", failing)
        if commit_order or not workers:
            assert _prefix(executed, len(transactions)) == failing - 1
        warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert warnings.count(STOP_WARNING) == (1 if workers else 0)
        assert STOP_WARNING.splitlines()[0] == (
            "The slave Coordinator and Worker threads are stopped, possibly"
        )
    finally:
        replica.close()


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_t46_stop_gives_up_what_has_not_started_once_its_time_limit_passes(
    tmp_path: Path, commit_order: bool
) -> None:
    """WL5569.STOP.1: STOP REPLICA lets assigned transactions run for a while (60 s), then
    gives up those not started. Here the limit is 0: the transaction being applied ends and
    commits, the three queued behind it on the one worker are given up without an error,
    and the next START applies them."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    trxs = [stream.transaction(n, _update(table, rows[n], 1, 7000 + n)) for n in (1, 2, 3, 4)]
    stream.write(tmp_path, *trxs)
    uuid = WorkloadSpec().server_uuid
    engine = TimelineEngine()
    began = engine.began[trxs[0].gno] = threading.Event()
    release = engine.faults.hold_apply[trxs[0].gno] = threading.Event()
    replica = MtaReplica(tmp_path / "data", workers=1, commit_order=commit_order, engine=engine)
    try:
        handle = replica.start()
        assert began.wait(WAIT)
        last = f"{uuid}:{trxs[-1].gno}"
        assert wait_until(lambda: replica.status.snapshot().last_processed.gtid == last)
        handle.stop_limit = 0.0
        stopper = threading.Thread(target=replica.stop, name="test-stopper")
        stopper.start()
        assert handle.stop_requested.wait(WAIT)
        release.set()
        stopper.join(WAIT)
        assert not stopper.is_alive() and channel_threads() == []
        assert replica.exits == []
        executed = replica.executed.snapshot()
        assert executed.contains(uuid, "", trxs[0].gno)
        assert not any(executed.contains(uuid, "", t.gno) for t in trxs[1:])
        assert all(w.last_error.number == 0 for w in replica.status.snapshot().workers)
        replica.run_until_applied(f"{uuid}:1-{trxs[-1].gno}")
        final = {row[0]: row for row in replica.rows("shop", "sbtest1")}
        assert [final[n][1] for n in (1, 2, 3, 4)] == [7001, 7002, 7003, 7004]
    finally:
        replica.close()
