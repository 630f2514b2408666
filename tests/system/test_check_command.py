"""``spark-replica check``: the key index compared with the Iceberg tables, from the command
line, on a data directory a stopped server left; refused beside a running one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spark_replica.applier_core.storage import RowChange
from spark_replica.applier_core.storage.key_index import LmdbKeyIndex
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.metadata import open_store
from spark_replica.server.config import load_config
from spark_replica.server.data_dir_lock import data_dir_lock
from tests.unit.storage.spark.test_engine_durability import T, Writer, setup_tables

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

SRC = Path(__file__).resolve().parents[2] / "src"


def check(data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [sys.executable, "-m", "spark_replica.server.cli", "check",
               "--data-dir", str(data_dir)]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def test_check_compares_the_key_index_with_the_tables(spark: Any, tmp_path: Path) -> None:
    config = load_config(data_dir=str(tmp_path / "data"), engine="spark", environ={})
    config.data_dir.mkdir(parents=True)
    store = open_store(config.effective_metadata_url)
    engine = SparkEngine(spark, config.warehouse, store, key_index=config.key_index)
    try:
        writer = Writer(engine)
        setup_tables(writer)
        writer.rows(T, [RowChange.insert((i, f"v{i}")) for i in range(10)])
        engine.flush()
        table_id = engine.durable_state().tables[T].id
    finally:
        engine.close()
        store.close()

    agreed = check(config.data_dir)
    assert agreed.returncode == 0, agreed.stderr
    assert "key index and tables agree: 0 of 2 table(s) differ" in agreed.stdout

    with LmdbKeyIndex(config.key_index) as index:  # a row the table lacks, same batch
        batch = index.batch
        rows = [(i, f"v{i}") for i in range(10)] + [(77, "ghost")]
        index.rebuild(table_id, rows, lambda row: row[:1])
        index.set_batch(batch)
    differed = check(config.data_dir)
    assert differed.returncode == 1, differed.stderr
    assert "d.t: 1 difference(s)" in differed.stdout
    assert "kind='extra', key=(77,)" in differed.stdout

    with data_dir_lock(config.data_dir):  # as a running server holds it
        refused = check(config.data_dir)
    assert refused.returncode == 2
    assert "is in use by another spark-replica process" in refused.stderr
    assert f"(pid {os.getpid()})" in refused.stderr
