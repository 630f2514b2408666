"""SHOW and information_schema over kept views, triggers, routines and events, through the
wire on the in-memory engine: the cases a MariaDB source does not exercise (no current
database, another database's view, a column list and check option, a one-time event,
LIKE and WHERE)."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from spark_replica.applier_core.storage import InMemoryEngine
from tests.helpers.replica_fixtures import port  # noqa: F401 (fixture)
from tests.helpers.server import connect
from tests.unit.storage.test_engine_behaviour import ddl


@pytest.fixture
def engine() -> InMemoryEngine:
    engine = InMemoryEngine()
    ddl(engine, "CREATE DATABASE d", "CREATE DATABASE other", database=None)
    ddl(
        engine,
        "CREATE TABLE t (id INT PRIMARY KEY, n INT)",
        "CREATE DEFINER=`u`@`%` VIEW w (a, b) AS SELECT id, n FROM t WITH LOCAL CHECK OPTION",
        "CREATE ALGORITHM=TEMPTABLE VIEW agg AS SELECT COUNT(*) AS c FROM t",
        "CREATE DEFINER=`root`@`localhost` TRIGGER tb BEFORE DELETE ON t FOR EACH ROW SET @x=1",
        "CREATE DEFINER=`root`@`localhost` EVENT once ON SCHEDULE AT '2031-02-03 04:05:06' "
        "ON COMPLETION PRESERVE DISABLE COMMENT 'it''s once' DO DELETE FROM t",
    )
    return engine


def _rows(cursor: Any, sql: str) -> list[tuple[Any, ...]]:
    cursor.execute(sql)
    return list(cursor.fetchall())


def test_without_a_database(port: int) -> None:  # noqa: F811
    with connect(port) as conn, conn.cursor() as cursor:
        for statement in ("SHOW TRIGGERS", "SHOW EVENTS", "SHOW CREATE VIEW w"):
            with pytest.raises(pymysql.MySQLError) as caught:
                cursor.execute(statement)
            assert caught.value.args == (1046, "No database selected"), statement
        with pytest.raises(pymysql.MySQLError) as caught:
            cursor.execute("SHOW TRIGGERS FROM nowhere")
        assert caught.value.args == (1049, "Unknown database 'nowhere'")
        # From another database: the view's name with its database.
        text = _rows(cursor, "SHOW CREATE VIEW d.w")[0][1]
        assert text == (
            "CREATE ALGORITHM=UNDEFINED DEFINER=`u`@`%` SQL SECURITY DEFINER VIEW "
            "`d`.`w` (`a`,`b`) AS SELECT id, n FROM t WITH LOCAL CHECK OPTION"
        )


def test_filters_and_views(port: int) -> None:  # noqa: F811
    with connect(port, database="d") as conn, conn.cursor() as cursor:
        assert _rows(cursor, "SHOW FULL TABLES WHERE Table_type = 'VIEW'") == [
            ("agg", "VIEW"), ("w", "VIEW")]  # fmt: skip
        assert _rows(cursor, "SHOW TRIGGERS LIKE 't'")[0][:5] == (
            "tb",
            "DELETE",
            "t",
            "SET @x=1",
            "BEFORE",
        )
        assert _rows(cursor, "SHOW TRIGGERS LIKE 'tb'") == []  # LIKE matches the table
        updatable = "SELECT TABLE_NAME, IS_UPDATABLE, CHECK_OPTION FROM information_schema.VIEWS"
        assert sorted(_rows(cursor, updatable)) == [("agg", "NO", "NONE"), ("w", "YES", "LOCAL")]
        assert _rows(cursor, "SHOW EVENTS WHERE Type = 'ONE TIME'")[0][4:11] == (
            "ONE TIME",
            "2031-02-03 04:05:06",
            None,
            None,
            None,
            None,
            "REPLICA_SIDE_DISABLED",
        )
        assert _rows(cursor, "SHOW CREATE EVENT once")[0][3] == (
            "CREATE DEFINER=`root`@`localhost` EVENT `once` ON SCHEDULE AT '2031-02-03 04:05:06' "
            "ON COMPLETION PRESERVE DISABLE ON REPLICA COMMENT 'it\\'s once' DO DELETE FROM t"
        )
        assert _rows(cursor, "SHOW PROCEDURE STATUS") == []
