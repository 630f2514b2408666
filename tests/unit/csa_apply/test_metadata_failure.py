"""The metadata store fails while a channel applies (a full disk, a dropped table): the
channel stops with ER_REPLICA_FATAL_ERROR in the database's words, every thread joined, what
committed stays committed; once the store works again, START REPLICA applies the rest and
stores the whole executed set. Both appliers (CSA and legacy MTA), on a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.metadata import MetadataStore, open_store
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.unit.csa_apply.harness import WAIT, ChannelRun, Replica, copy_into_relay_log, generate
from tests.unit.mta.harness import MtaReplica

SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=300, seed=3)


def _replica(kind: str, data_dir: Path) -> ChannelRun:
    return Replica(data_dir) if kind == "csa" else MtaReplica(data_dir)


@pytest.mark.parametrize("kind", ["csa", "mta"])
def test_a_failing_metadata_store_stops_the_channel_with_13117(tmp_path: Path, kind: str) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    store: MetadataStore = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    store.create_tables()
    replica = _replica(kind, tmp_path / "data")
    replica.executed = ExecutedGtids(settings=replica.settings, store=store)
    everything = f"{SPEC.server_uuid}:1-{len(transactions)}"
    try:
        store.destroy_tables()  # every write of the executed set fails from now on
        replica.start()
        assert replica.exited.wait(WAIT)
        replica.stop()
        [error] = replica.exits
        assert error is not None and error.number == 13117
        assert error.message.startswith("Fatal error: the replication metadata store failed: ")
        assert "gtid_executed" in error.message  # SQLite names the missing table
        committed = replica.executed.snapshot()
        store.create_tables()  # the store works again: START REPLICA goes on
        replica.exits.clear()
        replica.run_until_applied(everything)
        assert replica.content() == content
        stored = GtidSet.from_intervals(store.load_gtid_executed())
        assert stored == GtidSet.parse(everything) and committed.is_subset(stored)
    finally:
        replica.close()
        store.engine.dispose()
