"""The in-memory engine's tables: committed content, a transaction's staged changes, the row
helpers of the key checks, and DDL applied to the data.

Rows are compared by value (``==``): keys are not folded by collation.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime

from spark_replica.applier_core.binlog.rows import ABSENT, PartialJson, apply_diffs
from spark_replica.applier_core.binlog.rows.json_binary import decode_json
from spark_replica.applier_core.binlog.rows.json_text import JsonText, parse_json, to_text
from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts import AccountOperation
from spark_replica.applier_core.storage.ddl import (
    AlterDatabase,
    AlterTable,
    Catalog,
    CreateDatabase,
    CreateTable,
    DdlOperation,
    DropDatabase,
    DropTable,
    RenameTable,
    TruncateTable,
    alter_columns,
)
from spark_replica.applier_core.storage.enum_names import name_normalizer
from spark_replica.applier_core.storage.interface import (
    EngineError,
    HandlerError,
    Key,
    Row,
    TableDef,
    TableRef,
)
from spark_replica.applier_core.storage.objects import (
    AlterObject,
    CreateObject,
    DropObject,
    ObjectOperation,
)


class Table:
    """A table's committed content. Written only under the engine's mutex."""

    __slots__ = ("ref", "definition", "width", "key_of", "normalize", "vectors", "rows", "bag")

    def __init__(self, ref: TableRef, definition: TableDef) -> None:
        self.ref = ref
        self.definition = definition
        self.width = len(definition.columns)
        self.key_of = _key_function(definition)
        #: Turns ENUM indexes / SET bitmaps of an incoming row into names (None: no such column).
        self.normalize = name_normalizer(definition)
        #: VECTOR columns: a keyless table's rows hold them as tuples (``hashable``).
        self.vectors = tuple(
            i for i, c in enumerate(definition.columns) if c.type.upper().startswith("VECTOR")
        )
        self.rows: dict[Key, Row] = {}
        self.bag: Counter[Row] = Counter()

    def snapshot(self) -> list[Row]:
        if self.key_of is not None:
            return list(self.rows.values())
        if not self.vectors:
            return list(self.bag.elements())
        vectors = self.vectors
        return [
            tuple(list(v) if i in vectors and isinstance(v, tuple) else v for i, v in enumerate(r))
            for r in self.bag.elements()
        ]


class Stage:
    """A transaction's changes to one table: key → row (None: deleted) for a keyed table,
    row → count delta for a keyless one. ``fresh``: keys of ``changes`` the table did not
    hold when the transaction first touched them (a durable engine writes their rows as
    plain inserts). ``created``: the transaction's DDL created the table; ``sequence``: the
    table is a sequence (``ddl_sequence``), whose inserts replace its row."""

    __slots__ = ("table", "changes", "fresh", "deltas", "created", "sequence")

    def __init__(self, table: Table, *, created: bool = False, sequence: bool = False) -> None:
        self.table = table
        self.changes: dict[Key, Row | None] = {}
        self.fresh: set[Key] = set()
        self.deltas: dict[Row, int] = {}
        self.created = created
        self.sequence = sequence

    def commit_into(self, table: Table) -> None:
        if table.key_of is not None:
            rows = table.rows
            for key, row in self.changes.items():
                if row is None:
                    rows.pop(key, None)
                else:
                    rows[key] = row
            return
        bag = table.bag
        for row, delta in self.deltas.items():
            count = bag[row] + delta
            if count > 0:
                bag[row] = count
            else:
                bag.pop(row, None)


def _key_function(definition: TableDef) -> Callable[[Row], Key] | None:
    columns = definition.primary_key
    if not columns:
        return None
    if any(definition.key_prefix):
        parts = tuple(zip(columns, definition.key_prefix, strict=True))
        return lambda row: tuple(_prefix(row[i], n) for i, n in parts)
    if len(columns) == 1:
        (index,) = columns
        return lambda row: (row[index],)
    return operator.itemgetter(*columns)


def _prefix(value: object, length: int) -> object:
    if length and isinstance(value, str | bytes):
        return value[:length]
    return value


def fit(image: Row, width: int, fill: object = None) -> Row:
    """``image`` cut or padded to ``width`` columns (extra source columns are dropped, missing
    ones filled, as MySQL's replica does); for a new row, ABSENT becomes NULL."""
    if len(image) > width:
        image = image[:width]
    elif len(image) < width:
        image = image + (fill,) * (width - len(image))
    if fill is None and ABSENT in image:
        image = tuple(None if value is ABSENT else value for value in image)
    return image


def updated(current: Row, before: Row, after: Row, width: int) -> Row:
    """The row after an update: ``after`` over ``current`` for partial images."""
    if len(after) == width and ABSENT not in after and ABSENT not in before:
        return after
    merged = list(current)
    for index, value in enumerate(after[:width]):
        if value is ABSENT:
            continue
        if isinstance(value, PartialJson):
            value = _apply_json_diffs(current[index], value)
        merged[index] = value
    return tuple(merged)


def _apply_json_diffs(document: object, partial: PartialJson) -> str:
    if isinstance(document, JsonText):
        tree = decode_json(document.binary)
    elif isinstance(document, str):
        tree = parse_json(document)
    else:
        raise EngineError.of(ErrorCode.UNKNOWN_ERROR, "a partial JSON update of a non-JSON value")
    return to_text(apply_diffs(tree, partial.diffs))


def matches(image: Row, row: Row) -> bool:
    return all(value is ABSENT or value == row[i] for i, value in enumerate(image))


def hashable(row: Row) -> Row:
    """``row`` itself, or (VECTOR values are lists) a copy with lists made tuples."""
    try:
        hash(row)
    except TypeError:
        return tuple(tuple(v) if isinstance(v, list) else v for v in row)
    return row


def _key_text(key: Key) -> str:
    """A key value as MySQL prints it in ER_DUP_ENTRY: key parts joined by '-'."""
    return "-".join(_value_text(value) for value in key)


def _value_text(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):  # printable ASCII as is, other bytes as \xNN
        return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02X}" for b in value)
    if isinstance(value, datetime):
        return value.isoformat(" ")
    return str(value)


