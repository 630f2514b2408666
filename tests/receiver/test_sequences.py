"""MariaDB sequences replicated from a real MariaDB source: sequences are created (every
option: INCREMENT BY, MINVALUE, MAXVALUE, START, CYCLE, CACHE, NOCACHE; CREATE OR REPLACE;
CREATE TABLE ... SEQUENCE=1; CREATE TABLE ... LIKE), used (NEXTVAL in INSERTs, several calls
in one statement, through a cycle, in a transaction rolled back; SETVAL; INSERT into the
sequence), altered (ALTER SEQUENCE with and without RESTART), renamed and dropped (DROP
SEQUENCE, DROP TABLE) while a replica follows. Both appliers keep the channel running and end
with every sequence's row and every table's rows equal to the source's; SHOW FULL TABLES,
information_schema.TABLES and SHOW CREATE SEQUENCE answer as MariaDB does, and NEXTVAL on the
replica is refused with 1235. The Spark engine answers ``SELECT * FROM`` each sequence through
the MySQL protocol as the source does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine, TableRef
from spark_replica.server.storage import configured_components
from tests.helpers.live_source import caught_up, following, fresh_source, recorded
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT
from tests.helpers.server import connect, no_leaks_but_a_servers, running_server

DB = "seqs"
#: Run on the source one at a time, in order (the mariadb CLI's -e).
WORKLOAD = (
    f"CREATE DATABASE {DB}",
    f"CREATE TABLE {DB}.orders (id BIGINT PRIMARY KEY, item VARCHAR(20))",
    f"CREATE SEQUENCE {DB}.plain",
    f"CREATE SEQUENCE {DB}.stepped START WITH 10 INCREMENT BY 5 MINVALUE 5 MAXVALUE 30 CACHE 2 "
    "CYCLE",
    f"CREATE SEQUENCE {DB}.down INCREMENT BY -3 MINVALUE -100 MAXVALUE 100 NOCACHE",
    f"CREATE SEQUENCE IF NOT EXISTS {DB}.uncached START = 7 INCREMENT = 1 NOCACHE NOCYCLE "
    "COMMENT = 'no cache'",
    f"CREATE SEQUENCE {DB}.untouched MINVALUE 3 CACHE 10",
    f"INSERT INTO {DB}.orders VALUES (NEXTVAL({DB}.plain), 'a'), (NEXTVAL({DB}.plain), 'b')",
    f"INSERT INTO {DB}.orders VALUES (NEXT VALUE FOR {DB}.stepped, 'c')",
    f"SELECT NEXTVAL({DB}.stepped), NEXTVAL({DB}.stepped), NEXTVAL({DB}.stepped), "
    f"NEXTVAL({DB}.stepped)",  # through MAXVALUE: a new cycle
    f"INSERT INTO {DB}.orders SELECT 100 + NEXTVAL({DB}.down), 'down'",
    f"INSERT INTO {DB}.orders VALUES (200 + NEXTVAL({DB}.down), 'd2')",
    f"INSERT INTO {DB}.orders VALUES (NEXTVAL({DB}.uncached), 'e'), (NEXTVAL({DB}.uncached), 'f')",
    f"SELECT SETVAL({DB}.plain, 5000)",
    f"SELECT SETVAL({DB}.plain, 10)",  # below the current value: changes nothing
    f"BEGIN; INSERT INTO {DB}.orders VALUES (NEXTVAL({DB}.uncached), 'gone'); ROLLBACK",
    f"ALTER SEQUENCE {DB}.stepped RESTART WITH 15",
    f"ALTER SEQUENCE {DB}.stepped INCREMENT BY 2 NOCACHE",
    f"INSERT INTO {DB}.orders VALUES (1000 + NEXTVAL({DB}.stepped), 'g')",
    f"ALTER SEQUENCE {DB}.down MAXVALUE 50 START WITH 40 RESTART",
    f"ALTER SEQUENCE {DB}.uncached CACHE 5",
    f"CREATE OR REPLACE SEQUENCE {DB}.plain START WITH 100 INCREMENT BY 10",
    f"INSERT INTO {DB}.orders VALUES (NEXTVAL({DB}.plain), 'h')",
    f"CREATE TABLE {DB}.made (next_not_cached_value bigint(21) NOT NULL, minimum_value "
    "bigint(21) NOT NULL, maximum_value bigint(21) NOT NULL, start_value bigint(21) NOT NULL, "
    "increment bigint(21) NOT NULL, cache_size bigint(21) unsigned NOT NULL, cycle_option "
    "tinyint(1) unsigned NOT NULL, cycle_count bigint(21) NOT NULL) SEQUENCE=1",
    f"INSERT INTO {DB}.made VALUES (1, 1, 100, 1, 1, 10, 0, 0)",
    f"INSERT INTO {DB}.orders VALUES (2000 + NEXTVAL({DB}.made), 'i')",
    f"CREATE TABLE {DB}.copied LIKE {DB}.stepped",
    f"INSERT INTO {DB}.orders VALUES (3000 + NEXTVAL({DB}.copied), 'j')",
    f"CREATE SEQUENCE {DB}.doomed",
    f"CREATE SEQUENCE {DB}.doomed2",
    f"CREATE SEQUENCE {DB}.moved",
    f"RENAME TABLE {DB}.moved TO {DB}.renamed",
    f"INSERT INTO {DB}.orders VALUES (4000 + NEXTVAL({DB}.renamed), 'k')",
    f"DROP SEQUENCE {DB}.doomed",
    f"DROP TABLE {DB}.doomed2",
    f"DROP SEQUENCE IF EXISTS {DB}.nothing_here",
)
SEQUENCES = ("copied", "down", "made", "plain", "renamed", "stepped", "uncached", "untouched")
TABLES = ("orders", *SEQUENCES)


def _source(mariadb: MariaDB) -> Any:
    return pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                           password=MARIADB_ROOT_PASSWORD, database=DB)  # fmt: skip


def _answer(cursor: Any, query: str) -> list[tuple[Any, ...]]:
    cursor.execute(query)
    return [tuple(row) for row in cursor.fetchall()]


def _source_answers(mariadb: MariaDB) -> dict[str, Any]:
    """What MariaDB answers for every table and the statements the replica answers too."""
    conn = _source(mariadb)
    try:
        with conn.cursor() as cursor:
            answers: dict[str, Any] = {
                table: sorted(_answer(cursor, f"SELECT * FROM {DB}.{table}")) for table in TABLES
            }
            answers["full tables"] = sorted(_answer(cursor, f"SHOW FULL TABLES FROM {DB}"))
            answers["table types"] = _answer(cursor, _TABLE_TYPES)
            for name in SEQUENCES:
                answers[f"create {name}"] = _answer(cursor, f"SHOW CREATE SEQUENCE {name}")
            return answers
    finally:
        conn.close()


_TABLE_TYPES = (
    "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
    f"WHERE TABLE_SCHEMA = '{DB}' ORDER BY TABLE_NAME"
)


def _replica_shows(cursor: Any) -> dict[str, Any]:
    cursor.execute(f"USE {DB}")
    shown: dict[str, Any] = {
        "full tables": sorted(_answer(cursor, f"SHOW FULL TABLES FROM {DB}")),
        "table types": _answer(cursor, _TABLE_TYPES),
    }
    for name in SEQUENCES:
        shown[f"create {name}"] = _answer(cursor, f"SHOW CREATE SEQUENCE {name}")
    return shown


def _refused(cursor: Any, query: str) -> tuple[int, str]:
    with pytest.raises(pymysql.err.MySQLError) as caught:
        cursor.execute(query)
    return caught.value.args[0], caught.value.args[1]


def _replay(mariadb: MariaDB) -> None:
    for statement in WORKLOAD:
        mariadb.sql(statement)


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_sequences_end_equal_to_the_sources(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    fresh_source(mariadb, DB)
    with following(port, mariadb, applier) as cursor:
        _replay(mariadb)
        caught_up(cursor, mariadb, WAIT)
        expected = _source_answers(mariadb)
        for table in TABLES:
            found = sorted(engine.rows(TableRef(DB, table)))  # type: ignore[type-var]
            assert found == expected[table], table
        shown = _replica_shows(cursor)
        assert shown == {k: v for k, v in expected.items() if k in shown}
        code, message = _refused(cursor, f"SELECT NEXTVAL({DB}.plain)")
        assert (code, message.split(":")[0]) == (
            1235,
            f"This version of MySQL doesn't yet support 'NEXTVAL({DB}.plain)",
        )


def _concurrent_nextval(mariadb: MariaDB, clients: int, inserts: int) -> None:
    """``clients`` connections each insert ``inserts`` rows numbered by NEXTVAL of a NOCACHE
    sequence at once: every call writes the sequence's row, in transactions the source
    commits together when they meet."""
    errors: list[BaseException] = []

    def insert(client: int) -> None:
        try:
            conn = _source(mariadb)
            try:
                with conn.cursor() as cursor:
                    for number in range(inserts):
                        cursor.execute(f"INSERT INTO {DB}.busy VALUES (NEXTVAL({DB}.counter), "
                                       f"{client}, {number})")  # fmt: skip
                        conn.commit()
            finally:
                conn.close()
        except BaseException as error:  # handed to the test thread
            errors.append(error)

    threads = [threading.Thread(target=insert, args=(n,), name=f"client-{n}")
               for n in range(clients)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_nextval_from_concurrent_clients_ends_equal(
    mariadb: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    """Transactions the source ran at once change the one sequence row in turn on the
    replica too, whichever applier runs them in parallel."""
    fresh_source(mariadb, DB)
    with following(port, mariadb, applier) as cursor:
        mariadb.sql(f"CREATE DATABASE {DB}")
        mariadb.sql(f"CREATE TABLE {DB}.busy (id BIGINT PRIMARY KEY, client INT, n INT)")
        mariadb.sql(f"CREATE SEQUENCE {DB}.counter INCREMENT BY 3 NOCACHE")
        _concurrent_nextval(mariadb, clients=4, inserts=25)
        caught_up(cursor, mariadb, WAIT)
    conn = _source(mariadb)
    try:
        with conn.cursor() as source:
            for table in ("busy", "counter"):
                expected = sorted(_answer(source, f"SELECT * FROM {DB}.{table}"))
                found = sorted(engine.rows(TableRef(DB, table)))  # type: ignore[type-var]
                assert found == expected, table
    finally:
        conn.close()
    assert len(expected) == 1 and expected[0][0] == 1 + 3 * 100  # type: ignore[index]


# -- the Spark engine: SELECT through the MySQL protocol --------------------------------------


@pytest.fixture
def no_thread_leaks() -> Iterator[None]:
    """The Spark module's server keeps its query threads as long as it runs."""
    yield from no_leaks_but_a_servers()


