"""Queries through the server over tables the CSA replicated into Spark (issue: SELECT over
replicated tables transpiled to Spark SQL, typed as MySQL types, off the event loop, KILL
QUERY, large results streaming; SQLAlchemy and pandas.read_sql)."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.gtid import GtidSet
from spark_replica.server.storage import configured_components
from spark_replica.tools.generator.simulate import WorkloadSpec
from tests.helpers.server import (
    ROOT_PASSWORD,
    SERVER_THREADS,
    connect,
    no_leaks_but_a_servers,
    running_server,
)
from tests.unit.csa_apply.harness import copy_into_relay_log, generate

pytestmark = pytest.mark.spark

CHANNEL = (
    "CHANGE REPLICATION SOURCE TO SOURCE_HOST='h1', SOURCE_AUTO_POSITION=1, "
    "REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2, APPLIER_WORKER_COUNT=2 "
    "FOR CHANNEL 'c1'"
)
SPEC = WorkloadSpec(tables=2, rows_per_table=40, transactions=200, seed=5)
WAIT = 120.0
JDBC_JAR = Path("/usr/share/java/mariadb-java-client.jar")


@pytest.fixture(autouse=True)
def no_thread_leaks() -> Iterator[None]:
    """The module's server runs its Spark work in its query threads (``spark-query_N``) and
    its statements in its event loop's worker threads (``asyncio_N``); they live as long as
    the server and are joined when it stops (checked in ``replicated``). Any other thread a
    test leaves behind fails it."""
    yield from no_leaks_but_a_servers()


@pytest.fixture(scope="module")
def replicated(
    spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[int, dict[str, list[tuple[object, ...]]]]]:
    """A server whose channel has applied a generated workload into Spark and flushed it."""
    root = tmp_path_factory.mktemp("spark-queries")
    transactions, content, files = generate(SPEC, root / "source")
    with running_server(root / "data", configured_components) as server:
        with connect(server.port) as conn, conn.cursor() as cursor:
            cursor.execute(CHANNEL)
            copy_into_relay_log(files, root / "data", "c1")
            cursor.execute("START REPLICA SQL_THREAD FOR CHANNEL 'c1'")
            everything = GtidSet.parse(f"{SPEC.server_uuid}:1-{len(transactions)}")
            deadline = time.monotonic() + WAIT
            while True:  # polled as a DBA would
                cursor.execute("SELECT @@global.gtid_executed")
                if everything.is_subset(GtidSet.parse(cursor.fetchone()[0] or "")):
                    break
                assert time.monotonic() < deadline
                time.sleep(0.1)
            cursor.execute("STOP REPLICA SQL_THREAD FOR CHANNEL 'c1'")
        engine = server.server.components.engine  # type: ignore[attr-defined]
        engine.flush()
        yield server.port, content
    assert not [t.name for t in threading.enumerate() if t.name.startswith(SERVER_THREADS)]


def test_select_returns_the_replicated_rows(replicated: Any) -> None:
    port, content = replicated
    with connect(port, database="shop") as conn, conn.cursor() as cursor:
        for name, rows in content.items():
            table = name.split(".")[1]
            cursor.execute(f"SELECT * FROM {table} ORDER BY id")
            assert list(cursor.fetchall()) == [tuple(r) for r in rows]
        cursor.execute("SELECT COUNT(*), MIN(id) FROM shop.sbtest1 WHERE k > 0")
        count, smallest = cursor.fetchone()
        expected = [r for r in content["shop.sbtest1"] if r[1] > 0]  # type: ignore[operator]
        assert (count, smallest) == (len(expected), min(r[0] for r in expected))


def test_a_bare_count_is_the_row_count_with_mysql_column_metadata(replicated: Any) -> None:
    """``SELECT COUNT(*) FROM t`` is answered from the tables' metadata at the query's
    snapshot (``bare_count``): the same count and the same column as a scan gives."""
    port, content = replicated
    with connect(port) as conn, conn.cursor() as cursor:
        for name, rows in content.items():
            cursor.execute(f"SELECT COUNT(*) FROM {name}")
            assert cursor.fetchall() == ((len(rows),),)
            assert [d[:2] for d in cursor.description] == [
                ("COUNT(*)", pymysql.constants.FIELD_TYPE.LONGLONG)
            ]
            cursor.execute(f"SELECT COUNT(*) AS n FROM {name} AS x")
            assert cursor.fetchall() == ((len(rows),),) and cursor.description[0][0] == "n"
            cursor.execute(f"SELECT COUNT(*) FROM {name} WHERE id IS NOT NULL")  # a scan
            assert cursor.fetchall() == ((len(rows),),)


def test_result_columns_carry_mysql_types(replicated: Any) -> None:
    port, _ = replicated
    with connect(port) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT id, c, CAST(id AS DECIMAL(10,2)) AS d, CAST(-1 AS UNSIGNED) AS u, "
            "id > 1 AS flag FROM shop.sbtest1 ORDER BY id LIMIT 1"
        )
        types = {d[0]: d[1] for d in cursor.description}
        row = cursor.fetchone()
    assert types == {
        "id": pymysql.constants.FIELD_TYPE.LONG,
        "c": pymysql.constants.FIELD_TYPE.STRING,  # CHAR(120), as MySQL sends it
        "d": pymysql.constants.FIELD_TYPE.NEWDECIMAL,
        "u": pymysql.constants.FIELD_TYPE.NEWDECIMAL,
        "flag": pymysql.constants.FIELD_TYPE.LONGLONG,
    }
    assert isinstance(row[2], Decimal) and row[3] == 18446744073709551615


def test_errors_have_mysql_numbers(replicated: Any) -> None:
    port, _ = replicated
    with connect(port) as conn, conn.cursor() as cursor:
        for sql, code in [
            ("SELECT * FROM shop.nosuch", 1146),
            ("SELECT * FROM sbtest1", 1046),
            ("SELECT nosuch FROM shop.sbtest1", 1054),
        ]:
            with pytest.raises(pymysql.err.MySQLError) as caught:
                cursor.execute(sql)
            assert caught.value.args[0] == code, (sql, caught.value.args)


def test_sqlalchemy_and_pandas_read_the_tables(replicated: Any) -> None:
    import pandas
    import sqlalchemy

    port, content = replicated
    engine = sqlalchemy.create_engine(f"mysql+pymysql://root:{ROOT_PASSWORD}@127.0.0.1:{port}/shop")
    try:
        frame = pandas.read_sql("SELECT id, k FROM sbtest2 ORDER BY id", engine)
        assert list(frame.itertuples(index=False, name=None)) == [
            (r[0], r[1]) for r in content["shop.sbtest2"]
        ]
        columns = sqlalchemy.inspect(engine).get_columns("sbtest2", schema="shop")
        assert [c["name"] for c in columns] == ["id", "k", "c", "pad"]
    finally:
        engine.dispose()


def test_kill_query_cancels_the_spark_job(replicated: Any) -> None:
    """A query that would run for hours is cancelled by KILL QUERY from another connection:
    the client gets an error at once and the server goes on serving."""
    port, _ = replicated
    heavy = connect(port)
    heavy_id = heavy.thread_id()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            with heavy.cursor() as cursor:
                cursor.execute(
                    "SELECT COUNT(*) FROM shop.sbtest1 a, shop.sbtest1 b, shop.sbtest1 c, "
                    "shop.sbtest1 d, shop.sbtest1 e, shop.sbtest1 f WHERE a.k + b.k + c.k + "
                    "d.k + e.k + f.k = -1"
                )
        except BaseException as error:
            failure.append(error)

    thread = threading.Thread(target=run, name="heavy-query")
    thread.start()
    try:
        with connect(port) as conn, conn.cursor() as cursor:
            deadline = time.monotonic() + WAIT
            while not _spark_job_running(replicated):
                assert time.monotonic() < deadline
                time.sleep(0.05)
            started = time.monotonic()
            cursor.execute(f"KILL QUERY {heavy_id}")
            thread.join(WAIT)
            assert not thread.is_alive()
            assert time.monotonic() - started < 30
            while _spark_job_running(replicated):  # the Spark job is cancelled, not orphaned
                assert time.monotonic() - started < 30
                time.sleep(0.05)
            cursor.execute("SELECT COUNT(*) FROM shop.sbtest1")
            assert cursor.fetchone()[0] > 0
        assert failure and isinstance(failure[0], pymysql.err.MySQLError)
        assert failure[0].args == (1317, "Query execution was interrupted")
    finally:
        heavy.close()


def _spark_job_running(replicated: Any) -> bool:
    """Whether Spark runs a job now (only the heavy query runs one in this test)."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    assert session is not None
    return bool(session.sparkContext.statusTracker().getActiveJobsIds())


