"""information_schema rows for the kept views, triggers, routines and events, as MySQL 8.4
fills VIEWS, TRIGGERS, ROUTINES, EVENTS and a view's row in TABLES.

The kept statement does not carry what the creating session had on the source: its sql_mode,
character set and collation, and the time the object was created. They are shown as MySQL 8.4
has them by default (``SQL_MODE``, utf8mb4, utf8mb4_0900_ai_ci); the timestamps are NULL, as
MySQL shows for a trigger created before it recorded them (CREATED in TRIGGERS; the same NULL
in ROUTINES and EVENTS, where the replica has no time to give). A replicated event is
SLAVESIDE_DISABLED: a replica does not run its source's events.
https://dev.mysql.com/doc/refman/8.4/en/information-schema-views-table.html
https://dev.mysql.com/doc/refman/8.4/en/information-schema-triggers-table.html
https://dev.mysql.com/doc/refman/8.4/en/information-schema-routines-table.html
https://dev.mysql.com/doc/refman/8.4/en/information-schema-events-table.html
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

import sqlglot
from sqlglot import expressions as exp
from sqlglot.errors import ParseError, TokenError

from spark_replica.applier_core.storage.objects import ObjectKind, ObjectRef, StoredObject
from spark_replica.sql_handlers.tables.object_parts import (
    event_parts,
    routine_parts,
    trigger_parts,
)
from spark_replica.sql_handlers.tables.replica_types import CHARSET, COLLATION, type_info

#: MySQL 8.4's default sql_mode, shown for objects whose creating session's mode is not kept.
SQL_MODE = (
    "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
    "ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
)
#: What information_schema.EVENTS says of an event a replica received from its source.
EVENT_STATUS = "SLAVESIDE_DISABLED"
_CHARSET_CLAUSE = re.compile(r"\s+(?:CHARSET|CHARACTER\s+SET|COLLATE)\s+.*$", re.I | re.S)

InfoRow = Mapping[str, object]


def _session() -> dict[str, object]:
    return {"character_set_client": CHARSET, "collation_connection": COLLATION}


def view_table_row(view: StoredObject) -> InfoRow:
    """A view's row in TABLES: TABLE_TYPE and TABLE_COMMENT 'VIEW', no engine or statistics."""
    return {
        "table_catalog": "def",
        "table_schema": view.ref.schema,
        "table_name": view.ref.name,
        "table_type": "VIEW",
        "table_comment": "VIEW",
    }


def views_row(view: StoredObject) -> InfoRow:
    return {
        "table_catalog": "def",
        "table_schema": view.ref.schema,
        "table_name": view.ref.name,
        "view_definition": view.select,
        "check_option": view.check_option,
        "is_updatable": "YES" if updatable(view) else "NO",
        "definer": view.definer,
        "security_type": view.security,
        **_session(),
    }


def triggers_rows(triggers: Sequence[StoredObject]) -> list[InfoRow]:
    orders = action_orders(triggers)
    return [
        {
            "trigger_catalog": "def",
            "trigger_schema": trigger.ref.schema,
            "trigger_name": trigger.ref.name,
            "event_manipulation": trigger.event,
            "event_object_catalog": "def",
            "event_object_schema": trigger.ref.schema,
            "event_object_table": trigger.table,
            "action_order": orders[trigger.ref],
            "action_condition": None,
            "action_statement": trigger_parts(trigger).body,
            "action_orientation": "ROW",
            "action_timing": trigger.timing,
            "action_reference_old_table": None,
            "action_reference_new_table": None,
            "action_reference_old_row": "OLD",
            "action_reference_new_row": "NEW",
            "created": None,
            "sql_mode": SQL_MODE,
            "definer": trigger.definer,
            **_session(),
            "database_collation": COLLATION,
        }
        for trigger in triggers
    ]


