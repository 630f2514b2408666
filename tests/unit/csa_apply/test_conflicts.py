"""The transaction conflict manager, deterministically (T65, T69, T70): a later transaction
that has prepared and waits for its commit turn holds a row lock an earlier one needs."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from spark_replica.applier_core.csa.service import CsaChannel
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import TransactionRef
from spark_replica.tools.generator.schema import TableDef
from spark_replica.tools.generator.simulate import (
    GeneratedTransaction,
    RowChange,
    WorkloadSpec,
    simulate_with_tables,
)
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log

SPEC = WorkloadSpec(tables=1, rows_per_table=10, transactions=0, seed=1)


Row = tuple[object, ...]


def _update(table: TableDef, row: Row, column: int, value: object) -> RowChange:
    after = tuple(value if i == column else v for i, v in enumerate(row))
    return RowChange(table, "update", row, after)


class Stream:
    """The setup transactions of ``SPEC`` (one table of rows 1..10), then T1 and T2, both
    claiming to depend only on the setup; ``write`` puts them in the channel's relay log."""

    def __init__(self) -> None:
        self.setup, content, tables = simulate_with_tables(SPEC)
        self.table = tables["shop.sbtest1"]
        self.rows = {row[0]: row for row in content["shop.sbtest1"]}

    def transaction(self, number: int, *changes: RowChange) -> GeneratedTransaction:
        last = self.setup[-1]
        return GeneratedTransaction(
            gno=last.gno + number,
            last_committed=last.sequence_number,
            sequence_number=last.sequence_number + number,
            commit_time_us=last.commit_time_us,
            file_index=last.file_index,
            changes=changes,
        )

    def write(self, tmp_path: Path, *transactions: GeneratedTransaction) -> None:
        files = write_binlogs([*self.setup, *transactions], tmp_path / "source",
                              server_uuid=SPEC.server_uuid)  # fmt: skip
        copy_into_relay_log(files, tmp_path / "data")


@dataclass
class Crossing:
    """T1 changes rows 2 and 1; T2, later and claiming no dependency on T1, changes row 1
    after it. In the engine, T1 starts only once T2 has prepared (and so holds row 1)."""

    t1: GeneratedTransaction
    t2: GeneratedTransaction
    t1_row2: RowChange
    t2_row1: RowChange
    engine: RecordingEngine

    @classmethod
    def write(cls, tmp_path: Path) -> Crossing:
        stream = Stream()
        table, rows = stream.table, stream.rows
        t1_row2 = _update(table, rows[2], 1, 1001)
        t1_row1 = _update(table, rows[1], 1, 1002)
        assert t1_row1.after is not None
        t2_row1 = _update(table, t1_row1.after, 1, 2003)
        t1 = stream.transaction(1, t1_row2, t1_row1)
        t2 = stream.transaction(2, t2_row1)
        stream.write(tmp_path, t1, t2)
        engine = RecordingEngine()
        t2_prepared = threading.Event()
        engine.faults.hold_apply[t1.gno] = t2_prepared
        engine.faults.prepared[t2.gno] = t2_prepared
        return cls(t1, t2, t1_row2, t2_row1, engine)


def test_t69_a_prepared_later_transaction_is_rolled_back_and_applied_again(
    tmp_path: Path,
) -> None:
    crossing = Crossing.write(tmp_path)
    t1, t2, engine = crossing.t1, crossing.t2, crossing.engine
    t1_row2, t2_row1 = crossing.t1_row2, crossing.t2_row1
    replica = Replica(tmp_path / "data", workers=2, commit_order=True, engine=engine)
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{t2.gno}")
        handle = replica.handle
        assert isinstance(handle, CsaChannel)
        rollbacks = handle.conflicts.rollbacks
        replica.stop()
        assert replica.exits == []
        assert rollbacks == 1  # T2 was rolled back by the conflict manager
        assert engine.commits[-2:] == [t1.gno, t2.gno]  # and committed after T1
        final = {row[0]: row for row in replica.rows("shop", "sbtest1")}
        assert final[1] == t2_row1.after and final[2] == t1_row2.after
    finally:
        replica.close()