@pytest.mark.clients
def test_the_mariadb_cli_queries_the_tables(replicated: Any) -> None:
    """The DBA's client: batch output of a SELECT answered by Spark."""
    from tests.wire.test_clients_cli import run_client, table

    mariadb = shutil.which("mariadb")
    if mariadb is None:
        pytest.skip("the mariadb client is not installed")
    port, content = replicated
    done = run_client(
        mariadb, port, "--batch", "-e", "SELECT id, k FROM shop.sbtest2 ORDER BY id LIMIT 3"
    )
    assert done.returncode == 0, done.stderr
    expected = [["id", "k"], *([str(r[0]), str(r[1])] for r in content["shop.sbtest2"][:3])]
    assert table(done.stdout) == expected


@pytest.mark.clients
def test_jdbc_queries_the_tables(replicated: Any, tmp_path: Path) -> None:
    """MariaDB Connector/J (java/QueryClient.java): values and the column types JDBC reports."""
    javac, java, jar = shutil.which("javac"), shutil.which("java"), JDBC_JAR
    if javac is None or java is None or not jar.is_file():
        pytest.skip("needs javac, java and MariaDB Connector/J (mariadb-java-client.jar)")
    source = Path(__file__).parent / "java" / "QueryClient.java"
    compiled = subprocess.run([javac, "-cp", str(jar), "-d", str(tmp_path), str(source)],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    port, content = replicated
    query = "SELECT id, c, CAST(k AS DECIMAL(12,2)) AS d FROM shop.sbtest1 ORDER BY id LIMIT 2"
    done = subprocess.run(
        [java, "-cp", f"{tmp_path}:{jar}", "QueryClient", str(port), ROOT_PASSWORD, query],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "types id:INTEGER c:CHAR d:DECIMAL"  # c is CHAR(120), as from MySQL
    first = content["shop.sbtest1"][0]
    assert lines[1] == f"row {first[0]} {first[2]} {first[1]}.00"


def test_a_large_result_streams_in_batches(replicated: Any) -> None:
    """More rows than one fetch from Spark (``FETCH_ROWS``) arrive whole and in order,
    read by the client as a stream (an unbuffered cursor)."""
    from spark_replica.server.user_queries import FETCH_ROWS

    port, content = replicated
    ids = sorted(r[0] for r in content["shop.sbtest1"])
    with connect(port, cursorclass=pymysql.cursors.SSCursor) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT a.id, b.id, c.id FROM shop.sbtest1 a, shop.sbtest1 b, shop.sbtest1 c "
            "ORDER BY a.id, b.id, c.id"
        )
        count, first, last = 0, None, None
        for row in cursor:
            first = first or row
            last = row
            count += 1
    assert count == len(ids) ** 3 > 10 * FETCH_ROWS
    assert first == (ids[0],) * 3 and last == (ids[-1],) * 3
