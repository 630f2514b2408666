"""MariaDB sequences on both engines: the row CREATE SEQUENCE starts with (the source logs only
the statement), Write_rows that replace the row, ALTER SEQUENCE computed from the row, DROP
SEQUENCE / DROP TABLE / RENAME / LIKE, and the errors. The expected rows are what MariaDB
10.11 shows with ``SELECT * FROM s`` after the same statements."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spark_replica.applier_core.storage import EngineError, StorageEngine, TableRef
from spark_replica.applier_core.storage.ddl_sequence import (
    SEQUENCE_DEFINITION,
    SequenceOptions,
    SequenceRow,
    altered_row,
    initial_row,
)
from spark_replica.applier_core.storage.ddl_sequence_parser import (
    parse_alter_sequence,
    show_create_sequence,
)
from spark_replica.applier_core.storage.objects import ObjectKind
from spark_replica.applier_core.storage.spark.state import definition_to_json
from tests.unit.storage.conftest import EngineFactory
from tests.unit.storage.test_engine_behaviour import Map, commit, ddl, ins, started, trx

MAX = 9223372036854775806
MIN = -9223372036854775807
S = TableRef("d", "s")


@pytest.fixture
def db(engine_factory: EngineFactory) -> StorageEngine:
    engine = engine_factory()
    ddl(engine, "CREATE DATABASE d")
    return engine


def _rows(engine: StorageEngine, table: TableRef = S) -> list[tuple[object, ...]]:
    return sorted(engine.rows(table))  # type: ignore[type-var]


def _sequences(engine: StorageEngine) -> list[str]:
    return [o.ref.name for o in engine.objects() if o.ref.kind is ObjectKind.SEQUENCE]


def _error(engine: StorageEngine, statement: str) -> tuple[int, str]:
    with pytest.raises(EngineError) as caught:
        ddl(engine, statement)
    return caught.value.code, caught.value.message.split("; transaction")[0]


# -- the rows, as MariaDB computes them ------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "row"),
    [
        ("", (1, 1, MAX, 1, 1, 1000, 0, 0)),
        ("START WITH 10 INCREMENT BY 5 MINVALUE 5 MAXVALUE 30 CACHE 2 CYCLE",
         (10, 5, 30, 10, 5, 2, 1, 0)),
        ("INCREMENT BY -1", (-1, MIN, -1, -1, -1, 1000, 0, 0)),
        ("INCREMENT -2 MINVALUE -10 MAXVALUE 10", (10, -10, 10, 10, -2, 1000, 0, 0)),
        ("NOMINVALUE NO MAXVALUE START 3 INCREMENT 0 NOCACHE NOCYCLE",
         (3, 1, MAX, 3, 0, 0, 0, 0)),
        ("CACHE 0", (1, 1, MAX, 1, 1, 0, 0, 0)),
        ("MINVALUE 5", (5, 5, MAX, 5, 1, 1000, 0, 0)),
        ("MAXVALUE 5 INCREMENT BY -1", (5, MIN, 5, 5, -1, 1000, 0, 0)),
        ("START WITH -5 MINVALUE -10", (-5, -10, MAX, -5, 1, 1000, 0, 0)),
        ("START = 4 INCREMENT = 3 MINVALUE = 2 MAXVALUE = 99 CACHE = 7 CYCLE",
         (4, 2, 99, 4, 3, 7, 1, 0)),
        ("COMMENT='hello' ENGINE=MyISAM", (1, 1, MAX, 1, 1, 1000, 0, 0)),
        ("CACHE 5 DEFAULT CHARSET=latin1 CHARACTER SET = utf8mb4 COLLATE utf8mb4_bin "
         "ROW_FORMAT=DYNAMIC", (1, 1, MAX, 1, 1, 5, 0, 0)),
    ],
)  # fmt: skip
def test_create_sequence_makes_mariadbs_first_row(
    db: StorageEngine, options: str, row: tuple[int, ...]
) -> None:
    ddl(db, f"CREATE SEQUENCE s {options}")
    assert _rows(db) == [row]
    assert replace(db.definition(S), collation="") == SEQUENCE_DEFINITION  # no text columns
    assert _sequences(db) == ["s"]


@pytest.mark.parametrize(
    ("before", "alter", "after"),
    [
        ((20, 5, 30, 10, 5, 2, 1, 0), "INCREMENT BY 3", (20, 5, 30, 10, 3, 2, 1, 0)),
        ((20, 5, 30, 10, 3, 2, 1, 0), "RESTART", (10, 5, 30, 10, 3, 2, 1, 0)),
        ((10, 5, 30, 10, 3, 2, 1, 0), "RESTART WITH 7", (7, 5, 30, 10, 3, 2, 1, 0)),
        ((7, 5, 30, 10, 3, 2, 1, 0), "START WITH 8", (7, 5, 30, 8, 3, 2, 1, 0)),
        ((7, 5, 30, 8, 3, 2, 1, 0), "MAXVALUE 100 NOCYCLE", (7, 5, 100, 8, 3, 2, 0, 0)),
        ((7, 5, 100, 8, 3, 2, 0, 0), "NOCACHE", (7, 5, 100, 8, 3, 0, 0, 0)),
        ((7, 5, 100, 8, 3, 0, 0, 0), "RESTART = 9 CACHE = 5", (9, 5, 100, 8, 3, 5, 0, 0)),
        ((14, 1, 50, 10, 1, 0, 0, 0), "NOMAXVALUE", (14, 1, MAX, 10, 1, 0, 0, 0)),
        ((14, 1, MAX, 10, 1, 0, 0, 0), "INCREMENT = -1 MINVALUE=1 MAXVALUE=100",
         (14, 1, 100, 10, -1, 0, 0, 0)),
        ((5, 1, 9, 5, 2, 2, 1, 1), "RESTART", (5, 1, 9, 5, 2, 2, 1, 0)),
        ((5, 1, 9, 5, 2, 2, 1, 1), "CYCLE", (5, 1, 9, 5, 2, 2, 1, 1)),
        ((9, 2, 99, 4, 3, 7, 1, 0), "RESTART 20", (20, 2, 99, 4, 3, 7, 1, 0)),
        ((1, 1, MAX, 1, 1, 1000, 0, 0), "START WITH 5 RESTART", (5, 1, MAX, 5, 1, 1000, 0, 0)),
    ],
)  # fmt: skip
def test_alter_sequence_changes_the_row_as_mariadb_does(
    before: tuple[int, ...], alter: str, after: tuple[int, ...]
) -> None:
    altered = parse_alter_sequence(f"ALTER SEQUENCE s {alter}", "d")
    assert altered is not None
    assert tuple(altered_row(SequenceRow(*before), altered.options)) == after


@pytest.mark.parametrize(
    "statement",
    ["CREATE SEQUENCE s START", "CREATE SEQUENCE s FOO 1", "ALTER SEQUENCE s INCREMENT BY x"],
)
def test_options_that_do_not_parse_are_1064(db: StorageEngine, statement: str) -> None:
    if statement.startswith("ALTER"):
        ddl(db, "CREATE SEQUENCE s")
    assert _error(db, statement)[0] == 1064


@pytest.mark.parametrize(
    ("statement", "what"),
    [("CREATE TEMPORARY SEQUENCE s", "CREATE TEMPORARY SEQUENCE"),
     ("DROP TEMPORARY SEQUENCE IF EXISTS `d`.`s`", "DROP TEMPORARY SEQUENCE"),
     ("CREATE SEQUENCE s AS INT", "a sequence AS INT")],
)  # fmt: skip
def test_what_the_replica_cannot_keep_is_1235(db: StorageEngine, statement: str, what: str) -> None:
    code, message = _error(db, statement)
    assert (code, message.split(" (statement")[0]) == (
        1235,
        f"This version of MySQL doesn't yet support '{what}'",
    )


# -- the engines ----------------------------------------------------------------------------


def test_written_rows_replace_the_sequences_row(db: StorageEngine) -> None:
    """NEXTVAL is logged as Write_rows of the whole new row, several in one event when a
    statement calls it several times: the last one is the row."""
    ddl(db, "CREATE SEQUENCE s START WITH 10 INCREMENT BY 5 MINVALUE 5 MAXVALUE 30 CACHE 2 CYCLE")
    commit(db, S, ins(20, 5, 30, 10, 5, 2, 1, 0))
    assert _rows(db) == [(20, 5, 30, 10, 5, 2, 1, 0)]
    commit(db, S, ins(30, 5, 30, 10, 5, 2, 1, 0), ins(10, 5, 30, 10, 5, 2, 1, 1))
    assert _rows(db) == [(10, 5, 30, 10, 5, 2, 1, 1)]
    ddl(db, "ALTER SEQUENCE s RESTART WITH 15", "ALTER SEQUENCE s INCREMENT BY 2 NOCACHE")
    assert _rows(db) == [(15, 5, 30, 10, 2, 0, 1, 0)]
    commit(db, S, ins(17, 5, 30, 10, 2, 0, 1, 0))
    assert _rows(db) == [(17, 5, 30, 10, 2, 0, 1, 0)]


def test_create_or_replace_starts_again_and_if_not_exists_keeps_the_row(
    db: StorageEngine,
) -> None:
    ddl(db, "CREATE SEQUENCE s")
    commit(db, S, ins(1001, 1, MAX, 1, 1, 1000, 0, 0))
    ddl(db, "CREATE SEQUENCE IF NOT EXISTS s START WITH 7")
    assert _rows(db) == [(1001, 1, MAX, 1, 1, 1000, 0, 0)]
    ddl(db, "CREATE OR REPLACE SEQUENCE s START 3")
    assert _rows(db) == [(3, 1, MAX, 3, 1, 1000, 0, 0)]
    assert _sequences(db) == ["s"]


def test_create_table_with_sequence_option_and_like_make_sequences(db: StorageEngine) -> None:
    """MariaDB makes the default row for both; a row the source inserts replaces it."""
    ddl(db,
        "CREATE TABLE f (next_not_cached_value bigint(21) NOT NULL, minimum_value bigint(21) "
        "NOT NULL, maximum_value bigint(21) NOT NULL, start_value bigint(21) NOT NULL, "
        "increment bigint(21) NOT NULL, cache_size bigint(21) unsigned NOT NULL, cycle_option "
        "tinyint(1) unsigned NOT NULL, cycle_count bigint(21) NOT NULL) ENGINE=InnoDB SEQUENCE=1",
        "CREATE SEQUENCE k START 50 INCREMENT 7 CACHE 3",
        "CREATE TABLE k2 LIKE k",
        "CREATE TABLE plain (id INT)",
        "CREATE TABLE plain2 LIKE plain")  # fmt: skip
    assert _rows(db, TableRef("d", "f")) == [(1, 1, MAX, 1, 1, 1000, 0, 0)]
    assert _rows(db, TableRef("d", "k2")) == [(1, 1, MAX, 1, 1, 1000, 0, 0)]
    assert _rows(db, TableRef("d", "plain2")) == []
    assert _sequences(db) == ["f", "k", "k2"]
    commit(db, TableRef("d", "f"), ins(1, 1, 100, 1, 1, 10, 0, 0))
    assert _rows(db, TableRef("d", "f")) == [(1, 1, 100, 1, 1, 10, 0, 0)]


def test_drop_rename_and_drop_database_take_the_sequence_along(db: StorageEngine) -> None:
    ddl(db, "CREATE SEQUENCE a", "CREATE SEQUENCE b", "CREATE SEQUENCE `c`",
        "RENAME TABLE a TO a2", "DROP TABLE b", "DROP SEQUENCE IF EXISTS `c`, `nope`")  # fmt: skip
    assert _sequences(db) == ["a2"]
    assert db.tables() == [TableRef("d", "a2")]
    ddl(db, "ALTER SEQUENCE a2 RESTART WITH 5")
    assert _rows(db, TableRef("d", "a2")) == [(5, 1, MAX, 1, 1, 1000, 0, 0)]
    ddl(db, "DROP DATABASE d")
    assert _sequences(db) == []


@pytest.mark.parametrize(
    ("statement", "code", "message"),
    [
        ("DROP SEQUENCE t", 1347, "'d.t' is not SEQUENCE"),
        ("DROP SEQUENCE nope", 1051, "Unknown table 'd.nope'"),
        ("ALTER SEQUENCE t RESTART", 1347, "'d.t' is not SEQUENCE"),
        ("ALTER SEQUENCE nope RESTART", 1146, "Table 'd.nope' doesn't exist"),
        ("CREATE SEQUENCE t", 1050, "Table 't' already exists"),
        ("CREATE SEQUENCE nodb.s", 1049, "Unknown database 'nodb'"),
    ],
)  # fmt: skip
def test_mysql_errors(db: StorageEngine, statement: str, code: int, message: str) -> None:
    ddl(db, "CREATE TABLE t (id INT PRIMARY KEY)")
    assert _error(db, statement) == (code, message)


def test_alter_sequence_if_exists_of_nothing_changes_nothing(db: StorageEngine) -> None:
    ddl(db, "ALTER SEQUENCE IF EXISTS nope RESTART")
    assert db.tables() == []


def test_a_sequences_changes_wait_for_each_other(engine_factory: EngineFactory) -> None:
    """Every change of a sequence takes its one lock: a second transaction waits for the
    first (here until its lock wait times out, 1205), whatever rows they write."""
    engine = engine_factory(lock_wait_timeout=0.05)
    ddl(engine, "CREATE DATABASE d", "CREATE SEQUENCE s")
    first, _ = started(engine, "first")
    first.apply_rows(Map(*S), [ins(1001, 1, MAX, 1, 1, 1000, 0, 0)])
    second = engine.session("second")
    second.begin(trx())
    with pytest.raises(EngineError) as caught:
        second.apply_rows(Map(*S), [ins(2001, 1, MAX, 1, 1, 1000, 0, 0)])
    assert caught.value.code == 1205
    second.rollback()
    first.commit()
    assert _rows(engine) == [(1001, 1, MAX, 1, 1, 1000, 0, 0)]


# -- SHOW CREATE SEQUENCE -------------------------------------------------------------------


def test_show_create_sequence_prints_the_row_as_mariadb_does() -> None:
    row = initial_row(SequenceOptions())
    assert show_create_sequence("s", row, "CREATE SEQUENCE s") == (
        "CREATE SEQUENCE `s` start with 1 minvalue 1 maxvalue 9223372036854775806 increment "
        "by 1 cache 1000 nocycle ENGINE=InnoDB"
    )
    text = show_create_sequence("i", row, "CREATE SEQUENCE i COMMENT='hello' ENGINE=MyISAM")
    assert text.endswith("cache 1000 nocycle ENGINE=MyISAM COMMENT='hello'")
    cycled = row._replace(start_value=10, minimum_value=5, maximum_value=30, increment=5,
                          cache_size=2, cycle_option=1)  # fmt: skip
    assert show_create_sequence("s2", cycled, "CREATE TABLE s2 (...) SEQUENCE=1") == (
        "CREATE SEQUENCE `s2` start with 10 minvalue 5 maxvalue 30 increment by 5 cache 2 "
        "cycle ENGINE=InnoDB"
    )


def test_the_definition_is_recorded_like_any_table() -> None:
    assert '"BIGINT(21) UNSIGNED"' in definition_to_json(SEQUENCE_DEFINITION)
