"""Seconds_Behind_Source of a Change Stream Applier channel (mysql-reference §3 row 33): while
a backlog drains it is how long ago the source committed the oldest transaction not committed
yet, less the clock difference the receiver measured; once caught up, 0 with the receiver
connected and NULL without it."""

from __future__ import annotations

from pathlib import Path

from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log
from tests.unit.csa_apply.lag_drain import drain_with_holds, seconds_behind, stamped
from tests.unit.mta.harness import wait_until


def test_lag_follows_the_oldest_transaction_not_committed(tmp_path: Path) -> None:
    """A generated backlog (DDL, loads, then row changes with real dependencies) copied into
    the relay log, SQL thread only: the lag is 0 or a plausible age at every sample, exactly
    the age of each held transaction while it is held, and NULL once caught up."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=80, conflict_share=0.3,
                        clients=4, seed=23)  # fmt: skip
    transactions, _ = simulate(spec)
    transactions = stamped(transactions)
    files = write_binlogs(transactions, tmp_path / "source", server_uuid=spec.server_uuid)
    copy_into_relay_log(files, tmp_path / "data")
    with_rows = [t.gno for t in transactions if t.changes and t.ddl is None]
    held = [with_rows[len(with_rows) // 3], with_rows[2 * len(with_rows) // 3]]
    engine = RecordingEngine()
    replica = Replica(tmp_path / "data", workers=4, engine=engine)
    try:
        samples = drain_with_holds(
            replica, replica.status, engine, transactions, held,
            uuid=spec.server_uuid, clock_diff=120,
        )  # fmt: skip
        assert any(value is not None and value > 0 for value in samples)
    finally:
        replica.close()


def test_an_applier_that_applied_its_relay_log_is_caught_up(tmp_path: Path) -> None:
    """A short relay log applied: the applier catches up; NULL without a receiver, 0 with."""
    spec = WorkloadSpec(tables=1, rows_per_table=5, transactions=0, seed=3)
    transactions, _ = simulate(spec)
    files = write_binlogs(transactions, tmp_path / "source", server_uuid=spec.server_uuid)
    copy_into_relay_log(files, tmp_path / "data")
    replica = Replica(tmp_path / "data", workers=2)
    try:
        replica.start()
        assert replica.wait_for(f"{spec.server_uuid}:1-{len(transactions)}")
        assert wait_until(lambda: seconds_behind(replica.status) is None)
        assert seconds_behind(replica.status, receiver_connected=True) == 0
    finally:
        replica.close()
