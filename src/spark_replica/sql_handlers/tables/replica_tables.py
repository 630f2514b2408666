"""The replicated tables as MySQL 8.4 describes them: information_schema rows, SHOW CREATE TABLE.

The storage engine's catalog (``TableCatalog``) changes while the server runs, as replicated
DDL commits. ``ReplicaCatalog.read`` copies it once per statement into an immutable value,
so one statement sees one state even if DDL commits meanwhile; two copies compare equal when
nothing changed, which lets the server reuse what it built from the previous one (comparing
is cheap: unchanged definitions are the same objects).

The ``information_schema`` rows are dicts keyed by MySQL's lower-case column names, the names
mysql-mimic's ``INFO_SCHEMA`` uses, so the server can lay them out in its tables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from spark_replica.applier_core.errors import ReplicaError
from spark_replica.applier_core.storage import TableDef, TableRef
from spark_replica.applier_core.storage.collations import charset_of
from spark_replica.applier_core.storage.indexes import column_keys
from spark_replica.applier_core.storage.objects import ObjectKind, ObjectRef, StoredObject
from spark_replica.sql_handlers.query.interfaces import TableCatalog
from spark_replica.sql_handlers.tables import constraint_rows, object_rows
from spark_replica.sql_handlers.tables.key_rows import (
    key_column_usage_rows,
    key_lines,
    quote,
    statistics_rows,
    table_constraints_rows,
)
from spark_replica.sql_handlers.tables.replica_types import (
    CHARSET,
    COLLATION,
    column_info,
    type_info,
)

#: The ENGINE that SHOW CREATE TABLE and information_schema.TABLES name for replicated tables.
ENGINE = "SparkSQL"
#: What MySQL shows in COLUMNS.PRIVILEGES for an account with every table privilege.
PRIVILEGES = "select,insert,update,references"

#: One information_schema row, by lower-case column name.
InfoRow = Mapping[str, object]


@dataclass(frozen=True, slots=True)
class ReplicaCatalog:
    """The replicated databases, table definitions and kept objects (views, triggers,
    routines, events) at one moment."""

    databases: tuple[str, ...] = ()
    definitions: Mapping[TableRef, TableDef] = field(default_factory=dict)
    objects: tuple[StoredObject, ...] = ()
    #: Each database's default collation, where known.
    collations: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def read(cls, catalog: TableCatalog | None) -> ReplicaCatalog:
        """Copy ``catalog`` (None: no storage engine, no replicated tables)."""
        if catalog is None:
            return cls()
        definitions: dict[TableRef, TableDef] = {}
        for ref in catalog.tables():
            try:
                definitions[ref] = catalog.definition(ref)
            except ReplicaError:
                continue  # dropped since tables() was read
        databases = set(catalog.databases()) | {ref.schema for ref in definitions}
        collations = {name: catalog.database_collation(name) for name in databases}
        return cls(
            tuple(sorted(databases)),
            definitions,
            tuple(catalog.objects()),
            {name: found for name, found in collations.items() if found},
        )

    def definition(self, schema: str, table: str) -> TableDef | None:
        return self.definitions.get(TableRef(schema, table))

    def of_kind(self, kind: ObjectKind) -> list[StoredObject]:
        """The kept objects of one kind, by database and name."""
        return [o for o in self.objects if o.ref.kind is kind]

    def find(self, kind: ObjectKind, schema: str, name: str) -> StoredObject | None:
        """The object ``kind`` ``schema.name`` (routine, trigger and event names ignore case,
        as in MySQL; a view's is a table name)."""
        key = ObjectRef(kind, schema, name).key
        return next((o for o in self.objects if o.ref.key == key), None)


@dataclass(frozen=True, slots=True)
class ObjectRows:
    """The rows of information_schema VIEWS, TRIGGERS, ROUTINES and EVENTS."""

    views: Sequence[InfoRow] = ()
    triggers: Sequence[InfoRow] = ()
    routines: Sequence[InfoRow] = ()
    events: Sequence[InfoRow] = ()

    @classmethod
    def of(cls, catalog: ReplicaCatalog) -> ObjectRows:
        routines = catalog.of_kind(ObjectKind.PROCEDURE) + catalog.of_kind(ObjectKind.FUNCTION)
        return cls(
            [object_rows.views_row(view) for view in catalog.of_kind(ObjectKind.VIEW)],
            object_rows.triggers_rows(catalog.of_kind(ObjectKind.TRIGGER)),
            [object_rows.routines_row(routine) for routine in routines],
            [object_rows.events_row(event) for event in catalog.of_kind(ObjectKind.EVENT)],
        )


class InfoRows:
    """The rows of information_schema SCHEMATA, TABLES, COLUMNS, STATISTICS,
    TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS and CHECK_CONSTRAINTS, and
    of the kept objects' tables (``objects``)."""

    def __init__(
        self,
        schemata: Sequence[InfoRow] = (),
        tables: Sequence[InfoRow] = (),
        columns: Sequence[InfoRow] = (),
        statistics: Sequence[InfoRow] = (),
        objects: ObjectRows | None = None,
        constraints: Sequence[InfoRow] = (),
        key_usage: Sequence[InfoRow] = (),
        referential: Sequence[InfoRow] = (),
        checks: Sequence[InfoRow] = (),
    ) -> None:
        self.schemata = list(schemata)
        self.tables = list(tables)
        self.columns = list(columns)
        self.statistics = list(statistics)
        self.objects = objects or ObjectRows()
        self.constraints = list(constraints)
        self.key_usage = list(key_usage)
        self.referential = list(referential)
        self.checks = list(checks)

    @classmethod
    def of(cls, catalog: ReplicaCatalog) -> InfoRows:
        """The rows describing the replicated databases, tables and kept objects (a view has
        its row in TABLES)."""
        refs = sorted(catalog.definitions)
        views = [object_rows.view_table_row(v) for v in catalog.of_kind(ObjectKind.VIEW)]
        sequences = {
            TableRef(s.ref.schema, s.ref.name) for s in catalog.of_kind(ObjectKind.SEQUENCE)
        }
        defs = catalog.definitions
        return cls(
            [schemata_row(name, catalog.collations.get(name, "")) for name in catalog.databases],
            [tables_row(ref, defs[ref], sequence=ref in sequences) for ref in refs] + views,
            [row for ref in refs for row in columns_rows(ref, defs[ref])],
            [row for ref in refs for row in statistics_rows(ref, defs[ref])],
            ObjectRows.of(catalog),
            [
                row
                for ref in refs
                for rows in (
                    table_constraints_rows(ref, defs[ref]),
                    constraint_rows.table_constraints_rows(ref, defs[ref]),
                )
                for row in rows
            ],
            [
                row
                for ref in refs
                for rows in (
                    key_column_usage_rows(ref, defs[ref]),
                    constraint_rows.key_column_usage_rows(ref, defs[ref]),
                )
                for row in rows
            ],
            [
                row
                for ref in refs
                for row in constraint_rows.referential_constraints_rows(ref, defs[ref], defs)
            ],
            [row for ref in refs for row in constraint_rows.check_constraints_rows(ref, defs[ref])],
        )

    def merged(self, other: InfoRows) -> InfoRows:
        """These rows, then the rows of ``other`` for databases and tables not already here."""
        schemas = {row["schema_name"] for row in self.schemata}
        tables = set(self.table_rows)
        new_tables = [r for r in other.tables if _table_key(r) not in tables]

        def fresh(rows: Iterable[InfoRow]) -> list[InfoRow]:
            return [r for r in rows if _table_key(r) not in tables]

        return InfoRows(
            self.schemata + [r for r in other.schemata if r["schema_name"] not in schemas],
            self.tables + new_tables,
            self.columns + fresh(other.columns),
            self.statistics + fresh(other.statistics),
            other.objects,  # the virtual schemas have no views, triggers, routines or events
            self.constraints + fresh(other.constraints),
            self.key_usage + fresh(other.key_usage),
            self.referential + other.referential,
            self.checks + other.checks,
        )

    @cached_property
    def table_rows(self) -> dict[tuple[str, str], InfoRow]:
        return {_table_key(row): row for row in self.tables}

    @cached_property
    def column_rows(self) -> dict[tuple[str, str], list[InfoRow]]:
        return _grouped(self.columns)

    @cached_property
    def statistics_rows(self) -> dict[tuple[str, str], list[InfoRow]]:
        return _grouped(self.statistics)


def _table_key(row: InfoRow) -> tuple[str, str]:
    return str(row["table_schema"]), str(row["table_name"])


def _grouped(rows: Iterable[InfoRow]) -> dict[tuple[str, str], list[InfoRow]]:
    grouped: dict[tuple[str, str], list[InfoRow]] = {}
    for row in rows:
        grouped.setdefault(_table_key(row), []).append(row)
    return grouped


def schemata_row(name: str, collation: str = "") -> InfoRow:
    """``collation``: the database's default ("": not known, the server's shown)."""
    return {
        "catalog_name": "def",
        "schema_name": name,
        "default_character_set_name": charset_of(collation) if collation else CHARSET,
        "default_collation_name": collation or COLLATION,
        "sql_path": None,
    }


def tables_row(
    ref: TableRef, definition: TableDef | None = None, *, sequence: bool = False
) -> InfoRow:
    """Statistics (TABLE_ROWS, DATA_LENGTH, times) are NULL: the catalog does not keep them.
    A MariaDB sequence's TABLE_TYPE is ``SEQUENCE``, as MariaDB shows it."""
    return {
        "table_catalog": "def",
        "table_schema": ref.schema,
        "table_name": ref.table,
        "table_type": "SEQUENCE" if sequence else "BASE TABLE",
        "engine": ENGINE,
        "version": "10",
        "row_format": "Dynamic",
        "table_collation": (definition.collation if definition else "") or COLLATION,
        "create_options": "",
        "table_comment": "",
    }


def columns_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """One row per column, ORDINAL_POSITION from 1. The catalog keeps no defaults: a column's
    DEFAULT is NULL (MySQL's for a nullable column without one; none for NOT NULL)."""
    keys = column_keys(definition.columns, definition.primary_key, definition.indexes)
    rows: list[InfoRow] = []
    for position, column in enumerate(definition.columns):
        info = column_info(column)
        rows.append(
            {
                "table_catalog": "def",
                "table_schema": ref.schema,
                "table_name": ref.table,
                "column_name": column.name,
                "ordinal_position": position + 1,
                "column_default": None,
                "is_nullable": "YES" if column.nullable else "NO",
                "data_type": info.data_type,
                "character_maximum_length": info.character_maximum_length,
                "character_octet_length": info.character_octet_length,
                "numeric_precision": info.numeric_precision,
                "numeric_scale": info.numeric_scale,
                "datetime_precision": info.datetime_precision,
                "character_set_name": info.character_set_name,
                "collation_name": info.collation_name,
                "column_type": info.column_type,
                "column_key": keys[position],
                "extra": "",
                "privileges": PRIVILEGES,
                "column_comment": "",
                "generation_expression": "",
                "srs_id": None,
            }
        )
    return rows


def create_table_text(name: str, definition: TableDef, schema: str = "") -> str:
    """SHOW CREATE TABLE's text for a replicated table, laid out as MySQL 8.4 prints it.

    >>> from spark_replica.applier_core.storage import Column
    >>> print(create_table_text("t", TableDef((Column("id", "INT", False),), (0,))))
    CREATE TABLE `t` (
      `id` int NOT NULL,
      PRIMARY KEY (`id`)
    ) ENGINE=SparkSQL DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci

    A text column whose collation is not the table's shows its character set and collation
    (``CHARACTER SET latin1 COLLATE latin1_bin``). ``schema``: the table's database, which
    a foreign key's referenced table is shown without.
    """
    table_collation = definition.collation or COLLATION
    lines = []
    for column in definition.columns:
        info = type_info(column.type)
        charset = ""
        if column.collation and column.collation != table_collation:
            charset = f" CHARACTER SET {charset_of(column.collation)} COLLATE {column.collation}"
        if not column.nullable:
            nullability = " NOT NULL"
        elif info.data_type == "timestamp":
            nullability = " NULL DEFAULT NULL"
        else:
            nullability = " DEFAULT NULL" if info.takes_default else ""
        lines.append(f"  {quote(column.name)} {info.column_type}{charset}{nullability}")
    lines += key_lines(definition)
    lines += constraint_rows.constraint_lines(schema, definition)
    return (
        f"CREATE TABLE {quote(name)} (\n"
        + ",\n".join(lines)
        + f"\n) ENGINE={ENGINE} DEFAULT CHARSET={charset_of(table_collation)}"
        + f" COLLATE={table_collation}"
    )
