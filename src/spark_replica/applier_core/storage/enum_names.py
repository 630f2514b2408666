"""ENUM and SET values by name.

With ``binlog_row_metadata=MINIMAL`` (MySQL's default) the binlog carries no member names, so
the row decoder gives an ENUM as its 1-based index and a SET as its bitmap. The table's
definition (from the replicated CREATE TABLE) has the members: engines store the names, as
MySQL shows them, whichever way the binlog carried the value. The members and the index →
name rule are the ones ALTER TABLE conversions use (``ddl_convert``).
"""

from __future__ import annotations

from collections.abc import Callable

from spark_replica.applier_core.storage.ddl_convert import (
    Kind,
    ValueFault,
    member_names,
    sql_type,
)
from spark_replica.applier_core.storage.interface import Row, TableDef


def name_normalizer(definition: TableDef) -> Callable[[Row], Row] | None:
    """A function turning ENUM indexes and SET bitmaps of a row into names; None when the
    table has no ENUM or SET column."""
    converters: list[tuple[int, Callable[[object], str]]] = []
    for index, column in enumerate(definition.columns):
        found = sql_type(column.type)
        if found.kind in (Kind.ENUM, Kind.SET):
            converters.append((index, member_names(found)))
    if not converters:
        return None

    def normalize(row: Row) -> Row:
        # Names pass through unchanged; only the decoder's integers need converting.
        if not any(i < len(row) and type(row[i]) is int for i, _ in converters):
            return row
        values = list(row)
        for i, name in converters:
            value = values[i] if i < len(values) else None
            if type(value) is int:
                try:
                    values[i] = name(value)
                except ValueFault:
                    pass  # not a member: kept as the binlog gave it
        return tuple(values)

    return normalize
