"""Commit order without a binary log in the legacy applier (WL#7846): commit-order deadlocks
(T65, DL.1), followers of a failed transaction (T66, W8, ERR.14) and group flushes (T82,
GC.1), with the worker rows of replication_applier_status_by_worker they leave."""

from __future__ import annotations

import threading
from pathlib import Path

from spark_replica.applier_core.channels.status import WorkerStatus
from spark_replica.applier_core.storage import TransactionRef
from spark_replica.tools.generator.simulate import RowChange, WorkloadSpec
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import WAIT, copy_into_relay_log, generate, insert_locally
from tests.unit.csa_apply.test_conflicts import Crossing, Stream, _update
from tests.unit.mta.harness import MtaReplica, channel_threads

UUID = WorkloadSpec().server_uuid
STOPPED_PREVIOUS = (
    "Replica worker has stopped after at least one previous worker encountered an error when "
    "replica-preserve-commit-order was enabled."
)


def _worker_of(workers: list[WorkerStatus], gtid: str) -> WorkerStatus:
    """The worker row whose last applied or failed transaction is ``gtid``."""
    found = [
        w for w in workers if w.last_applied.gtid == gtid or f"'{gtid}'" in w.last_error.message
    ]
    assert len(found) == 1, (gtid, workers)
    return found[0]


def test_t65_a_later_transaction_waiting_for_its_turn_gives_its_lock_up(tmp_path: Path) -> None:
    """T2 (later, same commit parent) has applied row 1 and waits for its commit turn; T1
    then needs row 1. T2 rolls back (ER_LOCK_DEADLOCK, a retry), T1 commits first, then T2.
    The lock wait timeout is an hour: only the commit-order deadlock handling can end it."""
    crossing = Crossing.write(tmp_path)  # T1 starts once T2 waits for its turn
    t1, t2, engine = crossing.t1, crossing.t2, crossing.engine
    t1_row2, t2_row1 = crossing.t1_row2, crossing.t2_row1
    replica = MtaReplica(tmp_path / "data", workers=2, commit_order=True, engine=engine)
    replica.settings.set_internal("innodb_lock_wait_timeout", 3600)
    try:
        handle = replica.start()
        assert replica.wait_for(f"{UUID}:1-{t2.gno}")
        resolved = handle.conflicts.resolved if handle.conflicts else 0
        replica.stop()
        assert replica.exits == []
        assert resolved >= 1
        assert engine.commits[-2:] == [t1.gno, t2.gno]
        final = {row[0]: row for row in replica.rows("shop", "sbtest1")}
        assert final[1] == t2_row1.after and final[2] == t1_row2.after
        workers = replica.status.snapshot().workers
        later = _worker_of(workers, f"{UUID}:{t2.gno}").last_applied
        assert later.retries == 1
        assert later.last_transient_error.number == 1213
        assert later.last_transient_error.message.startswith("Deadlock found when trying")
        assert _worker_of(workers, f"{UUID}:{t1.gno}").last_applied.retries == 0
    finally:
        replica.close()


