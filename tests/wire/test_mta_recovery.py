"""The legacy multi-threaded applier (APPLIER_VERSION=1) over the wire: the pool size and the
scheduling type are read at START only (T50, T51, T48), and a channel stopped by a worker's
error with gaps after its low-water mark keeps them in ``mysql.slave_worker_info``, refuses
CHANGE REPLICATION SOURCE (1802) and, once the cause is removed, the next START applies only
what is missing (WL5569.REC.1/REC.2)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import RowChange, TableRef, TransactionRef
from spark_replica.tools.generator.simulate import GeneratedTransaction, WorkloadSpec
from tests.helpers.server import connect, executed_gtids
from tests.unit.csa_apply.harness import copy_into_relay_log, engine_content, generate
from tests.unit.mta.harness import TimelineEngine

CHANNEL = "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h2', SOURCE_AUTO_POSITION=1 FOR CHANNEL 'c2'"
WAIT = 60.0
GAPS_MESSAGE = (
    "CHANGE REPLICATION SOURCE cannot be executed when the replica was stopped with an error "
    "or killed in MTA mode. Consider using RESET REPLICA or START REPLICA UNTIL."
)


@pytest.fixture
def engine() -> TimelineEngine:
    return TimelineEngine()


def _threads() -> list[str]:
    """The names of the live threads of channel c2's legacy applier."""
    return sorted(t.name for t in threading.enumerate() if t.name.startswith("mta-c2-"))


def _workers(count: int) -> list[str]:
    return [f"mta-c2-worker-{n}" for n in range(1, count + 1)]


def _status(cursor: Any) -> dict[str, Any]:
    cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c2'")
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchone(), strict=True))


def _poll(cursor: Any, done: Any) -> None:
    """Poll ``done(cursor)`` (statements a DBA would run) until it holds, for WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while not done(cursor):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _wait_for_all(cursor: Any, everything: GtidSet) -> None:
    _poll(cursor, lambda c: everything.is_subset(executed_gtids(c)))


def _drain_and_stop(cursor: Any, everything: GtidSet) -> None:
    """Wait until ``everything`` is executed, with the SQL thread running clean, then STOP it:
    no thread is left and the executed set is exactly ``everything``."""
    _wait_for_all(cursor, everything)
    status = _status(cursor)
    assert (status["Replica_SQL_Running"], status["Last_SQL_Errno"]) == ("Yes", 0)
    cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c2'")
    assert _threads() == []
    assert executed_gtids(cursor) == everything


def _last_applied(cursor: Any) -> list[int]:
    """The GTID numbers of each worker's LAST_APPLIED_TRANSACTION (0: none yet)."""
    cursor.execute(
        "SELECT LAST_APPLIED_TRANSACTION"
        " FROM performance_schema.replication_applier_status_by_worker WHERE CHANNEL_NAME = 'c2'"
    )
    return [int(gtid.rsplit(":", 1)[1]) if gtid else 0 for (gtid,) in cursor.fetchall()]


def _latest(cursor: Any) -> int:
    """The highest GTID number among the workers' LAST_APPLIED_TRANSACTION (0: none yet)."""
    return max(_last_applied(cursor), default=0)


def _replicated_commits(engine: TimelineEngine) -> list[int]:
    """The GTID numbers of every replicated transaction the engine committed, sorted (each
    transaction applied once: 1..N)."""
    with engine.commits_lock:
        return sorted(gno for gno in engine.commits if gno > 0)