def test_t70_stop_during_a_conflict_rollback(tmp_path: Path) -> None:
    """STOP REPLICA while the conflict manager rolls T2 back (WL10500.TCM.5): STOP waits for
    the rollback, T2 is not applied again nor committed, no thread is left; the next START
    applies T2."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    t1_row1 = _update(table, rows[1], 1, 1002)
    assert t1_row1.after is not None
    t2_row1 = _update(table, t1_row1.after, 1, 2003)
    t1 = stream.transaction(1, _update(table, rows[2], 1, 1001), t1_row1)
    t2 = stream.transaction(2, t2_row1)
    stream.write(tmp_path, t1, t2)

    engine = RecordingEngine()
    t2_prepared, rolling_back, release = threading.Event(), threading.Event(), threading.Event()
    engine.faults.hold_apply[t1.gno] = t2_prepared
    engine.faults.prepared[t2.gno] = t2_prepared
    engine.faults.hold_rollback[t2.gno] = (rolling_back, release)
    replica = Replica(tmp_path / "data", workers=2, commit_order=True, engine=engine)
    try:
        replica.start()
        assert rolling_back.wait(30)  # the conflict manager is rolling T2 back
        handle = replica.handle
        assert isinstance(handle, CsaChannel)
        stopper = threading.Thread(target=replica.stop, name="stopper")
        stopper.start()
        assert handle.env.stopping.wait(30)  # STOP has begun
        release.set()
        stopper.join(30)
        assert not stopper.is_alive()
        assert replica.exits == []
        assert t2.gno not in engine.commits  # T1 may have committed; T2 must not
        setup = f"{SPEC.server_uuid}:1-{t2.gno - 2}"
        assert replica.executed.wait_for(GtidSet.parse(setup), 0)
        assert not replica.executed.contains(SPEC.server_uuid, "", t2.gno)
        assert not [t for t in threading.enumerate() if t.name.startswith("csa")]

        replica.start()  # the next START applies what is missing, T2 included
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{t2.gno}")
        replica.stop()
        assert replica.exits == []
        assert engine.commits.count(t1.gno) == 1 and engine.commits.count(t2.gno) == 1
        assert engine.commits.index(t1.gno) < engine.commits.index(t2.gno)
        final = {row[0]: row for row in replica.rows("shop", "sbtest1")}
        assert final[1] == t2_row1.after
    finally:
        release.set()
        replica.close()


def test_t65_a_later_transaction_still_applying_gives_its_lock_up(tmp_path: Path) -> None:
    """T2 (later) holds row 1 and is still applying when T1 needs the row: T2's next lock
    request fails with a deadlock, it rolls back and retries, and commits after T1."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    t1_row1 = _update(table, rows[1], 1, 1002)
    assert t1_row1.after is not None
    t2_row1 = _update(table, t1_row1.after, 1, 2003)
    t2_row3 = RowChange(table, "delete", rows[3], None)  # its own rows event
    t1 = stream.transaction(1, _update(table, rows[2], 1, 1001), t1_row1)
    t2 = stream.transaction(2, t2_row1, t2_row3)
    stream.write(tmp_path, t1, t2)

    engine = RecordingEngine()
    replica = Replica(tmp_path / "data", workers=2, commit_order=True, engine=engine)
    t2_has_row1, t1_waits = threading.Event(), threading.Event()
    engine.faults.applied_nth[(t2.gno, 1)] = t2_has_row1
    engine.faults.hold_apply[t1.gno] = t2_has_row1  # T1 starts once T2 holds row 1
    engine.faults.hold_nth[(t2.gno, 2)] = t1_waits  # T2 goes on once T1 waits for it
    router_hook = engine.locks.on_wait
    assert router_hook is not None

    def on_wait(waiter: TransactionRef, holder: TransactionRef) -> None:
        router_hook(waiter, holder)
        if waiter.gtid.endswith(f":{t1.gno}"):
            t1_waits.set()

    engine.locks.on_wait = on_wait
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{t2.gno}")
        replica.stop()
        assert replica.exits == []
        assert engine.commits[-2:] == [t1.gno, t2.gno]
        assert replica.status.snapshot().count_transactions_retries == 1
        assert engine.locks.stats().aborts == 1
        final = {row[0]: row for row in replica.rows("shop", "sbtest1")}
        assert final[1] == t2_row1.after and 3 not in final
    finally:
        replica.close()
