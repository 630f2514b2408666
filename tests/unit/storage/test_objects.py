"""Views, triggers, routines and events kept in the engine's catalog as the source defines,
alters and drops them, with MySQL's errors; triggers go with their table, every object with
its database. Both engines (the Spark engine also keeps them across a restart:
tests/unit/storage/spark/test_engine_durability.py)."""

from __future__ import annotations

import pytest

from spark_replica.applier_core.storage import EngineError, StorageEngine
from spark_replica.applier_core.storage.objects import ObjectKind, ObjectRef
from tests.unit.storage.conftest import EngineFactory
from tests.unit.storage.test_engine_behaviour import ddl


@pytest.fixture
def db(engine_factory: EngineFactory) -> StorageEngine:
    engine = engine_factory()
    ddl(engine, "CREATE DATABASE d")
    ddl(engine, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    return engine


def _kept(engine: StorageEngine) -> list[tuple[str, str, str]]:
    return [(o.ref.kind.value, o.ref.schema, o.ref.name) for o in engine.objects()]


def _error(engine: StorageEngine, statement: str) -> tuple[int, str]:
    """The error of ``statement``, its message without the transaction it names."""
    with pytest.raises(EngineError) as caught:
        ddl(engine, statement)
    return caught.value.code, caught.value.message.split("; transaction")[0]


def test_every_kind_is_kept_with_its_definition(db: StorageEngine) -> None:
    ddl(db,
        "CREATE ALGORITHM=MERGE DEFINER=`root`@`%` SQL SECURITY INVOKER VIEW v (a, b) AS "
        "SELECT id, v FROM t WITH CASCADED CHECK OPTION",
        "CREATE DEFINER=`root`@`%` TRIGGER tr AFTER UPDATE ON t FOR EACH ROW SET @x = 1",
        "CREATE PROCEDURE p(IN x INT) SELECT x + 1",
        "CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1",
        "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t")  # fmt: skip
    assert _kept(db) == [("EVENT", "d", "e"), ("FUNCTION", "d", "f"), ("PROCEDURE", "d", "p"),
                         ("TRIGGER", "d", "tr"), ("VIEW", "d", "v")]  # fmt: skip
    trigger, view = db.objects()[3], db.objects()[4]
    assert (view.select, view.columns, view.security, view.algorithm, view.check_option,
            view.definer) == ("SELECT id, v FROM t", ("a", "b"), "INVOKER", "MERGE",
                              "CASCADED", "root@%")  # fmt: skip
    assert (trigger.table, trigger.timing, trigger.event) == ("t", "AFTER", "UPDATE")


@pytest.mark.parametrize(
    ("statement", "code", "message"),
    [
        ("CREATE VIEW t AS SELECT 1", 1050, "Table 't' already exists"),
        ("CREATE VIEW nodb.v AS SELECT 1", 1049, "Unknown database 'nodb'"),
        ("CREATE TRIGGER tr2 BEFORE INSERT ON nope FOR EACH ROW SET @a = 1", 1146,
         "Table 'd.nope' doesn't exist"),
        ("DROP VIEW nope", 1051, "Unknown table 'd.nope'"),
        ("DROP VIEW t", 1347, "'d.t' is not VIEW"),
        ("DROP TRIGGER nope", 1360, "Trigger does not exist"),
        ("DROP PROCEDURE nope", 1305, "PROCEDURE d.nope does not exist"),
        ("DROP EVENT nope", 1539, "Unknown event 'nope'"),
        ("ALTER VIEW nope AS SELECT 1", 1146, "Table 'd.nope' doesn't exist"),
        ("ALTER PROCEDURE nope COMMENT 'x'", 1305, "PROCEDURE d.nope does not exist"),
    ],
)  # fmt: skip
def test_mysql_errors(db: StorageEngine, statement: str, code: int, message: str) -> None:
    assert _error(db, statement) == (code, message)


def test_existing_objects_are_refused_unless_replaced(db: StorageEngine) -> None:
    ddl(db, "CREATE VIEW v AS SELECT 1",
        "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1",
        "CREATE PROCEDURE p() SELECT 1",
        "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO SELECT 1")  # fmt: skip
    assert _error(db, "CREATE VIEW v AS SELECT 2")[0] == 1050
    assert _error(db, "CREATE TABLE v (a INT)")[0] == 1050
    assert _error(db, "CREATE TRIGGER TR BEFORE INSERT ON t FOR EACH ROW SET @a = 2") == (
        1359,
        "Trigger already exists",
    )  # names of triggers fold case
    assert _error(db, "CREATE PROCEDURE P() SELECT 2")[0] == 1304  # names fold case
    assert _error(db, "CREATE EVENT e ON SCHEDULE EVERY 2 DAY DO SELECT 1")[0] == 1537
    ddl(db, "CREATE OR REPLACE VIEW v AS SELECT 2", "CREATE PROCEDURE IF NOT EXISTS p() SELECT 3")
    [view] = [o for o in db.objects() if o.ref.kind is ObjectKind.VIEW]
    assert view.select == "SELECT 2"
    ddl(db, "ALTER VIEW v AS SELECT 3")
    assert [o.select for o in db.objects() if o.ref.kind is ObjectKind.VIEW] == ["SELECT 3"]


def test_triggers_go_with_their_table_and_objects_with_their_database(db: StorageEngine) -> None:
    ddl(db, "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1",
        "CREATE TABLE u (id INT)", "CREATE TRIGGER tu BEFORE INSERT ON u FOR EACH ROW SET @a = 1",
        "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO SELECT 1", "RENAME TABLE u TO w")  # fmt: skip
    [moved] = [o for o in db.objects() if o.ref.name == "tu"]
    assert moved.table == "w"
    ddl(db, "DROP TABLE t")
    assert _kept(db) == [("EVENT", "d", "e"), ("TRIGGER", "d", "tu")]
    ddl(db, "ALTER EVENT e RENAME TO e2")
    assert ("EVENT", "d", "e2") in _kept(db)
    ddl(db, "DROP DATABASE d", database=None)
    assert _kept(db) == []


def test_names_fold_case_except_views() -> None:
    ref = ObjectRef(ObjectKind.PROCEDURE, "d", "P")
    assert ref.key == (ObjectKind.PROCEDURE, "d", "p")
    assert ObjectRef(ObjectKind.VIEW, "d", "V").key == (ObjectKind.VIEW, "d", "V")
