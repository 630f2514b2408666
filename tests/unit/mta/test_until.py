"""START REPLICA UNTIL with the legacy applier: every form (issue text §6; mysql-reference
§4.2; WL5569.REC for SQL_AFTER_MTS_GAPS). The applier stops at a transaction boundary with no
error, exactly where the condition says, with the content of the transactions before it."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from spark_replica.applier_core.apply.serial import SerialApplier
from spark_replica.applier_core.binlog.events import Gtid, Xid
from spark_replica.applier_core.binlog.file import BinlogFileReader
from spark_replica.applier_core.channels.config import Until, UntilKind
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.storage import EngineError, InMemoryEngine
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import WAIT, copy_into_relay_log, engine_content, generate
from tests.unit.csa_apply.test_conflicts import SPEC as STREAM_SPEC
from tests.unit.csa_apply.test_conflicts import Stream, _update
from tests.unit.mta.harness import MtaReplica, channel_threads, wait_until

SPEC = WorkloadSpec(tables=3, rows_per_table=20, transactions=120, rotate_every=50, seed=5)
UUID = SPEC.server_uuid

#: (workers, replica_preserve_commit_order): the multi-threaded applier with and without
#: commit order, and the single-threaded one.
MODES = [(4, True), (4, False), (0, False)]
MODE_IDS = ["mta-rpco", "mta", "single"]


class Layout:
    """Where each transaction of the relay log starts and ends: ``gno -> (file, start, end)``."""

    def __init__(self, files: list[Path]) -> None:
        self.at: dict[int, tuple[str, int, int]] = {}
        for path in files:
            gno = 0
            for position, end, event in BinlogFileReader(path):
                if isinstance(event, Gtid):
                    gno, start = event.gno, position
                elif isinstance(event, Xid):
                    self.at[gno] = (path.name, start, end)


def _content(files: list[Path], last: int) -> object:
    """What applying transactions 1..``last`` in relay-log order leaves."""
    skip = ExecutedGtids()
    for gno in range(last + 1, last + 2 * SPEC.transactions):  # every later one
        skip.add(UUID, "", gno)
    engine = InMemoryEngine()
    SerialApplier(engine, skip).apply_files(files)
    return engine_content(engine)


def _replica(tmp_path: Path, workers: int, commit_order: bool) -> tuple[MtaReplica, list[Path]]:
    _, _, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = MtaReplica(tmp_path / "data", workers=workers, commit_order=commit_order)
    return replica, files


def _run_until(replica: MtaReplica, until: Until) -> None:
    """START REPLICA SQL_THREAD UNTIL ...: the applier stops by itself, without an error, and
    leaves no thread behind."""
    replica.start(until)
    assert replica.exited.wait(WAIT), "the applier did not stop at its UNTIL condition"
    replica.stop()
    assert replica.exits[-1] is None
    assert channel_threads() == []


def _applied(replica: MtaReplica) -> GtidSet:
    return replica.executed.snapshot()


def _first(last: int) -> GtidSet:
    return GtidSet.parse(f"{UUID}:1-{last}")


@pytest.mark.parametrize(("workers", "commit_order"), MODES, ids=MODE_IDS)
def test_sql_before_gtids_stops_before_the_first_of_the_set(
    tmp_path: Path, workers: int, commit_order: bool
) -> None:
    """SQL_BEFORE_GTIDS='uuid:37-40': 1..36 applied, nothing from 37 on (T38's form)."""
    replica, files = _replica(tmp_path, workers, commit_order)
    try:
        _run_until(replica, Until(UntilKind.SQL_BEFORE_GTIDS, gtids=f"{UUID}:37-40"))
        assert _applied(replica) == _first(36)
        assert engine_content(replica.engine) == _content(files, 36)
    finally:
        replica.close()


@pytest.mark.parametrize(("workers", "commit_order"), MODES, ids=MODE_IDS)
def test_sql_after_gtids_stops_once_the_set_is_applied(
    tmp_path: Path, workers: int, commit_order: bool
) -> None:
    """SQL_AFTER_GTIDS='uuid:1-40': the workers apply exactly 1..40, nothing after (T37's
    form); the positions end at transaction 40."""
    replica, files = _replica(tmp_path, workers, commit_order)
    layout = Layout(files)
    try:
        _run_until(replica, Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{UUID}:1-40"))
        assert _applied(replica) == _first(40)
        assert engine_content(replica.engine) == _content(files, 40)
        file, _, end = layout.at[40]
        status = replica.status.snapshot()
        assert (status.relay_log_file, status.relay_log_pos) == (file, end)
    finally:
        replica.close()


@pytest.mark.parametrize("kind", [UntilKind.SOURCE_POS, UntilKind.RELAY_POS])
@pytest.mark.parametrize("where", ["inside", "at-end"])
@pytest.mark.parametrize(("workers", "commit_order"), MODES, ids=MODE_IDS)
def test_a_position_stops_after_the_transaction_that_reaches_it(
    tmp_path: Path, workers: int, commit_order: bool, kind: UntilKind, where: str
) -> None:
    """SOURCE_LOG_FILE/POS and RELAY_LOG_FILE/POS: a position inside transaction 75 (in the
    second file) or at its very end applies 1..75: the transaction that reaches the
    position is applied whole, the next is not."""
    replica, files = _replica(tmp_path, workers, commit_order)
    file, start, end = Layout(files).at[75]
    assert file == files[1].name  # the condition's file is not the first one
    pos = start + 10 if where == "inside" else end
    try:
        _run_until(replica, Until(kind, log_file=file, log_pos=pos))
        assert _applied(replica) == _first(75)
        assert engine_content(replica.engine) == _content(files, 75)
    finally:
        replica.close()


def test_a_later_file_is_past_the_position(tmp_path: Path) -> None:
    """A position beyond the end of the first file is passed by the first transaction of the
    second: it is applied, and nothing after it."""
    replica, files = _replica(tmp_path, 4, True)
    layout = Layout(files)
    first_of_second = min(g for g, (f, _, _) in layout.at.items() if f == files[1].name)
    try:
        _run_until(replica, Until(UntilKind.SOURCE_POS, log_file=files[0].name, log_pos=10**9))
        assert _applied(replica) == _first(first_of_second)
    finally:
        replica.close()


def test_conditions_already_met_stop_the_applier_at_once(tmp_path: Path) -> None:
    """A second START with a condition already met applies nothing: SQL_BEFORE_GTIDS naming
    an executed GTID, SQL_AFTER_GTIDS of executed GTIDs, a source or relay position behind
    the applier's own."""
    replica, files = _replica(tmp_path, 4, True)
    file, _, end = Layout(files).at[20]
    try:
        _run_until(replica, Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{UUID}:1-30"))
        assert _applied(replica) == _first(30)
        for until in (
            Until(UntilKind.SQL_BEFORE_GTIDS, gtids=f"{UUID}:10,{UUID}:90"),
            Until(UntilKind.SQL_AFTER_GTIDS, gtids=f"{UUID}:5-25"),
            Until(UntilKind.SOURCE_POS, log_file=file, log_pos=end),
            Until(UntilKind.RELAY_POS, log_file=file, log_pos=end),
        ):
            _run_until(replica, until)
            assert _applied(replica) == _first(30), until
    finally:
        replica.close()


def test_a_file_of_another_name_stops_the_applier(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A condition on a file of another base name can never be met: the applier stops at its
    first check and says why in the error log."""
    replica, _ = _replica(tmp_path, 2, True)
    try:
        _run_until(replica, Until(UntilKind.RELAY_POS, log_file="other.000001", log_pos=4))
        assert _applied(replica) == _first(1)  # judged once the first one is read
        assert "other.000001" in caplog.text
    finally:
        replica.close()


def test_sql_after_mts_gaps_without_gaps_stops_at_once(tmp_path: Path) -> None:
    """No gap in the worker rows: nothing to fill; the applier stops at once and
    Until_Condition reads DONE."""
    replica, _ = _replica(tmp_path, 4, False)
    try:
        _run_until(replica, Until(UntilKind.SQL_AFTER_MTS_GAPS))
        assert _applied(replica) == GtidSet()
        assert replica.status.snapshot().until_condition == "DONE"
    finally:
        replica.close()


def test_sql_after_mts_gaps_fills_the_gaps_and_stops(tmp_path: Path) -> None:
    """WL5569.REC: T1 fails after T2 and T3, later and independent, committed on the other
    workers: the stop leaves gaps in the worker rows. START REPLICA UNTIL SQL_AFTER_MTS_GAPS
    applies T1 only (T2 and T3 are executed) and stops where the furthest worker was, before
    T4 (which depends on T1); Until_Condition reads DONE and the rows have no gap left. A
    plain START then applies T4."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    t1 = stream.transaction(1, _update(table, rows[1], 1, 111))
    t2 = stream.transaction(2, _update(table, rows[2], 1, 222))
    t3 = stream.transaction(3, _update(table, rows[3], 1, 333))
    t4 = replace(stream.transaction(4, _update(table, rows[4], 1, 444)),
                 last_committed=t1.sequence_number)  # fmt: skip
    stream.write(tmp_path, t1, t2, t3, t4)
    uuid = STREAM_SPEC.server_uuid
    engine = RecordingEngine()
    release = engine.faults.hold_apply[t1.gno] = threading.Event()
    engine.faults.commit[t1.gno] = [EngineError.of(ErrorCode.KEY_NOT_FOUND, "sbtest1")]
    # Three workers: T2 and T3 each find an idle one while T1 is held on its own.
    replica = MtaReplica(tmp_path / "data", workers=3, commit_order=False, engine=engine)
    try:
        replica.start()
        assert replica.wait_for(f"{uuid}:{t2.gno}-{t3.gno}")
        release.set()
        assert replica.exited.wait(WAIT)
        replica.stop()
        error = replica.exits[-1]
        assert error is not None and error.number == 1032
        assert any(w.has_gaps for w in replica.checkpoints[-1].workers)
        assert not replica.executed.contains(uuid, "", t1.gno)

        _run_until(replica, Until(UntilKind.SQL_AFTER_MTS_GAPS))
        assert replica.status.snapshot().until_condition == "DONE"
        assert replica.executed.snapshot() == GtidSet.parse(f"{uuid}:1-{t3.gno}")
        assert not any(w.has_gaps for w in replica.checkpoints[-1].workers)
        assert engine.commits.count(t2.gno) == 1 and engine.commits.count(t3.gno) == 1

        replica.start()
        assert replica.wait_for(f"{uuid}:1-{t4.gno}")
        assert wait_until(lambda: replica.rows("shop", "sbtest1")[3][1] == 444)
    finally:
        replica.close()
    assert [r[1] for r in replica.rows("shop", "sbtest1")[:4]] == [111, 222, 333, 444]
