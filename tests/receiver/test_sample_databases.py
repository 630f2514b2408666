"""Public sample databases loaded into a real MariaDB source while a replica follows it live:
MySQL's sakila (with its views, triggers, procedures and functions, a spatial column, a
FULLTEXT table and a picture in a BLOB) and the employees database (test_db, cut to its first
employees; tests/fixtures/sample_dbs/README.md), loaded with the mariadb CLI as their own
instructions say (their tables' and columns' character sets and collations, and their
foreign keys, read as the source's); then a mariadb-dump of sakila (routines, triggers,
events, executable comments, LOCK TABLES, DISABLE KEYS) dropped and loaded again. Both
appliers end with the channel running and every table equal to the source's, row by row,
and with the source's views, triggers and routines in the replica's catalog."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from tests.helpers.live_source import caught_up, following, fresh_source, source_gtids
from tests.helpers.mariadb import ROOT_PASSWORD, MariaDB
from tests.helpers.source_compare import assert_same_databases, source_connection

SAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "sample_dbs"
SAKILA = (SAMPLES / "sakila" / "sakila-schema.sql", SAMPLES / "sakila" / "sakila-data.sql")
EMPLOYEES = (SAMPLES / "employees" / "employees.sql", SAMPLES / "employees" / "objects.sql")
WAIT = 300.0
#: The character sets and collations of a database's tables and columns.
CHARSETS = (
    "SELECT TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES "
    "WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE'",
    "SELECT TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME "
    "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s",
)
VIEWS = "SELECT TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = %s"
#: The foreign keys and other constraints of a database's tables.
CONSTRAINTS = (
    "SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS "
    "WHERE TABLE_SCHEMA = %s",
    "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, REFERENCED_TABLE_NAME, "
    "REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s",
    "SELECT CONSTRAINT_NAME, TABLE_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE, "
    "REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS "
    "WHERE CONSTRAINT_SCHEMA = %s",
)
EVENT = ("CREATE EVENT sakila.forget_old_rentals ON SCHEDULE EVERY 1 DAY DISABLE "
         "DO DELETE FROM sakila.rental WHERE return_date < '2000-01-01'")  # fmt: skip


@pytest.fixture
def source(own_mariadb: MariaDB) -> MariaDB:
    return own_mariadb


def source_objects(mariadb: MariaDB, *databases: str) -> set[tuple[str, str, str]]:
    """(kind, database, name) of the views, triggers, routines and events on the source."""
    names = ", ".join(f"'{d}'" for d in databases)
    queries = (
        f"SELECT 'VIEW', TABLE_SCHEMA, TABLE_NAME FROM information_schema.VIEWS "
        f"WHERE TABLE_SCHEMA IN ({names})",
        f"SELECT 'TRIGGER', TRIGGER_SCHEMA, TRIGGER_NAME FROM information_schema.TRIGGERS "
        f"WHERE TRIGGER_SCHEMA IN ({names})",
        f"SELECT ROUTINE_TYPE, ROUTINE_SCHEMA, ROUTINE_NAME FROM information_schema.ROUTINES "
        f"WHERE ROUTINE_SCHEMA IN ({names})",
        f"SELECT 'EVENT', EVENT_SCHEMA, EVENT_NAME FROM information_schema.EVENTS "
        f"WHERE EVENT_SCHEMA IN ({names})",
    )
    found: set[tuple[str, str, str]] = set()
    with source_connection(mariadb) as conn, conn.cursor() as cursor:
        for query in queries:
            cursor.execute(query)
            found.update((str(k), str(s), str(n)) for k, s, n in cursor.fetchall())
    return found


def replica_objects(engine: InMemoryEngine, *databases: str) -> set[tuple[str, str, str]]:
    return {(str(o.ref.kind), o.ref.schema, o.ref.name)
            for o in engine.objects() if o.ref.schema in databases}  # fmt: skip


def assert_same_as_source(mariadb: MariaDB, engine: InMemoryEngine, *databases: str) -> None:
    assert assert_same_databases(mariadb, engine, *databases) > 0
    expected = source_objects(mariadb, *databases)
    assert expected, "the samples have views, triggers and routines"
    assert replica_objects(engine, *databases) == expected


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_sample_databases_loaded_live(
    source: MariaDB, port: int, engine: InMemoryEngine, applier: str
) -> None:
    fresh_source(source, "sakila", "employees")
    with following(port, source, applier) as cursor:
        for script in (*SAKILA, *EMPLOYEES):
            source.run_script(script)
        caught_up(cursor, source, WAIT)
        # what a DBA checks on the replica (docs/operations.md)
        cursor.execute("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, 1)", (str(source_gtids(source)),))
        assert cursor.fetchone()[0] == 0
        for database in ("sakila", "employees"):
            with source_connection(source) as conn, conn.cursor() as theirs:
                theirs.execute(f"SHOW TABLES FROM {database}")
                cursor.execute(f"SHOW TABLES FROM {database}")
                assert sorted(cursor.fetchall()) == sorted(theirs.fetchall())
                theirs.execute(VIEWS, (database,))
                views = {name for (name,) in theirs.fetchall()}
                for query in CHARSETS:  # each table's and column's, as the source has them
                    theirs.execute(query, (database,))
                    cursor.execute(query, (database,))
                    expected = sorted(r for r in theirs.fetchall() if r[0] not in views)
                    assert sorted(cursor.fetchall()) == expected, query
                for query in CONSTRAINTS:  # sakila's foreign keys, as the source has them
                    theirs.execute(query, (database,))
                    cursor.execute(query, (database,))
                    assert sorted(cursor.fetchall()) == sorted(theirs.fetchall()), query
    assert_same_as_source(source, engine, "sakila", "employees")


@pytest.mark.parametrize("applier", ["csa", "mta"])
def test_sakila_dump_dropped_and_reloaded(
    source: MariaDB, port: int, engine: InMemoryEngine, applier: str, tmp_path: Path
) -> None:
    fresh_source(source, "sakila")
    dump = tmp_path / "sakila-dump.sql"
    with following(port, source, applier) as cursor:
        for script in SAKILA:
            source.run_script(script)
        source.sql(EVENT)  # sakila has none; the dump writes it with its own comments
        with dump.open("wb") as out:
            subprocess.run(
                ["mariadb-dump", f"--socket={source.root / 'mariadb.sock'}", "-uroot",
                 f"-p{ROOT_PASSWORD}", "--routines", "--triggers", "--events",
                 "--databases", "sakila"],
                stdout=out, check=True, timeout=300,
            )  # fmt: skip
        source.sql("DROP DATABASE sakila")
        source.run_script(dump)
        caught_up(cursor, source, WAIT)
    assert_same_as_source(source, engine, "sakila")