def duplicate_key(table: Table, key: Key) -> EngineError:
    return EngineError.of(
        ErrorCode.DUP_ENTRY,
        _key_text(key),
        f"{table.ref.table}.PRIMARY",
        handler_error=HandlerError.FOUND_DUPP_KEY,
    )


def missing_row(table: Table) -> EngineError:
    return EngineError.of(
        ErrorCode.KEY_NOT_FOUND, table.ref.table, handler_error=HandlerError.KEY_NOT_FOUND
    )


# -- DDL on the data --------------------------------------------------------------------------


def run_ddl(
    operations: Sequence[DdlOperation], catalog: Catalog, tables: dict[TableRef, Table]
) -> tuple[Catalog, dict[TableRef, Table]]:
    """The catalog and tables after ``operations``; the inputs are left as they were."""
    tables = dict(tables)
    for operation in operations:
        catalog = catalog.apply(operation)
        _change_data(operation, catalog, tables)
    return catalog, tables


@functools.singledispatch
def _change_data(operation: object, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    raise TypeError(f"not a DDL operation: {operation!r}")


@_change_data.register(CreateDatabase)
@_change_data.register(AlterDatabase)
def _(op: CreateDatabase | AlterDatabase, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    pass  # a database holds no data of its own


@_change_data.register(CreateObject)
@_change_data.register(DropObject)
@_change_data.register(AlterObject)
def _(op: ObjectOperation, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    pass  # views, triggers, routines and events live in the catalog alone


@_change_data.register
def _(op: AccountOperation, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    pass  # replicated accounts live in the catalog alone


@_change_data.register
def _(op: DropDatabase, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    for ref in [ref for ref in tables if ref.schema == op.name]:
        del tables[ref]


@_change_data.register
def _(op: CreateTable, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    if op.table not in tables:
        tables[op.table] = Table(op.table, catalog.definition(op.table))


@_change_data.register
def _(op: DropTable, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    tables.pop(op.table, None)


@_change_data.register
def _(op: TruncateTable, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    tables[op.table] = Table(op.table, catalog.definition(op.table))


@_change_data.register
def _(op: RenameTable, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    old = tables.pop(op.old)
    new = tables[op.new] = Table(op.new, old.definition)
    new.rows, new.bag = dict(old.rows), Counter(old.bag)


@_change_data.register
def _(op: AlterTable, catalog: Catalog, tables: dict[TableRef, Table]) -> None:
    """The rows converted to the new definition (``AlteredTable.convert_row``) in the order
    MySQL copies them (key order), and re-keyed: a duplicate of the new key fails (1062)."""
    old = tables[op.table]
    altered = alter_columns(op, old.definition)
    new = tables[op.table] = Table(op.table, altered.definition)
    rows = _scan_order(old)
    if not altered.keeps_rows:
        rows = [altered.convert_row(row, number) for number, row in enumerate(rows, 1)]
    if new.key_of is None:
        for row in rows:
            new.bag[hashable(row)] += 1
        return
    for row in rows:
        key = new.key_of(row)
        if key in new.rows:
            raise duplicate_key(new, key)
        new.rows[key] = row


def _scan_order(table: Table) -> list[Row]:
    """The rows in key order where the keys compare (InnoDB's clustered index order, which
    numbers rows in MySQL's conversion errors), else as stored."""
    rows = table.snapshot()
    key_of = table.key_of
    if key_of is None:
        return rows
    try:
        return sorted(rows, key=key_of)
    except TypeError:  # NULL or mixed-type key parts: keep the stored order
        return rows
