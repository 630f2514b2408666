"""A replicated table's keys as MySQL 8.4 describes them: information_schema STATISTICS,
TABLE_CONSTRAINTS and KEY_COLUMN_USAGE rows, and SHOW CREATE TABLE's key lines.

The PRIMARY key comes first, then the secondary keys in the order the catalog keeps them
(MySQL's, ``storage.indexes.mysql_order``). What MySQL computes from the stored data is not
known here: CARDINALITY is NULL. As in MySQL 8.4, a FULLTEXT or SPATIAL key part has no
COLLATION and no SUB_PART, and a DESC key part has COLLATION 'D'. A functional key part
has no COLUMN_NAME and its expression in EXPRESSION.
https://dev.mysql.com/doc/refman/8.4/en/information-schema-statistics-table.html
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from spark_replica.applier_core.storage import Index, IndexKind, IndexPart, TableDef, TableRef

#: One information_schema row, by lower-case column name.
InfoRow = Mapping[str, object]

#: How SHOW CREATE TABLE opens each kind of secondary key.
_KEY_WORDS = {
    IndexKind.INDEX: "KEY",
    IndexKind.UNIQUE: "UNIQUE KEY",
    IndexKind.FULLTEXT: "FULLTEXT KEY",
    IndexKind.SPATIAL: "SPATIAL KEY",
}


def all_keys(definition: TableDef) -> Iterator[Index]:
    """The PRIMARY key (when there is one) as an ``Index``, then the secondary keys."""
    if definition.primary_key:
        parts = tuple(
            IndexPart(column, prefix)
            for column, prefix in zip(definition.primary_key, definition.key_prefix, strict=True)
        )
        yield Index("PRIMARY", IndexKind.UNIQUE, parts)
    yield from definition.indexes


def statistics_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """One row per key part (SUB_PART: the prefix length, if any)."""
    rows: list[InfoRow] = []
    for index in all_keys(definition):
        ordered = index.kind in (IndexKind.INDEX, IndexKind.UNIQUE)
        for sequence, part in enumerate(index.parts, 1):
            column = definition.columns[part.column] if part.column >= 0 else None
            rows.append(
                {
                    "table_catalog": "def",
                    "table_schema": ref.schema,
                    "table_name": ref.table,
                    "non_unique": 0 if index.unique else 1,
                    "index_schema": ref.schema,
                    "index_name": index.name,
                    "seq_in_index": sequence,
                    "column_name": column.name if column is not None else None,
                    "collation": ("D" if part.descending else "A") if ordered else None,
                    "cardinality": None,
                    "sub_part": (part.prefix or None) if ordered else None,
                    "packed": None,
                    "nullable": "YES" if column is None or column.nullable else "",
                    "index_type": "BTREE" if ordered else index.kind.value,
                    "comment": "",
                    "index_comment": index.comment,
                    "is_visible": "YES" if index.visible else "NO",
                    "expression": part.expression or None,
                }
            )
    return rows


def table_constraints_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """The PRIMARY KEY and UNIQUE constraints (foreign keys and checks are not kept)."""
    return [
        {
            "constraint_catalog": "def",
            "constraint_schema": ref.schema,
            "constraint_name": index.name,
            "table_schema": ref.schema,
            "table_name": ref.table,
            "constraint_type": "PRIMARY KEY" if index.name == "PRIMARY" else "UNIQUE",
            "enforced": "YES",
        }
        for index in all_keys(definition)
        if index.unique
    ]


def key_column_usage_rows(ref: TableRef, definition: TableDef) -> list[InfoRow]:
    """One row per column of the PRIMARY KEY and UNIQUE constraints."""
    return [
        {
            "constraint_catalog": "def",
            "constraint_schema": ref.schema,
            "constraint_name": index.name,
            "table_catalog": "def",
            "table_schema": ref.schema,
            "table_name": ref.table,
            "column_name": definition.columns[part.column].name,
            "ordinal_position": position,
            "position_in_unique_constraint": None,
            "referenced_table_schema": None,
            "referenced_table_name": None,
            "referenced_column_name": None,
        }
        for index in all_keys(definition)
        if index.unique
        for position, part in enumerate(index.parts, 1)
        if part.column >= 0
    ]


def key_lines(definition: TableDef) -> list[str]:
    """SHOW CREATE TABLE's lines for the keys, as MySQL 8.4's ``store_create_info`` writes
    them: ``PRIMARY KEY (...)``, then ``[UNIQUE |FULLTEXT |SPATIAL ]KEY `name` (...)`` with
    the comment and ``/*!80000 INVISIBLE */`` after the parts."""
    keys = list(all_keys(definition))
    lines = []
    if definition.primary_key:
        primary = keys.pop(0)
        lines.append(f"  PRIMARY KEY ({_parts_text(definition, primary)})")
    for index in keys:
        line = f"  {_KEY_WORDS[index.kind]} {quote(index.name)} ({_parts_text(definition, index)})"
        if index.comment:
            line += " COMMENT '" + index.comment.replace("'", "''") + "'"
        if not index.visible:
            line += " /*!80000 INVISIBLE */"
        lines.append(line)
    return lines


def _parts_text(definition: TableDef, index: Index) -> str:
    return ",".join(_part_text(definition, part) for part in index.parts)


def _part_text(definition: TableDef, part: IndexPart) -> str:
    if part.expression:  # a functional key part: (expression)
        return f"({part.expression})" + (" DESC" if part.descending else "")
    text = quote(definition.columns[part.column].name)
    if part.prefix:
        text += f"({part.prefix})"
    return text + (" DESC" if part.descending else "")


def quote(identifier: str) -> str:
    """An identifier in backticks, as SHOW CREATE TABLE quotes it."""
    return "`" + identifier.replace("`", "``") + "`"
