"""What a result column's definition tells a client: MySQL's type code, character set,
length, decimals and flags, and the table and column it comes from.

Drivers decide from these how to read each value: pymysql, mysqlclient and aiomysql return
``bytes`` only for a column in the ``binary`` character set (63) and decode everything else
as text, so a BLOB sent in utf8mb4 fails them on the first byte that is not UTF-8;
Connector/J and mysql2 read NOT_NULL, UNSIGNED and the decimals to pick Java and JavaScript
types. MySQL takes them from the table's definition; so does the replica, for every result
column that names a column of a replicated table (``origins``). A computed column is
described from the type Spark gives it.

The figures follow MySQL's (checked against MariaDB's, which agree on them): an INT's
length is its display width (11, 10 unsigned), a DECIMAL(p,s)'s p + 1 (sign) + 1 (point, when
s > 0) with s decimals, a string's length is in bytes of the result's character set
(utf8mb4: four per character), a TEXT's its byte limit times four, capped at 2^32 - 1.
https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_query_response_text_resultset_column_definition.html
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import expressions as exp

from spark_replica.applier_core.storage import Column, TableDef, TableRef
from spark_replica.applier_core.storage.column_types import parse_type
from spark_replica.applier_core.storage.ddl_convert import Kind, SqlType, sql_type
from spark_replica.sql_handlers.query.interfaces import ResultColumn, TableCatalog


class Flag(enum.IntFlag):
    """Column definition flags (MySQL's ``*_FLAG`` values)."""

    NOT_NULL = 1
    PRI_KEY = 2
    UNIQUE_KEY = 4
    MULTIPLE_KEY = 8
    BLOB = 16
    UNSIGNED = 32
    ZEROFILL = 64
    BINARY = 128
    ENUM = 256
    AUTO_INCREMENT = 512
    TIMESTAMP = 1024
    SET = 2048
    NO_DEFAULT_VALUE = 4096
    PART_KEY = 16384


#: Bytes per character of the result's character set (utf8mb4).
CHAR_BYTES = 4
#: The largest length a column definition carries.
MAX_LENGTH = 4294967295
#: The decimals of a FLOAT or DOUBLE without (M,D): MySQL's NOT_FIXED_DEC.
NOT_FIXED_DEC = 31


@dataclass(frozen=True, slots=True)
class ColumnMeta:
    """One column definition: ``type`` is a mysql-mimic ``ColumnType`` name; ``binary`` says
    the column is in the ``binary`` character set (63) rather than the result's."""

    name: str
    type: str
    binary: bool
    length: int
    decimals: int = 0
    flags: Flag = Flag(0)
    schema: str = ""
    table: str = ""
    org_table: str = ""
    org_name: str = ""


@dataclass(frozen=True, slots=True)
class Origin:
    """The table column a result column shows: ``alias`` is the table's name in the query."""

    table: TableRef
    alias: str
    column: Column
    key: bool


# --- where each result column comes from -----------------------------------------------------


def origins(
    expression: exp.Expr, database: str | None, catalog: TableCatalog
) -> list[Origin | None] | None:
    """The table column behind each result column of ``expression`` (None for a computed
    one), in result order; None when the select list cannot be mapped with certainty (a
    UNION, a join with USING or NATURAL, a ``*`` over a derived table)."""
    if not isinstance(expression, exp.Select):
        return None
    sources = _sources(expression, database, catalog)
    if sources is None:
        return None
    found: list[Origin | None] = []
    for projection in expression.expressions:
        expanded = _expand(projection, sources)
        if expanded is None:
            return None
        found.extend(expanded)
    return found


@dataclass(frozen=True, slots=True)
class _Source:
    alias: str
    table: TableRef | None  # None: a derived table, a CTE or a table the catalog lacks
    definition: TableDef | None


def _sources(
    select: exp.Select, database: str | None, catalog: TableCatalog
) -> list[_Source] | None:
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None:
        return []
    joins = select.args.get("joins") or []
    if any(j.args.get("using") or str(j.args.get("method", "")).upper() == "NATURAL"
           for j in joins):  # fmt: skip
        return None  # MySQL reorders the columns of such joins
    sources = [_source(from_.this, database, catalog)]
    sources.extend(_source(join.this, database, catalog) for join in joins)
    return sources


def _source(node: exp.Expr, database: str | None, catalog: TableCatalog) -> _Source:
    alias = node.alias_or_name
    if not isinstance(node, exp.Table) or not node.name:
        return _Source(alias, None, None)
    schema = node.db or database
    if not schema:
        return _Source(alias, None, None)
    ref = TableRef(schema, node.name)
    try:
        definition = catalog.definition(ref)
    except Exception:  # not a replicated table (a CTE's name, a system table)
        return _Source(alias, None, None)
    return _Source(alias, ref, definition)


def _expand(projection: exp.Expr, sources: list[_Source]) -> list[Origin | None] | None:
    if isinstance(projection, exp.Star):
        return _all_columns(sources)
    if isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star):
        chosen = [s for s in sources if s.alias.casefold() == projection.table.casefold()]
        return _all_columns(chosen) if len(chosen) == 1 else None
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    if not isinstance(inner, exp.Column):
        return [None]
    return [_column_origin(inner, sources)]


