"""Views, triggers, routines and events replicated from a real MariaDB, shown by the replica
as MySQL 8.4 shows them and compared with what MariaDB itself shows for the same objects.

The objects are created on MariaDB, replicated with START REPLICA, then every SHOW and
information_schema table that lists them is read from both servers. Names, definers, timing,
event manipulation, action statements and order, routine types, characteristics and bodies,
schedules, and a view definition written in MySQL's canonical form are equal. Where MySQL 8.4
and MariaDB differ, the replica follows MySQL 8.4 and the test says where:

- column lists: MariaDB adds ALGORITHM to information_schema.VIEWS and has no
  ``Database Collation``-less variants; the replica has MySQL 8.4's lists exactly;
- a function's RETURNS type: MariaDB prints ``int(11)``, MySQL 8.4 ``int``;
- an event on a replica is REPLICA_SIDE_DISABLED (SHOW EVENTS; SLAVESIDE_DISABLED in
  information_schema, DISABLE ON REPLICA in SHOW CREATE EVENT), where the source has it
  ENABLED;
- the creating session's sql_mode, character set and collation, and the creation times, are
  not in the replicated statement: MySQL 8.4's defaults and NULL (docs/replica-commands.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pymysql
import pytest

from tests.helpers.live_source import caught_up, following
from tests.helpers.mariadb import ROOT_PASSWORD as MARIADB_ROOT_PASSWORD
from tests.helpers.mariadb import MariaDB
from tests.helpers.replica_channel import WAIT
from tests.helpers.server import connect

#: The canonical SELECT MySQL and MariaDB both print for ``v`` (as mysqldump writes views).
V_SELECT = "select `kept`.`t`.`id` AS `id`,`kept`.`t`.`v` AS `v` from `kept`.`t`"
OBJECTS = (
    "CREATE DATABASE kept",
    "CREATE TABLE kept.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
    "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER "
    f"VIEW kept.v AS {V_SELECT}",
    "CREATE SQL SECURITY INVOKER VIEW kept.w (a, b) AS "
    "SELECT id, v FROM kept.t WHERE n > 0 WITH LOCAL CHECK OPTION",
    "CREATE TRIGGER kept.tr BEFORE INSERT ON kept.t FOR EACH ROW SET NEW.n = NEW.n * 10",
    "CREATE TRIGGER kept.tr0 BEFORE INSERT ON kept.t FOR EACH ROW FOLLOWS tr "
    "SET NEW.v = UPPER(NEW.v)",
    "CREATE TRIGGER kept.tu AFTER UPDATE ON kept.t FOR EACH ROW SET @changed = OLD.id",
    "CREATE PROCEDURE kept.p(IN x INT, OUT y INT) SET y = x + 1",
    "CREATE FUNCTION kept.f(x INT) RETURNS INT DETERMINISTIC READS SQL DATA "
    "SQL SECURITY INVOKER COMMENT 'adds one' RETURN x + 1",
    "CREATE EVENT kept.e ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 00:00:00' "
    "ON COMPLETION PRESERVE COMMENT 'daily' DO DELETE FROM kept.t WHERE id < 0",
    "CREATE EVENT kept.once ON SCHEDULE AT '2031-02-03 04:05:06' DO DELETE FROM kept.t",
)

# MySQL 8.4's column lists (https://dev.mysql.com/doc/refman/8.4/en/information-schema.html).
VIEWS = ["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "VIEW_DEFINITION", "CHECK_OPTION",
         "IS_UPDATABLE", "DEFINER", "SECURITY_TYPE", "CHARACTER_SET_CLIENT",
         "COLLATION_CONNECTION"]  # fmt: skip
TRIGGERS = ["TRIGGER_CATALOG", "TRIGGER_SCHEMA", "TRIGGER_NAME", "EVENT_MANIPULATION",
            "EVENT_OBJECT_CATALOG", "EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE", "ACTION_ORDER",
            "ACTION_CONDITION", "ACTION_STATEMENT", "ACTION_ORIENTATION", "ACTION_TIMING",
            "ACTION_REFERENCE_OLD_TABLE", "ACTION_REFERENCE_NEW_TABLE",
            "ACTION_REFERENCE_OLD_ROW", "ACTION_REFERENCE_NEW_ROW", "CREATED", "SQL_MODE",
            "DEFINER", "CHARACTER_SET_CLIENT", "COLLATION_CONNECTION",
            "DATABASE_COLLATION"]  # fmt: skip
ROUTINES = ["SPECIFIC_NAME", "ROUTINE_CATALOG", "ROUTINE_SCHEMA", "ROUTINE_NAME",
            "ROUTINE_TYPE", "DATA_TYPE", "CHARACTER_MAXIMUM_LENGTH", "CHARACTER_OCTET_LENGTH",
            "NUMERIC_PRECISION", "NUMERIC_SCALE", "DATETIME_PRECISION", "CHARACTER_SET_NAME",
            "COLLATION_NAME", "DTD_IDENTIFIER", "ROUTINE_BODY", "ROUTINE_DEFINITION",
            "EXTERNAL_NAME", "EXTERNAL_LANGUAGE", "PARAMETER_STYLE", "IS_DETERMINISTIC",
            "SQL_DATA_ACCESS", "SQL_PATH", "SECURITY_TYPE", "CREATED", "LAST_ALTERED",
            "SQL_MODE", "ROUTINE_COMMENT", "DEFINER", "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION", "DATABASE_COLLATION"]  # fmt: skip
EVENTS = ["EVENT_CATALOG", "EVENT_SCHEMA", "EVENT_NAME", "DEFINER", "TIME_ZONE", "EVENT_BODY",
          "EVENT_DEFINITION", "EVENT_TYPE", "EXECUTE_AT", "INTERVAL_VALUE", "INTERVAL_FIELD",
          "SQL_MODE", "STARTS", "ENDS", "STATUS", "ON_COMPLETION", "CREATED", "LAST_ALTERED",
          "LAST_EXECUTED", "EVENT_COMMENT", "ORIGINATOR", "CHARACTER_SET_CLIENT",
          "COLLATION_CONNECTION", "DATABASE_COLLATION"]  # fmt: skip
SHOW_TRIGGERS = ["Trigger", "Event", "Table", "Statement", "Timing", "Created", "sql_mode",
                 "Definer", "character_set_client", "collation_connection",
                 "Database Collation"]  # fmt: skip
SHOW_ROUTINES = ["Db", "Name", "Type", "Definer", "Modified", "Created", "Security_type",
                 "Comment", "character_set_client", "collation_connection",
                 "Database Collation"]  # fmt: skip
SHOW_EVENTS = ["Db", "Name", "Definer", "Time zone", "Type", "Execute at", "Interval value",
               "Interval field", "Starts", "Ends", "Status", "Originator",
               "character_set_client", "collation_connection",
               "Database Collation"]  # fmt: skip


class Reader:
    """One server's answers as (column names, rows of dicts)."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection

    def __call__(self, sql: str) -> tuple[list[str], list[dict[str, Any]]]:
        with self.connection.cursor() as cursor:
            cursor.execute(sql)
            names = [d[0] for d in cursor.description]
            return names, [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def rows(self, sql: str) -> list[dict[str, Any]]:
        return self(sql)[1]


def _select(columns: list[str], table: str, where: str) -> str:
    """MySQL's column names as result headers: the replica names SELECT * columns in lower
    case (a mysql-mimic limitation outside these tables), so the test names them."""
    listed = ", ".join(f"{c} AS `{c}`" for c in columns)
    return f"SELECT {listed} FROM information_schema.{table} WHERE {where}"


@pytest.fixture(scope="module")
def servers(mariadb: MariaDB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
    tuple[Reader, Reader]
]:  # fmt: skip
    from spark_replica.applier_core.storage import InMemoryEngine
    from spark_replica.server.components import default_components
    from tests.helpers.server import running_server

    mariadb.sql("DROP DATABASE IF EXISTS kept")
    for statement in OBJECTS:
        mariadb.sql(statement)
    data = tmp_path_factory.mktemp("replica")
    with running_server(data, default_components(InMemoryEngine())) as replica:
        with following(replica.port, mariadb, "mta") as cursor:
            caught_up(cursor, mariadb, WAIT)
        source = pymysql.connect(host=mariadb.host, port=mariadb.port, user="root",
                                 password=MARIADB_ROOT_PASSWORD, database="kept")  # fmt: skip
        ours = connect(replica.port, database="kept")
        try:
            yield Reader(source), Reader(ours)
        finally:
            source.close()
            ours.close()


def _only(rows: list[dict[str, Any]], *keys: str) -> list[tuple[Any, ...]]:
    """The values of ``keys``, times as text (the replica sends them as strings)."""
    return [tuple(_text(row[k]) for k in keys) for row in rows]


def _text(value: Any) -> Any:
    return str(value) if isinstance(value, datetime) else value


def test_show_full_tables_lists_views(servers: tuple[Reader, Reader]) -> None:
    """REQ: SHOW [FULL] TABLES lists views with Table_type VIEW, as both servers do."""
    source, replica = servers
    assert replica("SHOW FULL TABLES") == source("SHOW FULL TABLES")
    assert replica("SHOW TABLES LIKE 'v'") == source("SHOW TABLES LIKE 'v'")
    where = "SHOW FULL TABLES WHERE Table_type = 'VIEW'"
    assert replica(where) == source(where)


def test_views(servers: tuple[Reader, Reader]) -> None:
    source, replica = servers
    assert replica("SHOW CREATE VIEW v")[0] == source("SHOW CREATE VIEW v")[0]
    ours, theirs = replica.rows("SHOW CREATE VIEW v"), source.rows("SHOW CREATE VIEW v")
    assert _only(ours, "View", "Create View") == _only(theirs, "View", "Create View")
    assert replica("SHOW CREATE TABLE v")[0] == ["View", "Create View", "character_set_client",
                                               "collation_connection"]  # fmt: skip
    assert _only(replica.rows("SHOW CREATE TABLE v"), "Create View") == _only(theirs, "Create View")
    query = _select(VIEWS, "VIEWS", "TABLE_SCHEMA = 'kept' ORDER BY TABLE_NAME")
    names, ours = replica(query)
    theirs = source.rows(query)
    assert names == VIEWS
    agreed = ["TABLE_SCHEMA", "TABLE_NAME", "CHECK_OPTION", "IS_UPDATABLE", "DEFINER",
              "SECURITY_TYPE"]  # fmt: skip
    assert _only(ours, *agreed) == _only(theirs, *agreed)
    # MariaDB keeps its own rendering of w's SELECT; v's is canonical on both.
    assert ours[0]["VIEW_DEFINITION"] == theirs[0]["VIEW_DEFINITION"] == V_SELECT
    # MariaDB's VIEWS has ALGORITHM after MySQL's ten columns.
    assert source(query.replace(" FROM", ", ALGORITHM FROM", 1))[0][: len(VIEWS)] == VIEWS


def test_triggers(servers: tuple[Reader, Reader]) -> None:
    source, replica = servers
    names, ours = replica("SHOW TRIGGERS")
    theirs_names, theirs = source("SHOW TRIGGERS")
    assert names == theirs_names == SHOW_TRIGGERS
    agreed = ["Trigger", "Event", "Table", "Statement", "Timing", "Definer"]
    assert _only(ours, *agreed) == _only(theirs, *agreed)
    assert [row["Trigger"] for row in ours] == ["tr", "tr0", "tu"]  # tr0 FOLLOWS tr
    like = "SHOW TRIGGERS FROM kept LIKE 't'"
    assert _only(replica.rows(like), *agreed) == _only(source.rows(like), *agreed)
    query = _select(TRIGGERS, "TRIGGERS", "TRIGGER_SCHEMA = 'kept' ORDER BY TRIGGER_NAME")
    names, ours = replica(query)
    assert names == TRIGGERS
    agreed = ["TRIGGER_SCHEMA", "TRIGGER_NAME", "EVENT_MANIPULATION", "EVENT_OBJECT_SCHEMA",
              "EVENT_OBJECT_TABLE", "ACTION_ORDER", "ACTION_CONDITION", "ACTION_STATEMENT",
              "ACTION_ORIENTATION", "ACTION_TIMING", "ACTION_REFERENCE_OLD_ROW",
              "ACTION_REFERENCE_NEW_ROW", "DEFINER"]  # fmt: skip
    assert _only(ours, *agreed) == _only(source.rows(query), *agreed)
    ours_create = replica.rows("SHOW CREATE TRIGGER tr")
    theirs_create = source.rows("SHOW CREATE TRIGGER tr")
    assert list(ours_create[0]) == list(theirs_create[0])
    assert _only(ours_create, "Trigger", "SQL Original Statement") == _only(
        theirs_create, "Trigger", "SQL Original Statement"
    )


def test_routines(servers: tuple[Reader, Reader]) -> None:
    source, replica = servers
    for kind in ("PROCEDURE", "FUNCTION"):
        status = f"SHOW {kind} STATUS WHERE Db = 'kept'"
        names, ours = replica(status)
        assert names == source(status)[0] == SHOW_ROUTINES
        agreed = ["Db", "Name", "Type", "Definer", "Security_type", "Comment"]
        assert _only(ours, *agreed) == _only(source.rows(status), *agreed)
    like = "SHOW FUNCTION STATUS LIKE 'F'"
    assert _only(replica.rows(like), "Name") == _only(source.rows(like), "Name") == [("f",)]
    ours_p = replica.rows("SHOW CREATE PROCEDURE p")
    theirs_p = source.rows("SHOW CREATE PROCEDURE p")
    assert list(ours_p[0]) == list(theirs_p[0])
    assert _only(ours_p, "Procedure", "Create Procedure") == _only(
        theirs_p, "Procedure", "Create Procedure"
    )
    ours_f = replica.rows("SHOW CREATE FUNCTION f")[0]["Create Function"]
    theirs_f = source.rows("SHOW CREATE FUNCTION f")[0]["Create Function"]
    assert ours_f == theirs_f.replace("RETURNS int(11)", "RETURNS int")  # MySQL 8.4: no width
    query = _select(ROUTINES, "ROUTINES", "ROUTINE_SCHEMA = 'kept' ORDER BY ROUTINE_NAME")
    names, ours = replica(query)
    assert names == ROUTINES
    agreed = ["SPECIFIC_NAME", "ROUTINE_SCHEMA", "ROUTINE_NAME", "ROUTINE_TYPE", "DATA_TYPE",
              "NUMERIC_PRECISION", "NUMERIC_SCALE", "ROUTINE_BODY", "ROUTINE_DEFINITION",
              "EXTERNAL_NAME", "PARAMETER_STYLE", "IS_DETERMINISTIC",
              "SQL_DATA_ACCESS", "SQL_PATH", "SECURITY_TYPE", "ROUTINE_COMMENT",
              "DEFINER"]  # fmt: skip
    assert _only(ours, *agreed) == _only(source.rows(query), *agreed)
    # MySQL 8.4 computes EXTERNAL_LANGUAGE 'SQL' for an SQL routine; MariaDB has NULL.
    assert {row["EXTERNAL_LANGUAGE"] for row in ours} == {"SQL"}


def test_events(servers: tuple[Reader, Reader]) -> None:
    source, replica = servers
    names, ours = replica("SHOW EVENTS")
    assert names == source("SHOW EVENTS")[0] == SHOW_EVENTS
    agreed = ["Db", "Name", "Definer", "Time zone", "Type", "Execute at", "Interval value",
              "Interval field", "Starts", "Ends"]  # fmt: skip
    assert _only(ours, *agreed) == _only(source.rows("SHOW EVENTS"), *agreed)
    assert {row["Status"] for row in ours} == {"REPLICA_SIDE_DISABLED"}
    ours_e = replica.rows("SHOW CREATE EVENT e")
    theirs_e = source.rows("SHOW CREATE EVENT e")
    assert list(ours_e[0]) == list(theirs_e[0])
    assert ours_e[0]["Create Event"] == theirs_e[0]["Create Event"].replace(
        " ENABLE ", " DISABLE ON REPLICA "
    )
    query = _select(EVENTS, "EVENTS", "EVENT_SCHEMA = 'kept' ORDER BY EVENT_NAME")
    names, ours = replica(query)
    assert names == EVENTS
    agreed = ["EVENT_SCHEMA", "EVENT_NAME", "DEFINER", "TIME_ZONE", "EVENT_BODY",
              "EVENT_DEFINITION", "EVENT_TYPE", "EXECUTE_AT", "INTERVAL_VALUE",
              "INTERVAL_FIELD", "STARTS", "ENDS", "ON_COMPLETION",
              "EVENT_COMMENT"]  # fmt: skip
    assert _only(ours, *agreed) == _only(source.rows(query), *agreed)
    assert {row["STATUS"] for row in ours} == {"SLAVESIDE_DISABLED"}


def test_missing_objects_give_mysqls_errors(servers: tuple[Reader, Reader]) -> None:
    """The same numbers and texts as MariaDB (and MySQL 8.4) for objects that do not exist;
    for SHOW CREATE VIEW of a table MySQL 8.4 says "is not VIEW", MariaDB "is not of type
    'VIEW'"."""
    source, replica = servers
    for statement in ("SHOW CREATE VIEW nope", "SHOW CREATE VIEW t",
                      "SHOW CREATE PROCEDURE nope", "SHOW CREATE FUNCTION nope",
                      "SHOW CREATE TRIGGER nope", "SHOW CREATE EVENT nope"):  # fmt: skip
        errors = []
        for reader in (source, replica):
            with pytest.raises(pymysql.MySQLError) as caught:
                reader(statement)
            errors.append(caught.value.args)
        if statement == "SHOW CREATE VIEW t":
            assert errors[0][0] == 1347
            assert errors[1] == (1347, "'kept.t' is not VIEW")
        else:
            assert errors[1] == errors[0], statement
