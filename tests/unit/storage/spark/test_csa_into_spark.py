"""Generated workloads applied by the Change Stream Applier into the Spark engine end in
exactly the source's content, in Spark and after a restart (issue: "a generated workload with
DDL, updates, deletes ... replicates through the CSA into Spark with exactly the expected
content"), tables without a primary key among them; relay log files are purged only once
their transactions are durable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.metadata.factory import open_store
from spark_replica.tools.generator.simulate import Dependency, WorkloadSpec
from tests.unit.csa_apply.harness import Replica, copy_into_relay_log, engine_content, generate

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("commit_order", [True, False], ids=["rpco", "no-rpco"])
def test_a_generated_workload_lands_in_spark(
    spark: Any, tmp_path: Path, commit_order: bool
) -> None:
    spec = WorkloadSpec(tables=3, keyless_tables=1, rows_per_table=20, transactions=300,
                        conflict_share=0.3,
                        ddl_every=70, rotate_every=60, dependency=Dependency.WRITESET,
                        seed=3)  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    store = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    root = str(tmp_path / "warehouse")
    engine = SparkEngine(spark, root, store, flush_interval=0.05, compact_after=4)
    replica = Replica(tmp_path / "data", workers=4, commit_order=commit_order, engine=engine)
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert replica.content() == content
        engine.flush()
        # Every relay log file but the active one is purged once durable.
        assert replica.relay_logs.get(replica.channel).index.names() == [files[-1].name]
    finally:
        replica.close()
        engine.close()
    again = SparkEngine(spark, root, store)
    try:
        assert engine_content(again) == content
        assert again.durable_state().gtids == ((spec.server_uuid, "", 1, len(transactions)),)
    finally:
        again.close()
        store.close()


@pytest.mark.parametrize("workers", [0, 4])
def test_the_legacy_applier_lands_in_spark_too(spark: Any, tmp_path: Path, workers: int) -> None:
    """APPLIER_VERSION=1 (0 workers: single-threaded) on the same engine: the same content,
    and relay log files purged only once durable."""
    from tests.unit.mta.harness import MtaReplica

    spec = WorkloadSpec(tables=3, keyless_tables=1, rows_per_table=20, transactions=200,
                        ddl_every=70, rotate_every=60, dependency=Dependency.WRITESET,
                        seed=4)  # fmt: skip
    transactions, content, files = generate(spec, tmp_path / "source")
    copy_into_relay_log(files, tmp_path / "data")
    store = open_store(f"sqlite:///{tmp_path / 'metadata.db'}")
    root = str(tmp_path / "warehouse")
    engine = SparkEngine(spark, root, store, flush_interval=0.05, compact_after=4)
    replica = MtaReplica(tmp_path / "data", workers=workers, engine=engine)
    try:
        replica.run_until_applied(f"{spec.server_uuid}:1-{len(transactions)}")
        assert engine_content(engine) == content
        engine.flush()
        assert replica.relay_logs.get(replica.channel).index.names() == [files[-1].name]
    finally:
        replica.close()
        engine.close()
    again = SparkEngine(spark, root, store)
    try:
        assert engine_content(again) == content
    finally:
        again.close()
        store.close()
