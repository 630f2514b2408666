"""ALTER TABLE as Iceberg schema evolution: which ALTERs change only a table's schema, and
the change that does it.

An ALTER keeps the stored values when every column of the new definition either comes
from an old column unconverted (``AlteredTable``: no converter) and is stored the same way
or in a type Iceberg promotes (int → long, float → double, a DECIMAL's precision up,
same scale), or is a new nullable column filled with NULL. Iceberg then drops, renames,
adds, widens and reorders columns in one metadata commit (``SchemaChange``), its data
files untouched: old files are read by field id under the new schema. Any other ALTER
(a new column with a DEFAULT, a narrowed or retyped column, a column made NOT NULL, names
that would collide during the change) rewrites the table (``ddl_state``).

Keys and secondary indexes are not part of an Iceberg schema: changing them is metadata
only here (the key index is rebuilt from the converted rows either way).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from spark_replica.applier_core.storage.column_types import parse_type
from spark_replica.applier_core.storage.ddl_alter import AlteredTable
from spark_replica.applier_core.storage.interface import Column, TableDef
from spark_replica.applier_core.storage.spark.types import SparkType, nullable, spark_type

#: Spark types Iceberg stores as its ``int``.
_ICEBERG_INT = frozenset({"TINYINT", "SMALLINT", "INT"})
_DECIMAL = re.compile(r"DECIMAL\((\d+),(\d+)\)\Z")


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One Iceberg schema update. Old columns are named as the table names them before it
    (``renames`` give their new names), new ones by their names; ``order`` is the final
    column order in those names. Types are Spark SQL type texts."""

    drops: tuple[str, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()
    widens: tuple[tuple[str, str], ...] = ()
    optional: tuple[str, ...] = ()
    adds: tuple[tuple[str, str], ...] = ()
    order: tuple[str, ...] = ()


def schema_change(before: TableDef, altered: AlteredTable) -> SchemaChange | None:
    """The Iceberg schema update that turns the table ``before`` into ``altered``'s
    definition without touching its data; None when its values must be rewritten."""
    old = before.columns
    new = altered.definition.columns
    taken = {c.name.lower() for c in old}
    kept = {s for s in altered.sources if s is not None}
    drops = tuple(c.name for i, c in enumerate(old) if i not in kept)
    renames: list[tuple[str, str]] = []
    widens: list[tuple[str, str]] = []
    optional: list[str] = []
    adds: list[tuple[str, str]] = []
    order: list[str] = []
    for column, source, convert in zip(new, altered.sources, altered.converters, strict=True):
        if convert is not None:
            return None
        stored = spark_type(column.type)
        if source is None:
            if column.name.lower() in taken or not nullable(column, stored):
                return None
            adds.append((column.name, stored.spark_sql))
            order.append(column.name)
            continue
        was = old[source]
        if column.name != was.name:
            if column.name.lower() in taken and column.name.lower() != was.name.lower():
                return None
            renames.append((was.name, column.name))
        promoted = _promotion(spark_type(was.type), stored, was, column)
        if promoted is None:
            return None
        if promoted:
            widens.append((was.name, stored.spark_sql))
        was_nullable = nullable(was, spark_type(was.type))
        if nullable(column, stored) != was_nullable:
            if was_nullable:
                return None  # Iceberg cannot make a column required
            optional.append(was.name)
        order.append(was.name)
    return SchemaChange(
        tuple(drops), tuple(renames), tuple(widens), tuple(optional), tuple(adds), tuple(order)
    )


def _promotion(old: SparkType, new: SparkType, was: Column, column: Column) -> bool | None:
    """False: the values are stored alike; True: in a type Iceberg promotes to; None:
    neither (the values must be rewritten)."""
    if _stored_form(old, was) != _stored_form(new, column):
        return None
    before, after = _iceberg_sql(old.spark_sql), _iceberg_sql(new.spark_sql)
    if before == after:
        return False
    if (before, after) in (("INT", "BIGINT"), ("FLOAT", "DOUBLE")):
        return True
    widened = _DECIMAL.match(before), _DECIMAL.match(after)
    if widened[0] and widened[1]:
        (p1, s1), (p2, s2) = widened[0].groups(), widened[1].groups()
        return True if s1 == s2 and int(p2) > int(p1) else None
    return None


def _iceberg_sql(spark_sql: str) -> str:
    return "INT" if spark_sql in _ICEBERG_INT else spark_sql


def _stored_form(spark: SparkType, column: Column) -> tuple[object, ...]:
    """What decides how a value is written and read back, besides the Iceberg type: the
    conversions (by name) and, for TIME kept as text, its fractional digits."""
    convert = tuple(getattr(f, "__qualname__", None) for f in (spark.to_spark, spark.from_spark))
    mysql = parse_type(column.type)
    return convert, mysql.fsp if mysql.name == "time" else None, spark.read_as
