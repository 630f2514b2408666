"""The replica's warehouse on S3-compatible object storage, its catalog in PostgreSQL.

Moto's S3 server runs on 127.0.0.1 with one bucket; a real PostgreSQL holds the metadata
database and so the Iceberg catalog. A ``spark-replica serve`` child configured with
``warehouse = "s3://<bucket>/warehouse"`` and the catalog properties of ``[spark.iceberg]``
(endpoint, path-style access, region, credentials) applies a generated relay log through a
CSA channel and answers ``SELECT`` with the generator's content. Then the tables' data and
metadata files are objects of the bucket and none is in the data directory; a second Spark
session configured only from ``iceberg.catalog_options`` and pyiceberg's ``SqlCatalog`` on
``iceberg.pyiceberg_properties`` read the same rows by name; the server restarted on the same
configuration answers the same; the secret key is in no log line.

The engine itself, on the same store: compaction rewrites a table's objects, snapshot expiry
deletes the ones no snapshot reads any more, and a dropped table's objects are deleted.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.applier_core.storage import RowChange, TableRef, TransactionRef
from spark_replica.applier_core.storage.spark import iceberg
from spark_replica.applier_core.storage.spark.engine import SparkEngine
from spark_replica.applier_core.storage.spark.jars import s3_available
from spark_replica.metadata.factory import open_store
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.object_store import (
    SECRET_ACCESS_KEY,
    S3Server,
    moto_available,
    running_s3,
)
from tests.helpers.process import server_process
from tests.helpers.server import connect
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(600)]

BUCKET = "replica-warehouse"
WAREHOUSE = f"s3://{BUCKET}/warehouse"
CATALOG = "replica"
CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=2 "
    "FOR CHANNEL 'c1'"
)
SPEC = WorkloadSpec(tables=2, rows_per_table=20, transactions=100, seed=5)
WAIT = 180.0
#: Files of an Iceberg table: none of them may be written to the local disk.
TABLE_FILES = ("*.parquet", "*.avro", "*.metadata.json")

Rows = list[tuple[object, ...]]


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    """Moto's S3 on loopback with the bucket ``BUCKET``; skips without the jar or moto."""
    if not s3_available():
        pytest.skip("the Iceberg AWS bundle jar is not installed (make install)")
    if not moto_available():
        pytest.skip("moto[server] is not installed")
    with running_s3(tmp_path / "moto") as server:
        server.create_bucket(BUCKET)
        yield server


def _config(metadata_url: str, properties: dict[str, str]) -> str:
    extra = "\n".join(f'"{key}" = "{value}"' for key, value in properties.items())
    return (
        f'metadata_url = "{metadata_url}"\n'
        f"[spark]\n"
        f'warehouse = "{WAREHOUSE}"\n'
        f'catalog = "{CATALOG}"\n'
        f"flush_interval = 0.1\n"
        f"[spark.iceberg]\n{extra}\n"
    )


def _rows(cursor: Any, table: str) -> Rows | None:
    """``SELECT *`` from ``table``; None while the table is not there yet (1146)."""
    try:
        cursor.execute(f"SELECT * FROM {table} ORDER BY id")
    except pymysql.err.ProgrammingError as error:
        if error.args[0] != 1146:
            raise
        return None
    return list(cursor.fetchall())


def _wait_for_rows(cursor: Any, table: str, expected: Rows) -> None:
    deadline = time.monotonic() + WAIT
    while _rows(cursor, table) != expected and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _rows(cursor, table) == expected


def _wait_applied(cursor: Any, everything: GtidSet) -> None:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        cursor.execute("SELECT @@global.gtid_executed")
        if everything.is_subset(GtidSet.parse(cursor.fetchone()[0] or "")):
            return
        time.sleep(0.2)
    raise AssertionError("the channel did not apply every transaction")


def _local_table_files(data: Path) -> list[Path]:
    return sorted(path for pattern in TABLE_FILES for path in data.rglob(pattern))


def _spark_rows(spark: Any, metadata_url: str, properties: dict[str, str], name: str) -> Rows:
    """``name``'s rows read by a session configured only with the catalog options."""
    reader = spark.newSession()
    options = iceberg.catalog_options(CATALOG, metadata_url, WAREHOUSE, properties)
    for key, value in options.items():
        reader.conf.set(key, value)
    return [tuple(r) for r in reader.sql(f"SELECT * FROM {CATALOG}.{name} ORDER BY id").collect()]