def _middle(transactions: list[GeneratedTransaction]) -> GeneratedTransaction:
    """A transaction with row changes half-way through the workload."""
    return next(t for t in transactions[len(transactions) // 2 :] if t.changes)


def test_t50_the_pool_size_changes_at_the_next_start(
    tmp_path: Path, port: int, engine: TimelineEngine
) -> None:
    """T50 (SV.slave_parallel_workers): a channel started with replica_parallel_workers=2 runs
    mta-c2-worker-1 and -2; SET GLOBAL replica_parallel_workers=4 while it applies is taken
    (the variable reads 4) but the running pool keeps its 2 workers; STOP and START REPLICA
    SQL_THREAD start 4. Every transaction is applied, once."""
    spec = WorkloadSpec(tables=2, rows_per_table=10, transactions=300, seed=50)
    transactions, content, files = generate(spec, tmp_path / "source")
    everything = GtidSet.parse(f"{spec.server_uuid}:1-{len(transactions)}")
    held = _middle(transactions)
    began = engine.began[held.gno] = threading.Event()
    release = engine.faults.hold_apply[held.gno] = threading.Event()
    try:
        with connect(port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, tmp_path / "data", "c2")
            cursor.execute("SET GLOBAL replica_parallel_workers = 2")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == ["mta-c2-coordinator", *_workers(2)]
            assert began.wait(WAIT)  # the channel is in the middle of the workload
            cursor.execute("SET GLOBAL replica_parallel_workers = 4")
            cursor.execute("SELECT @@global.replica_parallel_workers")
            assert cursor.fetchone()[0] == 4
            assert _threads() == ["mta-c2-coordinator", *_workers(2)]
            assert len(_last_applied(cursor)) == 2
            assert _status(cursor)["Replica_SQL_Running"] == "Yes"
            release.set()
            cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == []
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == ["mta-c2-coordinator", *_workers(4)]
            assert len(_last_applied(cursor)) == 4
            _drain_and_stop(cursor, everything)
    finally:
        release.set()
    assert engine_content(engine) == content
    assert _replicated_commits(engine) == list(range(1, len(transactions) + 1))


def test_t51_the_parallel_type_changes_at_the_next_start(
    tmp_path: Path, port: int, engine: TimelineEngine
) -> None:
    """T51 (SV.slave_parallel_type): SET GLOBAL replica_parallel_type='DATABASE' while a
    channel applies with LOGICAL_CLOCK is accepted and deferred: the variable reads DATABASE,
    the running applier keeps its threads (no relay log reader thread, which DATABASE
    scheduling has) and goes on applying. T48 (I-1): the next START with
    replica_preserve_commit_order=ON is refused with 3031 and starts nothing; with it OFF the
    channel runs DATABASE scheduling (mta-c2-reader) and applies the rest."""
    spec = WorkloadSpec(tables=4, rows_per_table=10, transactions=300, databases=2, seed=51)
    transactions, content, files = generate(spec, tmp_path / "source")
    everything = GtidSet.parse(f"{spec.server_uuid}:1-{len(transactions)}")
    held = _middle(transactions)
    began = engine.began[held.gno] = threading.Event()
    release = engine.faults.hold_apply[held.gno] = threading.Event()
    logical_clock = ["mta-c2-coordinator", *_workers(2)]
    try:
        with connect(port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, tmp_path / "data", "c2")
            cursor.execute("SET GLOBAL replica_parallel_workers = 2")
            cursor.execute(
                "SELECT @@global.replica_parallel_type, @@global.replica_preserve_commit_order"
            )
            assert cursor.fetchone() == ("LOGICAL_CLOCK", 1)
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == logical_clock
            assert began.wait(WAIT)
            cursor.execute("SET GLOBAL replica_parallel_type = 'DATABASE'")
            cursor.execute("SELECT @@global.replica_parallel_type")
            assert cursor.fetchone()[0] == "DATABASE"
            assert _threads() == logical_clock
            release.set()
            _poll(cursor, lambda c: _latest(c) >= held.gno)  # it goes on
            assert _status(cursor)["Replica_SQL_Running"] == "Yes"
            assert _threads() == logical_clock
            cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == []

            with pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert caught.value.args == (
                3031,
                "replica_preserve_commit_order is not supported when replica_parallel_type is "
                "DATABASE.",
            )
            assert _threads() == []
            assert _status(cursor)["Replica_SQL_Running"] == "No"

            cursor.execute("SET GLOBAL replica_preserve_commit_order = 0")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == ["mta-c2-coordinator", "mta-c2-reader", *_workers(2)]
            _drain_and_stop(cursor, everything)
    finally:
        release.set()
    assert engine_content(engine) == content
    assert _replicated_commits(engine) == list(range(1, len(transactions) + 1))


def _independent_successors(transactions: list[GeneratedTransaction], index: int) -> int:
    """How many transactions right after ``transactions[index]`` do not depend on it (the
    logical clock lets them start, and commit, before it)."""
    trx, count = transactions[index], 0
    for later in transactions[index + 1 :]:
        if later.ddl is not None or later.last_committed >= trx.sequence_number:
            break
        count += 1
    return count


def _failing_insert(
    transactions: list[GeneratedTransaction],
) -> tuple[GeneratedTransaction, str, tuple[object, ...]]:
    """A transaction from the second half of the workload that inserts a row and may start
    only once every earlier one has committed, with the most successors that do not depend
    on it; with the table and the row it inserts."""
    candidates = [
        index
        for index in range(len(transactions) // 2, len(transactions) - 1)
        if transactions[index].last_committed == transactions[index].sequence_number - 1
        and any(c.kind == "insert" for c in transactions[index].changes)
    ]
    assert candidates, "no such transaction in the workload"
    best = max(candidates, key=lambda index: _independent_successors(transactions, index))
    assert _independent_successors(transactions, best) > 0
    trx = transactions[best]
    insert = next(c for c in trx.changes if c.kind == "insert" and c.after is not None)
    assert insert.after is not None
    return trx, insert.table.name, insert.after


def _commit_locally(engine: TimelineEngine, table: TableRef, change: RowChange) -> None:
    """Commit ``change`` behind the applier's back (a local write, not a replicated one: its
    commit is recorded with no GTID number)."""
    session = engine.session("local")
    session.begin(TransactionRef("local", -1))
    session.apply_rows(table, [change])
    session.prepare()
    session.commit()


def _worker_rows(cursor: Any) -> list[tuple[int, bytes]]:
    """Each ``mysql.slave_worker_info`` row of channel c2: its Id and Checkpoint_group_bitmap
    (a BLOB, which the client gets as bytes, as from MySQL)."""
    cursor.execute(
        "SELECT Id, Checkpoint_group_bitmap FROM mysql.slave_worker_info"
        " WHERE Channel_name = 'c2' ORDER BY Id"
    )
    rows = cursor.fetchall()
    assert all(isinstance(bitmap, bytes) for _, bitmap in rows)
    return [(int(number), bitmap) for number, bitmap in rows]


def test_recovery_after_an_error_with_gaps_applies_only_what_is_missing(
    tmp_path: Path, port: int, engine: TimelineEngine
) -> None:
    """WL5569.REC.1/REC.2, ERR.18/WL5569.ERR.1, WL5569.SSS.2, mysql-reference §4.1 step 10
    (ER_MTA_CHANGE_SOURCE_CANT_RUN_WITH_GAPS, 1802): with 4 workers and
    replica_preserve_commit_order=0, a transaction F from the second half of the workload is
    held before its first row change; a row it inserts is committed locally meanwhile, and F
    is let go only once a later transaction that does not depend on it has committed (a
    worker's LAST_APPLIED_TRANSACTION shows it). F fails with 1062 and stops the channel with
    a gap: that transaction committed after F, which did not.
    mysql.slave_worker_info keeps the gap in a Checkpoint_group_bitmap; CHANGE REPLICATION
    SOURCE is refused with 1802. Once the row is removed, START REPLICA applies what is missing:
    the content is the source's and gtid_executed is every transaction, each applied once.
    After that clean stop no bit is set and CHANGE REPLICATION SOURCE succeeds."""
    spec = WorkloadSpec(tables=4, rows_per_table=10, transactions=300, seed=5)
    transactions, content, files = generate(spec, tmp_path / "source")
    uuid = spec.server_uuid
    everything = GtidSet.parse(f"{uuid}:1-{len(transactions)}")
    failing, name, row = _failing_insert(transactions)
    table = TableRef(spec.database, name)
    began = engine.began[failing.gno] = threading.Event()
    release = engine.faults.hold_apply[failing.gno] = threading.Event()
    try:
        with connect(port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, tmp_path / "data", "c2")
            cursor.execute("SET GLOBAL replica_parallel_workers = 4")
            cursor.execute("SET GLOBAL replica_preserve_commit_order = 0")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            assert _threads() == ["mta-c2-coordinator", *_workers(4)]
            assert began.wait(WAIT)  # every earlier transaction committed: its table exists
            _commit_locally(engine, table, RowChange.insert(row))
            _poll(cursor, lambda c: _latest(c) > failing.gno)  # a later one committed
            later = _latest(cursor)
            release.set()
            _poll(cursor, lambda c: _status(c)["Replica_SQL_Running"] == "No")
            status = _status(cursor)
            assert status["Last_SQL_Errno"] == 1062
            assert (
                f"failed executing transaction '{uuid}:{failing.gno}'" in status["Last_SQL_Error"]
            )
            assert _threads() == []
            executed = executed_gtids(cursor)
            assert not executed.contains(uuid, "", failing.gno)
            assert executed.contains(uuid, "", later)  # the gap: committed after F

            workers = _worker_rows(cursor)
            assert [number for number, _ in workers] == [1, 2, 3, 4]
            assert any(any(bitmap) for _, bitmap in workers)  # the gap after the mark
            with pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h3' FOR CHANNEL 'c2'")
            assert caught.value.args == (1802, GAPS_MESSAGE)
            assert _status(cursor)["Source_Host"] == "h2"

            _commit_locally(engine, table, RowChange.delete(row))
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c2'")
            _drain_and_stop(cursor, everything)
            assert engine_content(engine) == content
            assert _replicated_commits(engine) == list(range(1, len(transactions) + 1))
            workers = _worker_rows(cursor)
            assert workers and not any(any(bitmap) for _, bitmap in workers)
            cursor.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='h3' FOR CHANNEL 'c2'")
            assert _status(cursor)["Source_Host"] == "h3"
    finally:
        release.set()