def test_t66_followers_of_a_failed_transaction_roll_back_with_3030(tmp_path: Path) -> None:
    """T1 fails for good (a duplicate key) while T2 and T3 wait for their commit turns: they
    roll back, their workers show 3030, nothing after T1 commits and the channel stops with
    T1's 1062."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    new_row = (11, *rows[1][1:])
    t1 = stream.transaction(1, RowChange(table, "insert", None, new_row))
    t2 = stream.transaction(2, _update(table, rows[3], 1, 3003))
    t3 = stream.transaction(3, _update(table, rows[4], 1, 4004))
    stream.write(tmp_path, t1, t2, t3)

    engine = RecordingEngine()
    t2_prepared, t3_prepared, both = threading.Event(), threading.Event(), threading.Event()
    engine.faults.prepared[t2.gno] = t2_prepared
    engine.faults.prepared[t3.gno] = t3_prepared
    engine.faults.hold_apply[t1.gno] = both
    replica = MtaReplica(tmp_path / "data", workers=3, commit_order=True, engine=engine)
    try:
        replica.start()
        assert replica.wait_for(f"{UUID}:1-{t1.gno - 1}")  # the setup
        assert t2_prepared.wait(WAIT) and t3_prepared.wait(WAIT)
        insert_locally(engine, "shop", "sbtest1", new_row)
        both.set()
        assert replica.exited.wait(WAIT)
        replica.stop()
        assert channel_threads() == []
        [error] = replica.exits
        assert error is not None and error.number == 1062
        executed = replica.executed.snapshot()
        assert not any(executed.contains(UUID, "", t.gno) for t in (t1, t2, t3))
        assert not set(engine.commits) & {t1.gno, t2.gno, t3.gno}
        workers = replica.status.snapshot().workers
        assert _worker_of(workers, f"{UUID}:{t1.gno}").last_error.number == 1062
        for follower in (t2, t3):
            row = _worker_of(workers, f"{UUID}:{follower.gno}")
            assert row.last_error.number == 3030
            prefix = f"Worker {row.worker_id} failed executing transaction '{UUID}:{follower.gno}'"
            assert row.last_error.message.startswith(prefix)
            assert STOPPED_PREVIOUS in row.last_error.message
            assert row.applying.gtid == "" and row.thread_id is None  # stopped
    finally:
        replica.close()


def test_t82_ordered_commits_share_flushes(tmp_path: Path) -> None:
    """T1, T2 and T3 (same commit parent) wait for their turns. T1 commits at its turn without
    waiting for its flush; while that flush is held, T2 and T3 commit too and queue up, and
    then go to disk in one flush: 2 flushes for 3 commits."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    trxs = [stream.transaction(n, _update(table, rows[n + 4], 1, 5000 + n)) for n in (1, 2, 3)]
    stream.write(tmp_path, *trxs)
    first = f"{UUID}:{trxs[0].gno}"
    groups: list[tuple[str, ...]] = []
    queued_behind = threading.Event()

    def on_flush(group: tuple[TransactionRef, ...]) -> None:
        groups.append(tuple(ref.gtid for ref in group))
        if first in groups[-1]:  # hold T1's flush until T2 and T3 have committed
            queued_behind.set()
            assert engine.wait_for(lambda stats: stats.queued == 2, WAIT)

    engine = RecordingEngine(on_flush=on_flush)
    prepared = [threading.Event(), threading.Event()]
    engine.faults.prepared[trxs[1].gno], engine.faults.prepared[trxs[2].gno] = prepared
    others = threading.Event()
    engine.faults.hold_apply[trxs[0].gno] = others
    replica = MtaReplica(tmp_path / "data", workers=3, commit_order=True, engine=engine)
    try:
        replica.start()
        assert all(event.wait(WAIT) for event in prepared)
        before = engine.stats()
        others.set()
        assert replica.wait_for(f"{UUID}:1-{trxs[-1].gno}")
        replica.stop()
        assert replica.exits == []
        assert queued_behind.is_set()
        after = engine.stats()
        assert (after.commits - before.commits, after.flushes - before.flushes) == (3, 2)
        assert groups[-2:] == [(first,), tuple(f"{UUID}:{t.gno}" for t in trxs[1:])]
        assert engine.commits[-3:] == [t.gno for t in trxs]
    finally:
        replica.close()


def test_worker_rows_show_what_each_worker_applied(tmp_path: Path) -> None:
    """replication_applier_status_by_worker for 3 workers: ids 1..3 with thread ids while
    running; the coordinator's last processed transaction is the last one; after STOP the
    rows stay without thread ids. The single-threaded applier has one row, worker 0."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=40, seed=9)
    transactions, _, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    last = f"{spec.server_uuid}:{transactions[-1].gno}"
    for workers, ids in ((3, [1, 2, 3]), (0, [0])):
        replica = MtaReplica(tmp_path / "data", workers=workers, commit_order=True)
        replica.status.update(sql_thread_id=77)
        try:
            replica.start()
            running = replica.status.snapshot()
            assert [w.worker_id for w in running.workers] == ids
            assert all(w.thread_id is not None for w in running.workers)
            assert replica.wait_for(f"{spec.server_uuid}:1-{transactions[-1].gno}")
            replica.stop()
            status = replica.status.snapshot()
            applied = [w.last_applied for w in status.workers]
            assert last in [info.gtid for info in applied]
            for info in applied:
                if info.gtid:
                    assert 0 < info.start <= info.end
                    assert info.original_commit > 0
            assert all(w.thread_id is None and w.applying.gtid == "" for w in status.workers)
            if workers:
                assert status.last_processed.gtid == last
                assert status.last_processed.start <= status.last_processed.end
            else:
                assert status.last_processed.gtid == ""
        finally:
            replica.close()
