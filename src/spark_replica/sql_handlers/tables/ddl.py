"""SHOW CREATE TABLE text and catalog entries for the virtual tables."""

from __future__ import annotations

from spark_replica.sql_handlers.tables.definitions import TableDef

#: Primary keys as MySQL declares them (reference §1 and §2).
PRIMARY_KEYS: dict[tuple[str, str], tuple[str, ...]] = {
    ("performance_schema", "replication_applier_status_by_worker"): ("CHANNEL_NAME", "WORKER_ID"),
    ("performance_schema", "replication_applier_progress_by_worker"): (
        "CHANNEL_NAME",
        "WORKER_ID",
    ),
    ("performance_schema", "replication_applier_filters"): (),
    ("performance_schema", "replication_applier_global_filters"): (),
    ("mysql", "slave_worker_info"): ("Channel_name", "Id"),
    ("mysql", "gtid_executed"): ("source_uuid", "gtid_tag", "interval_start"),
}

_ENGINES = {"performance_schema": "PERFORMANCE_SCHEMA", "mysql": "InnoDB"}


def create_table_statement(table: TableDef) -> str:
    """The CREATE TABLE statement MySQL shows for ``table``.

    >>> print(create_table_statement(TABLES[("mysql", "gtid_executed")]).splitlines()[1])
      `source_uuid` char(36) NOT NULL,
    """
    lines = [
        f"  `{c.name}` {type_text(c.sql_type)}{'' if c.nullable else ' NOT NULL'}"
        for c in table.columns
    ]
    key = PRIMARY_KEYS.get((table.schema, table.name))
    if key is None:
        key = ("CHANNEL_NAME",) if table.schema == "performance_schema" else ("Channel_name",)
    if key:
        lines.append("  PRIMARY KEY (" + ",".join(f"`{k}`" for k in key) + ")")
    engine = _ENGINES.get(table.schema, "InnoDB")
    return (
        f"CREATE TABLE `{table.name}` (\n"
        + ",\n".join(lines)
        + f"\n) ENGINE={engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    )


def type_text(sql_type: str) -> str:
    """Lower-case the type name, keeping ENUM values as written."""
    head, sep, rest = sql_type.partition("(")
    if head.startswith(("ENUM", "SET")):
        return head.lower() + sep + rest
    return sql_type.lower()
