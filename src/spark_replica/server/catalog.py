"""information_schema, SHOW TABLES and SHOW COLUMNS for the virtual tables.

mysql-mimic builds information_schema from a list of columns; this module gives it the
performance_schema and mysql replication tables with their real types and nullability, and
reports the mysql.* tables as BASE TABLE as MySQL does (mysql-mimic would say SYSTEM TABLE).
"""

from __future__ import annotations

from functools import cache

from mysql_mimic.schema import Column, InfoSchema

from spark_replica.sql_handlers.tables.ddl import type_text
from spark_replica.sql_handlers.tables.definitions import TABLES

_TABLE_TYPE_COLUMN = 3


@cache
def virtual_info_schema() -> InfoSchema:
    columns = [
        Column(
            name=column.name,
            type=type_text(column.sql_type),
            table=table.name,
            is_nullable=column.nullable,
            schema=table.schema,
        )
        for table in TABLES.values()
        for column in table.columns
    ]
    info = InfoSchema.from_columns(columns)
    tables = info.tables["information_schema"]["tables"]
    ours = {(t.schema, t.name) for t in TABLES.values()}
    tables.rows = [
        _with_type(row, "BASE TABLE") if (row[1], row[2]) in ours else row for row in tables.rows
    ]
    return info


def _with_type(row: tuple[object, ...], table_type: str) -> tuple[object, ...]:
    return row[:_TABLE_TYPE_COLUMN] + (table_type,) + row[_TABLE_TYPE_COLUMN + 1 :]