def _pyiceberg_rows(
    metadata_url: str, properties: dict[str, str], names: list[str]
) -> dict[str, Rows]:
    """The rows of the tables ``names`` read by pyiceberg's ``SqlCatalog``."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.utils.concurrent import ExecutorFactory

    reader = SqlCatalog(
        CATALOG, **iceberg.pyiceberg_properties(metadata_url, WAREHOUSE, properties)
    )
    try:
        found = {}
        for name in names:
            table = reader.load_table(tuple(name.split(".")))
            assert table.metadata.location.startswith(f"{WAREHOUSE}/t")
            arrow = table.scan().to_arrow()
            columns = [arrow.column(i).to_pylist() for i in range(arrow.num_columns)]
            found[name] = sorted(zip(*columns, strict=True), key=lambda r: r[0])
        return found
    finally:
        reader.engine.dispose()
        # pyiceberg reads through a thread pool of its own that it never shuts down.
        executor, ExecutorFactory._instance = ExecutorFactory._instance, None
        if executor is not None:
            executor.shutdown(wait=True)


def test_the_warehouse_on_s3_with_the_catalog_in_postgresql(
    s3: S3Server, postgres_url: str, spark: Any, tmp_path: Path
) -> None:
    transactions, content, files = generate(SPEC, tmp_path / "source")
    expected = {name: [tuple(r) for r in rows] for name, rows in content.items()}
    everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
    properties = s3.catalog_properties()
    data = tmp_path / "data"
    config = tmp_path / "replica.toml"
    config.write_text(_config(postgres_url, properties))

    with server_process(data, config, log_level="INFO") as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, data, "c1")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            _wait_applied(cursor, everything)
            cursor.execute("SHOW REPLICA STATUS FOR CHANNEL 'c1'")
            status = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
            assert status["Last_SQL_Errno"] == 0, status["Last_SQL_Error"]
            for name, rows in expected.items():
                _wait_for_rows(cursor, name, rows)
        assert server.stop() == 0

    # Every table's files are objects of the bucket, at <warehouse>/t<id>; none is local.
    keys = s3.keys(BUCKET, "warehouse/")
    assert any(k.endswith(".parquet") and "/data/" in k for k in keys), keys
    assert any(k.endswith(".metadata.json") and "/metadata/" in k for k in keys), keys
    assert {k.split("/")[1] for k in keys} >= {"t1", "t2"}, keys
    assert _local_table_files(data) == []
    log = server.log_path.read_text(errors="replace")
    assert "catalog properties" in log and SECRET_ACCESS_KEY not in log
    assert " ERROR [" not in log, log

    # Readers outside the server, by name, with the catalog properties alone.
    for name, rows in expected.items():
        assert _spark_rows(spark, postgres_url, properties, name) == rows
    assert _pyiceberg_rows(postgres_url, properties, sorted(expected)) == expected

    # The restarted server finds its tables in the bucket.
    with server_process(data, config) as again:
        with connect(again.port) as conn, conn.cursor() as cursor:
            for name, rows in expected.items():
                assert _rows(cursor, name) == rows
            cursor.execute("SELECT @@global.gtid_executed")
            assert everything.is_subset(GtidSet.parse(cursor.fetchone()[0] or ""))
        assert again.stop() == 0
    assert _local_table_files(data) == []


class _Map:
    def __init__(self, ref: TableRef) -> None:
        self.schema, self.table = ref.schema, ref.table


def _commit(engine: SparkEngine, gno: int, work: Any) -> None:
    session = engine.session("writer")
    session.begin(TransactionRef(f"{SPEC.server_uuid}:{gno}", gno))
    work(session)
    session.commit()


def _wait(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_compaction_expiry_and_drop_rewrite_and_delete_objects(
    s3: S3Server, postgres_url: str, spark: Any, tmp_path: Path
) -> None:
    orders = TableRef("shop", "orders")
    store = open_store(postgres_url)
    engine = SparkEngine(
        spark,
        WAREHOUSE,
        store,
        flush_interval=0.05,
        compact_after=2,
        snapshot_retention=0,
        key_index=str(tmp_path / "key-index"),
        catalog_properties=s3.catalog_properties(),
    )
    try:
        _commit(engine, 1, lambda s: s.apply_ddl("CREATE DATABASE shop", None))
        create = "CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(10))"
        _commit(engine, 2, lambda s: s.apply_ddl(create, "shop"))
        for i in range(4):
            change = RowChange.insert((i, "new"))
            _commit(engine, 3 + i, lambda s, c=change: s.apply_rows(_Map(orders), [c]))
            engine.flush()
        table_id = engine.durable_state().tables[orders].id
        name = engine.iceberg.sql_name(orders)
        operations = [r[0] for r in engine.spark.sql(
            f"SELECT operation FROM {name}.snapshots ORDER BY committed_at").collect()]  # fmt: skip
        # Expiry removed every snapshot before the one recorded when the last compaction
        # began (kept for a crash before the compaction is recorded); the compaction follows.
        assert operations[1:2] == ["replace"] and len(operations) <= 4, operations
        prefix = f"warehouse/t{table_id}/"
        live = {f.split(f"{BUCKET}/", 1)[1] for (f,) in engine.spark.sql(
            f"SELECT file_path FROM {name}.all_data_files").collect()}  # fmt: skip
        stored = {k for k in s3.keys(BUCKET, prefix) if "/data/" in k}
        assert stored == live, (stored, live)  # the files only expired snapshots read: gone
        assert sorted(engine.rows(orders)) == [(i, "new") for i in range(4)]  # type: ignore[type-var]

        _commit(engine, 7, lambda s: s.apply_ddl("DROP TABLE orders", "shop"))
        engine.flush()
        _wait(lambda: not s3.keys(BUCKET, prefix), "the dropped table's objects to be deleted")
    finally:
        engine.close()
        store.close()
    assert not list(tmp_path.rglob("*.parquet"))
