"""Commit order, retries and failures of the Change Stream Applier (T56, T57, T66, T67, T68)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import EngineError
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.faults import Faults, RecordingEngine
from tests.unit.csa_apply.harness import WAIT, Replica, copy_into_relay_log, generate

SPEC = WorkloadSpec(tables=4, rows_per_table=50, transactions=300, conflict_share=0.0,
                    dependency=Dependency.WRITESET, clients=16, seed=21)  # fmt: skip


def _replica(tmp_path: Path, *, commit_order: bool, workers: int = 8) -> tuple[Replica, int]:
    transactions, _, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=workers, commit_order=commit_order,
                      engine=RecordingEngine())  # fmt: skip
    return replica, len(transactions)


def _engine(replica: Replica) -> RecordingEngine:
    assert isinstance(replica.engine, RecordingEngine)
    return replica.engine


def test_t56_with_commit_order_commits_follow_the_relay_log(tmp_path: Path) -> None:
    replica, count = _replica(tmp_path, commit_order=True)
    _engine(replica).faults.slow_commits = frozenset(range(2, count, 3))
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{count}")
        replica.stop()
        assert _engine(replica).commits == list(range(1, count + 1))
    finally:
        replica.close()


def test_t57_without_commit_order_each_transaction_commits_once(tmp_path: Path) -> None:
    replica, count = _replica(tmp_path, commit_order=False)
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{count}")
        replica.stop()
        assert sorted(_engine(replica).commits) == list(range(1, count + 1))
    finally:
        replica.close()


@pytest.mark.parametrize("phase", ["apply", "commit"])
def test_t67_t68_transient_errors_are_retried_in_order(tmp_path: Path, phase: str) -> None:
    replica, count = _replica(tmp_path, commit_order=True)
    faults = _engine(replica).faults
    table = faults.apply if phase == "apply" else faults.commit
    for gno in (40, 41, 150):
        table[gno] = [Faults.timeout() for _ in range(3)]
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{count}")
        replica.stop()
        assert replica.exits == []
        assert _engine(replica).commits == list(range(1, count + 1))
        assert replica.status.snapshot().count_transactions_retries == 9
        workers = replica.status.snapshot().workers
        assert sum(w.metrics["transactions_retried"] for w in workers) == 9
    finally:
        replica.close()


def test_t68_more_transient_errors_than_retries_stop_the_channel(tmp_path: Path) -> None:
    replica, _ = _replica(tmp_path, commit_order=True)
    replica.settings.set_internal("replica_transaction_retries", 3)
    _engine(replica).faults.apply[60] = [Faults.timeout() for _ in range(4)]
    try:
        replica.start()
        assert replica.exited.wait(WAIT)
        replica.stop()
        error = replica.exits[0]
        assert error is not None and error.number == 1205
        assert "Lock wait timeout exceeded; try restarting transaction" in error.message
        assert f"failed executing transaction '{SPEC.server_uuid}:60'" in error.message
        assert _engine(replica).commits == list(range(1, 60))
    finally:
        replica.close()


def test_t66_a_fatal_error_lets_nothing_after_it_commit(tmp_path: Path) -> None:
    replica, _ = _replica(tmp_path, commit_order=True)
    fatal = EngineError.of(ErrorCode.KEY_NOT_FOUND, "sbtest1")
    _engine(replica).faults.apply[100] = [fatal, fatal]  # again after waiting for the head
    try:
        replica.start()
        assert replica.exited.wait(WAIT)
        replica.stop()
        error = replica.exits[0]
        assert error is not None and error.number == 1032
        assert _engine(replica).commits == list(range(1, 100))
        assert replica.executed.snapshot() == GtidSet.parse(f"{SPEC.server_uuid}:1-99")
    finally:
        replica.close()


@pytest.mark.parametrize(
    "code", [ErrorCode.KEY_NOT_FOUND, ErrorCode.NO_SUCH_TABLE, ErrorCode.BAD_DB_ERROR]
)
def test_an_error_an_earlier_transaction_may_cure_is_tried_again_at_the_head(
    tmp_path: Path, code: ErrorCode
) -> None:
    """A row, table or database missing may be an earlier transaction's doing when the
    dependency data is wrong (a row event ran before the CREATE TABLE it needs): the job
    tries once more when every earlier transaction has ended, and then succeeds."""
    replica, count = _replica(tmp_path, commit_order=True)
    _engine(replica).faults.apply[100] = [EngineError(code, "missing", None)]
    try:
        replica.start()
        assert replica.wait_for(f"{SPEC.server_uuid}:1-{count}")
        replica.stop()
        assert replica.exits == []
        assert _engine(replica).commits == list(range(1, count + 1))
    finally:
        replica.close()
