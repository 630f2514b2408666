"""The serial applier: the reference the parallel appliers are checked against."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_replica.applier_core.apply.serial import SerialApplier
from spark_replica.applier_core.apply.transaction import ApplyError
from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.progress import ExecutedGtids
from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from spark_replica.tools.generator.simulate import WorkloadSpec, simulate
from spark_replica.tools.generator.writer import write_binlogs
from tests.unit.csa_apply.harness import engine_content


@pytest.mark.parametrize("schema", ["sbtest", "alltypes"])
@pytest.mark.parametrize("compression", [False, True])
def test_generated_workload_ends_in_the_expected_content(
    tmp_path: Path, schema: str, compression: bool
) -> None:
    spec = WorkloadSpec(schema=schema, transactions=200, rows_per_table=10, ddl_every=60,
                        rotate_every=70, large_share=0.05, large_size=30, seed=4)  # fmt: skip
    transactions, content = simulate(spec)
    files = write_binlogs(transactions, tmp_path, server_uuid=spec.server_uuid,
                          compression=compression)  # fmt: skip
    engine = InMemoryEngine()
    result = SerialApplier(engine).apply_files(files)
    assert result.committed == len(transactions) and result.truncated == 0
    assert engine_content(engine) == content


def test_executed_transactions_are_skipped(tmp_path: Path) -> None:
    spec = WorkloadSpec(transactions=40, rows_per_table=5, seed=2)
    transactions, content = simulate(spec)
    files = write_binlogs(transactions, tmp_path, server_uuid=spec.server_uuid)
    engine = InMemoryEngine()
    executed = ExecutedGtids()
    first = SerialApplier(engine, executed).apply_files(files)
    again = SerialApplier(engine, executed).apply_files(files)
    assert (again.committed, again.skipped) == (0, first.committed)
    assert executed.snapshot() == GtidSet.parse(f"{spec.server_uuid}:1-{len(transactions)}")
    assert engine_content(engine) == content


def test_a_key_error_names_the_table_the_gtid_and_the_event(tmp_path: Path) -> None:
    spec = WorkloadSpec(transactions=20, rows_per_table=5, seed=3)
    transactions, _ = simulate(spec)
    files = write_binlogs(transactions, tmp_path, server_uuid=spec.server_uuid)
    engine = InMemoryEngine()
    SerialApplier(engine).apply_files(files)
    with pytest.raises(ApplyError) as info:  # the same stream again, without skipping
        SerialApplier(engine).apply_files(files)
    error = info.value
    assert error.code == 1007  # CREATE DATABASE of the first transaction: it exists
    assert not error.transient
    assert "Can't create database 'shop'; database exists" in error.detail
    assert engine.rows(TableRef("shop", "sbtest1"))
