"""The MySQL → Spark type mapping through real Spark: rows of edge values written as parquet
and read back must give the engine's values again (the documented lossy ones aside), and the
Spark DDL must describe the files Spark wrote."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from spark_replica.applier_core.storage.spark.types import (
    from_arrow_rows,
    spark_columns_ddl,
    spark_schema,
    to_arrow_table,
)
from tests.unit.storage.spark.test_types import (
    EDGE_COLUMNS,
    EDGE_ROWS,
    assert_same_rows,
    expected_rows,
)

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def written(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The edge rows written as parquet by Spark (once for the module)."""
    path = tmp_path_factory.mktemp("types") / "edge"
    table = to_arrow_table(EDGE_COLUMNS, EDGE_ROWS)
    frame = spark.createDataFrame(table, schema=spark_schema(EDGE_COLUMNS))
    frame.write.parquet(str(path))
    yield path


def test_values_round_trip_through_parquet(spark: Any, written: Path) -> None:
    back = spark.read.parquet(str(written)).orderBy("id").toArrow()
    rows = from_arrow_rows(EDGE_COLUMNS, back)
    assert_same_rows(EDGE_COLUMNS, rows, expected_rows(EDGE_COLUMNS, EDGE_ROWS))


@pytest.fixture
def catalog(spark: Any) -> Iterator[None]:
    """Lets a test use Spark's catalog without leaving its warehouse directory behind: the
    catalog creates it (under the working directory unless configured) on first use."""
    warehouse = Path(urlparse(spark.conf.get("spark.sql.warehouse.dir")).path)
    existed = warehouse.exists()
    yield
    if not existed and warehouse.is_dir() and not any(warehouse.iterdir()):
        warehouse.rmdir()


@pytest.mark.usefixtures("catalog")
def test_the_ddl_describes_the_files(spark: Any, written: Path) -> None:
    name = "spark_types_round_trip"
    spark.sql(
        f"CREATE TABLE {name} ({spark_columns_ddl(EDGE_COLUMNS)}) "
        f"USING parquet LOCATION '{written}'"
    )
    try:
        frame = spark.table(name)
        declared = [(f.name, f.dataType) for f in spark_schema(EDGE_COLUMNS).fields]
        assert [(f.name, f.dataType) for f in frame.schema.fields] == declared
        assert [f.dataType for f in spark.read.parquet(str(written)).schema.fields] == [
            dataType for _, dataType in declared
        ]
        rows = from_arrow_rows(EDGE_COLUMNS, frame.orderBy("id").toArrow())
        assert_same_rows(EDGE_COLUMNS, rows, expected_rows(EDGE_COLUMNS, EDGE_ROWS))
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_arrow_frames_give_what_create_data_frame_gives_in_fewer_jvm_calls(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import py4j.clientserver

    from spark_replica.applier_core.storage.spark.arrow_frames import arrow_frames

    table = to_arrow_table(EDGE_COLUMNS, EDGE_ROWS)
    schema = spark_schema(EDGE_COLUMNS)
    frames = arrow_frames(spark)
    calls = []
    send = py4j.clientserver.ClientServerConnection.send_command
    this_thread = threading.get_ident()

    def counted(connection: Any, command: str) -> Any:
        if threading.get_ident() == this_thread:  # not another test's engine threads
            calls.append(command)
        return send(connection, command)

    monkeypatch.setattr(py4j.clientserver.ClientServerConnection, "send_command", counted)
    ours = frames.frame(table, schema)
    made_by_frames = len(calls)
    theirs = spark.createDataFrame(table, schema=schema)
    made_by_spark = len(calls) - made_by_frames
    monkeypatch.undo()
    assert ours.schema == theirs.schema
    assert ours.orderBy("id").toArrow() == theirs.orderBy("id").toArrow()
    assert made_by_frames <= 4 < made_by_spark
