"""Seconds_Behind_Source of the legacy applier (WL5569.SSS.3, T45; mysql-reference §3 row 33):
recorded at checkpoints from the source commit time of the oldest transaction not committed
(the head of the group assignment queue), less the clock difference the receiver measured;
once nothing is left to read or to apply, 0 with the receiver connected (T45) and NULL
without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.faults import RecordingEngine
from tests.unit.csa_apply.harness import copy_into_relay_log
from tests.unit.csa_apply.lag_drain import drain_with_holds, stamped
from tests.unit.csa_apply.test_conflicts import SPEC, Stream, _update
from tests.unit.mta.harness import MtaReplica


def test_single_threaded_lag_is_the_age_of_the_transaction_applied(tmp_path: Path) -> None:
    """A generated backlog with real dependencies, 0 workers, a checkpoint after every
    transaction: while a transaction is held the lag is its age (the queue was empty when
    it was assigned, so it is recorded at once), and the applier ends caught up (T45)."""
    spec = WorkloadSpec(tables=2, rows_per_table=20, transactions=60, conflict_share=0.3,
                        clients=4, seed=29)  # fmt: skip
    transactions, _ = simulate(spec)
    transactions = stamped(transactions)
    files = write_binlogs(transactions, tmp_path / "source", server_uuid=spec.server_uuid)
    copy_into_relay_log(files, tmp_path / "data")
    with_rows = [t.gno for t in transactions if t.changes and t.ddl is None]
    held = [with_rows[len(with_rows) // 3], with_rows[2 * len(with_rows) // 3]]
    engine = RecordingEngine()
    replica = MtaReplica(tmp_path / "data", workers=0, engine=engine)
    replica.settings.set_internal("replica_checkpoint_group", 1)
    try:
        drain_with_holds(
            replica, replica.status, engine, transactions, held,
            uuid=spec.server_uuid, clock_diff=-45,
        )  # fmt: skip
    finally:
        replica.close()


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_lag_follows_the_head_of_the_queue_while_it_drains(
    tmp_path: Path, commit_order: bool
) -> None:
    """Eight transactions that depend only on the setup, two workers, checkpoints every
    millisecond (WL5569.SSS.3): while T3 is held it is the head of the queue whatever
    commits after it, and the lag is its age; once it commits the head is T6, held too; once
    both commit the applier has caught up (T45)."""
    stream = Stream()
    table, rows = stream.table, stream.rows
    later = [stream.transaction(n, _update(table, rows[n], 1, 100 + n)) for n in range(1, 9)]
    transactions = stamped([*stream.setup, *later])
    files = write_binlogs(transactions, tmp_path / "source", server_uuid=SPEC.server_uuid)
    copy_into_relay_log(files, tmp_path / "data")
    engine = RecordingEngine()
    replica = MtaReplica(tmp_path / "data", workers=2, commit_order=commit_order, engine=engine)
    replica.settings.set_internal("replica_checkpoint_period", 1)
    try:
        drain_with_holds(
            replica, replica.status, engine, transactions, [later[2].gno, later[5].gno],
            uuid=SPEC.server_uuid, clock_diff=300,
        )  # fmt: skip
    finally:
        replica.close()
