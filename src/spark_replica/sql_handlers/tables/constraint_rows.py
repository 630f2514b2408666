"""A replicated table's FOREIGN KEY and CHECK constraints as MySQL 8.4 describes them:
information_schema TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS and
CHECK_CONSTRAINTS rows, and SHOW CREATE TABLE's constraint lines.

SHOW CREATE TABLE lists the foreign keys, then the checks, each sorted by name, after the
keys: ``CONSTRAINT `fk` FOREIGN KEY (`a`) REFERENCES `t` (`b`) ON DELETE CASCADE`` (the
referenced table with its database when that is another one; a rule the source applies
when none is written is left out) and ``CONSTRAINT `c` CHECK (...)`` with
``/*!80016 NOT ENFORCED */`` for a check not enforced. REFERENTIAL_CONSTRAINTS names the
referenced table's PRIMARY or UNIQUE key on the referenced columns (NULL: none known).
https://dev.mysql.com/doc/refman/8.4/en/information-schema-referential-constraints-table.html
https://dev.mysql.com/doc/refman/8.4/en/information-schema-check-constraints-table.html
"""

from __future__ import annotations

from collections.abc import Mapping

from spark_replica.applier_core.storage import (
    CheckConstraint,
    ForeignKey,
    TableDef,
    TableRef,
)

#: One information_schema row, by lower-case column name.
InfoRow = Mapping[str, object]

#: CHECK_CONSTRAINTS' columns (mysql-mimic's information_schema has no such table).
CHECK_CONSTRAINTS_COLUMNS = ("constraint_catalog", "constraint_schema", "constraint_name",
                             "check_clause")  # fmt: skip


def sorted_keys(definition: TableDef) -> list[ForeignKey]:
    return sorted(definition.foreign_keys, key=lambda key: key.name)


def sorted_checks(definition: TableDef) -> list[CheckConstraint]:
    return sorted(definition.checks, key=lambda found: (found.name.casefold(), found.name))


def constraint_lines(schema: str, definition: TableDef) -> list[str]:
    """SHOW CREATE TABLE's lines for the foreign keys and checks of a table of ``schema``."""
    lines = []
    for key in sorted_keys(definition):
        columns = ", ".join(_quote(definition.columns[c].name) for c in key.columns)
        target = _quote(key.referenced.table)
        if key.referenced.schema != schema:
            target = f"{_quote(key.referenced.schema)}.{target}"
        referenced = ", ".join(_quote(c) for c in key.referenced_columns)
        line = f"  CONSTRAINT {_quote(key.name)} FOREIGN KEY ({columns}) REFERENCES {target} "
        line += f"({referenced})"
        if key.on_delete != key.implicit:
            line += f" ON DELETE {key.on_delete}"
        if key.on_update != key.implicit:
            line += f" ON UPDATE {key.on_update}"
        lines.append(line)
    for found in sorted_checks(definition):
        line = f"  CONSTRAINT {_quote(found.name)} CHECK ({found.clause})"
        lines.append(line if found.enforced else line + " /*!80016 NOT ENFORCED */")
    return lines


def table_constraints_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """The FOREIGN KEY and CHECK rows of TABLE_CONSTRAINTS."""
    rows: list[InfoRow] = [
        _constraint_row(ref, key.name, "FOREIGN KEY", enforced=True)
        for key in definition.foreign_keys
    ]
    rows += [
        _constraint_row(ref, found.name, "CHECK", enforced=found.enforced)
        for found in definition.checks
    ]
    return rows


def _constraint_row(ref: TableRef, name: str, kind: str, *, enforced: bool) -> InfoRow:
    return {
        "constraint_catalog": "def",
        "constraint_schema": ref.schema,
        "constraint_name": name,
        "table_schema": ref.schema,
        "table_name": ref.table,
        "constraint_type": kind,
        "enforced": "YES" if enforced else "NO",
    }


def key_column_usage_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """One row per column of each foreign key, with the column it references."""
    return [
        {
            "constraint_catalog": "def",
            "constraint_schema": ref.schema,
            "constraint_name": key.name,
            "table_catalog": "def",
            "table_schema": ref.schema,
            "table_name": ref.table,
            "column_name": definition.columns[column].name,
            "ordinal_position": position,
            "position_in_unique_constraint": position,
            "referenced_table_schema": key.referenced.schema,
            "referenced_table_name": key.referenced.table,
            "referenced_column_name": referenced,
        }
        for key in definition.foreign_keys
        for position, (column, referenced) in enumerate(
            zip(key.columns, key.referenced_columns, strict=False), 1
        )
    ]


def referential_constraints_rows(
    ref: TableRef, definition: TableDef, definitions: Mapping[TableRef, TableDef]
) -> list[InfoRow]:
    """One row per foreign key."""
    return [
        {
            "constraint_catalog": "def",
            "constraint_schema": ref.schema,
            "constraint_name": key.name,
            "unique_constraint_catalog": "def",
            "unique_constraint_schema": key.referenced.schema,
            "unique_constraint_name": _unique_name(key, definitions.get(key.referenced)),
            "match_option": "NONE",
            "update_rule": key.on_update.value,
            "delete_rule": key.on_delete.value,
            "table_name": ref.table,
            "referenced_table_name": key.referenced.table,
        }
        for key in sorted_keys(definition)
    ]


def _unique_name(key: ForeignKey, parent: TableDef | None) -> str | None:
    """The parent's PRIMARY or UNIQUE key on exactly the referenced columns."""
    if parent is None:
        return None
    wanted = [c.casefold() for c in key.referenced_columns]
    names = [c.name.casefold() for c in parent.columns]
    if [names[c] for c in parent.primary_key] == wanted:
        return "PRIMARY"
    for index in parent.indexes:
        if index.unique and [names[p.column] for p in index.parts if p.column >= 0] == wanted:
            return index.name
    return None


def check_constraints_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """One row per check: the expression as the source shows it."""
    return [
        {
            "constraint_catalog": "def",
            "constraint_schema": ref.schema,
            "constraint_name": found.name,
            "check_clause": found.clause,
        }
        for found in definition.checks
    ]


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"