def _all_columns(sources: list[_Source]) -> list[Origin | None] | None:
    found: list[Origin | None] = []
    for source in sources:
        if source.table is None or source.definition is None:
            return None
        found.extend(_origin(source, index) for index in range(len(source.definition.columns)))
    return found


def _column_origin(column: exp.Column, sources: list[_Source]) -> Origin | None:
    qualifier = column.table.casefold()
    candidates = [s for s in sources if not qualifier or s.alias.casefold() == qualifier]
    matches = [
        (source, index)
        for source in candidates
        if source.definition is not None
        for index in [source.definition.index_of(column.name)]
        if index is not None
    ]
    if len(matches) != 1 or any(s.definition is None for s in candidates):
        return None
    source, index = matches[0]
    return _origin(source, index)


def _origin(source: _Source, index: int) -> Origin:
    assert source.table is not None and source.definition is not None
    definition = source.definition
    return Origin(source.table, source.alias, definition.columns[index],
                  index in definition.primary_key)  # fmt: skip


# --- definitions --------------------------------------------------------------------------


def describe(
    fields: Sequence[ResultColumn], found: Sequence[Origin | None] | None
) -> list[ColumnMeta]:
    """The column definitions of a result whose engine fields are ``fields``, with the
    origins ``origins`` found (ignored unless there is one per field)."""
    if found is None or len(found) != len(fields):
        found = [None] * len(fields)
    return [
        _from_table(field, origin) if origin is not None else from_field(field)
        for field, origin in zip(fields, found, strict=True)
    ]


#: Integer type code and display width (signed, unsigned) by storage bits.
_INTEGERS = {
    8: ("TINY", 4, 3),
    16: ("SHORT", 6, 5),
    24: ("INT24", 9, 8),
    32: ("LONG", 11, 10),
    64: ("LONGLONG", 20, 20),
}
#: Kinds whose values the engine may hold as NULL though the column is NOT NULL (zero and
#: invalid dates): never flagged NOT_NULL, so a driver does not refuse the NULL.
_NULLABLE_IN_ENGINE = frozenset({Kind.DATE, Kind.DATETIME, Kind.TIMESTAMP})


def _from_table(field: ResultColumn, origin: Origin) -> ColumnMeta:
    found = sql_type(origin.column.type)
    described = _describe_type(found, origin.column.type, field)
    flags = described.flags
    if not origin.column.nullable and found.kind not in _NULLABLE_IN_ENGINE:
        flags |= Flag.NOT_NULL
    if origin.key:
        flags |= Flag.PRI_KEY | Flag.PART_KEY
    return ColumnMeta(
        field.name,
        described.type,
        described.binary,
        described.length,
        described.decimals,
        flags,
        origin.table.schema,
        origin.alias,
        origin.table.table,
        origin.column.name,
    )


def _describe_type(sql_type: SqlType, text: str, field: ResultColumn) -> ColumnMeta:
    """A table column's definition from its MySQL type; the type code stays the engine's
    where the value the engine returns would not match MySQL's code."""
    kind, name = sql_type.kind, field.name
    if kind is Kind.INTEGER:
        code, signed_width, unsigned_width = _INTEGERS[sql_type.bits]
        written = parse_type(text)  # read as ``sql_type`` read it: no error
        width = written.width or (unsigned_width if sql_type.unsigned else signed_width)
        flags = Flag.UNSIGNED if sql_type.unsigned else Flag(0)
        if written.zerofill:
            flags |= Flag.ZEROFILL
        return ColumnMeta(name, code, True, width, 0, flags)
    if kind is Kind.DECIMAL:
        scale = sql_type.scale
        length = sql_type.precision + (1 if scale else 0) + (0 if sql_type.unsigned else 1)
        flags = Flag.UNSIGNED if sql_type.unsigned else Flag(0)
        return ColumnMeta(name, "NEWDECIMAL", True, length, scale, flags)
    if kind is Kind.REAL:
        fixed = sql_type.scale >= 0
        length = sql_type.precision + 2 if fixed else (12 if sql_type.bits == 32 else 22)
        decimals = sql_type.scale if fixed else NOT_FIXED_DEC
        return ColumnMeta(name, "FLOAT" if sql_type.bits == 32 else "DOUBLE", True, length,
                          decimals)  # fmt: skip
    return _describe_other(sql_type, text, field)


