"""SHOW statements over the kept views, triggers, routines and events, answered as MySQL 8.4.

MySQL answers SHOW TRIGGERS, SHOW PROCEDURE/FUNCTION STATUS and SHOW EVENTS with queries
over information_schema; here they read the same rows (``InfoRows.objects``), with MySQL's
column names, filters and order: SHOW TRIGGERS needs a database and its LIKE matches the
table; SHOW PROCEDURE/FUNCTION STATUS lists every database and LIKE matches the name; SHOW
EVENTS needs a database. The SHOW CREATE statements give MySQL's errors for a missing object:
1146 (view), 1347 (SHOW CREATE VIEW of a table), 1360 (trigger), 1305 (routine),
1539 (event).
https://dev.mysql.com/doc/refman/8.4/en/show-triggers.html
https://dev.mysql.com/doc/refman/8.4/en/show-procedure-status.html
https://dev.mysql.com/doc/refman/8.4/en/show-events.html
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import expressions as exp

from spark_replica.applier_core.errors import ErrorCode, ReplicaError
from spark_replica.applier_core.storage.objects import ObjectKind, StoredObject
from spark_replica.sql_handlers.tables.definitions import ValueKind
from spark_replica.sql_handlers.tables.object_rows import SQL_MODE
from spark_replica.sql_handlers.tables.object_texts import create_event_text, create_routine_text
from spark_replica.sql_handlers.tables.replica_tables import InfoRow, InfoRows, ReplicaCatalog
from spark_replica.sql_handlers.tables.replica_types import CHARSET, COLLATION
from spark_replica.sql_handlers.tables.show_schema import (
    CREATE_VIEW_COLUMNS,
    Columns,
    Rows,
    ShowResult,
    create_view_row,
    filter_where,
    known_schema,
    like_match,
)

#: The SHOW statements :func:`show_objects` answers (sqlglot's names).
KINDS = frozenset({"CREATE VIEW", "TRIGGERS", "CREATE TRIGGER", "PROCEDURE STATUS",
                   "FUNCTION STATUS", "CREATE PROCEDURE", "CREATE FUNCTION", "EVENTS",
                   "CREATE EVENT"})  # fmt: skip
#: SHOW EVENTS' Status for an event a replica received from its source (information_schema
#: says SLAVESIDE_DISABLED).
EVENT_STATUS = "REPLICA_SIDE_DISABLED"

_S, _I, _T = ValueKind.STRING, ValueKind.INTEGER, ValueKind.TIMESTAMP
_SESSION: Columns = [("character_set_client", _S), ("collation_connection", _S),
                     ("Database Collation", _S)]  # fmt: skip
_TRIGGERS: Columns = [("Trigger", _S), ("Event", _S), ("Table", _S), ("Statement", _S),
                      ("Timing", _S), ("Created", _T), ("sql_mode", _S), ("Definer", _S),
                      *_SESSION]  # fmt: skip
_ROUTINES: Columns = [("Db", _S), ("Name", _S), ("Type", _S), ("Definer", _S),
                      ("Modified", _T), ("Created", _T), ("Security_type", _S),
                      ("Comment", _S), *_SESSION]  # fmt: skip
_EVENTS: Columns = [("Db", _S), ("Name", _S), ("Definer", _S), ("Time zone", _S),
                    ("Type", _S), ("Execute at", _T), ("Interval value", _S),
                    ("Interval field", _S), ("Starts", _T), ("Ends", _T), ("Status", _S),
                    ("Originator", _I), *_SESSION]  # fmt: skip
#: information_schema's ENUM orders, which SHOW TRIGGERS sorts by.
_EVENT_ORDER = {"INSERT": 0, "UPDATE": 1, "DELETE": 2}
_TIMING_ORDER = {"BEFORE": 0, "AFTER": 1}


def show_objects(
    view: InfoRows, catalog: ReplicaCatalog, statement: exp.Show, database: str | None
) -> ShowResult | None:
    """The result of ``statement``, or None for a SHOW this module does not answer."""
    kind = statement.name.upper()
    like = statement.text("like") if statement.args.get("like") is not None else None
    db = statement.text("db") or database or None
    name = statement.text("target")
    if kind == "CREATE VIEW":
        return show_create_view(catalog, db, name, database)
    if kind == "CREATE TRIGGER":
        return show_create_trigger(catalog, db, name)
    if kind in ("CREATE PROCEDURE", "CREATE FUNCTION"):
        return show_create_routine(catalog, ObjectKind(kind.split()[1]), db, name)
    if kind == "CREATE EVENT":
        return show_create_event(catalog, db, name)
    if kind == "TRIGGERS":
        result = show_triggers(view, db, like)
    elif kind in ("PROCEDURE STATUS", "FUNCTION STATUS"):
        result = show_routine_status(view, ObjectKind(kind.split()[0]), like)
    elif kind == "EVENTS":
        result = show_events(view, db, like)
    else:
        return None
    where = statement.args.get("where")
    if isinstance(where, exp.Where):
        columns, rows = result
        return columns, filter_where([column for column, _ in columns], rows, where)
    return result


def show_create_view(
    catalog: ReplicaCatalog, db: str | None, name: str, current: str | None
) -> ShowResult:
    """SHOW CREATE VIEW: 1347 for a table, 1146 for neither."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    found = catalog.find(ObjectKind.VIEW, db, name)
    if found is None:
        if catalog.definition(db, name) is not None:
            raise ReplicaError.from_code(ErrorCode.WRONG_OBJECT, db, name, "VIEW")
        raise ReplicaError.from_code(ErrorCode.NO_SUCH_TABLE, db, name)
    return CREATE_VIEW_COLUMNS, [create_view_row(found, current)]