def routines_row(routine: StoredObject) -> InfoRow:
    parts = routine_parts(routine)
    function = routine.ref.kind is ObjectKind.FUNCTION
    info = type_info(_CHARSET_CLAUSE.sub("", parts.returns)) if function else None
    return {
        "specific_name": routine.ref.name,
        "routine_catalog": "def",
        "routine_schema": routine.ref.schema,
        "routine_name": routine.ref.name,
        "routine_type": routine.ref.kind.value,
        "data_type": info.data_type if info else "",
        "character_maximum_length": info.character_maximum_length if info else None,
        "character_octet_length": info.character_octet_length if info else None,
        "numeric_precision": info.numeric_precision if info else None,
        "numeric_scale": info.numeric_scale if info else None,
        "datetime_precision": info.datetime_precision if info else None,
        "character_set_name": info.character_set_name if info else None,
        "collation_name": info.collation_name if info else None,
        "dtd_identifier": info.column_type if info else None,
        "routine_body": "SQL",
        "routine_definition": parts.body,
        "external_name": None,
        "external_language": "SQL",
        "parameter_style": "SQL",
        "is_deterministic": "YES" if parts.deterministic else "NO",
        "sql_data_access": parts.data_access,
        "sql_path": None,
        "security_type": parts.security,
        "created": None,
        "last_altered": None,
        "sql_mode": SQL_MODE,
        "routine_comment": parts.comment,
        "definer": routine.definer,
        **_session(),
        "database_collation": COLLATION,
    }


def events_row(event: StoredObject) -> InfoRow:
    parts = event_parts(event)
    return {
        "event_catalog": "def",
        "event_schema": event.ref.schema,
        "event_name": event.ref.name,
        "definer": event.definer,
        "time_zone": "SYSTEM",
        "event_body": "SQL",
        "event_definition": parts.body,
        "event_type": "RECURRING" if parts.recurring else "ONE TIME",
        "execute_at": parts.execute_at,
        "interval_value": parts.interval_value,
        "interval_field": parts.interval_field,
        "sql_mode": SQL_MODE,
        "starts": parts.starts,
        "ends": parts.ends,
        "status": EVENT_STATUS,
        "on_completion": "PRESERVE" if parts.preserve else "NOT PRESERVE",
        "created": None,
        "last_altered": None,
        "last_executed": None,
        "event_comment": parts.comment,
        "originator": None,
        **_session(),
        "database_collation": COLLATION,
    }


def action_orders(triggers: Iterable[StoredObject]) -> dict[ObjectRef, int]:
    """ACTION_ORDER: each trigger's place, from 1, among the triggers of its table with the
    same timing and event. The kept catalog has no creation order, so triggers go by name,
    then each one that FOLLOWS or PRECEDES another is moved beside it, as MySQL places it."""
    groups: dict[tuple[str, str, str, str], list[StoredObject]] = {}
    for trigger in sorted(triggers, key=lambda t: t.ref.name.casefold()):
        key = (trigger.ref.schema, trigger.table, trigger.timing, trigger.event)
        groups.setdefault(key, []).append(trigger)
    orders: dict[ObjectRef, int] = {}
    for members in groups.values():
        ordered = list(members)
        for trigger in members:
            parts = trigger_parts(trigger)
            names = [t.ref.name.casefold() for t in ordered]
            if not parts.order or parts.other.casefold() not in names:
                continue
            ordered.remove(trigger)
            names = [t.ref.name.casefold() for t in ordered]
            index = names.index(parts.other.casefold())
            ordered.insert(index + 1 if parts.order == "FOLLOWS" else index, trigger)
        orders.update({trigger.ref: i + 1 for i, trigger in enumerate(ordered)})
    return orders


def updatable(view: StoredObject) -> bool:
    """IS_UPDATABLE by MySQL's rules: not with ALGORITHM=TEMPTABLE, aggregates, DISTINCT,
    GROUP BY, HAVING, UNION, a subquery in the select list, or no table at all.
    https://dev.mysql.com/doc/refman/8.4/en/view-updatability.html"""
    if view.algorithm == "TEMPTABLE":
        return False
    try:
        query = sqlglot.parse_one(view.select, read="mysql")
    except (ParseError, TokenError):
        return False
    if not isinstance(query, exp.Select) or query.args.get("distinct") is not None:
        return False
    if any(query.args.get(clause) is not None for clause in ("group", "having")):
        return False
    if not query.args.get("from_"):
        return False
    for column in query.expressions:
        if column.find(exp.AggFunc, exp.Subquery, exp.Select) is not None:
            return False
    return True
