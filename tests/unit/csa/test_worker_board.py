"""The CSA's rows of replication_applier_status_by_worker (issue 4 observability, WL10500's
status tables): workers note what they do without the status lock; the rows are made when the
status board is read, and they show what a reader of the table expects at that moment."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import cast

from spark_replica.applier_core.binlog.events import Gtid
from spark_replica.applier_core.channels.status import StatusBoard
from spark_replica.applier_core.csa.job import Job
from spark_replica.applier_core.csa.workers import WorkerBoard
from tests.unit.provider.helpers import UUID, gtid


@dataclass
class _Trx:
    gtid: Gtid

    @property
    def gtid_text(self) -> str:
        return self.gtid.gtid_text


@dataclass
class _Job:
    """What the board reads of a job: its transaction, retries and start time."""

    trx: _Trx
    retries: int = 0
    started: float = 0.0


def _job(gno: int) -> Job:
    return cast(Job, _Job(_Trx(gtid(gno))))


def test_the_rows_show_the_job_being_applied_and_the_last_one_committed() -> None:
    status = StatusBoard()
    board = WorkerBoard(status, 2)
    first, second = _job(1), _job(2)
    board.applying(1, first)
    row = status.snapshot().workers[0]
    assert row.applying.gtid == f"{UUID}:1" and row.applying.start > 0
    assert row.last_applied.gtid == "" and status.snapshot().workers[1].applying.gtid == ""

    first.started = row.applying.start
    board.applied(1, first, committed=True)
    board.applying(1, second)
    second.retries = 2  # retried while it is applied: the row shows it at the next read
    row = status.snapshot().workers[0]
    assert row.last_applied.gtid == f"{UUID}:1"
    assert row.last_applied.start == first.started <= row.last_applied.end
    assert row.applying.gtid == f"{UUID}:2" and row.applying.retries == 2


def test_a_job_that_commits_nothing_clears_the_applying_row_only() -> None:
    status = StatusBoard()
    board = WorkerBoard(status, 1)
    board.applying(1, _job(1))
    board.applied(1, _job(1), committed=True)
    board.applying(1, _job(2))
    assert status.snapshot().workers[0].applying.gtid == f"{UUID}:2"
    board.applied(1, _job(2), committed=False)  # truncated: nothing committed
    row = status.snapshot().workers[0]
    assert row.applying.gtid == "" and row.last_applied.gtid == f"{UUID}:1"


def test_after_stop_the_rows_stay_without_thread_ids_and_no_longer_follow_the_notes() -> None:
    status = StatusBoard()
    board = WorkerBoard(status, 2)
    board.applying(2, _job(5))
    board.applied(2, _job(5), committed=True)
    board.applying(1, _job(6))  # given up by the stop
    board.stopped()
    rows = status.snapshot().workers
    assert [r.thread_id for r in rows] == [None, None]
    assert [r.applying.gtid for r in rows] == ["", ""]
    assert rows[1].last_applied.gtid == f"{UUID}:5"
    board.applying(1, _job(7))  # a late note changes nothing once stopped
    assert status.snapshot().workers[0].applying.gtid == ""


def test_readers_in_other_threads_see_whole_rows_while_workers_note() -> None:
    status = StatusBoard()
    board = WorkerBoard(status, 1)
    done = threading.Event()
    seen: list[tuple[str, str]] = []

    def read() -> None:
        while not done.is_set():
            row = status.snapshot().workers[0]
            seen.append((row.applying.gtid, row.last_applied.gtid))

    reader = threading.Thread(target=read, name="status-reader")
    reader.start()
    try:
        for gno in range(1, 2001):
            job = _job(gno)
            board.applying(1, job)
            board.applied(1, job, committed=True)
    finally:
        done.set()
        reader.join()
    final = status.snapshot().workers[0]
    assert final.last_applied.gtid == f"{UUID}:2000" and final.applying.gtid == ""
    for applying, applied in seen:  # a row never shows a job applied before the last one
        if applying and applied:
            assert int(applying.rsplit(":", 1)[1]) >= int(applied.rsplit(":", 1)[1])