def _describe_other(sql_type: SqlType, text: str, field: ResultColumn) -> ColumnMeta:
    kind, name = sql_type.kind, field.name
    if kind in (Kind.CHAR, Kind.VARCHAR):
        code = "STRING" if kind is Kind.CHAR else "VAR_STRING"
        return ColumnMeta(name, code, False, sql_type.length * CHAR_BYTES)
    if kind is Kind.TEXT:
        length = min(sql_type.length * CHAR_BYTES, MAX_LENGTH)
        return ColumnMeta(name, "BLOB", False, length, 0, Flag.BLOB)
    if kind in (Kind.BINARY, Kind.VARBINARY):
        code = "STRING" if kind is Kind.BINARY else "VAR_STRING"
        return ColumnMeta(name, code, True, sql_type.length, 0, Flag.BINARY)
    if kind is Kind.BLOB:
        return ColumnMeta(name, "BLOB", True, sql_type.length, 0, Flag.BLOB | Flag.BINARY)
    if kind in (Kind.ENUM, Kind.SET):
        members = sql_type.members or ("",)
        chars = (
            max(len(m) for m in members)
            if kind is Kind.ENUM
            else sum(len(m) for m in members) + len(members) - 1
        )
        flag = Flag.ENUM if kind is Kind.ENUM else Flag.SET
        return ColumnMeta(name, "STRING", False, chars * CHAR_BYTES, 0, flag)
    return _describe_temporal(sql_type, text, field)


def _describe_temporal(sql_type: SqlType, text: str, field: ResultColumn) -> ColumnMeta:
    kind, name, fsp = sql_type.kind, field.name, sql_type.fsp
    fraction = fsp + 1 if fsp else 0
    if kind is Kind.DATE:
        return ColumnMeta(name, "DATE", True, 10, 0, Flag.BINARY)
    if kind in (Kind.DATETIME, Kind.TIMESTAMP):
        return ColumnMeta(name, field.mysql_type, True, 19 + fraction, fsp, Flag.BINARY)
    if kind is Kind.TIME:
        return ColumnMeta(name, "TIME", True, 10 + fraction, fsp, Flag.BINARY)
    if kind is Kind.YEAR:
        return ColumnMeta(name, "YEAR", True, 4, 0, Flag.UNSIGNED | Flag.ZEROFILL)
    if sql_type.other.startswith("BIT"):
        return ColumnMeta(name, "BIT", True, parse_type(text).length or 1, 0, Flag.UNSIGNED)
    return from_field(field)


#: Lengths MySQL gives computed columns of each type code.
_FIELD_LENGTHS = {
    "TINY": 4,
    "SHORT": 6,
    "INT24": 9,
    "LONG": 11,
    "LONGLONG": 21,
    "FLOAT": 12,
    "DOUBLE": 22,
    "DATE": 10,
    "DATETIME": 26,
    "TIMESTAMP": 26,
    "TIME": 17,
    "YEAR": 4,
}
#: Type codes whose values are bytes, or numbers and dates: the binary character set.
_BINARY_CODES = frozenset(
    {"TINY", "SHORT", "INT24", "LONG", "LONGLONG", "FLOAT", "DOUBLE", "NEWDECIMAL",
     "DATE", "DATETIME", "TIMESTAMP", "TIME", "YEAR", "BIT", "NULL", "GEOMETRY"}
)  # fmt: skip


def field_length(field: ResultColumn) -> int:
    """The length MySQL would give a computed column of ``field``'s type."""
    if field.mysql_type == "NEWDECIMAL" and field.precision:
        return field.precision + (2 if field.scale else 1)
    return _FIELD_LENGTHS.get(field.mysql_type, 0)


def from_field(field: ResultColumn) -> ColumnMeta:
    """A computed column, from the engine's type: binary when its values are bytes."""
    code = field.mysql_type
    blob = code == "BLOB"
    binary = code in _BINARY_CODES or field.binary
    length = field_length(field) or (MAX_LENGTH if blob else 256 * CHAR_BYTES)
    decimals = field.scale if code == "NEWDECIMAL" else 0
    if code in ("FLOAT", "DOUBLE"):
        decimals = NOT_FIXED_DEC
    flags = Flag.BINARY if binary and code not in ("FLOAT", "DOUBLE", "NEWDECIMAL") else Flag(0)
    if blob:
        flags |= Flag.BLOB
    if not field.nullable:
        flags |= Flag.NOT_NULL
    return ColumnMeta(field.name, code, binary, length, decimals, flags)