def show_triggers(view: InfoRows, db: str | None, like: str | None) -> ShowResult:
    """SHOW TRIGGERS [FROM db] [LIKE 'table']: by table, event, timing and action order."""
    schema = known_schema(view, db)
    rows = [
        row
        for row in view.objects.triggers
        if row["trigger_schema"] == schema and like_match(str(row["event_object_table"]), like)
    ]
    rows.sort(key=lambda r: (str(r["event_object_table"]),
                             _EVENT_ORDER.get(str(r["event_manipulation"]), 3),
                             _TIMING_ORDER.get(str(r["action_timing"]), 2),
                             _int(r["action_order"])))  # fmt: skip
    fields = ("trigger_name", "event_manipulation", "event_object_table", "action_statement",
              "action_timing", "created", "sql_mode", "definer", "character_set_client",
              "collation_connection", "database_collation")  # fmt: skip
    return _TRIGGERS, _pick(rows, fields)


def show_create_trigger(catalog: ReplicaCatalog, db: str | None, name: str) -> ShowResult:
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    found = catalog.find(ObjectKind.TRIGGER, db, name)
    if found is None:
        raise ReplicaError.from_code(ErrorCode.TRG_DOES_NOT_EXIST)
    columns: Columns = [("Trigger", _S), ("sql_mode", _S), ("SQL Original Statement", _S),
                        *_SESSION, ("Created", _T)]  # fmt: skip
    return columns, [(found.ref.name, SQL_MODE, found.statement, CHARSET, COLLATION,
                      COLLATION, None)]  # fmt: skip


def show_routine_status(view: InfoRows, kind: ObjectKind, like: str | None) -> ShowResult:
    """SHOW PROCEDURE|FUNCTION STATUS [LIKE 'name']: every database, by database and name."""
    rows = [
        row
        for row in view.objects.routines
        if row["routine_type"] == kind.value
        and like_match(str(row["routine_name"]), like, ignore_case=True)
    ]
    rows.sort(key=lambda r: (str(r["routine_schema"]), str(r["routine_name"]).casefold()))
    fields = ("routine_schema", "routine_name", "routine_type", "definer", "last_altered",
              "created", "security_type", "routine_comment", "character_set_client",
              "collation_connection", "database_collation")  # fmt: skip
    return _ROUTINES, _pick(rows, fields)


def show_create_routine(
    catalog: ReplicaCatalog, kind: ObjectKind, db: str | None, name: str
) -> ShowResult:
    """SHOW CREATE PROCEDURE|FUNCTION: 1305 when there is none (MySQL names the routine
    without its database)."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    found = catalog.find(kind, db, name)
    if found is None:
        raise ReplicaError.from_code(ErrorCode.SP_DOES_NOT_EXIST, kind.value, name)
    title = kind.value.capitalize()
    columns: Columns = [(title, _S), ("sql_mode", _S), (f"Create {title}", _S), *_SESSION]
    text = create_routine_text(found)
    return columns, [(found.ref.name, SQL_MODE, text, CHARSET, COLLATION, COLLATION)]


def show_events(view: InfoRows, db: str | None, like: str | None) -> ShowResult:
    """SHOW EVENTS [FROM db] [LIKE 'name']: by database and name."""
    schema = known_schema(view, db)
    rows: list[InfoRow] = [
        {**row, "status": EVENT_STATUS}
        for row in view.objects.events
        if row["event_schema"] == schema
        and like_match(str(row["event_name"]), like, ignore_case=True)
    ]
    rows.sort(key=lambda r: str(r["event_name"]).casefold())
    fields = ("event_schema", "event_name", "definer", "time_zone", "event_type", "execute_at",
              "interval_value", "interval_field", "starts", "ends", "status", "originator",
              "character_set_client", "collation_connection", "database_collation")  # fmt: skip
    return _EVENTS, _pick(rows, fields)


def show_create_event(catalog: ReplicaCatalog, db: str | None, name: str) -> ShowResult:
    """SHOW CREATE EVENT: 1539 when there is none."""
    if not db:
        raise ReplicaError.from_code(ErrorCode.NO_DB_ERROR)
    found: StoredObject | None = catalog.find(ObjectKind.EVENT, db, name)
    if found is None:
        raise ReplicaError.from_code(ErrorCode.EVENT_DOES_NOT_EXIST, name)
    columns: Columns = [("Event", _S), ("sql_mode", _S), ("time_zone", _S),
                        ("Create Event", _S), *_SESSION]  # fmt: skip
    return columns, [(found.ref.name, SQL_MODE, "SYSTEM", create_event_text(found), CHARSET,
                      COLLATION, COLLATION)]  # fmt: skip


def _pick(rows: Iterable[InfoRow], fields: tuple[str, ...]) -> Rows:
    return [tuple(row.get(field) for field in fields) for row in rows]


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


__all__ = ["KINDS", "show_objects"]