@pytest.fixture(scope="module", params=["csa", "mta"])
def spark_replica(
    spark: Any, mariadb: MariaDB, tmp_path_factory: pytest.TempPathFactory, request: Any
) -> Iterator[tuple[int, dict[str, Any]]]:
    """A replica on the Spark engine that followed the workload live (with each applier),
    and the source's answers."""
    fresh_source(mariadb, DB)
    root = tmp_path_factory.mktemp("sequences")
    with running_server(root / "data", configured_components) as server:
        with following(server.port, mariadb, request.param) as cursor:
            _replay(mariadb)
            caught_up(cursor, mariadb, WAIT * 2)
            recorded(cursor, mariadb, WAIT * 2)  # the commit point queries read
            cursor.execute(f"SELECT COUNT(*) FROM {DB}.orders")  # query threads start here
            cursor.fetchall()
        yield server.port, _source_answers(mariadb)


@pytest.mark.spark
@pytest.mark.usefixtures("no_thread_leaks")
@pytest.mark.parametrize("table", TABLES)
def test_spark_answers_select_as_the_source(
    spark_replica: tuple[int, dict[str, Any]], table: str
) -> None:
    port, expected = spark_replica
    with connect(port) as conn, conn.cursor() as cursor:
        assert sorted(_answer(cursor, f"SELECT * FROM {DB}.{table}")) == expected[table]


@pytest.mark.spark
@pytest.mark.usefixtures("no_thread_leaks")
def test_spark_shows_sequences_as_the_source(spark_replica: tuple[int, dict[str, Any]]) -> None:
    port, expected = spark_replica
    with connect(port) as conn, conn.cursor() as cursor:
        shown = _replica_shows(cursor)
        assert shown == {k: v for k, v in expected.items() if k in shown}
        assert _refused(cursor, f"SELECT plain.nextval FROM {DB}.orders, {DB}.plain")[0] == 1235
        assert _refused(cursor, f"SELECT NEXT VALUE FOR {DB}.plain")[0] == 1235
        assert _refused(cursor, f"SELECT * FROM {DB}.orders WHERE id = SETVAL(plain, 3)")[0] == 1235
